package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestJobLifecycle(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobs.db")
	s := open(t, path)
	j := &Job{ID: "j1", Name: "a.csv", TracePath: "/x", Options: "{}", State: Queued, Created: time.Now()}
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJob(ctx, j); err == nil {
		t.Error("creating a job twice: no error")
	}
	// A result before the job runs is dropped: it cannot be one of its tasks.
	if _, ok, err := s.PutResult(ctx, "j1", 0, []byte("early")); err != nil || ok {
		t.Fatalf("result of a queued job: ok=%v err=%v, want dropped", ok, err)
	}
	if ok, err := s.Start(ctx, "j1", 3); err != nil || !ok {
		t.Fatalf("Start: %v %v", ok, err)
	}
	steps := []struct {
		task     int
		data     string
		wantDone int
	}{
		{0, "r0", 1},
		{1, "r1", 2},
		{1, "r1 again", 2}, // a redelivered task counts once; last write wins
		{2, "r2", 3},
	}
	for _, st := range steps {
		done, ok, err := s.PutResult(ctx, "j1", st.task, []byte(st.data))
		if err != nil || !ok || done != st.wantDone {
			t.Fatalf("PutResult(%d): done=%d ok=%v err=%v, want done=%d", st.task, done, ok, err, st.wantDone)
		}
	}
	got := map[int]string{}
	if err := s.Results(ctx, "j1", func(task int, b []byte) error { got[task] = string(b); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1] != "r1 again" {
		t.Errorf("results = %v", got)
	}
	dt, err := s.DoneTasks(ctx, "j1")
	if err != nil || len(dt) != 3 {
		t.Errorf("DoneTasks = %v, %v", dt, err)
	}

	// The store survives a reopen (a server restart).
	s.Close()
	s = open(t, path)
	j2, err := s.Job(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if j2.State != Running || j2.Total != 3 || j2.Done != 3 || j2.Started.IsZero() {
		t.Errorf("after reopen: %+v", j2)
	}
	ok, err := s.Finish(ctx, "j1", Done, "", []byte("report"), Summary{Events: 5, Bugs: 1})
	if err != nil || !ok {
		t.Fatalf("Finish: %v %v", ok, err)
	}
	if ok, _ := s.Finish(ctx, "j1", Failed, "late", nil, Summary{}); ok {
		t.Error("a job finished twice")
	}
	if _, ok, _ := s.PutResult(ctx, "j1", 0, []byte("late")); ok {
		t.Error("result of a finished job stored")
	}
	rep, err := s.Report(ctx, "j1")
	if err != nil || string(rep) != "report" {
		t.Errorf("Report = %q, %v", rep, err)
	}
	j3, _ := s.Job(ctx, "j1")
	if j3.State != Done || j3.Events != 5 || j3.Bugs != 1 || j3.Done != 3 || j3.Finished.IsZero() {
		t.Errorf("finished job: %+v", j3)
	}
}

func TestQueries(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "jobs.db"))
	base := time.Now()
	for i, st := range []State{Queued, Running, Running, Done} {
		id := string(rune('a' + i))
		if err := s.CreateJob(ctx, &Job{ID: id, Name: id, Options: "{}", State: Queued, Created: base.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
		if st != Queued {
			s.Start(ctx, id, 1)
		}
		if st == Done {
			s.Finish(ctx, id, Done, "", []byte("r"), Summary{})
		}
	}
	tests := []struct {
		name   string
		limit  int
		states []State
		want   []string
	}{
		{"all newest first", 0, nil, []string{"d", "c", "b", "a"}},
		{"limit", 2, nil, []string{"d", "c"}},
		{"unfinished", 0, []State{Queued, Running}, []string{"c", "b", "a"}},
		{"done", 0, []State{Done}, []string{"d"}},
		{"none", 0, []State{Canceled}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, err := s.Jobs(ctx, tt.limit, tt.states...)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			if len(ids) != len(tt.want) {
				t.Fatalf("got %v, want %v", ids, tt.want)
			}
			for i := range ids {
				if ids[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", ids, tt.want)
				}
			}
		})
	}
	counts, err := s.Counts(ctx)
	if err != nil || counts[Running] != 2 || counts[Queued] != 1 || counts[Done] != 1 {
		t.Errorf("Counts = %v, %v", counts, err)
	}
	if _, err := s.Job(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown job: %v, want ErrNotFound", err)
	}
	if _, err := s.Report(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("report of a queued job: %v, want ErrNotFound", err)
	}
	if _, err := s.Finish(ctx, "a", Running, "", nil, Summary{}); err == nil {
		t.Error("Finish to a non-final state: no error")
	}
}

// TestOlderDatabase: a job store written by a version without the
// reproduce counts is opened, its jobs read, and the counts recorded.
func TestOlderDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobs.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(schema, `	violations  INTEGER NOT NULL DEFAULT 0,
	failed      INTEGER NOT NULL DEFAULT 0,
	reproduced  INTEGER NOT NULL DEFAULT 0,
	failing_runs INTEGER NOT NULL DEFAULT 0
`, `	violations  INTEGER NOT NULL DEFAULT 0
`, 1)
	if old == schema {
		t.Fatal("the test's older schema is the current one")
	}
	if _, err := db.ExecContext(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO jobs (id, name, trace_path, options, state, created, events) VALUES ('j1', 'a.csv', '/x', '{}', 'running', 1, 7)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := open(t, path)
	j, err := s.Job(ctx, "j1")
	if err != nil || j.Events != 7 {
		t.Fatalf("job of the older database: %+v, %v", j, err)
	}
	if ok, err := s.Finish(ctx, "j1", Done, "", []byte("r"), Summary{Events: 7, Bugs: 2, Failed: 1, Reproduced: 1, FailingRuns: 3}); err != nil || !ok {
		t.Fatalf("Finish: %v %v", ok, err)
	}
	if j, err = s.Job(ctx, "j1"); err != nil || j.Failed != 1 || j.Reproduced != 1 || j.FailingRuns != 3 || j.Bugs != 2 {
		t.Errorf("finished job: %+v, %v", j, err)
	}
	// A job that fails keeps the event count of its submission.
	if err := s.CreateJob(ctx, &Job{ID: "j2", Name: "b.csv", Options: "{}", State: Queued, Created: time.Now(), Events: 9, Total: 4}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Finish(ctx, "j2", Failed, "no", nil, Summary{}); err != nil || !ok {
		t.Fatalf("Finish: %v %v", ok, err)
	}
	if j, err = s.Job(ctx, "j2"); err != nil || j.Events != 9 || j.Total != 4 || j.State != Failed {
		t.Errorf("failed job: %+v, %v", j, err)
	}
}
