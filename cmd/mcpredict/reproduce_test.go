package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
)

// recordProgram builds a C program of testdata/reproduce with mcpredict cc
// and records one run of it with args whose exit status is 0 (a run where
// the bug did not happen), returning the trace.
func recordProgram(t *testing.T, name string, args ...string) string {
	t.Helper()
	return recordProgramIn(t, filepath.Join("testdata", "reproduce"), name, args...)
}

// recordProgramIn is recordProgram of the program srcDir/name.c.
func recordProgramIn(t *testing.T, srcDir, name string, args ...string) string {
	t.Helper()
	for _, tool := range []string{"gcc", "spin"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join(srcDir, name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, name)
	if code, _, stderr := runCLI(t, "cc", "-O1", "-o", exe, src); code != 0 {
		t.Fatalf("mcpredict cc: exit %d\n%s", code, stderr)
	}
	trace := filepath.Join(dir, name+".csv")
	for attempt := 0; ; attempt++ {
		code, _, stderr := runCLI(t, append([]string{"record", "-o", trace, "--", exe}, args...)...)
		if code != 0 {
			t.Fatalf("mcpredict record: exit %d\n%s", code, stderr)
		}
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "# ended: exit status 0\n") {
			return trace
		}
		if attempt == 4 {
			t.Fatalf("%s: five recorded runs failed; want a clean one", name)
		}
	}
}

func TestReproduce(t *testing.T) {
	tests := []struct {
		name       string
		wantFailed bool
		wantCode   int
	}{
		// The lost update never happened in the recorded run (the
		// threads did not overlap); a directed run loses an increment
		// and the program says so.
		{"split_count", true, exitViolation},
		// The correct twin: no bug predicted, none reproduced, no run
		// fails.
		{"split_count_ok", false, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trace := recordProgram(t, tt.name, "20000")
			rep, stderr := reproduceJSON(t, tt.wantCode, "--out-dir", filepath.Join(t.TempDir(), "runs"), trace)
			failed := 0
			for _, b := range rep.Bugs {
				if b.Reproduction == nil {
					t.Errorf("bug %s %s has no reproduction", b.ID, b.Pattern)
					continue
				}
				if b.Reproduction.Failed {
					failed++
					if b.Reproduction.Status != bugs.Reproduced || b.Reproduction.Schedule == "" {
						t.Errorf("failed bug %s: status %q, schedule %q", b.ID, b.Reproduction.Status, b.Reproduction.Schedule)
					}
					if !strings.Contains(b.Reproduction.Evidence, "exit status 1") {
						t.Errorf("failed bug %s: evidence does not say how the run ended:\n%s", b.ID, b.Reproduction.Evidence)
					}
				}
			}
			if (failed > 0) != tt.wantFailed {
				js, _ := json.MarshalIndent(rep.Bugs, "", "  ")
				t.Fatalf("%d failed bugs, want failed %v\n%s\n%s", failed, tt.wantFailed, js, stderr)
			}
			if !tt.wantFailed {
				return
			}
			// replay runs the failed bug's schedule again.
			for _, b := range rep.Bugs {
				if b.Reproduction.Failed {
					code, stdout, stderr := runCLI(t, "replay", "--out-dir", filepath.Join(t.TempDir(), "replay"), b.Reproduction.Schedule)
					if code != exitOK || !strings.Contains(stdout, "FAILED") {
						t.Errorf("replay %s: exit %d\n%s\n%s", b.Reproduction.Schedule, code, stdout, stderr)
					}
					break
				}
			}
		})
	}
}

func TestReproduceNoCommand(t *testing.T) {
	// A Pin-style trace has no command in its header.
	code, _, stderr := runCLI(t, "reproduce", filepath.Join("..", "..", "examples", "bank.csv"))
	if code != exitUsage || !strings.Contains(stderr, "give it after --") {
		t.Errorf("exit %d, stderr %q; want %d and a hint to give the command", code, stderr, exitUsage)
	}
}

