package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstContact checks what a new user meets first: the version, a
// mistyped flag, an empty trace, and a program given instead of a trace.
func TestFirstContact(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.csv")
	comments := filepath.Join(dir, "comments.csv")
	elf := filepath.Join(dir, "prog")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(comments, []byte("# mcpredict trace\n# program: ./prog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(elf, []byte("\x7fELF\x02\x01\x01"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("..", "..", "examples", "c", "bank.c")
	tests := []struct {
		name       string
		args       []string
		code       int
		out, err   string // substrings of standard output and error
		maxErrLine int    // at most this many lines on standard error (0: any)
	}{
		{"--version", []string{"--version"}, exitOK, "mcpredict ", "", 0},
		{"version", []string{"version"}, exitOK, "mcpredict ", "", 0},
		{"bad flag", []string{"run", "--no-such-flag", "x.csv"}, exitUsage, "", `Run "mcpredict run -h"`, 4},
		{"run -h", []string{"run", "-h"}, exitOK, "", "--max-models", 0},
		{"empty trace", []string{"run", empty}, exitUsage, "", "no events", 0},
		{"comments only", []string{"run", comments}, exitUsage, "", "no events", 0},
		{"batch of an empty trace", []string{"batch", "--out-dir", filepath.Join(dir, "b"), empty}, exitUsage, "", "no events", 0},
		{"source file", []string{"run", src}, exitUsage, "", "record it first", 0},
		{"executable", []string{"run", elf}, exitUsage, "", "record it first", 0},
		{"directory", []string{"run", dir}, exitUsage, "", "record it first", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.out) || !strings.Contains(stderr, tt.err) {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if n := strings.Count(stderr, "\n"); tt.maxErrLine > 0 && n > tt.maxErrLine {
				t.Errorf("%d lines on stderr, want at most %d:\n%s", n, tt.maxErrLine, stderr)
			}
		})
	}
}

// TestNoSpin: without Spin, run's default engine decides natively and
// says that the confirmation was skipped.
func TestNoSpin(t *testing.T) {
	t.Setenv("MCPREDICT_SPIN", filepath.Join(t.TempDir(), "no-spin"))
	code, stdout, stderr := runCLI(t, "run", "--no-cache", filepath.Join("..", "..", "examples", "bank.csv"))
	if code != exitViolation || !strings.Contains(stdout, "P3 lost update") || !strings.Contains(stderr, "Spin confirmation is skipped") {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitViolation, stdout, stderr)
	}
}
