// Package service is the mcpredict prediction service: an HTTP JSON API to
// submit traces, follow their jobs and fetch their reports, backed by an
// embedded SQLite job store so that a restart loses nothing.
//
// A job is one trace and a list of analyses. When it starts, the models of
// its model-checked analyses (analysis.ModelsOf: McPatom's (variable,
// thread pair) models, the models of atomic sets) are planned with
// predict.Plan and each becomes a work item (package service/work). Items
// run on the server's own worker pool, or, when a queue.Queue is
// configured, go to NATS JetStream where `mcpredict worker` processes on
// any machine take them. Results come back keyed by (job, task) and are
// stored idempotently; when every task of a job has a result, the job's
// analyzers run with analysis.Run exactly as `mcpredict run` runs them,
// the model-checking step assembling the stored results with
// predict.Assemble, and the report is stored.
//
// A job that asks for reproduce (JobOptions.Reproduce) runs `mcpredict
// reproduce` in this process, through Config.Reproduce, once its report is
// assembled and before it is stored: the recorded program, which the
// trace's header names, is run again under directed schedules, one job's
// runs at a time, and the stored report has the reproductions. Workers on
// NATS only check models; the programs run where the server runs.
//
// On start the server resumes the jobs that were queued or running: it
// re-parses their stored traces, re-plans them, and dispatches only the tasks
// that have no result yet. While it runs, a supervisor (supervise.go) does
// the same for jobs that a failure of the job store or of NATS stopped, so
// that they resume by themselves once the failure is over, and tells
// /healthz whether work can progress.
//
// The package does not parse command lines (cmd/mcpredict does) and does not
// check models itself (package predict does).
package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service/queue"
	"github.com/mcpredict/mcpredict/service/store"
	"github.com/mcpredict/mcpredict/service/work"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Renderer writes a report in one format.
type Renderer func(io.Writer, *bugs.Report) error

// Config configures a Server.
type Config struct {
	// DataDir holds the job database (jobs.db) and the stored traces.
	DataDir string
	// Resolve turns a job's options into run options (required).
	Resolve Resolver
	// Analysis is the list of analyses of a job that names none
	// (JobOptions.Analysis); "" leaves the choice to Resolve. `mcpredict
	// serve` sets the default of `mcpredict run` (analysis/all.Default).
	Analysis string
	// Formats are the report formats by name; "json" is always available.
	Formats map[string]Renderer
	// OpenTrace, if set, parses a stored trace in the named format ("":
	// detect) and returns the format it used (trace-format plugins);
	// default: CSV only.
	OpenTrace func(ctx context.Context, path, name, format string, opts tracemodel.Options) (*tracemodel.Model, string, error)
	// Token, if set, is the bearer token every /v1 request must carry.
	Token string
	// MaxUpload bounds an uploaded trace in bytes (default 256 MiB).
	MaxUpload int64
	// MaxTraceBytes bounds a trace after decompression (default 4 GiB):
	// a small compressed upload may decompress to gigabytes.
	MaxTraceBytes int64
	// MaxEvents bounds a trace's events (tracemodel.Options.MaxEvents; 0:
	// its default, negative: none).
	MaxEvents int
	// SpillDir is where a job's trace of more than SpillAfter events (0:
	// tracemodel.DefaultSpillAfter) is spilled (tracemodel.Options.Spill;
	// "": os.TempDir()), until the job ends.
	SpillDir   string
	SpillAfter int
	// StrictSync refuses every job's trace with a synchronization oddity
	// (JobOptions.StrictSync per job).
	StrictSync bool
	// BodyIdleTimeout cuts off a request whose body stops coming in for this
	// long (default 30s; negative: never). It bounds the wait for each read,
	// not the whole upload, so big uploads may take as long as they need.
	BodyIdleTimeout time.Duration
	// AllowPaths are the directories under which clients may name
	// server-side trace files; none: only uploads.
	AllowPaths []string
	// Queue, if set, sends work items to NATS workers; otherwise they run
	// on a pool of Workers goroutines in this process.
	Queue *queue.Queue
	// Shards, with a Queue, has the workers project the models: each
	// job's tasks are split, variable by variable, into this many shards
	// (work.Shard), and each worker that takes one fetches the trace from
	// the queue's trace store, parses it and projects and checks the
	// shard's models (ShardWorker). 0: the server projects every model
	// and the items carry them.
	Shards int
	// Workers is the size of the local pool (default: number of CPUs).
	Workers int
	// Checkers check the local pool's items. The default has no tools:
	// only native-engine jobs succeed.
	Checkers *work.Checkers
	Log      *slog.Logger

	// NoWorkersAfter makes /healthz unhealthy when NATS work items have
	// been waiting this long without any worker taking one (default 1m).
	NoWorkersAfter time.Duration

	// Reproduce, if set, runs `mcpredict reproduce` for the jobs that ask
	// for it (JobOptions.Reproduce): in this process, once the job's
	// report is assembled and before it is stored, one job at a time. It
	// returns the report with the reproductions, the failing runs and
	// their summary (bugs.Report.Reproduce); an error fails the job with
	// its message. nil: jobs that ask for reproduce are refused (400).
	// `mcpredict serve --allow-reproduce` sets it to what `mcpredict batch
	// --reproduce` runs.
	Reproduce func(ctx context.Context, r ReproduceRequest) (*bugs.Report, error)
	// CheckReproduce, if set, checks at submission that the trace of a job
	// that asks for reproduce can have it here (its header names its
	// program, which this server may run); its error refuses the job, a
	// *predict.UsageError with a 400 and its message.
	CheckReproduce func(trace string) error
	// ReproduceBudget is the wall time of a job's directed runs when it
	// names none, and the most it may name (default 2m).
	ReproduceBudget time.Duration

	// beforeCheck, if set, runs before the local pool checks an item
	// (tests: to hold a job mid-way).
	beforeCheck func(context.Context, *work.Item)
	// superviseEvery is the supervisor's period (default 1s); retryMin and
	// retryMax bound the backoff of a job after a transient failure
	// (defaults 500ms and 30s); storeBusy is the store's busy timeout.
	superviseEvery, retryMin, retryMax, storeBusy time.Duration
}

