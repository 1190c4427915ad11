package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/client"
	"github.com/mcpredict/mcpredict/service/internal/testtrace"
	"github.com/mcpredict/mcpredict/service/queue"
	"github.com/mcpredict/mcpredict/service/store"
	"github.com/mcpredict/mcpredict/service/work"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// resolve is the tests' Resolver: built-in patterns, native engine unless
// the job asks otherwise, the analyses of the registry the job names
// (mcpatom and deadlock if none: the tests count McPatom's models).
func resolve(o service.JobOptions) (predict.Options, []*analysis.Analyzer, error) {
	eng := predict.EngineNative
	if o.Engine != "" {
		e, err := predict.ParseEngine(o.Engine)
		if err != nil {
			return predict.Options{}, nil, &predict.UsageError{Msg: err.Error()}
		}
		eng = e
	}
	var pats []ltl.Pattern // nil: each analysis its built-in ones
	for _, id := range o.Patterns {
		found := false
		for _, p := range ltl.AllBuiltin() {
			if p.ID == id {
				pats, found = append(pats, p), true
			}
		}
		if !found {
			return predict.Options{}, nil, &predict.UsageError{Msg: fmt.Sprintf("unknown pattern %q", id)}
		}
	}
	list := o.Analysis
	if list == "" {
		list = "mcpatom,deadlock"
	}
	as, err := all.Select(all.Options{Patterns: pats}, list)
	if err != nil {
		return predict.Options{}, nil, &predict.UsageError{Msg: err.Error()}
	}
	return predict.Options{Vars: o.Vars, Threads: o.Threads, Engine: eng,
		Project: tracemodel.ProjectOptions{NoBoundaries: o.NoBoundaries}, Version: "test"}, as, nil
}

type env struct {
	srv *service.Server
	hs  *httptest.Server
	c   *client.Client
	cfg service.Config
}

// start runs a server on loopback; cfg.DataDir and cfg.Resolve default to
// a temp dir and resolve.
func start(t *testing.T, cfg service.Config) *env {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Resolve == nil {
		cfg.Resolve = resolve
	}
	if cfg.Formats == nil {
		cfg.Formats = map[string]service.Renderer{"text": report.WriteText, "json": bugs.WriteJSON}
	}
	srv, err := service.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	e := &env{srv: srv, hs: hs, c: &client.Client{Base: hs.URL, Token: cfg.Token}, cfg: cfg}
	t.Cleanup(e.stop)
	return e
}

func (e *env) stop() {
	if e.hs != nil {
		e.hs.Close()
		e.srv.Close()
		e.hs = nil
	}
}

