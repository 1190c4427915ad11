package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs mcpredict in-process and returns its exit status and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dispatch(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func haveSpin(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("spin"); err != nil {
		t.Skip("spin not installed (run make setup)")
	}
}

func writeTrace(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitStatusAndMessages(t *testing.T) {
	haveSpin(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat("1, 1, a.c-1, Write, x\n2, 2, a.c-2, Read, x\n", 200)))
	zw.Close()
	truncated := writeTrace(t, "cut-trace.csv.gz", gz.String()[:gz.Len()/2])

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"violations", []string{"run", "../../examples/bank.csv"}, 1, "lost update", ""},
		{"no violation", []string{"run", "../../examples/condvar-handoff.csv"}, 0, "no atomicity violation predicted", ""},
		{"flags after the trace", []string{"run", "../../examples/bank.csv", "--format", "json", "--engine", "native"}, 1, `"schema": "mcpredict.report/v1"`, ""},
		{"unknown action", []string{"run", writeTrace(t, "bad-action.csv", "1, 1, a.c-1, Read, x\n1, 2, a.c-2, Jump, x\n")}, 2, "", "bad-action.csv:2: unknown action \"Jump\""},
		{"missing field", []string{"run", writeTrace(t, "missing.csv", "1, 1, a.c-1, Read\n")}, 2, "", "missing.csv:1: missing field object"},
		{"bad line number", []string{"run", writeTrace(t, "badline.csv", "1, 1, a.c-1x, Read, x\n")}, 2, "", "badline.csv:1: bad line number"},
		{"truncated gzip", []string{"run", truncated}, 2, "", "cut-trace.csv.gz:"},
		// Synchronization oddities: warnings (standard error and the
		// report), or with --strict-sync bad input.
		{"join of unknown thread", []string{"run", "--engine", "native", "--format", "json", writeTrace(t, "join.csv", "1, 1, a.c-1, Join, 7\n1, 2, a.c-2, Write, x\n2, 3, a.c-3, Write, x\n")}, 0,
			`join.csv:1: Join of unknown thread 7 at a.c:1 (it never appeared and was never created): dropped (no order)"`,
			"join.csv:1: Join of unknown thread 7 at a.c:1 (it never appeared and was never created): dropped (no order)\n"},
		{"join of unknown thread --strict-sync", []string{"run", "--strict-sync", writeTrace(t, "join.csv", "1, 1, a.c-1, Join, 7\n")}, 2, "", "join.csv:1: Join of unknown thread 7 (it never appeared and was never created)\n"},
		{"unlock not held", []string{"run", "--engine", "native", writeTrace(t, "unlock.csv", "1, 1, a.c-1, Unlock, m\n1, 2, a.c-2, Write, x\n2, 3, a.c-3, Write, x\n")}, 0, "",
			"unlock.csv:1: Unlock of m at a.c:1, which thread 1 does not hold: dropped\n"},
		{"unlock not held --strict-sync", []string{"run", "--strict-sync", writeTrace(t, "unlock.csv", "1, 1, a.c-1, Unlock, m\n")}, 2, "", "unlock.csv:1: Unlock of m, which thread 1 does not hold\n"},
		{"--strict is not --strict-sync", []string{"run", "--engine", "native", "--strict", writeTrace(t, "unlock.csv", "1, 1, a.c-1, Unlock, m\n1, 2, a.c-2, Write, x\n2, 3, a.c-3, Write, x\n")}, 0, "", "unlock.csv:1: Unlock of m at a.c:1, which thread 1 does not hold: dropped\n"},
		{"convert drops an unlock not held", []string{"convert", "--to", "csv", "--compact", writeTrace(t, "unlock.csv", "1, 1, a.c-1, Unlock, m\n1, 2, a.c-2, Write, x\n")}, 0, "a.c:2, Write, x\n",
			"unlock.csv:1: Unlock of m at a.c:1, which thread 1 does not hold: dropped\n"},
		{"convert --strict-sync", []string{"convert", "--to", "csv", "--strict-sync", writeTrace(t, "unlock.csv", "1, 1, a.c-1, Unlock, m\n")}, 2, "", "unlock.csv:1: Unlock of m, which thread 1 does not hold\n"},
		{"model --strict-sync", []string{"model", "--strict-sync", writeTrace(t, "unlock.csv", "1, 1, a.c-1, Unlock, m\n"), "--var", "x", "--threads", "1,2"}, 2, "", "unlock.csv:1: Unlock of m, which thread 1 does not hold\n"},
		{"lenient skips", []string{"run", "--lenient", writeTrace(t, "lenient.csv", "1, 1, a.c-1, Jump, x\n1, 2, a.c-2, Write, x\n2, 3, a.c-3, Write, x\n")}, 0, "skipped 1 malformed lines", ""},
		{"missing file", []string{"run", "/nonexistent/trace.csv"}, 2, "", "no such file"},
		{"bad flag", []string{"run", "--nosuch", "x.csv"}, 2, "", "flag provided but not defined"},
		{"no trace", []string{"run"}, 2, "", "want exactly one TRACE"},
		{"pattern syntax error", []string{"run", "--pattern", "W1 X2 W1", "../../examples/bank.csv"}, 2, "", "column 4"},
		{"unknown pattern id", []string{"run", "--patterns", "P9", "../../examples/bank.csv"}, 2, "", "unknown pattern \"P9\""},
		{"unknown variable", []string{"run", "--vars", "nosuch", "../../examples/bank.csv"}, 2, "", "no shared variable matches \"nosuch\""},
		{"unknown engine", []string{"run", "--engine", "fast", "../../examples/bank.csv"}, 2, "", "unknown engine"},
		{"negative part size", []string{"run", "--part-accesses", "-1", "../../examples/bank.csv"}, 2, "", "--part-accesses: -1: want 0 (whole models) or a positive number"},
		{"whole models", []string{"run", "--part-accesses", "0", "--engine", "native", "../../examples/bank.csv"}, 1, "lost update", ""},
		{"smallest parts", []string{"run", "--part-accesses", "1", "--engine", "native", "../../examples/splash-barrier.csv"}, 0, "no atomicity violation predicted", ""},
		{"unknown command", []string{"frobnicate"}, 2, "", "unknown command"},
		{"record --serial of no order", []string{"record", "--serial", "middle", "--", "/bin/true"}, 2, "", `-serial "middle": want first or last`},
		{"patterns", []string{"patterns"}, 0, "ltl P5_2 {", ""},
		{"model", []string{"model", "../../examples/bank.csv", "--var", "balance", "--threads", "201,202"}, 0, "/* Read bank.c:11 (trace line 20) */", ""},
		{"model json", []string{"model", "../../examples/bank.csv", "--var", "balance", "--threads", "201,202", "--format", "json"}, 0, `"var": "balance"`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout does not contain %q:\n%s", tc.stdout, out)
			}
			if !strings.Contains(errs, tc.stderr) {
				t.Errorf("stderr does not contain %q:\n%s", tc.stderr, errs)
			}
		})
	}
}

