package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/batch"
)

// syncBuffer is a buffer that the server's goroutines write to while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// startServe runs mcpredict serve in this process on a free loopback port
// with args, and returns its URL and its standard error; the end of the
// test stops it.
func startServe(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- dispatch(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, args...), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	deadline := time.After(30 * time.Second)
	for {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], &stderr
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("mcpredict serve: exit %d\n%s", code, stderr.String())
		case <-deadline:
			t.Fatalf("mcpredict serve not listening after 30s\n%s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// silentRun checks that run predicts nothing on a trace and returns the
// number of events it parsed.
func silentRun(t *testing.T, trace string) int {
	t.Helper()
	code, stdout, stderr := runCLI(t, "run", "--engine", "native", "--format", "json", trace)
	if code != exitOK {
		t.Fatalf("run predicts something (exit %d): this test wants a bug only directed runs show\n%s\n%s", code, stdout, stderr)
	}
	rep, err := bugs.ReadJSON(strings.NewReader(stdout), trace)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Stats.Events
}

var jobID = regexp.MustCompile(`(?m)^job ([0-9a-f]+) `)

// TestServeReproduce: a server started with --allow-reproduce runs
// reproduce for a job that asks for it, on a real program built with
// mcpredict cc and recorded with mcpredict record, whose bug only a
// directed run shows (run is silent): submit --wait and status say the
// bug failed, the stored report has its reproduction, and the job the
// trace's event count from its submission on. A trace whose program is
// gone fails its job naming the program; a trace without a program is
// refused. batch --server --reproduce says the same.
func TestServeReproduce(t *testing.T) {
	trace := recordProgramIn(t, filepath.Join("..", "..", "reproduce", "testdata"), "restore")
	dir := filepath.Dir(trace)
	events := silentRun(t, trace)
	url, serveLog := startServe(t, "--allow-reproduce", dir, "--engine", "native")

	code, stdout, stderr := runCLI(t, "submit", "--server", url, "--reproduce", "--wait", "--poll", "20ms", trace)
	if code != exitViolation {
		t.Fatalf("submit --reproduce --wait: exit %d, want %d\n%s\n%s\n%s", code, exitViolation, stdout, stderr, serveLog)
	}
	for _, want := range []string{fmt.Sprintf(": queued: %d events", events), fmt.Sprintf(": done: %d events", events), "reproduce: 1 failed, 0 reproduced", "[failed]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("submit --wait does not say %q:\n%s", want, stdout)
		}
	}
	m := jobID.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no job id in:\n%s", stdout)
	}
	id := m[1]

	code, stdout, stderr = runCLI(t, "status", "--server", url, "--json", id)
	var j service.JobView
	if err := json.Unmarshal([]byte(stdout), &j); code != exitViolation || err != nil {
		t.Fatalf("status --json: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	if j.Events != events || j.Reproduce == nil || j.Reproduce.State != service.ReproduceDone || j.Reproduce.Failed != 1 {
		t.Errorf("job %+v, reproduce %+v; want %d events, 1 failed", j, j.Reproduce, events)
	}
	code, stdout, stderr = runCLI(t, "status", "--server", url, id)
	if code != exitViolation || !strings.Contains(stdout, "[failed]") || !strings.Contains(stdout, "1 failed") {
		t.Errorf("status: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "status", "--server", url, "--report", "json", id)
	if code != exitOK {
		t.Fatalf("status --report json: exit %d\n%s", code, stderr)
	}
	rep, err := bugs.ReadJSON(strings.NewReader(stdout), "report")
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, b := range rep.Active() {
		if b.Reproduction != nil && b.Reproduction.Failed {
			failed++
			if b.Reproduction.Schedule == "" || !strings.Contains(b.Reproduction.Evidence, "signal 6") {
				t.Errorf("failed bug %s: schedule %q, evidence:\n%s", b.ID, b.Reproduction.Schedule, b.Reproduction.Evidence)
			}
		}
	}
	if failed != 1 || rep.Reproduce == nil || rep.Reproduce.Runs == 0 || rep.Stats.Events != events {
		t.Errorf("stored report: %d failed bugs, reproduce %+v, %d events", failed, rep.Reproduce, rep.Stats.Events)
	}

	// Without --wait: the job and its event count.
	code, stdout, stderr = runCLI(t, "submit", "--server", url, trace)
	if code != exitOK || !strings.Contains(stdout, fmt.Sprintf("%d events", events)) {
		t.Errorf("submit: exit %d, want the job with %d events\n%s\n%s", code, events, stdout, stderr)
	}

	// batch --server --reproduce has the server run the programs: the
	// summary says the bug failed.
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr = runCLI(t, "batch", "--server", url, "--poll", "20ms", "--reproduce", "--reproduce-budget", "1m", "--quiet", "--out-dir", out, dir)
	if code != exitViolation {
		t.Fatalf("batch --server --reproduce: exit %d\n%s\n%s\n%s", code, stdout, stderr, serveLog)
	}
	sum, err := batch.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Traces) != 1 || sum.Traces[0].Failed == 0 || sum.Traces[0].Status != batch.StatusViolations || sum.Traces[0].Events != events {
		t.Fatalf("batch summary %+v\n%s", sum.Traces, stdout)
	}
	if !strings.Contains(stdout, "(1 failed, 0 reproduced)") {
		t.Errorf("batch's text summary does not say failed:\n%s", stdout)
	}

	// The program is gone: the job fails, naming it.
	gone := filepath.Join(t.TempDir(), "restore_gone")
	b, err := os.ReadFile(filepath.Join(dir, "restore"))
	if err == nil {
		err = os.WriteFile(gone, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	goneTrace := gone + ".csv"
	if code, _, stderr := runCLI(t, "record", "-o", goneTrace, "--", gone); code != exitOK {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	url2, _ := startServe(t, "--allow-reproduce", filepath.Dir(gone), "--engine", "native")
	code, stdout, stderr = runCLI(t, "submit", "--server", url2, "--reproduce", "--wait", "--poll", "20ms", goneTrace)
	want := "failed: reproduce: the recorded program " + gone + " is not on this server"
	if code != exitInternal || !strings.Contains(stdout, want) {
		t.Errorf("submit of a trace whose program is gone: exit %d, want %d and %q\n%s\n%s", code, exitInternal, want, stdout, stderr)
	}

	// No program named, or one outside the allowed directories: refused.
	for _, tt := range []struct{ url, trace, want string }{
		{url, exampleTrace("bank"), "the trace's header names no program"},
		{url2, trace, "is not under a directory this server runs programs from"},
	} {
		code, stdout, stderr = runCLI(t, "submit", "--server", tt.url, "--reproduce", tt.trace)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("submit --reproduce %s: exit %d, want %d and %q\n%s\n%s", tt.trace, code, exitUsage, tt.want, stdout, stderr)
		}
	}
}

// TestServeRunsNoPrograms: without --allow-reproduce the server refuses a
// job that asks for reproduce, saying how to allow it.
func TestServeRunsNoPrograms(t *testing.T) {
	url, _ := startServe(t, "--engine", "native")
	trace := writeTrace(t, "prog.csv", "# argv: [\"./prog\"]\n# cwd: /\n1, 1, a.c-1, Write, x\n2, 2, a.c-2, Read, x\n")
	code, stdout, stderr := runCLI(t, "submit", "--server", url, "--reproduce", trace)
	if code != exitUsage || !strings.Contains(stderr, "this server runs no programs (start it with mcpredict serve --allow-reproduce DIR)") {
		t.Errorf("submit --reproduce: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