// startQueue starts an embedded JetStream server and opens the queue on
// it, with an ack wait of a second.
func startQueue(t *testing.T, ctx context.Context) (*queue.Embedded, *queue.Queue) {
	t.Helper()
	emb, err := queue.StartEmbedded(ctx, "127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	q, err := queue.Open(ctx, emb.URL(), queue.Options{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return emb, q
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// runReport is what `mcpredict run --engine native` reports for a trace:
// the analyses run in this process, their models checked by predict.Run.
func runReport(t *testing.T, path, name string, o service.JobOptions) *bugs.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := tracemodel.Parse(context.Background(), f, name, tracemodel.Options{Lenient: o.Lenient})
	if err != nil {
		t.Fatal(err)
	}
	opts, as, err := resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Run(context.Background(), m, as, analysis.Options{Version: opts.Version, CheckModels: predict.ModelChecker(opts)})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// sameReport compares everything but the elapsed time.
func sameReport(t *testing.T, got, want *bugs.Report) {
	t.Helper()
	g, w := *got, *want
	// Costs differ between runs (time, verdict cache hits and so the
	// models that needed Spin); what was found must not.
	for _, r := range []*bugs.Report{&g, &w} {
		r.Stats.Elapsed, r.Stats.CacheHits, r.Stats.SpinModels, r.Stats.SpillBytes = 0, 0, 0, 0
	}
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if !bytes.Equal(gj, wj) {
		t.Errorf("report differs from the CLI's:\n got %s\nwant %s", gj, wj)
	}
}

const example = "../examples/bank.csv"

// TestSpilledJob: a job whose trace is spilled to disk (here from its
// second event) reports what run reports, and its temporary files are
// released once the job is done: no mapping of them is left in the
// process.
func TestSpilledJob(t *testing.T) {
	dir := t.TempDir()
	e := start(t, service.Config{Workers: 2, SpillDir: dir, SpillAfter: 1})
	ctx := ctxT(t, time.Minute)
	for _, trace := range []string{"../examples/fig5.csv", "../examples/logbuf.csv"} {
		j, err := e.c.UploadFile(ctx, trace, service.JobOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Wait(ctx, j.ID, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		rep, err := e.c.Report(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameReport(t, rep, runReport(t, trace, trace, service.JobOptions{}))
	}
	waitFor(t, ctx, "the spilled traces' files unmapped", func() bool {
		maps, err := os.ReadFile("/proc/self/maps")
		return err == nil && !bytes.Contains(maps, []byte(dir))
	})
}

func TestSubmitModes(t *testing.T) {
	e := start(t, service.Config{AllowPaths: []string{"../examples"}, Workers: 2})
	ctx := ctxT(t, time.Minute)
	upload := func(body io.Reader, ctype, query string) (service.JobView, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.hs.URL+"/v1/jobs"+query, body)
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return service.JobView{}, err
		}
		defer resp.Body.Close()
		var j service.JobView
		if resp.StatusCode != http.StatusAccepted {
			b, _ := io.ReadAll(resp.Body)
			return j, fmt.Errorf("status %d: %s", resp.StatusCode, b)
		}
		if resp.Header.Get("Location") == "" {
			return j, errors.New("no Location header")
		}
		return j, json.NewDecoder(resp.Body).Decode(&j)
	}
	tests := []struct {
		name   string
		submit func() (service.JobView, error)
		opts   service.JobOptions
		trace  string // name in the report
	}{
		{"raw body", func() (service.JobView, error) {
			return e.c.UploadFile(ctx, example, service.JobOptions{})
		}, service.JobOptions{}, example},
		{"raw body with options", func() (service.JobView, error) {
			return e.c.UploadFile(ctx, example, service.JobOptions{Patterns: []string{"P3"}, NoBoundaries: true})
		}, service.JobOptions{Patterns: []string{"P3"}, NoBoundaries: true}, example},
		{"multipart", func() (service.JobView, error) {
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			mw.WriteField("options", `{"patterns":["P1","P3"]}`)
			fw, _ := mw.CreateFormFile("trace", "bank.csv")
			b, _ := os.ReadFile(example)
			fw.Write(b)
			mw.Close()
			return upload(&buf, mw.FormDataContentType(), "")
		}, service.JobOptions{Patterns: []string{"P1", "P3"}}, "bank.csv"},
		{"server-side path", func() (service.JobView, error) {
			return e.c.SubmitPath(ctx, example, "", service.JobOptions{})
		}, service.JobOptions{}, example},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := tt.submit()
			if err != nil {
				t.Fatal(err)
			}
			if j.State != store.Queued || j.ID == "" {
				t.Errorf("submitted job: %+v", j)
			}
			done, err := e.c.Wait(ctx, j.ID, 20*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if done.Done != done.Total || done.Total == 0 || done.Report == "" || done.Name != tt.trace {
				t.Errorf("finished job: %+v", done)
			}
			rep, err := e.c.Report(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			sameReport(t, rep, runReport(t, example, tt.trace, tt.opts))
			var text bytes.Buffer
			if err := e.c.ReportTo(ctx, j.ID, "text", &text); err != nil || !strings.Contains(text.String(), "bank.c") {
				t.Errorf("text report: %v\n%s", err, text.String())
			}
		})
	}
	jobs, err := e.c.Jobs(ctx, 0)
	if err != nil || len(jobs) != len(tests) {
		t.Errorf("listed %d jobs (%v), want %d", len(jobs), err, len(tests))
	}
	if done, err := e.c.Jobs(ctx, 0, store.Running); err != nil || len(done) != 0 {
		t.Errorf("running jobs: %d (%v), want 0", len(done), err)
	}
}

func TestBadInputs(t *testing.T) {
	const token = "s3cret"
	e := start(t, service.Config{Token: token, MaxUpload: 4096, AllowPaths: []string{"../examples"}})
	ctx := ctxT(t, time.Minute)
	// A finished job for the report and cancel cases.
	good, err := e.c.UploadFile(ctx, example, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(ctx, good.ID, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("1, 1, a.c-1, Read, x\n", 1000)
	tests := []struct {
		name, method, path, ctype, body, token string
		code                                   int
		msg                                    string // in the error message
	}{
		{"malformed trace", "POST", "/v1/jobs?name=t.csv", "", "1, 1, a.c-1, Frobnicate, x\n", token, 400, "t.csv:1:"},
		{"missing fields", "POST", "/v1/jobs?name=t.csv", "", "a,b\n", token, 400, "t.csv:1: missing field"},
		{"binary junk", "POST", "/v1/jobs", "", "\x1f\x8b\x08\x00garbage", token, 400, ""},
		{"oversize upload", "POST", "/v1/jobs", "", big, token, 413, "limit of 4096 bytes"},
		{"no token", "POST", "/v1/jobs", "", "x", "", 401, "bearer token"},
		{"wrong token", "GET", "/v1/jobs", "", "", "wrong", 401, "bearer token"},
		{"unknown job", "GET", "/v1/jobs/0123456789abcdef", "", "", token, 404, "no job"},
		{"unknown job report", "GET", "/v1/jobs/nope/report", "", "", token, 404, "no job"},
		{"unknown job cancel", "POST", "/v1/jobs/nope/cancel", "", "", token, 404, "no job"},
		{"unknown format", "GET", "/v1/jobs/" + good.ID + "/report?format=pdf", "", "", token, 400, "unknown format"},
		{"cancel finished job", "POST", "/v1/jobs/" + good.ID + "/cancel", "", "", token, 409, "already done"},
		{"unknown pattern", "POST", "/v1/jobs?patterns=P9", "", "1, 1, a.c-1, Read, x\n", token, 400, "unknown pattern"},
		{"unknown variable", "POST", "/v1/jobs?vars=nosuch", "", mustRead(t, example), token, 400, "no shared variable"},
		{"bad boolean", "POST", "/v1/jobs?lenient=maybe", "", "x", token, 400, "lenient"},
		{"sync oddity with strict_sync", "POST", "/v1/jobs?name=t.csv&strict_sync=true", "", "1, 1, a.c-1, Unlock, m\n", token, 400, "t.csv:1: Unlock of m, which thread 1 does not hold"},
		{"path not allowed", "POST", "/v1/jobs", "application/json", `{"path":"/etc/passwd"}`, token, 403, "not under"},
		{"path missing", "POST", "/v1/jobs", "application/json", `{"path":"../examples/none.csv"}`, token, 400, "no such file"},
		{"bad JSON", "POST", "/v1/jobs", "application/json", `{"path":`, token, 400, "bad JSON"},
		{"multipart without trace", "POST", "/v1/jobs", "multipart/form-data; boundary=X", "--X--\r\n", token, 400, "without a \"trace\""},
		{"bad list limit", "GET", "/v1/jobs?limit=-1", "", "", token, 400, "limit"},
		{"bad list state", "GET", "/v1/jobs?state=sleeping", "", "", token, 400, "unknown state"},
		{"no route", "GET", "/v2/nothing", "", "", token, 404, "no route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, tt.method, e.hs.URL+tt.path, strings.NewReader(tt.body))
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var ae service.APIError
			if err := json.NewDecoder(resp.Body).Decode(&ae); err != nil {
				t.Fatalf("status %d, body not JSON: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != tt.code || !strings.Contains(ae.Error, tt.msg) || ae.Error == "" {
				t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, ae.Error, tt.code, tt.msg)
			}
		})
	}
	// Nothing bad became a job, and the server still answers.
	jobs, err := e.c.Jobs(ctx, 0)
	if err != nil || len(jobs) != 1 {
		t.Errorf("jobs after bad inputs: %d, %v; want only the good one", len(jobs), err)
	}
	if h, err := e.c.Health(ctx); err != nil || h.Status != "ok" {
		t.Errorf("health: %+v %v", h, err)
	}
	// /metrics needs no token and counts the refusals.
	resp, err := http.Get(e.hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`mcpredict_jobs_rejected_total{reason="bad_trace"} 4`, `mcpredict_jobs_rejected_total{reason="too_large"} 1`,
		`mcpredict_jobs{state="done"} 1`, "mcpredict_queue_depth 0", "mcpredict_models_checked_total 1"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// holder blocks the local pool's checks until released, counting them.
type holder struct {
	mu      sync.Mutex
	release chan struct{}
	started atomic.Int64
	after   int64 // checks that pass before holding
}

func newHolder(after int64) *holder { return &holder{release: make(chan struct{}), after: after} }

func (h *holder) hook(ctx context.Context, _ *work.Item) {
	if h.started.Add(1) <= h.after {
		return
	}
	h.mu.Lock()
	ch := h.release
	h.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestCancel(t *testing.T) {
	h := newHolder(0)
	cfg := service.Config{Workers: 1}
	service.SetBeforeCheck(&cfg, h.hook)
	e := start(t, cfg)
	ctx := ctxT(t, time.Minute)
	j, err := e.c.UploadFile(ctx, example, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a check to start", func() bool { return h.started.Load() > 0 })
	var ce *client.Error
	if _, err := e.c.Report(ctx, j.ID); !errors.As(err, &ce) || ce.Status != http.StatusConflict {
		t.Errorf("report of a running job: %v, want 409", err)
	}
	cj, err := e.c.Cancel(ctx, j.ID)
	if err != nil || cj.State != store.Canceled {
		t.Fatalf("cancel: %+v %v", cj, err)
	}
	if _, err := e.c.Wait(ctx, j.ID, 10*time.Millisecond); !errors.Is(err, client.ErrJobFailed) {
		t.Errorf("Wait on a cancelled job: %v", err)
	}
	if _, err := e.c.Cancel(ctx, j.ID); !errors.As(err, &ce) || ce.Status != http.StatusConflict {
		t.Errorf("second cancel: %v, want 409", err)
	}
	// The pool is free again: a new job completes.
	close(h.release)
	j2, err := e.c.UploadFile(ctx, example, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(ctx, j2.ID, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

// TestRestartResumes stops the server with a job half done and starts a new
// one on the same data directory: the job finishes, only the missing models
// are checked again, and the report equals predict.Run's.
func TestRestartResumes(t *testing.T) {
	dir := t.TempDir()
	trace := testtrace.Write(t, t.TempDir(), "gen.csv", 4, 2, 0) // 12 models
	total := testtrace.Models(4, 2)
	h := newHolder(5)
	cfg := service.Config{DataDir: dir, Workers: 1}
	service.SetBeforeCheck(&cfg, h.hook)
	e := start(t, cfg)
	ctx := ctxT(t, time.Minute)
	j, err := e.c.UploadFile(ctx, trace, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "5 results", func() bool {
		jv, err := e.c.Job(ctx, j.ID)
		return err == nil && jv.Done == 5
	})
	e.stop() // the 6th check is held: stopped mid-job
	if _, err := os.Stat(filepath.Join(dir, "traces", j.ID+".trace")); err != nil {
		t.Fatalf("stored trace of an unfinished job: %v", err)
	}

	var rechecked atomic.Int64
	cfg2 := service.Config{DataDir: dir, Workers: 2}
	service.SetBeforeCheck(&cfg2, func(context.Context, *work.Item) { rechecked.Add(1) })
	e2 := start(t, cfg2)
	jv, err := e2.c.Wait(ctx, j.ID, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if jv.Total != total || jv.Done != total {
		t.Errorf("resumed job: done %d total %d, want %d", jv.Done, jv.Total, total)
	}
	if n := rechecked.Load(); n != int64(total-5) {
		t.Errorf("models checked after the restart: %d, want %d", n, total-5)
	}
	rep, err := e2.c.Report(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, rep, runReport(t, trace, trace, service.JobOptions{}))
	if _, err := os.Stat(filepath.Join(dir, "traces", j.ID+".trace")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stored trace of a finished job still there: %v", err)
	}
}

// TestNATS runs the service on an embedded JetStream server with an
// in-process worker. An item taken by a "dead" worker (fetched, never
// acked) is redelivered, and a duplicate result changes nothing.
func TestNATS(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	emb, q := startQueue(t, ctx)
	e := start(t, service.Config{Queue: q})

	trace := testtrace.Write(t, t.TempDir(), "gen.csv", 3, 2, 0) // 6 models
	total := testtrace.Models(3, 2)
	j, err := e.c.UploadFile(ctx, trace, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The dead worker takes one item and never acks it.
	dead := deadWorker(t, ctx, emb.URL())
	var results []work.Result
	var mu sync.Mutex
	w := &queue.Worker{URL: emb.URL(), Concurrency: 2, Checkers: &work.Checkers{},
		OnResult: func(r work.Result) { mu.Lock(); results = append(results, r); mu.Unlock() }}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(wctx) })
	defer func() { stop(); wg.Wait() }()

	jv, err := e.c.Wait(ctx, j.ID, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if jv.Done != total || w.Checked() != int64(total) {
		t.Errorf("done %d, worker checked %d, want %d (the dead worker's item redelivered)", jv.Done, w.Checked(), total)
	}
	if dead.Task < 0 || dead.Job != j.ID {
		t.Errorf("the dead worker got %+v", dead)
	}
	rep, err := e.c.Report(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := runReport(t, trace, trace, service.JobOptions{})
	sameReport(t, rep, want)

	// Late duplicates of every result (a worker killed between publishing
	// and acking, then redelivered) change nothing.
	mu.Lock()
	dups := append([]work.Result(nil), results...)
	mu.Unlock()
	for _, r := range dups {
		r.Result.Violations = nil // a wrong duplicate would show in the report
		publishResult(t, ctx, emb.URL(), r)
	}
	// A marker job shows when the duplicates, queued before its results,
	// have been consumed.
	j2, err := e.c.UploadFile(ctx, trace, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(ctx, j2.ID, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	jv, err = e.c.Job(ctx, j.ID)
	if err != nil || jv.Done != total || jv.State != store.Done {
		t.Errorf("after duplicates: %+v %v", jv, err)
	}
	rep, err = e.c.Report(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, rep, want)
}

// TestNATSAtomicSets: the models of atomic sets are work items like
// McPatom's: a job that selects the analysis of atomic sets, alone or with
// McPatom, sends its set models to NATS workers and reports what the CLI
// reports — the torn read of range.csv as M1 on both variables.
func TestNATSAtomicSets(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	emb, q := startQueue(t, ctx)
	e := start(t, service.Config{Queue: q})
	w := &queue.Worker{URL: emb.URL(), Concurrency: 2, Checkers: &work.Checkers{}}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(wctx) })
	defer func() { stop(); wg.Wait() }()

	const trace = "../predict/testdata/range.csv"
	for _, list := range []string{"atomicset", "mcpatom,atomicset,deadlock"} {
		jo := service.JobOptions{Analysis: list}
		before := w.Checked()
		j, err := e.c.UploadFile(ctx, trace, jo)
		if err != nil {
			t.Fatal(err)
		}
		jv, err := e.c.Wait(ctx, j.ID, 20*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := e.c.Report(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := runReport(t, trace, trace, jo)
		sameReport(t, rep, want)
		if len(rep.Bugs) != 1 || rep.Bugs[0].Pattern != "M1" || rep.Bugs[0].Analysis != "atomicset" ||
			strings.Join(rep.Bugs[0].Vars, ",") != "lo,hi" {
			t.Errorf("%s: bugs %+v, want M1 on lo, hi", list, rep.Bugs)
		}
		sets := rep.AnalysisOf("atomicset")
		// The worker counts a model after it published its result, which
		// can complete the job first.
		waitFor(t, ctx, "the worker's count of the job's models", func() bool { return w.Checked()-before >= int64(jv.Done) })
		if checked := w.Checked() - before; jv.Done == 0 || checked != int64(jv.Done) || jv.Done != rep.Stats.Models ||
			sets == nil || !strings.HasPrefix(sets.Summary, "1 model,") {
			t.Errorf("%s: %d models done, %d checked by the worker, report %d models, atomicset %+v; want the set model among them",
				list, jv.Done, checked, rep.Stats.Models, sets)
		}
	}
}

// deadItem is what deadWorker took.
type deadItem struct {
	Job  string
	Task int
}

// deadWorker fetches one item from the work queue and holds it without
// acking, as a killed worker would.
func deadWorker(t *testing.T, ctx context.Context, url string) *deadItem {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, queue.WorkStream, queue.WorkConsumer)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var it work.Item
	if err := work.Decode(msg.Data(), &it); err != nil {
		t.Fatal(err)
	}
	return &deadItem{Job: it.Job, Task: it.Task}
}

// publishResult puts a result on the results stream, as a worker would.
func publishResult(t *testing.T, ctx context.Context, url string, r work.Result) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := work.Encode(&r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, queue.ResultSubject+r.Job, b); err != nil {
		t.Fatal(err)
	}
}

// serveHTTP serves the API of srv on loopback.
func serveHTTP(srv *service.Server) (*httptest.Server, *client.Client) {
	hs := httptest.NewServer(srv.Handler())
	return hs, &client.Client{Base: hs.URL}
}
