package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
)

// recordProgram builds a C program of testdata/reproduce with mcpredict cc
// and records one run of it with args whose exit status is 0 (a run where
// the bug did not happen), returning the trace.
func recordProgram(t *testing.T, name string, args ...string) string {
	t.Helper()
	for _, tool := range []string{"gcc", "spin"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join("testdata", "reproduce", name+".c"))
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
			out := filepath.Join(t.TempDir(), "r.json")
			code, _, stderr := runCLI(t, "reproduce", "--format", "json", "-o", out, "--no-cache", "--out-dir", filepath.Join(t.TempDir(), "runs"), trace)
			if code != tt.wantCode {
				t.Fatalf("reproduce: exit %d, want %d\n%s", code, tt.wantCode, stderr)
			}
			rep, err := bugs.ReadJSONFile(out)
			if err != nil {
				t.Fatal(err)
			}
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
