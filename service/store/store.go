// Package store keeps the prediction service's jobs, the results of their
// tasks and their reports in an embedded SQLite database (modernc.org/sqlite,
// pure Go), so that a restarted server loses nothing.
//
// Results are keyed by (job, task index) and written with an upsert: writing
// the same task twice — a redelivered work item — leaves one row, and a
// job's done count is the number of distinct tasks with a result.
//
// The store does not interpret results or reports: they are opaque bytes
// (see packages service/work and bugs). Traces live in files beside the
// database; the store keeps their paths.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// State is the state of a job.
type State string

// Job states. Queued and running jobs are resumed when the server starts.
const (
	Queued   State = "queued"   // accepted, not yet planned
	Running  State = "running"  // planned; tasks being checked
	Done     State = "done"     // report available
	Failed   State = "failed"   // a tool failure or an unreadable stored trace
	Canceled State = "canceled" // cancelled by a client
)

// Final reports whether s is a final state.
func (s State) Final() bool { return s == Done || s == Failed || s == Canceled }

// ErrNotFound is returned for an unknown job id.
var ErrNotFound = errors.New("no such job")

// Job is one submitted trace.
type Job struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`  // the trace name reports show
	TracePath string    `json:"-"`     // the stored trace file
	Options   string    `json:"-"`     // the job's check options, JSON
	State     State     `json:"state"` //
	Error     string    `json:"error,omitempty"`
	Total     int       `json:"total"` // models planned
	Done      int       `json:"done"`  // models with a result
	Created   time.Time `json:"created"`
	Started   time.Time `json:"started,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
	// Events is the number of events of the parsed trace, from the
	// submission on.
	Events int `json:"events"`
	// Summary of the report, once done.
	SharedVars int `json:"shared_vars"`
	Bugs       int `json:"bugs"`
	Violations int `json:"violations"`
	// The reproduce counts of the report, once done (see Summary); the
	// API shows them only for the jobs that asked for reproduce.
	Failed      int `json:"-"`
	Reproduced  int `json:"-"`
	FailingRuns int `json:"-"`
}

// Summary is what Finish records about a report. Failed, Reproduced and
// FailingRuns count, in a report of mcpredict reproduce, the bugs whose
// directed run failed, those reproduced without failing, and the failing
// runs that are no bug's.
type Summary struct {
	Events, SharedVars, Bugs, Violations int
	Failed, Reproduced, FailingRuns      int
}

// Store is an open database. It is safe for concurrent use.
type Store struct {
	db *sql.DB
}

const schema = `
CREATE TABLE IF NOT EXISTS jobs (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL,
	trace_path  TEXT NOT NULL,
	options     TEXT NOT NULL,
	state       TEXT NOT NULL,
	error       TEXT NOT NULL DEFAULT '',
	total       INTEGER NOT NULL DEFAULT 0,
	done        INTEGER NOT NULL DEFAULT 0,
	created     INTEGER NOT NULL,
	started     INTEGER NOT NULL DEFAULT 0,
	finished    INTEGER NOT NULL DEFAULT 0,
	events      INTEGER NOT NULL DEFAULT 0,
	shared_vars INTEGER NOT NULL DEFAULT 0,
	bugs        INTEGER NOT NULL DEFAULT 0,
	violations  INTEGER NOT NULL DEFAULT 0,
	failed      INTEGER NOT NULL DEFAULT 0,
	reproduced  INTEGER NOT NULL DEFAULT 0,
	failing_runs INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
CREATE TABLE IF NOT EXISTS results (
	job    TEXT NOT NULL,
	task   INTEGER NOT NULL,
	result BLOB NOT NULL,
	PRIMARY KEY (job, task)
);
CREATE TABLE IF NOT EXISTS reports (
	job    TEXT PRIMARY KEY,
	report BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS probe (
	id INTEGER PRIMARY KEY,
	at INTEGER NOT NULL
);
`

// Options configure OpenOptions.
type Options struct {
	// BusyTimeout is how long a write waits for a lock held by another
	// connection before it fails (default 10s).
	BusyTimeout time.Duration
}

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenOptions(ctx, path, Options{})
}