// ReproduceRequest is what Config.Reproduce is given.
type ReproduceRequest struct {
	Job string // the job's id
	// Trace is the stored trace file, whose header names the program.
	Trace string
	// Options are the job's options: the prediction's, for the relaxed
	// models of reproduce.
	Options JobOptions
	// Report is the job's assembled report: its bugs are the candidates.
	Report *bugs.Report
	// Budget is the wall time of the directed runs.
	Budget time.Duration
	// OutDir, an empty directory, receives the schedules and the traces
	// of the directed runs (DataDir/reproduce/<job>, kept with the job).
	OutDir string
}

// Server runs jobs and serves the API. Create it with Start.
type Server struct {
	cfg     Config
	st      *store.Store
	metrics *metrics
	log     *slog.Logger
	// epoch distinguishes this run's NATS publications from earlier runs'.
	epoch string

	ctx    context.Context // the server's lifetime; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	items  chan localItem // local pool input
	// reproducing admits one job's directed runs at a time: they run
	// programs whose timing the schedules depend on.
	reproducing chan struct{}

	mu     sync.Mutex
	active map[string]*activeJob

	health health
}

// activeJob is a queued or running job in memory.
type activeJob struct {
	id     string
	ctx    context.Context // cancelled when the job is cancelled or the server stops
	cancel context.CancelFunc

	mu        sync.Mutex
	model     *tracemodel.Model // nil until loaded
	jopts     JobOptions        // the job's options, once loaded
	opts      predict.Options
	analyzers []*analysis.Analyzer
	tasks     []predict.Task
	loadErr   error
	final     bool // being or already finished: later results are ignored
	// reproducing is set while the job's directed runs are made
	// (reproduceJob); reproduced is their report, kept until it is
	// stored (a store failure does not make them again).
	reproducing bool
	reproduced  *bugs.Report
	// users counts the loads not yet released (load, release); a model
	// spilled to disk is closed when the job is forgotten and has none,
	// and a forgotten job loads nothing again.
	users     int
	forgotten bool

	// Recovery (see supervise).
	running  bool      // runJob is dispatching
	gen      int       // dispatches so far: republications get new message ids
	stalled  bool      // a transient failure: run the job again at retryAt
	retryAt  time.Time //
	failures int       // consecutive transient failures, for the backoff
	ending   *ending   // a final state whose recording failed: retried
	progress time.Time // last dispatch or result stored
	lost     int       // consecutive supervisor rounds that found no backlog
}

// ending is a final state to record.
type ending struct {
	state store.State
	msg   string
}