// TestIDsSurviveEdits: the same program recorded before and after three
// comment lines were added at the top of its source has the same bugs:
// mcpredict diff exits 0 and lists every bug as unchanged.
func TestIDsSurviveEdits(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "reproduce", "split_count.c"))
	if err != nil {
		t.Fatal(err)
	}
	var reports []string
	for i, prefix := range []string{"", "/* one */\n/* two */\n/* three */\n"} {
		dir := filepath.Join(t.TempDir(), "v"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// The same file name in two directories, as two checkouts.
		if err := os.WriteFile(filepath.Join(dir, "split_count.c"), append([]byte(prefix), src...), 0o644); err != nil {
			t.Fatal(err)
		}
		trace := recordProgramIn(t, dir, "split_count", "20000")
		out := filepath.Join(dir, "r.json")
		if code, _, stderr := runCLI(t, "run", "--engine", "native", "--no-cache", "--format", "json", "-o", out, trace); code != exitViolation {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		reports = append(reports, out)
	}
	code, stdout, stderr := runCLI(t, "diff", reports[0], reports[1])
	if code != exitOK || !strings.Contains(stdout, "0 new, 0 fixed") {
		t.Errorf("diff: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestReproduceServer follows examples/server/README.md: a server and its
// load recorded as one script, where all 200 increments arrived, and
// reproduce exposes the lost increment (the script's own verdict fails).
func TestReproduceServer(t *testing.T) {
	for _, tool := range []string{"gcc", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"counter_server.c", "load.sh"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "server", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	server := filepath.Join(dir, "counter_server")
	if code, _, stderr := runCLI(t, "cc", "-O1", "-o", server, filepath.Join(dir, "counter_server.c")); code != 0 {
		t.Fatalf("mcpredict cc: exit %d\n%s", code, stderr)
	}
	trace := filepath.Join(dir, "server.csv")
	for attempt := 1; ; attempt++ {
		if code, _, stderr := runCLI(t, "record", "-o", trace, "--", filepath.Join(dir, "load.sh"), server); code != 0 {
			t.Fatalf("mcpredict record: exit %d\n%s", code, stderr)
		}
		b, _ := os.ReadFile(trace)
		if strings.Contains(string(b), "# ended: exit status 0\n") {
			break
		}
		if attempt == 3 {
			t.Fatal("three recorded runs lost an increment; want a clean one")
		}
	}
	rep, stderr := reproduceJSON(t, exitViolation, "--engine", "native", trace)
	for _, b := range rep.Bugs {
		if r := b.Reproduction; r != nil && r.Failed && strings.Contains(r.Evidence, "lost increments") {
			return
		}
	}
	t.Errorf("no failed bug whose evidence names the lost increments\n%s", stderr)
}

// TestReproduceControls: a command that fails whatever the schedule (here
// the program followed by exit 1) fails its control runs too, and the
// failed bug's evidence says the failure may not be the bug's.
func TestReproduceControls(t *testing.T) {
	trace := recordProgram(t, "split_count", "20000")
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var prog string
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "# exe: "); ok {
			prog = p
		}
	}
	rep, stderr := reproduceJSON(t, exitViolation, "--relaxed", "none",
		"--out-dir", filepath.Join(t.TempDir(), "runs"), trace, "--", "/bin/sh", "-c", prog+" 20000; exit 1")
	for _, b := range rep.Bugs {
		r := b.Reproduction
		if r == nil || !r.Failed {
			continue
		}
		if r.Controls != 2 || r.ControlsChanged != 2 || !strings.Contains(r.Evidence, "fails on its own") {
			t.Errorf("bug %s: controls %d, changed %d, evidence:\n%s", b.ID, r.Controls, r.ControlsChanged, r.Evidence)
		}
		return
	}
	t.Errorf("no failed bug\n%s", stderr)
}

// reproduceJSON runs mcpredict reproduce with args and a JSON report,
// requires exit status want, and returns the report and standard error.
func reproduceJSON(t *testing.T, want int, args ...string) (*bugs.Report, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := runCLI(t, append([]string{"reproduce", "--format", "json", "-o", out, "--no-cache"}, args...)...)
	if code != want {
		t.Fatalf("reproduce: exit %d, want %d\n%s", code, want, stderr)
	}
	rep, err := bugs.ReadJSONFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return rep, stderr
}

// TestReproduceHoldNotCancellable checks that a schedule's hold is no
// cancellation point: a worker with deferred cancellation, held between the
// read and the write of its update while main writes the counter and then
// cancels it, goes on to its own next cancellation point, as any run of
// the program does. Were the hold one, the worker would die inside it and
// the directed run would fail (testdata/reproduce/cancel_hold.c exits 1)
// for the schedule's doing, not the program's.
func TestReproduceHoldNotCancellable(t *testing.T) {
	trace := recordProgram(t, "cancel_hold", "20000")
	rep, stderr := reproduceJSON(t, exitViolation, "--relaxed", "none", "--out-dir", filepath.Join(t.TempDir(), "runs"), trace)
	reproduced := 0
	for _, b := range rep.Bugs {
		r := b.Reproduction
		if r == nil {
			continue
		}
		if r.Failed {
			t.Errorf("bug %s %s failed: %s", b.ID, b.Pattern, r.Evidence)
		}
		if r.Status == bugs.Reproduced {
			reproduced++
		}
	}
	if reproduced == 0 {
		js, _ := json.MarshalIndent(rep.Bugs, "", "  ")
		t.Fatalf("no bug reproduced: the worker was not held across main's write\n%s\n%s", js, stderr)
	}
}