// OpenOptions opens (creating if needed) the database at path.
func OpenOptions(ctx context.Context, path string, o Options) (*Store, error) {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	// WAL keeps readers off the writer's back and survives a kill -9 of
	// the process; synchronous=NORMAL is durable against process crashes,
	// which is what a restart test and a container restart need.
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(ON)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening job store %s: %w", path, err)
	}
	// One connection serialises writers: SQLite allows one at a time
	// anyway, and this avoids SQLITE_BUSY between our own connections.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening job store %s: %w", path, err)
	}
	if err := addColumns(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening job store %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// addedColumns are the columns of jobs that a database made by an earlier
// version lacks.
var addedColumns = []string{"failed", "reproduced", "failing_runs"}

// addColumns adds the addedColumns that the jobs table lacks.
func addColumns(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info('jobs')`)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		have[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range addedColumns {
		if !have[c] {
			if _, err := db.ExecContext(ctx, `ALTER TABLE jobs ADD COLUMN `+c+` INTEGER NOT NULL DEFAULT 0`); err != nil {
				return err
			}
		}
	}
	return nil
}

// Probe writes to the database, to tell whether writes succeed: reads may
// work while writes fail (a full or read-only disk, a lock held by another
// process).
func (s *Store) Probe(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`, time.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("writing to the job store: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// CreateJob inserts a new job, with its Total and Events (known once its
// trace is parsed and planned).
func (s *Store) CreateJob(ctx context.Context, j *Job) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO jobs (id, name, trace_path, options, state, created, total, events) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.Name, j.TracePath, j.Options, string(j.State), j.Created.UnixNano(), j.Total, j.Events)
	if err != nil {
		return fmt.Errorf("creating job %s: %w", j.ID, err)
	}
	return nil
}

const jobColumns = `id, name, trace_path, options, state, error, total, done, created, started, finished, events, shared_vars, bugs, violations, failed, reproduced, failing_runs`

func scanJob(sc interface{ Scan(...any) error }) (Job, error) {
	var (
		j                          Job
		state                      string
		created, started, finished int64
	)
	err := sc.Scan(&j.ID, &j.Name, &j.TracePath, &j.Options, &state, &j.Error, &j.Total, &j.Done,
		&created, &started, &finished, &j.Events, &j.SharedVars, &j.Bugs, &j.Violations, &j.Failed, &j.Reproduced, &j.FailingRuns)
	if err != nil {
		return j, err
	}
	j.State = State(state)
	j.Created = unixTime(created)
	j.Started = unixTime(started)
	j.Finished = unixTime(finished)
	return j, nil
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// Job returns one job, or ErrNotFound.
func (s *Store) Job(ctx context.Context, id string) (Job, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id)
	j, err := scanJob(row)
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return j, fmt.Errorf("reading job %s: %w", id, err)
	}
	return j, nil
}

// Jobs lists jobs, newest first, optionally only those in the given states,
// at most limit (0: all).
func (s *Store) Jobs(ctx context.Context, limit int, states ...State) ([]Job, error) {
	q := `SELECT ` + jobColumns + ` FROM jobs`
	var args []any
	if len(states) > 0 {
		q += ` WHERE state IN (?` + strings.Repeat(", ?", len(states)-1) + `)`
		for _, st := range states {
			args = append(args, string(st))
		}
	}
	q += ` ORDER BY created DESC, id`
	if limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("listing jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing jobs: %w", err)
	}
	return out, nil
}

// Counts returns the number of jobs in each state.
func (s *Store) Counts(ctx context.Context) (map[State]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("counting jobs: %w", err)
	}
	defer rows.Close()
	out := map[State]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("counting jobs: %w", err)
		}
		out[State(st)] = n
	}
	return out, rows.Err()
}

