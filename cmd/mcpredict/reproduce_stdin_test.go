package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/recorder"
)

// recordWithStdin builds testdata/reproduce/stdin_count.c and records a
// clean run of it that reads input from standard input, keeping the input
// beside the trace as mcpredict record does for a pipe.
func recordWithStdin(t *testing.T, input string) (trace, exe string) {
	t.Helper()
	for _, tool := range []string{"gcc", "spin"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src, _ := filepath.Abs(filepath.Join("testdata", "reproduce", "stdin_count.c"))
	exe = filepath.Join(dir, "stdin_count")
	if code, _, stderr := runCLI(t, "cc", "-O1", "-o", exe, src); code != 0 {
		t.Fatalf("mcpredict cc: exit %d\n%s", code, stderr)
	}
	trace = filepath.Join(dir, "t.csv")
	for attempt := 0; attempt < 5; attempt++ {
		f, err := os.Create(trace)
		if err != nil {
			t.Fatal(err)
		}
		res, err := recorder.Record(context.Background(), f, recorder.RecordOptions{Program: exe, Args: []string{"20000"},
			Stdin: strings.NewReader(input), StdinCopy: trace + ".stdin", Stdout: os.Stderr, Stderr: os.Stderr, Timeout: 20 * time.Second})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 {
			return trace, exe
		}
	}
	t.Fatal("five recorded runs failed; want a clean one")
	return "", ""
}

// TestReproduceStdin: the input a recorded run read is given to every
// directed run (without it the program does nothing and nothing fails);
// gone, reproduce says so; a rebuilt program is said too.
func TestReproduceStdin(t *testing.T) {
	trace, exe := recordWithStdin(t, "3\n")
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "# stdin: "+trace+".stdin\n") || !strings.Contains(string(b), "# build: ") {
		t.Fatalf("the header names no stdin copy or build id:\n%.600s", b)
	}
	rep, stderr := reproduceJSON(t, exitViolation, "--out-dir", filepath.Join(t.TempDir(), "runs"), "--explore", "0", trace)
	failed := 0
	for _, bg := range rep.Bugs {
		if bg.Reproduction != nil && bg.Reproduction.Failed {
			failed++
		}
	}
	if failed == 0 {
		t.Fatalf("no bug failed with the recorded input\n%s", stderr)
	}
	if rep.Reproduce == nil || rep.Reproduce.Tried == 0 || rep.Reproduce.FailedRuns == 0 {
		t.Errorf("summary %+v", rep.Reproduce)
	}

	// The input gone: every run reads an empty one, and nothing fails.
	if err := os.Remove(trace + ".stdin"); err != nil {
		t.Fatal(err)
	}
	rep, stderr = reproduceJSON(t, exitOK, "--out-dir", filepath.Join(t.TempDir(), "runs"), "--explore", "0", "--relaxed", "none", trace)
	if !strings.Contains(stderr, "standard input") || !strings.Contains(stderr, "is gone") {
		t.Errorf("no warning of the lost input:\n%s", stderr)
	}
	// --stdin gives it back.
	in := filepath.Join(t.TempDir(), "in")
	os.WriteFile(in, []byte("3\n"), 0o644)
	reproduceJSON(t, exitViolation, "--out-dir", filepath.Join(t.TempDir(), "runs"), "--explore", "0", "--relaxed", "none", "--stdin", in, trace)

	// Rebuilt with other flags: a warning.
	src, _ := filepath.Abs(filepath.Join("testdata", "reproduce", "stdin_count.c"))
	if code, _, stderr := runCLI(t, "cc", "-O2", "-o", exe, src); code != 0 {
		t.Fatalf("mcpredict cc: exit %d\n%s", code, stderr)
	}
	_, stderr = reproduceJSON(t, exitViolation, "--out-dir", filepath.Join(t.TempDir(), "runs"), "--explore", "0", "--relaxed", "none", "--stdin", in, trace)
	if !strings.Contains(stderr, "was rebuilt since it was recorded") {
		t.Errorf("no warning of the rebuilt program:\n%s", stderr)
	}
}

// TestBatchReproduce: batch --reproduce reports, for a program whose bug
// needs a directed run, the failed bug beside the trace.
func TestBatchReproduce(t *testing.T) {
	trace, _ := recordWithStdin(t, "3\n")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, "batch", "--reproduce", "--quiet", "--out-dir", out, filepath.Dir(trace))
	if code != exitViolation {
		t.Fatalf("batch --reproduce: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sum struct {
		Traces []struct {
			Path   string `json:"path"`
			Failed int    `json:"failed"`
		} `json:"traces"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err != nil {
		t.Fatal(err)
	}
	// One trace: the directed runs' own traces (t.csv.reproduce/) are not.
	if len(sum.Traces) != 1 || sum.Traces[0].Failed == 0 {
		t.Fatalf("summary %+v, want one trace with a failed bug\n%s", sum, stdout)
	}
	if !strings.Contains(stdout, "failed") {
		t.Errorf("text summary does not say failed:\n%s", stdout)
	}
}