// transientError is a failure of the job store or the queue, not of the
// job: the job is retried, not failed.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

func transient(err error) error {
	var te *transientError
	if err == nil || errors.As(err, &te) {
		return err
	}
	return &transientError{err: err}
}

type localItem struct {
	ctx  context.Context
	item *work.Item
}

// Start opens the store under cfg.DataDir, starts the workers (or the result
// consumer) and resumes unfinished jobs. Close stops it.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Resolve == nil {
		return nil, errors.New("service: Config.Resolve is required")
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = 256 << 20
	}
	if cfg.MaxTraceBytes <= 0 {
		cfg.MaxTraceBytes = 4 << 30
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.BodyIdleTimeout == 0 {
		cfg.BodyIdleTimeout = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Checkers == nil {
		cfg.Checkers = &work.Checkers{}
	}
	if cfg.BodyIdleTimeout == 0 {
		cfg.BodyIdleTimeout = 30 * time.Second
	}
	if cfg.NoWorkersAfter <= 0 {
		cfg.NoWorkersAfter = time.Minute
	}
	if cfg.superviseEvery <= 0 {
		cfg.superviseEvery = time.Second
	}
	if cfg.retryMin <= 0 {
		cfg.retryMin = 500 * time.Millisecond
	}
	if cfg.retryMax <= 0 {
		cfg.retryMax = 30 * time.Second
	}
	if cfg.ReproduceBudget <= 0 {
		cfg.ReproduceBudget = 2 * time.Minute
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "traces"), 0o755); err != nil {
		return nil, fmt.Errorf("service: data directory: %w", err)
	}
	st, err := store.OpenOptions(ctx, filepath.Join(cfg.DataDir, "jobs.db"), store.Options{BusyTimeout: cfg.storeBusy})
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Server{
		cfg: cfg, st: st, log: cfg.Log, epoch: newID()[:8],
		ctx: sctx, cancel: cancel,
		active:      map[string]*activeJob{},
		reproducing: make(chan struct{}, 1),
	}
	s.metrics = newMetrics(s)
	// Register unfinished jobs before any result can arrive, so that none
	// is mistaken for a late duplicate and dropped.
	jobs, err := st.Jobs(ctx, 0, store.Queued, store.Running)
	if err != nil {
		cancel()
		st.Close()
		return nil, err
	}
	var resumed []*activeJob
	for i := len(jobs) - 1; i >= 0; i-- { // oldest first
		j := jobs[i]
		s.log.Info("resuming job", "job", j.ID, "name", j.Name, "state", j.State, "done", j.Done, "total", j.Total)
		resumed = append(resumed, s.register(j.ID, nil))
	}
	if cfg.Queue != nil {
		s.wg.Go(func() {
			if err := cfg.Queue.ConsumeResults(sctx, s.onResult); err != nil {
				s.log.Error("result consumer stopped", "err", err)
			}
		})
	} else {
		s.items = make(chan localItem)
		for range cfg.Workers {
			s.wg.Go(s.localWorker)
		}
	}
	for _, aj := range resumed {
		s.launch(aj)
	}
	s.wg.Go(s.supervise)
	return s, nil
}

// Close stops the workers and waits for them. Jobs that are not finished
// stay queued or running in the store and resume at the next Start.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	jobs := make([]*activeJob, 0, len(s.active))
	for _, aj := range s.active {
		jobs = append(jobs, aj)
	}
	s.mu.Unlock()
	for _, aj := range jobs {
		s.forget(aj) // their temporary files; the store resumes them
	}
	return s.st.Close()
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// register adds a job to the active set; model may be nil (loaded later
// from the stored trace).
func (s *Server) register(id string, m *tracemodel.Model) *activeJob {
	jctx, cancel := context.WithCancel(s.ctx)
	aj := &activeJob{id: id, ctx: jctx, cancel: cancel, model: m}
	s.mu.Lock()
	s.active[id] = aj
	s.mu.Unlock()
	return aj
}

func (s *Server) activeJob(id string) *activeJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[id]
}

// forget removes a job from the active set and stops its work; its model
// is closed once no load of it is in use.
func (s *Server) forget(aj *activeJob) {
	aj.cancel()
	s.mu.Lock()
	if s.active[aj.id] == aj {
		delete(s.active, aj.id)
	}
	s.mu.Unlock()
	aj.mu.Lock()
	aj.forgotten = true
	aj.mu.Unlock()
	s.release(aj, false)
}

