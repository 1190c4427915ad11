package reproduce

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/deadlock"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/recorder"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestReproduceCycleOfThree builds testdata/cycle3.c with the recorder,
// records a run that does not block, predicts its three-thread lock-order
// cycle and reproduces it: the directed run hangs (a failed run, stopped
// at its time-out) and its own trace has each thread holding its lock and
// blocked on the next one's.
func TestReproduceCycleOfThree(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join("testdata", "cycle3.c"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "cycle3")
	var out bytes.Buffer
	if err := recorder.CC(ctx, []string{"-O1", "-o", exe, src}, "", recorder.DefaultCacheDir(), false, &out, &out); err != nil {
		t.Fatalf("mcpredict cc: %v\n%s", err, out.String())
	}
	trace := filepath.Join(dir, "cycle3.csv")
	for attempt := 0; ; attempt++ {
		var tr bytes.Buffer
		out.Reset()
		if _, err := recorder.Record(ctx, &tr, recorder.RecordOptions{Program: exe, Args: []string{"20000"}, Dir: dir,
			Stdout: &out, Stderr: &out, Timeout: 10 * time.Second}); err != nil {
			t.Fatalf("recording: %v\n%s", err, out.String())
		}
		if strings.Contains(tr.String(), "# ended: exit status 0\n") {
			if err := os.WriteFile(trace, tr.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			break
		}
		if attempt == 2 {
			t.Fatalf("three recorded runs did not end cleanly; the last:\n%s", tr.String())
		}
	}

	m, err := tracemodel.Open(ctx, trace, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Run(ctx, m, []*analysis.Analyzer{deadlock.New(deadlock.Options{})}, analysis.Options{Version: "test"})
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	cands := CandidatesOf(rep, false, 3)
	if len(cands) != 1 || cands[0].Bug.Pattern != "DL" || len(cands[0].Instances[0].EssentialAccesses()) != 6 {
		t.Fatalf("want one predicted cycle of three threads, got %d candidates: %+v", len(cands), rep.Bugs)
	}
	rec, err := ReadRecording(trace)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := Run(ctx, rec, cands, Options{RunTimeout: 2 * time.Second, RunsPerBug: 2, OutDir: filepath.Join(dir, "runs")})
	results := res.Candidates
	if err != nil {
		t.Fatal(err)
	}
	rp := results[0].Reproduction
	if rp.Status != bugs.Reproduced || !rp.Failed || len(results[0].Runs) != 1 {
		t.Fatalf("reproduction %s, failed %v, %d runs; want a failed first run\n%s", rp.Status, rp.Failed, len(results[0].Runs), rp.Evidence)
	}
	o := results[0].Runs[0]
	if !o.TimedOut {
		t.Errorf("the directed run ended %s, want a hang stopped at the time-out", o.Exit)
	}
	if len(o.Observation.Lines) != 6 {
		t.Errorf("observed lines %v, want L1, R1, R2, L2, B1, B2", o.Observation.Lines)
	}
	// The first two threads were held until the third held its lock.
	log := strings.Join(o.RuntimeLog, "\n")
	for _, want := range []string{"remote step=2 of 2", "why=matched step=", "step=L1", "step=R"} {
		if !strings.Contains(log, want) {
			t.Errorf("the runtime's log has no %q:\n%s", want, log)
		}
	}
	t.Logf("%s in %v:\n%s", rp.Status, time.Since(start).Round(time.Millisecond), rp.Evidence)
}