// Start marks a queued or running job running with total tasks. It is a no-op
// on a job in a final state and reports whether the job is (still) active.
func (s *Store) Start(ctx context.Context, id string, total int) (bool, error) {
	res, err := s.db.ExecContext(ctx,
		`UPDATE jobs SET state = ?, total = ?, started = CASE WHEN started = 0 THEN ? ELSE started END
		 WHERE id = ? AND state IN (?, ?)`,
		string(Running), total, time.Now().UnixNano(), id, string(Queued), string(Running))
	if err != nil {
		return false, fmt.Errorf("starting job %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// PutResult stores the result of a task of an active job, replacing any
// earlier result of the same task, and returns the job's number of tasks
// with a result. A result for a job that is unknown or no longer active is
// dropped (ok false): it belongs to a cancelled or finished job.
func (s *Store) PutResult(ctx context.Context, job string, task int, result []byte) (done int, ok bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, fmt.Errorf("storing result %s/%d: %w", job, task, err)
	}
	defer tx.Rollback()
	var state string
	err = tx.QueryRowContext(ctx, `SELECT state FROM jobs WHERE id = ?`, job).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && State(state) != Running) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("storing result %s/%d: %w", job, task, err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO results (job, task, result) VALUES (?, ?, ?)
		 ON CONFLICT (job, task) DO UPDATE SET result = excluded.result`, job, task, result); err != nil {
		return 0, false, fmt.Errorf("storing result %s/%d: %w", job, task, err)
	}
	if err := tx.QueryRowContext(ctx,
		`UPDATE jobs SET done = (SELECT COUNT(*) FROM results WHERE job = ?) WHERE id = ? RETURNING done`,
		job, job).Scan(&done); err != nil {
		return 0, false, fmt.Errorf("storing result %s/%d: %w", job, task, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("storing result %s/%d: %w", job, task, err)
	}
	return done, true, nil
}

// DoneTasks returns the task indexes of a job that have a result.
func (s *Store) DoneTasks(ctx context.Context, job string) (map[int]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT task FROM results WHERE job = ?`, job)
	if err != nil {
		return nil, fmt.Errorf("reading results of %s: %w", job, err)
	}
	defer rows.Close()
	out := map[int]bool{}
	for rows.Next() {
		var t int
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("reading results of %s: %w", job, err)
		}
		out[t] = true
	}
	return out, rows.Err()
}

// Results calls fn with every stored result of a job, in task order.
func (s *Store) Results(ctx context.Context, job string, fn func(task int, result []byte) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT task, result FROM results WHERE job = ? ORDER BY task`, job)
	if err != nil {
		return fmt.Errorf("reading results of %s: %w", job, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			t int
			b []byte
		)
		if err := rows.Scan(&t, &b); err != nil {
			return fmt.Errorf("reading results of %s: %w", job, err)
		}
		if err := fn(t, b); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Finish moves an active job to a final state, storing its report (for
// Done) and its summary, and dropping its task results, which the report
// now contains. Without a report (a failed or cancelled job) the summary
// is not recorded: the job keeps the event count of its submission. It
// reports whether the job was active: a job finishes once.
func (s *Store) Finish(ctx context.Context, id string, state State, errMsg string, report []byte, sum Summary) (bool, error) {
	if !state.Final() {
		return false, fmt.Errorf("finishing job %s: %q is not a final state", id, state)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("finishing job %s: %w", id, err)
	}
	defer tx.Rollback()
	q, args := `UPDATE jobs SET state = ?, error = ?, finished = ?`, []any{string(state), errMsg, time.Now().UnixNano()}
	if report != nil {
		q += `, events = ?, shared_vars = ?, bugs = ?, violations = ?, failed = ?, reproduced = ?, failing_runs = ?`
		args = append(args, sum.Events, sum.SharedVars, sum.Bugs, sum.Violations, sum.Failed, sum.Reproduced, sum.FailingRuns)
	}
	res, err := tx.ExecContext(ctx, q+` WHERE id = ? AND state IN (?, ?)`, append(args, id, string(Queued), string(Running))...)
	if err != nil {
		return false, fmt.Errorf("finishing job %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return false, nil
	}
	if report != nil {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO reports (job, report) VALUES (?, ?)`, id, report); err != nil {
			return false, fmt.Errorf("finishing job %s: %w", id, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM results WHERE job = ?`, id); err != nil {
		return false, fmt.Errorf("finishing job %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("finishing job %s: %w", id, err)
	}
	return true, nil
}

// Report returns the stored report of a done job, or ErrNotFound.
func (s *Store) Report(ctx context.Context, id string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, `SELECT report FROM reports WHERE job = ?`, id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("report of job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading report of job %s: %w", id, err)
	}
	return b, nil
}