// release ends a use of the job's model that load began (used), and
// closes the model of a forgotten job that nothing uses any more.
func (s *Server) release(aj *activeJob, used bool) {
	aj.mu.Lock()
	if used {
		aj.users--
	}
	var m *tracemodel.Model
	if aj.forgotten && aj.users == 0 {
		m, aj.model = aj.model, nil
	}
	aj.mu.Unlock()
	if m != nil {
		if err := m.Close(); err != nil {
			s.log.Warn("closing a job's trace", "job", aj.id, "err", err)
		}
	}
}

// launch runs a job in the background, unless it is running already. A
// transient failure (job store, queue) leaves the job to the supervisor,
// which runs it again; any other failure fails the job.
func (s *Server) launch(aj *activeJob) {
	aj.mu.Lock()
	if aj.running {
		aj.mu.Unlock()
		return
	}
	aj.running, aj.stalled = true, false
	aj.mu.Unlock()
	s.wg.Go(func() {
		err := guard(func() error { return s.runJob(aj) })
		aj.mu.Lock()
		aj.running = false
		if err == nil {
			aj.failures = 0
		}
		aj.mu.Unlock()
		var te *transientError
		switch {
		case err == nil || s.ctx.Err() != nil || aj.ctx.Err() != nil:
		case errors.As(err, &te):
			s.stall(aj, err)
		default:
			s.fail(aj, err)
		}
	})
}

// stall marks a job to be run again by the supervisor after a backoff.
func (s *Server) stall(aj *activeJob, cause error) {
	aj.mu.Lock()
	aj.stalled = true
	d := backoff(s.cfg.retryMin, s.cfg.retryMax, aj.failures)
	aj.failures++
	aj.retryAt = time.Now().Add(d)
	aj.mu.Unlock()
	s.log.Warn("job delayed by a transient failure; retrying", "job", aj.id, "in", d, "err", cause)
}

// backoff is the wait after n consecutive failures: lo doubled n times, at
// most hi.
func backoff(lo, hi time.Duration, n int) time.Duration {
	d := lo
	for range n {
		if d >= hi/2 {
			return hi
		}
		d *= 2
	}
	return d
}

// guard runs fn, turning a panic into an error: a bug met by one job (in
// planning, projection or report assembly) fails that job instead of
// taking the server and every other job down.
func guard(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: panic: %v", p)
		}
	}()
	return fn()
}

// load returns the job's model, options and tasks, parsing the stored
// trace the first time after a restart. A load without error must be
// released (s.release(aj, true)) when the model is no longer used.
func (s *Server) load(ctx context.Context, aj *activeJob) (*tracemodel.Model, predict.Options, []predict.Task, error) {
	aj.mu.Lock()
	defer aj.mu.Unlock()
	if aj.forgotten {
		return nil, predict.Options{}, nil, context.Canceled
	}
	if aj.tasks != nil || aj.loadErr != nil {
		if aj.loadErr == nil {
			aj.users++
		}
		return aj.model, aj.opts, aj.tasks, aj.loadErr
	}
	j, err := s.st.Job(ctx, aj.id)
	if err != nil {
		return nil, predict.Options{}, nil, transient(err)
	}
	aj.loadErr = func() error {
		jo, err := decodeOptions(j.Options)
		if err != nil {
			return err
		}
		aj.jopts = jo
		if aj.model == nil {
			if aj.model, _, err = s.parseStored(ctx, j.TracePath, j.Name, jo.InputFormat, s.traceOptions(jo)); err != nil {
				return err
			}
		}
		if aj.opts, aj.analyzers, err = s.resolve(jo); err != nil {
			return err
		}
		tasks, err := predict.Plan(ctx, aj.model, aj.opts)
		if err != nil {
			return err
		}
		aj.tasks = append(make([]predict.Task, 0, len(tasks)), tasks...)
		return nil
	}()
	if aj.loadErr != nil && ctx.Err() != nil {
		// Interrupted, not broken: try again next time.
		err := aj.loadErr
		aj.loadErr = nil
		return nil, predict.Options{}, nil, err
	}
	if aj.loadErr == nil {
		aj.users++
	}
	return aj.model, aj.opts, aj.tasks, aj.loadErr
}