func TestMissingSpin(t *testing.T) {
	t.Setenv("MCPREDICT_SPIN", "/nonexistent/spin")
	// The default engine decides natively, with a warning.
	code, _, errs := runCLI(t, "run", "--no-cache", "../../examples/bank.csv")
	if code != exitViolation || !strings.Contains(errs, "Spin confirmation is skipped") {
		t.Errorf("exit status %d, want %d and a warning: %s", code, exitViolation, errs)
	}
	// Spin asked for: a tool failure, with the install hint.
	code, _, errs = runCLI(t, "run", "--engine", "spin", "../../examples/bank.csv")
	if code != exitInternal {
		t.Errorf("--engine spin: exit status %d, want %d", code, exitInternal)
	}
	if !strings.Contains(errs, "apt-get install spin") {
		t.Errorf("no install hint: %s", errs)
	}
	// The native engine does not need Spin.
	if code, _, errs := runCLI(t, "run", "--engine", "native", "../../examples/bank.csv"); code != exitViolation {
		t.Errorf("native: exit %d: %s", code, errs)
	}
}

func TestJSONReportListsEveryInstance(t *testing.T) {
	code, out, errs := runCLI(t, "run", "--engine", "native", "--format", "json", "../../examples/logbuf.csv")
	if code != exitViolation {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Schema     string
		Violations []struct {
			Var     string `json:"var"`
			Pattern string `json:"pattern"`
			Local   struct{ Handle string }
			Remote  struct{ Handle string }
		}
		Bugs []struct {
			ID    string `json:"id"`
			Count int    `json:"count"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) == 0 || len(rep.Bugs) == 0 {
		t.Fatalf("empty report: %s", out)
	}
	total := 0
	for _, b := range rep.Bugs {
		total += b.Count
	}
	if total != len(rep.Violations) {
		t.Errorf("bug instance counts add up to %d, want %d violations", total, len(rep.Violations))
	}
	for _, v := range rep.Violations {
		if v.Var != "buf->outcnt" || v.Pattern == "" || v.Local.Handle == v.Remote.Handle {
			t.Errorf("bad violation %+v", v)
		}
	}
}

func TestOutputFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.json")
	code, stdout, errs := runCLI(t, "run", "--engine", "native", "--format", "json", "-o", out, "../../examples/bank.csv")
	if code != exitViolation || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b, []byte(`"pattern": "P3"`)) {
		t.Errorf("report file: %v %s", err, b)
	}
}

// TestMain keeps the tests off the user's verdict cache: each run of the
// test binary starts with an empty one.
func TestMain(m *testing.M) {
	if os.Getenv(asCLI) != "" {
		// A child of runChild: this test binary is mcpredict.
		code := dispatch(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
		writePeak(os.Getenv(peakFile))
		os.Exit(code)
	}
	dir, err := os.MkdirTemp("", "mcpredict-cli-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestAtomicSetSelection: atomicset is in the default list, --analysis
// selects it alone or leaves it out, and each shorthand adds it to a list
// without it; without it the torn read of range.csv is not reported.
func TestAtomicSetSelection(t *testing.T) {
	const trace = "../../predict/testdata/range.csv"
	for _, tc := range []struct {
		name     string
		args     []string
		analyses string
	}{
		{"analysis", []string{"--analysis", "atomicset"}, "atomicset"},
		{"--atomic-sets", []string{"--analysis", "mcpatom", "--atomic-sets"}, "mcpatom,atomicset"},
		{"--atomic-set", []string{"--atomic-set", "lo,hi", "--set-partners", "0"}, "mcpatom,atomicset,deadlock"},
		{"--set-partners", []string{"--set-partners", "1"}, "mcpatom,atomicset,deadlock"},
		{"--patterns", []string{"--patterns", "M1,M2"}, "mcpatom,atomicset,deadlock"},
		{"two-variable --pattern", []string{"--pattern", "R1(x) A2* W2(x) A2* W2(y) A2* R1(y)"}, "mcpatom,atomicset,deadlock"},
		{"default", nil, "mcpatom,atomicset,deadlock"},
		{"without", []string{"--analysis", "mcpatom,deadlock"}, "mcpatom,deadlock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--engine", "native", "--no-cache", "--format", "json"}, tc.args...)
			code, out, stderr := runCLI(t, append(args, trace)...)
			var rep struct {
				Bugs []struct {
					Pattern, Analysis string
					Vars              []string
				}
				Analyses []struct{ Name string }
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("exit %d: %v\n%s", code, err, stderr)
			}
			var names []string
			for _, a := range rep.Analyses {
				names = append(names, a.Name)
			}
			if got := strings.Join(names, ","); got != tc.analyses {
				t.Errorf("analyses %s, want %s", got, tc.analyses)
			}
			wantBug := tc.analyses != "mcpatom,deadlock"
			if wantBug != (code == 1) || wantBug != (len(rep.Bugs) > 0) {
				t.Fatalf("exit %d, bugs %+v", code, rep.Bugs)
			}
			if wantBug {
				b := rep.Bugs[0]
				if b.Analysis != "atomicset" || strings.Join(b.Vars, ",") != "lo,hi" || (b.Pattern != "M1" && b.Pattern != "U1") {
					t.Errorf("bug %+v, want M1 (or the user's) of atomicset on lo, hi", b)
				}
			}
		})
	}
}

// TestModelOfSet: mcpredict model --var2 prints the model of an atomic set
// with the 24 claims of M1..M6 and the variable of each access.
func TestModelOfSet(t *testing.T) {
	const trace = "../../examples/range.csv"
	code, out, stderr := runCLI(t, "model", trace, "--var", "lo", "--var2", "hi", "--threads", "201,202")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "\nltl M"); n != 24 {
		t.Errorf("%d claims of M patterns, want 24", n)
	}
	for _, want := range []string{"/* Read lo range.c:29", "/* Read hi range.c:37", "/* Write hi range.c:22"} {
		if !strings.Contains(out, want) {
			t.Errorf("model lacks %q", want)
		}
	}
	if code, _, stderr := runCLI(t, "model", trace, "--var", "lo", "--var2", "nosuch", "--threads", "201,202"); code != exitUsage || !strings.Contains(stderr, `no variable "nosuch"`) {
		t.Errorf("unknown --var2: exit %d, %s", code, stderr)
	}
}
