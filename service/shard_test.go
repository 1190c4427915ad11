package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/internal/testtrace"
	"github.com/mcpredict/mcpredict/service/queue"
	"github.com/mcpredict/mcpredict/service/work"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// resolvePrecise is resolve with the precise semantics (the data-flow
// order) and the job's part size: what decides the models that a sharded
// job's workers project.
func resolvePrecise(o service.JobOptions) (predict.Options, []*analysis.Analyzer, error) {
	opts, as, err := resolve(o)
	if err != nil {
		return opts, as, err
	}
	if opts.Project, err = tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise); err != nil {
		return opts, as, err
	}
	opts.Project.NoBoundaries = o.NoBoundaries
	opts.PartAccesses = o.PartAccesses
	return opts, as, nil
}

// TestNATSShards: a job split into shards that the workers project from
// the trace in the queue's trace store reports what run reports, bug for
// bug and instance for instance, with a worker that dies holding a shard
// (its shard is redelivered); every task gets its result, and the trace
// leaves the store when the job ends.
func TestNATSShards(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	emb, q := startQueue(t, ctx)
	e := start(t, service.Config{Queue: q, Shards: 3, Resolve: resolvePrecise})

	trace := filepath.Join(t.TempDir(), "server.csv")
	f, err := os.Create(trace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Write(ctx, f, gen.Config{Kind: gen.KindServer, Seed: 3, Threads: 3, Bugs: 4, Events: 6000}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	jo := service.JobOptions{PartAccesses: 16}
	j, err := e.c.UploadFile(ctx, trace, jo)
	if err != nil {
		t.Fatal(err)
	}
	dead := deadWorker(t, ctx, emb.URL())
	var mu sync.Mutex
	results := map[int]int{}
	sw := &service.ShardWorker{Checkers: &work.Checkers{}, TempDir: t.TempDir()}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		w := &queue.Worker{URL: emb.URL(), Concurrency: 1, Checkers: &work.Checkers{}, Shards: sw.Do,
			OnResult: func(r work.Result) {
				mu.Lock()
				results[r.Task]++
				mu.Unlock()
				if r.Err != "" {
					t.Errorf("task %d: %s", r.Task, r.Err)
				}
			}}
		wg.Go(func() { w.Run(wctx) })
	}
	defer func() { stop(); wg.Wait() }()

	jv, err := e.c.Wait(ctx, j.ID, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if dead.Job != j.ID {
		t.Errorf("the dead worker got %+v", dead)
	}
	mu.Lock()
	if len(results) != jv.Total || jv.Done != jv.Total || jv.Total < 6 {
		t.Errorf("%d tasks with results from the workers, job %+v", len(results), jv)
	}
	mu.Unlock()
	rep, err := e.c.Report(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) == 0 {
		t.Fatal("no violation reported: the test trace has seeded bugs")
	}
	// What run reports with the same options.
	m, err := tracemodel.Parse(ctx, mustOpen(t, trace), trace, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts, as, err := resolvePrecise(jo)
	if err != nil {
		t.Fatal(err)
	}
	want, err := analysis.Run(ctx, m, as, analysis.Options{Version: opts.Version, CheckModels: predict.ModelChecker(opts)})
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, rep, want)

	// The trace left the store with the job.
	nc, err := nats.Connect(emb.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, err := js.ObjectStore(ctx, queue.TraceBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetInfo(ctx, j.ID); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Errorf("the job's trace is still in the store: %v", err)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestNATSShardOfEndedJob: a shard that a worker takes while its job is
// being cancelled (its trace leaves the store) is dropped by the worker,
// not tried again forever.
func TestNATSShardOfEndedJob(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	emb, q := startQueue(t, ctx)
	e := start(t, service.Config{Queue: q, Shards: 2})
	trace := filepath.Join(t.TempDir(), "gen.csv")
	if err := os.WriteFile(trace, []byte(testtraceGen()), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := e.c.UploadFile(ctx, trace, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sw := &service.ShardWorker{Checkers: &work.Checkers{}, TempDir: t.TempDir()}
	errs := make(chan error, 4)
	w := &queue.Worker{URL: emb.URL(), Checkers: &work.Checkers{},
		Shards: func(ctx context.Context, it *work.Item, fetch func(context.Context, string) error) ([]work.Result, error) {
			// The job is cancelled between the delivery and the fetch.
			if _, err := e.c.Cancel(ctx, j.ID); err != nil {
				t.Error(err)
			}
			res, err := sw.Do(ctx, it, fetch)
			errs <- err
			return res, err
		}}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(wctx) })
	defer func() { stop(); wg.Wait() }()
	select {
	case err := <-errs:
		if err == nil || !strings.Contains(err.Error(), "no longer in the store") {
			t.Errorf("the shard of the cancelled job: %v, want its trace gone", err)
		}
	case <-ctx.Done():
		t.Fatal("no shard delivered")
	}
	for {
		n, err := q.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d items still queued: the shard of the cancelled job was not dropped", n)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if w.Checked() != 0 {
		t.Errorf("the worker published %d results for a cancelled job", w.Checked())
	}
}

// testtraceGen is a trace of 3 workers and 2 variables: 6 models.
func testtraceGen() string { return testtrace.Gen(3, 2, 0) }