func (s *Server) parseStored(ctx context.Context, path, name, format string, opts tracemodel.Options) (*tracemodel.Model, string, error) {
	if s.cfg.OpenTrace != nil {
		return s.cfg.OpenTrace(ctx, path, name, format, opts)
	}
	if format != "" && format != "csv" {
		return nil, "", &predict.UsageError{Msg: fmt.Sprintf("input_format %q: this server reads only csv", format)}
	}
	m, err := parseCSV(ctx, path, name, opts)
	return m, "csv", err
}

func parseCSV(ctx context.Context, path, name string, opts tracemodel.Options) (*tracemodel.Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("stored trace: %w", err)
	}
	defer f.Close()
	return tracemodel.Parse(ctx, f, name, opts)
}

// traceOptions are the parser options of a job: the server's bounds.
func (s *Server) traceOptions(jo JobOptions) tracemodel.Options {
	// A large trace is spilled to the server's temporary directory, as run
	// spills it; the job closes its model once it is forgotten and no load
	// of it is in use (forget, release).
	return tracemodel.Options{Lenient: jo.Lenient, StrictSync: jo.StrictSync || s.cfg.StrictSync, MaxBytes: s.cfg.MaxTraceBytes, MaxEvents: s.cfg.MaxEvents,
		SpillDir: s.cfg.SpillDir, SpillAfter: s.cfg.SpillAfter}
}

