package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
)

// cli runs the command line in-process.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = dispatch(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// exampleTrace is the path of a shipped example trace.
func exampleTrace(name string) string { return filepath.Join("..", "..", "examples", name+".csv") }

// tmpFile writes content to a new file named name and returns its path.
func tmpFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// jsonReportOf writes the JSON report of an example to a file.
func jsonReportOf(t *testing.T, name string, extra ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".json")
	args := append([]string{"run", "--engine", "native", "--format", "json", "-o", p}, extra...)
	if code, _, stderr := cli(t, append(args, exampleTrace(name))...); code > 1 {
		t.Fatalf("run %s: exit %d: %s", name, code, stderr)
	}
	return p
}

func TestOutputFormats(t *testing.T) {
	tests := []struct {
		format, trace string
		code          int
		prefix        string
	}{
		{"text", "bank", 1, "bank.c\n  AV-"},
		{"text", "condvar-handoff", 0, exampleTrace("condvar-handoff") + ": 14 events"},
		{"json", "bank", 1, "{\n  \"schema\": \"mcpredict.report/v1\""},
		{"sarif", "bank", 1, "{\n \"$schema\": \"https://docs.oasis-open.org/sarif/"},
		{"sarif", "condvar-handoff", 0, "{\n \"$schema\""},
		{"html", "logbuf", 1, "<!DOCTYPE html>"},
		{"html", "condvar-handoff", 0, "<!DOCTYPE html>"},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.trace, func(t *testing.T) {
			code, stdout, stderr := cli(t, "run", "--engine", "native", "--format", tt.format, exampleTrace(tt.trace))
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.HasPrefix(stdout, tt.prefix) {
				t.Errorf("stdout starts %.80q, want %q", stdout, tt.prefix)
			}
			if stderr != "" {
				t.Errorf("stderr %q: no progress bar or message expected when stderr is not a terminal", stderr)
			}
			// -o writes the same bytes to the file, and nothing to stdout.
			out := filepath.Join(t.TempDir(), "report")
			code2, stdout2, _ := cli(t, "run", "--engine", "native", "--format", tt.format, "-o", out, exampleTrace(tt.trace))
			file, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if code2 != code || stdout2 != "" {
				t.Errorf("with -o: exit %d, stdout %q", code2, stdout2)
			}
			if (tt.format == "sarif" || tt.format == "html") && string(file) != stdout { // text and json have the elapsed time
				t.Errorf("-o file differs from stdout")
			}
		})
	}
}

func TestOutputUsageErrors(t *testing.T) {
	bad := tmpFile(t, "bad.json", `{"schema": "mcpredict.report/v0"}`)
	notJSON := tmpFile(t, "x.json", "P3 * * *\n")
	badRules := tmpFile(t, "rules", "# ok\nP3 balance bank.c:11\n")
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"format", []string{"--format", "yaml"}, `unknown --format "yaml"`},
		{"color", []string{"--color", "sometimes"}, "--color: unknown color mode"},
		{"src root", []string{"--src-root", "/does/not/exist"}, "not a directory"},
		{"baseline missing", []string{"--baseline", "/does/not/exist.json"}, "--baseline: open /does/not/exist.json"},
		{"baseline schema", []string{"--baseline", bad}, "mcpredict.report/v0"},
		{"baseline not json", []string{"--baseline", notJSON}, "not a mcpredict JSON report"},
		{"suppressions missing", []string{"--suppressions", "/does/not/exist"}, "--suppressions: open"},
		{"suppressions malformed", []string{"--suppressions", badRules}, badRules + ":2: want 4 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"run", "--engine", "native"}, tt.args...), exampleTrace("bank"))
			code, stdout, stderr := cli(t, args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr, tt.msg) {
				t.Errorf("stderr %q, want %q", stderr, tt.msg)
			}
			if stdout != "" {
				t.Errorf("a report was written on a usage error: %.100q", stdout)
			}
		})
	}
}

func TestOutputBaseline(t *testing.T) {
	full := jsonReportOf(t, "logbuf")
	base, err := readReport(full)
	if err != nil {
		t.Fatal(err)
	}
	n := len(base.Bugs)
	if n < 2 {
		t.Fatalf("logbuf has %d bugs, the test wants 2 or more", n)
	}
	// A baseline that knows only the first bug.
	partial := *base
	partial.Bugs = base.Bugs[:1]
	partial.Violations = base.Violations[:1]
	partial.Bugs[0].Instances = []int{0}
	var buf bytes.Buffer
	if err := bugs.WriteJSON(&buf, &partial); err != nil {
		t.Fatal(err)
	}
	half := tmpFile(t, "half.json", buf.String())

	code, stdout, _ := cli(t, "run", "--engine", "native", "--baseline", full, exampleTrace("logbuf"))
	if code != exitOK || !strings.Contains(stdout, fmt.Sprintf("no new atomicity violation predicted, %d known from baseline", n)) {
		t.Errorf("everything known: exit %d, output:\n%s", code, stdout)
	}
	code, stdout, _ = cli(t, "run", "--engine", "native", "--format", "json", "--baseline", half, exampleTrace("logbuf"))
	var rep bugs.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if code != exitViolation || len(rep.Bugs) != n-1 || rep.Bugs[0].ID != base.Bugs[1].ID || rep.Stats.Baseline != 1 || rep.Baseline != half {
		t.Errorf("one new bug: exit %d, bugs %v, baseline %q known %d", code, rep.Bugs, rep.Baseline, rep.Stats.Baseline)
	}
}

