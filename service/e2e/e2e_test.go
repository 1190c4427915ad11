package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/batch"
	"github.com/mcpredict/mcpredict/service/client"
	"github.com/mcpredict/mcpredict/service/internal/testtrace"
	"github.com/mcpredict/mcpredict/service/store"
)

// TestEndToEnd: a server with embedded NATS and two worker processes check
// every example with the default engine (native search, Spin confirms);
// every report equals that of `mcpredict run`.
func TestEndToEnd(t *testing.T) {
	needSpin(t)
	ctx := ctxT(t, 3*time.Minute)
	srv := startServer(t, t.TempDir(), nil, "--embedded-nats", "--nats-listen", "127.0.0.1:0", "--workers", "0")
	w1 := startWorker(t, "w1", srv.nats, "--jobs", "1", "-v")
	w2 := startWorker(t, "w2", srv.nats, "--jobs", "1", "-v")
	c := &client.Client{Base: srv.url}
	traces, err := filepath.Glob(filepath.Join(repo, "examples", "*.csv"))
	if err != nil || len(traces) < 5 {
		t.Fatalf("examples: %v %v", traces, err)
	}
	start := time.Now()
	ids := submitAll(t, ctx, c, traces, service.JobOptions{})
	models := 0
	for i, trace := range traces {
		j, err := c.Wait(ctx, ids[i], 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		models += j.Total
		rep, err := c.Report(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		sameReport(t, trace, rep, runReport(t, trace))
	}
	t.Logf("%d traces, %d models in %s", len(traces), models, time.Since(start).Round(time.Millisecond))
	for _, w := range []*proc{w1, w2} {
		if n := strings.Count(w.output(), "model checked"); n == 0 {
			t.Errorf("worker %s checked no model", w.name)
		}
	}
}

// submitAll uploads the traces concurrently and returns the job ids.
func submitAll(t *testing.T, ctx context.Context, c *client.Client, traces []string, o service.JobOptions) []string {
	t.Helper()
	ids := make([]string, len(traces))
	errs := make([]error, len(traces))
	var wg sync.WaitGroup
	for i, tr := range traces {
		wg.Go(func() {
			j, err := c.UploadFile(ctx, tr, o)
			ids[i], errs[i] = j.ID, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestFaults kills a worker with SIGKILL in the middle of a job, then the
// server: every job still completes once, with the report of `mcpredict run`.
// Every model goes through Spin so that each takes long enough to be caught
// mid-check.
func TestFaults(t *testing.T) {
	needSpin(t)
	ctx := ctxT(t, 4*time.Minute)
	data := t.TempDir()
	dir := t.TempDir()
	traces := []string{
		testtrace.Write(t, dir, "a.csv", 4, 2, 0), // 12 models
		testtrace.Write(t, dir, "b.csv", 3, 2, 7), // 6 models
	}
	total := testtrace.Models(4, 2) + testtrace.Models(3, 2)
	natsPort := freePort(t)
	srvArgs := []string{"--embedded-nats", "--nats-listen", "127.0.0.1:" + natsPort, "--workers", "0", "--ack-wait", "2s"}
	srv := startServer(t, data, nil, srvArgs...)
	wa := startWorker(t, "wa", srv.nats, "--jobs", "1", "-v")
	wb := startWorker(t, "wb", srv.nats, "--jobs", "1", "-v")
	c := &client.Client{Base: srv.url}
	// McPatom's models, which testtrace counts.
	opts := service.JobOptions{Engine: "spin", Analysis: "mcpatom,deadlock"}
	ids := submitAll(t, ctx, c, traces, opts)
	progress := func(c *client.Client) int {
		n := 0
		for _, id := range ids {
			if j, err := c.Job(ctx, id); err == nil {
				n += j.Done
			}
		}
		return n
	}
	// Kill wa while it checks a model: it has logged more starts than ends.
	waitUntil(t, ctx, "3 models done and wa mid-model", func() bool {
		out := wa.output()
		return progress(c) >= 3 && strings.Count(out, "checking model") > strings.Count(out, "model checked")
	})
	wa.kill9(t)
	t.Logf("killed worker wa after %d models (it checked %d)", progress(c), strings.Count(wa.output(), "model checked"))
	wc := startWorker(t, "wc", srv.nats, "--jobs", "1", "-v")
	waitUntil(t, ctx, "9 models done", func() bool { return progress(c) >= 9 })
	before := progress(c)
	srv.kill9(t)
	t.Logf("killed the server after %d of %d models", before, total)
	srv2 := startServer(t, data, nil, srvArgs...)
	c2 := &client.Client{Base: srv2.url}
	for i, id := range ids {
		j, err := c2.Wait(ctx, id, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if j.Done != j.Total || j.Total != []int{12, 6}[i] {
			t.Errorf("job %s: done %d of %d", id, j.Done, j.Total)
		}
		rep, err := c2.Report(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		sameReport(t, traces[i], rep, runReport(t, traces[i], "--engine", "spin", "--analysis", "mcpatom,deadlock"))
	}
	jobs, err := c2.Jobs(ctx, 0)
	if err != nil || len(jobs) != len(traces) {
		t.Errorf("jobs after the faults: %d (%v), want %d", len(jobs), err, len(traces))
	}
	if !strings.Contains(srv2.output(), "resuming job") {
		t.Error("the restarted server resumed no job")
	}
	// The model wa was checking when it died was checked by another worker
	// (redelivered after the ack wait, or queued again by the restarted
	// server).
	// On a loaded machine the model can end between the moment wa was
	// seen mid-model and the SIGKILL: then wa held nothing when it died.
	out := wa.output()
	starts := regexp.MustCompile(`checking model" job=(\w+) task=(\d+)`).FindAllStringSubmatch(out, -1)
	if len(starts) == 0 {
		t.Fatal("the killed worker logged no model")
	}
	held := starts[len(starts)-1]
	done := regexp.MustCompile(`model checked" job=` + held[1] + ` task=` + held[2] + ` `)
	if strings.Count(out, "checking model") == strings.Count(out, "model checked") && done.MatchString(out) {
		t.Logf("wa finished job %s task %s before the SIGKILL landed: it held no model", held[1], held[2])
		return
	}
	if !done.MatchString(wb.output()) && !done.MatchString(wc.output()) {
		t.Errorf("job %s task %s, held by the killed worker, was not checked by another", held[1], held[2])
	}
}

// TestFaultsShards is TestFaults for a server that shards its jobs
// (--shards): a worker killed with SIGKILL while it projects and checks a
// shard, then the server killed and restarted: the job completes once,
// with the report of `mcpredict run`, the shard of the killed worker done
// by another.
func TestFaultsShards(t *testing.T) {
	needSpin(t)
	ctx := ctxT(t, 4*time.Minute)
	data := t.TempDir()
	trace := testtrace.Write(t, t.TempDir(), "a.csv", 4, 3, 0) // 18 models in 3 variables
	natsPort := freePort(t)
	srvArgs := []string{"--embedded-nats", "--nats-listen", "127.0.0.1:" + natsPort, "--workers", "0", "--ack-wait", "2s", "--shards", "3"}
	srv := startServer(t, data, nil, srvArgs...)
	wa := startWorker(t, "wa", srv.nats, "--jobs", "1", "-v")
	c := &client.Client{Base: srv.url}
	opts := service.JobOptions{Engine: "spin", Analysis: "mcpatom,deadlock"}
	ids := submitAll(t, ctx, c, []string{trace}, opts)
	waitUntil(t, ctx, "wa in a shard", func() bool { return strings.Contains(wa.output(), "checking shard") })
	wa.kill9(t)
	held := regexp.MustCompile(`checking shard" job=(\w+) task=(\d+)`).FindStringSubmatch(wa.output())
	wb := startWorker(t, "wb", srv.nats, "--jobs", "1", "-v")
	waitUntil(t, ctx, "a shard done", func() bool {
		j, err := c.Job(ctx, ids[0])
		return err == nil && j.Done >= 6
	})
	srv.kill9(t)
	srv2 := startServer(t, data, nil, srvArgs...)
	c2 := &client.Client{Base: srv2.url}
	j, err := c2.Wait(ctx, ids[0], 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if j.Done != j.Total || j.Total != 18 {
		t.Errorf("job %s: done %d of %d, want 18", ids[0], j.Done, j.Total)
	}
	rep, err := c2.Report(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, trace, rep, runReport(t, trace, "--engine", "spin", "--analysis", "mcpatom,deadlock"))
	// The shard wa held was taken by wb (redelivered, or queued again by
	// the restarted server).
	if !strings.Contains(wb.output(), `checking shard" job=`+held[1]+` task=`+held[2]+` `) {
		t.Errorf("the shard of job %s at task %s, held by the killed worker, was not taken by another:\n%s", held[1], held[2], wb.output())
	}
}

func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestLoad submits 50 traces at once to a server with a token and an upload
// limit, measures /healthz meanwhile, and checks the bad inputs on the
// real process.
func TestLoad(t *testing.T) {
	const token = "load-test-token"
	ctx := ctxT(t, 3*time.Minute)
	srv := startServer(t, t.TempDir(), []string{"MCPREDICT_TOKEN=" + token}, "--engine", "native", "--max-upload-mb", "1")
	c := &client.Client{Base: srv.url, Token: token}
	dir := t.TempDir()
	var traces []string
	for i := range 50 {
		traces = append(traces, testtrace.Write(t, dir, fmt.Sprintf("t%02d.csv", i), 3+i%3, 2, i))
	}

	// Health probes while the load runs.
	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	probeCtx, stopProbe := context.WithCancel(ctx)
	var probes sync.WaitGroup
	probes.Go(func() {
		for probeCtx.Err() == nil {
			t0 := time.Now()
			h, err := (&client.Client{Base: srv.url}).Health(probeCtx)
			if err == nil && h.Status == "ok" {
				mu.Lock()
				latencies = append(latencies, time.Since(t0))
				mu.Unlock()
			} else if probeCtx.Err() == nil {
				t.Errorf("healthz under load: %+v %v", h, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	start := time.Now()
	ids := submitAll(t, ctx, c, traces, service.JobOptions{})
	submitted := time.Since(start)
	models := 0
	for _, id := range ids {
		j, err := c.Wait(ctx, id, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		models += j.Total
		if j.Bugs == 0 {
			t.Errorf("job %s: no bug in a trace full of them", id)
		}
	}
	elapsed := time.Since(start)
	stopProbe()
	probes.Wait()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	if len(latencies) < 5 {
		t.Fatalf("only %d health probes", len(latencies))
	}
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	t.Logf("50 jobs, %d models: submitted in %s, all done in %s; /healthz over %d probes: p50 %s, p95 %s, max %s",
		models, submitted.Round(time.Millisecond), elapsed.Round(time.Millisecond), len(latencies),
		pct(0.5).Round(time.Microsecond), pct(0.95).Round(time.Microsecond), pct(1).Round(time.Microsecond))
	if pct(1) > 2*time.Second {
		t.Errorf("/healthz took up to %s under load", pct(1))
	}
	// Two of the reports, against `mcpredict run`.
	for _, i := range []int{0, 49} {
		rep, err := c.Report(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		sameReport(t, traces[i], rep, runReport(t, traces[i], "--engine", "native"))
	}

	// Every report format.
	for _, f := range []struct{ format, has string }{
		{"json", `"schema"`},
		{"text", "predicted from"},
		{"sarif", `"2.1.0"`},
		{"html", "<html"},
	} {
		var buf bytes.Buffer
		if err := c.ReportTo(ctx, ids[0], f.format, &buf); err != nil || !strings.Contains(buf.String(), f.has) {
			t.Errorf("report as %s: %v, %d bytes without %q", f.format, err, buf.Len(), f.has)
		}
	}

	// Bad inputs.
	big := bytes.Repeat([]byte("1, 1, a.c-1, Read, x\n"), 60000) // > 1 MiB
	tests := []struct {
		name   string
		token  string
		path   string
		method string
		body   []byte
		code   int
		msg    string
	}{
		{"malformed trace", token, "/v1/jobs?name=bad.csv", "POST", []byte("1, 1, a.c-1, Frobnicate, x\n"), 400, "bad.csv:1:"},
		{"oversize upload", token, "/v1/jobs", "POST", big, 413, "limit"},
		{"wrong token", "nope", "/v1/jobs", "GET", nil, 401, "token"},
		{"no token", "", "/v1/jobs/" + ids[0], "GET", nil, 401, "token"},
		{"unknown job id", token, "/v1/jobs/ffffffffffffffff", "GET", nil, 404, "no job"},
		{"unknown job report", token, "/v1/jobs/ffffffffffffffff/report", "GET", nil, 404, "no job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, tt.method, srv.url+tt.path, bytes.NewReader(tt.body))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			if resp.StatusCode != tt.code || !strings.Contains(b.String(), tt.msg) {
				t.Errorf("got %d %s, want %d with %q", resp.StatusCode, b.String(), tt.code, tt.msg)
			}
		})
	}
	if h, err := c.Health(ctx); err != nil || h.Status != "ok" {
		t.Errorf("server after the bad inputs: %+v %v", h, err)
	}
}

// TestNightly runs deploy/nightly.sh --once, as the scheduler container
// does, against a real server: three nights, with a change in between.
func TestNightly(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("nightly.sh needs curl")
	}
	const token = "nightly-token"
	ctx := ctxT(t, 3*time.Minute)
	srv := startServer(t, t.TempDir(), []string{"MCPREDICT_TOKEN=" + token}, "--engine", "native")
	traces := t.TempDir()
	for _, f := range []string{"bank.csv", "fig5.csv", "logbuf.csv", "condvar-handoff.csv"} {
		copyFile(t, filepath.Join(repo, "examples", f), filepath.Join(traces, f))
	}
	reports := filepath.Join(t.TempDir(), "reports")
	night := func(wantStatus int) *batch.Summary {
		t.Helper()
		cmd := exec.CommandContext(ctx, "sh", filepath.Join(repo, "deploy", "nightly.sh"), "--once")
		cmd.Env = env("MCPREDICT_SERVER="+srv.url, "MCPREDICT_TOKEN="+token, "TRACES="+traces, "REPORTS="+reports)
		out, err := cmd.CombinedOutput()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != wantStatus {
			t.Fatalf("nightly.sh exit status %d, want %d:\n%s", status, wantStatus, out)
		}
		sum, err := batch.ReadSummary(filepath.Join(reports, "latest"))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return sum
	}
	// Night 1: every bug is new.
	s1 := night(1)
	if s1.Totals.Traces != 4 || s1.Totals.Errors != 0 || s1.Totals.Bugs == 0 || s1.Compare != nil {
		t.Fatalf("night 1: %+v", s1.Totals)
	}
	first, _ := os.Readlink(filepath.Join(reports, "latest"))
	for _, tr := range s1.Traces {
		for _, ext := range []string{".json", ".text"} {
			if _, err := os.Stat(filepath.Join(reports, first, "reports", tr.Key+ext)); err != nil {
				t.Errorf("night 1: %v", err)
			}
		}
	}
	// The nightly report of a trace is the one of `mcpredict run`.
	f, err := os.Open(filepath.Join(reports, first, "reports", "bank.csv.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := bugs.ReadJSON(f, "bank.csv.json")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, "bank.csv", got, runReport(t, filepath.Join(traces, "bank.csv"), "--engine", "native"))

	// Night 2: fig5.c changed; its bugs are new and the old one fixed.
	copyFile(t, filepath.Join(repo, "examples", "fig5-mutant.csv"), filepath.Join(traces, "fig5.csv"))
	s2 := night(1)
	if s2.Compare == nil || len(s2.Compare.New) == 0 || len(s2.Compare.Fixed) == 0 {
		t.Fatalf("night 2 comparison: %+v", s2.Compare)
	}
	for _, b := range append(slices.Clone(s2.Compare.New), s2.Compare.Fixed...) {
		if b.Trace != "fig5.csv" {
			t.Errorf("night 2: change in %s, only fig5.csv changed", b.Trace)
		}
	}
	// Night 3: nothing changed: no new bug, exit 0.
	s3 := night(0)
	if s3.Compare == nil || len(s3.Compare.New) != 0 || len(s3.Compare.Fixed) != 0 || s3.Compare.Unchanged != s3.Totals.Bugs {
		t.Errorf("night 3 comparison: %+v (bugs %d)", s3.Compare, s3.Totals.Bugs)
	}
	runs, _ := filepath.Glob(filepath.Join(reports, "2*"))
	if len(runs) != 3 {
		t.Errorf("report directories: %v", runs)
	}
	jobs, err := (&client.Client{Base: srv.url, Token: token}).Jobs(ctx, 0, store.Done)
	if err != nil || len(jobs) != 12 {
		t.Errorf("done jobs on the server: %d (%v), want 12", len(jobs), err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNightlyReproduce runs deploy/nightly.sh --once with
// NIGHTLY_REPRODUCE=1, then =server, on the recording of a program whose bug `run`
// cannot see (a counter bumped and restored in two critical sections, its
// assertion read between them): the night reports the failure.
func TestNightlyReproduce(t *testing.T) {
	for _, where := range []string{"1", "server"} {
		t.Run("NIGHTLY_REPRODUCE="+where, func(t *testing.T) { nightlyReproduce(t, where) })
	}
}

// nightlyReproduce: NIGHTLY_REPRODUCE=1 checks the traces in the
// scheduler with batch --reproduce, =server has the server run the
// programs (serve.sh --allow-reproduce): either way the night has the
// failed bug that run does not predict.
func nightlyReproduce(t *testing.T, where string) {
	needSpin(t)
	ctx := ctxT(t, 3*time.Minute)
	traces := t.TempDir()
	exe := filepath.Join(traces, "restore")
	src, _ := filepath.Abs(filepath.Join(repo, "reproduce", "testdata", "restore.c"))
	if out, err := exec.CommandContext(ctx, bin, "cc", "-O1", "-g", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("mcpredict cc: %v\n%s", err, out)
	}
	trace := filepath.Join(traces, "restore.csv")
	if out, err := exec.CommandContext(ctx, bin, "record", "-o", trace, "--", exe).CombinedOutput(); err != nil {
		t.Fatalf("mcpredict record: %v\n%s", err, out)
	}
	if out, err := exec.CommandContext(ctx, bin, "run", "--engine", "native", trace).CombinedOutput(); err != nil {
		t.Fatalf("run predicts something on it (%v): this test wants a bug only directed runs show\n%s", err, out)
	}
	reports := filepath.Join(t.TempDir(), "reports")
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(repo, "deploy", "nightly.sh"), "--once")
	cmd.Env = env("NIGHTLY_REPRODUCE="+where, "TRACES="+traces, "REPORTS="+reports, "NIGHTLY_FLAGS=--engine native")
	if where == "server" {
		srv := startServer(t, t.TempDir(), nil, "--allow-reproduce", traces, "--engine", "native")
		cmd.Env = append(cmd.Env, "MCPREDICT_SERVER="+srv.url)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("nightly.sh: %v, want exit status 1 (a new finding)\n%s", err, out)
	}
	sum, err := batch.ReadSummary(filepath.Join(reports, "latest"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(sum.Traces) != 1 || sum.Traces[0].Failed == 0 || sum.Traces[0].Status != batch.StatusViolations {
		t.Fatalf("night: %+v\n%s", sum.Traces, out)
	}
}