// runJob plans a job and dispatches the tasks that have no result yet.
// Completion is driven by the results (onResult).
func (s *Server) runJob(aj *activeJob) error {
	ctx := aj.ctx
	m, opts, tasks, err := s.load(ctx, aj)
	if err != nil {
		return err
	}
	defer s.release(aj, true)
	ok, err := s.st.Start(ctx, aj.id, len(tasks))
	if err != nil {
		return transient(err)
	}
	if !ok {
		s.forget(aj) // finished meanwhile
		return nil
	}
	done, err := s.st.DoneTasks(ctx, aj.id)
	if err != nil {
		return transient(err)
	}
	if len(done) == len(tasks) {
		return s.complete(ctx, aj)
	}
	spec := work.SpecOf(opts)
	aj.mu.Lock()
	aj.gen++
	epoch := fmt.Sprintf("%s.%d", s.epoch, aj.gen)
	aj.progress = time.Now()
	aj.mu.Unlock()
	if q := s.cfg.Queue; q != nil {
		// Items of an earlier run may still be queued: drop them so that
		// each remaining task is queued once. Items being checked right
		// now still deliver their (idempotent) results.
		if err := q.PurgeJob(ctx, aj.id); err != nil {
			return transient(err)
		}
	}
	var todo []predict.Task
	for i, t := range tasks {
		if !done[i] {
			todo = append(todo, t)
		}
	}
	if s.cfg.Queue != nil && s.cfg.Shards > 0 {
		return s.dispatchShards(ctx, aj, m, opts, tasks, done, spec, epoch)
	}
	proj := predict.NewProjector(m, opts, todo)
	for i, t := range tasks {
		if done[i] {
			continue
		}
		pms, res, err := proj.Project(ctx, t)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("projecting %s threads %d,%d: %w", t.Name(), t.T1, t.T2, err)
		}
		if res != nil {
			// Decided while projecting, as run decides it: no claim is
			// violated. Stored here, not checked by a worker.
			if err := s.onResult(ctx, work.Result{Job: aj.id, Task: i, Result: *res}); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return transient(err)
			}
			continue
		}
		it := &work.Item{Job: aj.id, Task: i, Spec: spec, Models: pms}
		if s.cfg.Queue != nil {
			if !s.publish(ctx, it, epoch) {
				return nil
			}
			continue
		}
		select {
		case s.items <- localItem{ctx: ctx, item: it}:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// publish queues an item on NATS, trying again while NATS may be
// restarting rather than fail a job that nothing is wrong with. It
// reports false when ctx ended first.
func (s *Server) publish(ctx context.Context, it *work.Item, epoch string) bool {
	for {
		err := s.cfg.Queue.Publish(ctx, it, epoch)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		s.log.Warn("queueing an item; retrying", "job", it.Job, "task", it.Task, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

// localWorker checks items of the local pool.
func (s *Server) localWorker() {
	for {
		var li localItem
		select {
		case li = <-s.items:
		case <-s.ctx.Done():
			return
		}
		if li.ctx.Err() != nil {
			continue // cancelled job
		}
		if s.cfg.beforeCheck != nil {
			s.cfg.beforeCheck(li.ctx, li.item)
		}
		res, err := s.cfg.Checkers.Do(li.ctx, li.item)
		if err != nil {
			continue // cancelled mid-check; resumed at the next start if the server stopped
		}
		// A result that cannot be stored is kept and stored again, with a
		// backoff, until it is: checking it again could take minutes.
		for n := 0; ; n++ {
			err := s.onResult(li.ctx, res)
			if err == nil || li.ctx.Err() != nil {
				break
			}
			d := backoff(s.cfg.retryMin, s.cfg.retryMax, n)
			s.log.Warn("storing result failed; retrying", "job", res.Job, "task", res.Task, "in", d, "err", err)
			select {
			case <-li.ctx.Done():
			case <-time.After(d):
			}
		}
	}
}

// onResult stores a result and completes or fails its job. It is called
// for every delivery, duplicates included.
func (s *Server) onResult(ctx context.Context, r work.Result) error {
	s.metrics.models.Inc()
	s.metrics.checkSeconds.Observe(r.Elapsed.Seconds())
	if r.Result.Spin {
		s.metrics.spinSeconds.Add(r.Elapsed.Seconds())
	}
	aj := s.activeJob(r.Job)
	if aj == nil {
		return nil // finished, cancelled or unknown job: a late duplicate
	}
	if r.Err != "" {
		s.fail(aj, fmt.Errorf("task %d: %s", r.Task, r.Err))
		return nil
	}
	data, err := work.Encode(&r)
	if err != nil {
		return fmt.Errorf("encoding result: %w", err)
	}
	done, ok, err := s.st.PutResult(ctx, r.Job, r.Task, data)
	if err != nil || !ok {
		return err
	}
	aj.mu.Lock()
	aj.progress, aj.lost = time.Now(), 0
	aj.mu.Unlock()
	j, err := s.st.Job(ctx, r.Job)
	if err != nil {
		return err
	}
	if j.Total > 0 && done >= j.Total {
		return s.complete(ctx, aj)
	}
	return nil
}

// complete assembles and stores the report of a job whose tasks all have
// results. It runs once per job even when duplicates race.
func (s *Server) complete(ctx context.Context, aj *activeJob) (err error) {
	m, opts, tasks, err := s.load(ctx, aj)
	if err != nil {
		return err
	}
	defer s.release(aj, true)
	aj.mu.Lock()
	if aj.final {
		aj.mu.Unlock()
		return nil
	}
	aj.final = true
	aj.mu.Unlock()
	// A store failure leaves the job active: the supervisor completes it
	// (or the next delivery of a result does).
	defer func() {
		if err != nil {
			aj.mu.Lock()
			aj.final = false
			aj.mu.Unlock()
			if ctx.Err() == nil {
				err = transient(err)
				s.stall(aj, err)
			}
		}
	}()
	aj.mu.Lock()
	rep, jo := aj.reproduced, aj.jopts
	aj.mu.Unlock()
	j, err := s.st.Job(ctx, aj.id)
	if err != nil {
		return err
	}
	if rep == nil {
		if rep, err = s.assemble(ctx, aj, m, opts, tasks); rep == nil || err != nil {
			return err // nil, nil: the job ended
		}
		if jo.Reproduce {
			// The directed runs take minutes: not in the goroutine
			// that delivers results.
			aj.mu.Lock()
			aj.reproducing = true
			aj.mu.Unlock()
			s.wg.Go(func() { s.reproduceJob(aj, j, rep) })
			return nil
		}
	}
	if !j.Started.IsZero() {
		rep.Stats.Elapsed = time.Since(j.Started)
	}
	data, err := work.Encode(rep)
	if err != nil {
		return fmt.Errorf("encoding report: %w", err)
	}
	sum := store.Summary{Events: rep.Stats.Events, SharedVars: rep.Stats.SharedVars,
		Bugs: len(rep.Active()), Violations: len(rep.Violations)}
	sum.Failed, sum.Reproduced, sum.FailingRuns = reproduceCounts(rep)
	ok, err := s.st.Finish(ctx, aj.id, store.Done, "", data, sum)
	if err != nil {
		return err
	}
	if ok {
		s.metrics.finished.WithLabelValues(string(store.Done)).Inc()
		s.metrics.violations.Add(float64(len(rep.Violations)))
		s.log.Info("job done", "job", aj.id, "models", len(tasks), "bugs", sum.Bugs)
		s.dropTrace(j)
	}
	s.forget(aj)
	return nil
}

// assemble reads the results of a job's tasks and runs its analyses: the
// report of `mcpredict run`. It returns nil and no error when it ended the
// job instead (a task failed, an analysis failed).
func (s *Server) assemble(ctx context.Context, aj *activeJob, m *tracemodel.Model, opts predict.Options, tasks []predict.Task) (*bugs.Report, error) {
	results := make([]predict.PairResult, len(tasks))
	have := 0
	var taskErr string
	err := s.st.Results(ctx, aj.id, func(task int, b []byte) error {
		var r work.Result
		if err := work.Decode(b, &r); err != nil {
			return err
		}
		if task < 0 || task >= len(results) {
			return fmt.Errorf("result for task %d of %d", task, len(results))
		}
		if r.Err != "" && taskErr == "" {
			taskErr = fmt.Sprintf("task %d: %s", task, r.Err)
		}
		results[task] = r.Result
		have++
		return nil
	})
	if err == nil && have != len(tasks) {
		err = fmt.Errorf("%d of %d results stored", have, len(tasks))
	}
	if err != nil {
		return nil, fmt.Errorf("completing job %s: %w", aj.id, err)
	}
	if taskErr != "" {
		_, _ = s.end(aj, store.Failed, taskErr) // retried by the supervisor
		return nil, nil
	}
	var rep *bugs.Report
	if err := guard(func() (err error) {
		rep, err = analyze(ctx, m, aj.analyzers, opts, tasks, results)
		return err
	}); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		_, _ = s.end(aj, store.Failed, err.Error()) // retried by the supervisor
		return nil, nil
	}
	return rep, nil
}

// reproduceJob makes the directed runs of a job whose report is assembled
// (Config.Reproduce), then stores the report with their outcome. A
// failure of reproduce fails the job with its message; a cancelled job or
// a stopping server leaves it to its cancellation or to the next start,
// which makes the runs again.
func (s *Server) reproduceJob(aj *activeJob, j store.Job, rep *bugs.Report) {
	ctx := aj.ctx
	defer func() {
		aj.mu.Lock()
		aj.reproducing = false
		aj.mu.Unlock()
	}()
	select {
	case s.reproducing <- struct{}{}:
	case <-ctx.Done():
		return
	}
	got, err := func() (*bugs.Report, error) {
		defer func() { <-s.reproducing }()
		aj.mu.Lock()
		jo := aj.jopts
		aj.mu.Unlock()
		if s.cfg.Reproduce == nil { // the job was accepted by a server that ran programs
			return nil, errors.New("this server runs no programs (mcpredict serve --allow-reproduce)")
		}
		budget, err := s.reproduceBudget(jo)
		if err != nil {
			return nil, err
		}
		out, err := filepath.Abs(filepath.Join(s.cfg.DataDir, "reproduce", aj.id))
		if err != nil {
			return nil, err
		}
		if err := os.RemoveAll(out); err != nil { // an earlier start's runs
			return nil, err
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		s.log.Info("reproducing", "job", aj.id, "candidates", len(rep.Active()), "budget", budget, "runs", out)
		var got *bugs.Report
		err = guard(func() (err error) {
			got, err = s.cfg.Reproduce(ctx, ReproduceRequest{Job: aj.id, Trace: j.TracePath, Options: jo, Report: rep, Budget: budget, OutDir: out})
			return err
		})
		if err == nil && got == nil {
			err = errors.New("no report")
		}
		return got, err
	}()
	switch {
	case ctx.Err() != nil:
		return // cancelled, or the server stops: resumed at the next start
	case err != nil:
		aj.mu.Lock()
		aj.reproducing = false // the job ends as failed, not as cancelled
		aj.mu.Unlock()
		_, _ = s.end(aj, store.Failed, "reproduce: "+err.Error()) // retried by the supervisor
		return
	}
	aj.mu.Lock()
	aj.reproduced, aj.final, aj.reproducing = got, false, false
	aj.mu.Unlock()
	_ = s.complete(ctx, aj) // a store failure stalls the job: the supervisor completes it
}

// reproduceBudget is the wall time of a job's directed runs.
func (s *Server) reproduceBudget(jo JobOptions) (time.Duration, error) {
	if jo.ReproduceBudget == "" {
		return s.cfg.ReproduceBudget, nil
	}
	d, err := time.ParseDuration(jo.ReproduceBudget)
	switch {
	case err != nil:
		return 0, &predict.UsageError{Msg: fmt.Sprintf("reproduce_budget %q: want a duration such as 90s or 5m", jo.ReproduceBudget)}
	case d <= 0:
		return 0, &predict.UsageError{Msg: fmt.Sprintf("reproduce_budget %q: want a positive duration", jo.ReproduceBudget)}
	case d > s.cfg.ReproduceBudget:
		return 0, &predict.UsageError{Msg: fmt.Sprintf("reproduce_budget %s: more than this server allows, %s (mcpredict serve --reproduce-budget)", d, s.cfg.ReproduceBudget)}
	}
	return d, nil
}

// reproduceCounts are the bugs of a report whose directed run failed, those
// reproduced without failing, and the failing runs that are no bug's.
func reproduceCounts(rep *bugs.Report) (failed, reproduced, failingRuns int) {
	for _, b := range rep.Active() {
		switch b.ReproductionState() {
		case bugs.StateFailed:
			failed++
		case bugs.Reproduced:
			reproduced++
		}
	}
	return failed, reproduced, len(rep.Failures)
}

// fail ends a job with an error.
func (s *Server) fail(aj *activeJob, cause error) {
	_, _ = s.finishWith(aj, store.Failed, cause.Error()) // a failure to record it is retried
}

// finishWith ends an active job, unless it is ending already. An error
// means that the end could not be recorded yet: the supervisor retries.
func (s *Server) finishWith(aj *activeJob, state store.State, msg string) (bool, error) {
	aj.mu.Lock()
	if aj.final && !aj.reproducing { // a job making its directed runs can be cancelled
		aj.mu.Unlock()
		return false, nil
	}
	aj.final = true
	aj.mu.Unlock()
	return s.end(aj, state, msg)
}

// end records the end of a job whose caller has set aj.final. When the
// store fails, the job stays in the active set, stopped, with its ending
// to be recorded by the supervisor.
func (s *Server) end(aj *activeJob, state store.State, msg string) (bool, error) {
	// The server may be stopping: finishing must still be recorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(aj.ctx), 30*time.Second)
	defer cancel()
	ok, err := s.st.Finish(ctx, aj.id, state, msg, nil, store.Summary{})
	if err != nil {
		// Keep the job, stopped, until its end is recorded.
		s.log.Error("recording the end of a job; retrying", "job", aj.id, "state", state, "err", err)
		aj.cancel()
		aj.mu.Lock()
		aj.ending = &ending{state: state, msg: msg}
		aj.mu.Unlock()
		s.stall(aj, err)
		return false, transient(err)
	}
	aj.mu.Lock()
	aj.ending = nil
	aj.mu.Unlock()
	if ok {
		s.metrics.finished.WithLabelValues(string(state)).Inc()
		s.log.Info("job ended", "job", aj.id, "state", state, "reason", msg)
		if j, err := s.st.Job(ctx, aj.id); err == nil {
			s.dropTrace(j)
		}
	}
	if q := s.cfg.Queue; q != nil {
		if err := q.PurgeJob(ctx, aj.id); err != nil {
			s.log.Warn("purging items", "job", aj.id, "err", err)
		}
	}
	s.forget(aj)
	return ok, nil
}

// dropTrace removes the stored trace of a finished job: the report holds
// everything a client can ask for.
func (s *Server) dropTrace(j store.Job) {
	if j.TracePath != "" {
		if err := os.Remove(j.TracePath); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("removing stored trace", "job", j.ID, "err", err)
		}
	}
	if q := s.cfg.Queue; q != nil && s.cfg.Shards > 0 {
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		if err := q.DeleteTrace(ctx, j.ID); err != nil {
			s.log.Warn("removing the trace of the shards", "job", j.ID, "err", err)
		}
	}
}

// Cancel cancels a job that is not finished. It returns store.ErrNotFound
// for an unknown job and reports false if the job had already finished. If
// the cancellation cannot be recorded now (the store fails), the job is
// stopped, the error returned, and the cancellation recorded later.
func (s *Server) Cancel(ctx context.Context, id string) (bool, error) {
	if _, err := s.st.Job(ctx, id); err != nil {
		return false, err
	}
	aj := s.activeJob(id)
	if aj == nil {
		return false, nil
	}
	return s.finishWith(aj, store.Canceled, "cancelled by a client")
}