func TestOutputSuppressions(t *testing.T) {
	all := tmpFile(t, "all", "# every lost update in deposit\nP3  balance  bank.c:*  deposit  # reviewed\n")
	one := tmpFile(t, "one", "P3 balance bank.c:11 * \n")
	none := tmpFile(t, "none", "P1 * * *\n\n")
	tests := []struct {
		rules   string
		code    int
		summary string
	}{
		{all, exitOK, "no atomicity violation predicted, 1 suppressed"},
		{one, exitOK, "no atomicity violation predicted, 1 suppressed"}, // the bug reads at line 11
		{none, exitViolation, "1 bug in 1 group predicted from 2 violation instances\n"},
	}
	for _, tt := range tests {
		code, stdout, stderr := cli(t, "run", "--engine", "native", "--suppressions", tt.rules, exampleTrace("bank"))
		if code != tt.code || !strings.Contains(stdout, tt.summary) {
			t.Errorf("%s: exit %d, output:\n%s%s\nwant exit %d and %q", tt.rules, code, stdout, stderr, tt.code, tt.summary)
		}
	}
	// JSON keeps suppressed bugs, marked.
	_, stdout, _ := cli(t, "run", "--engine", "native", "--format", "json", "--suppressions", all, exampleTrace("bank"))
	var rep bugs.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Stats.Suppressed != 1 || len(rep.Bugs) != 1 || !rep.Bugs[0].Suppressed {
		t.Errorf("JSON: suppressed %d, bugs %+v", rep.Stats.Suppressed, rep.Bugs)
	}
}

func TestOutputWarningsAndQuiet(t *testing.T) {
	// Thread 2 runs before the Create that starts it: a warning.
	trace := tmpFile(t, "warn.csv", `1, 1, a.c-1, Write, x
2, 2, a.c-2, Read, x
1, 3, a.c-3, Create, 2
2, 4, a.c-4, Write, x
`)
	_, _, stderr := cli(t, "run", "--engine", "native", trace)
	if !strings.Contains(stderr, "mcpredict run: warning: ") {
		t.Errorf("no warning on stderr: %q", stderr)
	}
	// --quiet hides progress, not warnings; --no-warnings hides them.
	_, _, stderr = cli(t, "run", "--engine", "native", "--quiet", trace)
	if !strings.Contains(stderr, "mcpredict run: warning: ") {
		t.Errorf("--quiet hid the warning: %q", stderr)
	}
	_, stdout, stderr := cli(t, "run", "--engine", "native", "--quiet", "--no-warnings", trace)
	if stderr != "" {
		t.Errorf("--quiet --no-warnings printed %q", stderr)
	}
	if strings.Contains(stdout, "warning") {
		t.Errorf("warnings are in the text report:\n%s", stdout)
	}
}

func TestDiff(t *testing.T) {
	bank := jsonReportOf(t, "bank")
	logbuf := jsonReportOf(t, "logbuf")
	empty := jsonReportOf(t, "condvar-handoff")
	// The first bug of logbuf's group of three.
	logbuf1 := filepath.Join(t.TempDir(), "logbuf1.json")
	rep, err := bugs.ReadJSONFile(logbuf)
	if err != nil {
		t.Fatal(err)
	}
	rep.Bugs = rep.Bugs[:1]
	f, err := os.Create(logbuf1)
	if err != nil {
		t.Fatal(err)
	}
	if err := bugs.WriteJSON(f, rep); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tests := []struct {
		name      string
		base, cur string
		code      int
		summary   string
		groups    string
	}{
		{"same", bank, bank, exitOK, "0 new, 0 fixed, 1 unchanged", "groups: 0 new, 0 fixed, 1 unchanged"},
		{"new bugs", empty, bank, exitViolation, "1 new, 0 fixed, 0 unchanged", "groups: 1 new, 0 fixed, 0 unchanged"},
		{"fixed bugs", bank, empty, exitOK, "0 new, 1 fixed, 0 unchanged", "groups: 0 new, 1 fixed, 0 unchanged"},
		{"different", bank, logbuf, exitViolation, "3 new, 1 fixed, 0 unchanged", "groups: 1 new, 1 fixed, 0 unchanged"},
		{"new bugs in a known group", logbuf1, logbuf, exitViolation, "2 new, 0 fixed, 1 unchanged", "groups: 0 new, 0 fixed, 1 unchanged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, "diff", tt.base, tt.cur)
			if want := tt.summary + "; " + tt.groups; code != tt.code || !strings.Contains(stdout, want) {
				t.Errorf("exit %d, output:\n%s%s\nwant exit %d and %q", code, stdout, stderr, tt.code, want)
			}
			code, stdout, _ = cli(t, "diff", "--format", "json", tt.base, tt.cur)
			var d bugs.Diff
			if err := json.Unmarshal([]byte(stdout), &d); err != nil {
				t.Fatal(err)
			}
			if code != tt.code || d.Schema != bugs.DiffSchemaVersion || d.Summary() != tt.summary || d.GroupSummary() != tt.groups {
				t.Errorf("json: exit %d, schema %q, %s; %s", code, d.Schema, d.Summary(), d.GroupSummary())
			}
		})
	}
}

func TestDiffText(t *testing.T) {
	code, stdout, _ := cli(t, "diff", jsonReportOf(t, "condvar-handoff"), jsonReportOf(t, "fig5"))
	if code != exitViolation {
		t.Errorf("exit %d, want %d", code, exitViolation)
	}
	for _, want := range []string{
		"new (1):\n  AV-a251db691057  P4 dirty (intermediate) read on mProcessing  nsEventQueue.cpp:100, nsEventQueue.cpp:102, nsEventQueue.cpp:108, nsEventQueue.cpp:200\n",
		"fixed (0):\n",
		"unchanged (0):\n",
		"new groups (1):\n  GR-",
		"  1 bug on mProcessing (mcpatom, 1 instance): P4 dirty (intermediate) read: 1\nfixed groups (0):\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestDiffBadInput(t *testing.T) {
	good := jsonReportOf(t, "bank")
	notJSON := tmpFile(t, "x.json", "not json")
	otherSchema := tmpFile(t, "y.json", `{"schema":"something/v2","bugs":[]}`)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no arguments", nil, "want two arguments"},
		{"one argument", []string{good}, "want two arguments"},
		{"three arguments", []string{good, good, good}, "want two arguments"},
		{"missing file", []string{good, "/does/not/exist.json"}, "/does/not/exist.json"},
		{"not json", []string{notJSON, good}, "not a mcpredict JSON report"},
		{"other schema", []string{good, otherSchema}, `report schema "something/v2"`},
		{"format", []string{"--format", "xml", good, good}, `unknown --format "xml"`},
		{"flag", []string{"--bogus", good, good}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := cli(t, append([]string{"diff"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.msg) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tt.msg)
			}
		})
	}
}

// writeReport writes rep to a new JSON file.
func writeReport(t *testing.T, name string, rep *bugs.Report) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := bugs.WriteJSON(f, rep); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiffReproduction compares reports of mcpredict reproduce: the
// states of the bugs, their changes, the newly failed count, failed new
// bugs first, in text and JSON, with the exit status of a plain diff.
func TestDiffReproduction(t *testing.T) {
	logbuf, err := bugs.ReadJSONFile(jsonReportOf(t, "logbuf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(logbuf.Bugs) != 3 {
		t.Fatalf("logbuf has %d bugs, want 3", len(logbuf.Bugs))
	}
	id := func(i int) string { return logbuf.Bugs[i].ID }
	base := *logbuf
	base.Bugs = []bugs.Bug{logbuf.Bugs[0]}
	base.Bugs[0].Reproduction = &bugs.Reproduction{Status: bugs.Reproduced, Runs: 2}
	logbuf.Bugs[0].Reproduction = &bugs.Reproduction{Status: bugs.Reproduced, Failed: true, Runs: 1, Evidence: "exit status 1"}
	logbuf.Bugs[2].Reproduction = &bugs.Reproduction{Status: bugs.Reproduced, Failed: true, Runs: 3}
	basePath, newPath := writeReport(t, "base.json", &base), writeReport(t, "new.json", logbuf)
	tests := []struct {
		name     string
		args     []string
		contains []string
	}{
		{"text", nil, []string{
			"new (2):\n  " + id(2) + "  ", "  [failed]\n  " + id(1) + "  ", "  [none]\nfixed (0):\nunchanged (1):\n  " + id(0) + "  ",
			"  [failed]\nstatus changes (1):\n  " + id(0) + "  reproduced -> failed\nnew groups (0):\n",
			"2 new, 0 fixed, 1 unchanged, 2 newly failed; groups: 0 new, 0 fixed, 1 unchanged",
		}},
		{"json", []string{"--format", "json"}, []string{
			`"reproductions": true`, `"newly_failed": 2`,
			`"status_changes": [` + "\n    {\n      \"id\": \"" + id(0) + "\",\n      \"base\": \"reproduced\",\n      \"new\": \"failed\"",
			`"added": [` + "\n    {\n      \"id\": \"" + id(2) + `"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, append(append([]string{"diff"}, tt.args...), basePath, newPath)...)
			if code != exitViolation {
				t.Errorf("exit %d, want %d (new bugs); stderr %s", code, exitViolation, stderr)
			}
			for _, want := range tt.contains {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
	// No new bug: exit 0 even though a known one newly failed.
	now := base
	now.Bugs = []bugs.Bug{logbuf.Bugs[0]}
	if code, stdout, _ := cli(t, "diff", basePath, writeReport(t, "now.json", &now)); code != exitOK || !strings.Contains(stdout, "0 new, 0 fixed, 1 unchanged, 1 newly failed") {
		t.Errorf("same bugs: exit %d, want %d:\n%s", code, exitOK, stdout)
	}
}
