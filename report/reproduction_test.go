package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/report"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// failedEvidence is the evidence of a failed run: longer than the text
// report shows.
var failedEvidence = "exit status 1\n" + strings.Repeat("stderr: assertion `balance == 200' failed\n", 11)

// reproReport is a report of mcpredict reproduce, built by hand. In the
// order of mcpredict run (by pattern and file):
//
//	a.c  group of AV-a1 (P1, not reproduced) and AV-a2 (P3, reproduced) on x in f()
//	b.c  AV-b1 (P3, FAILED) on y in g()
//	c.c  AV-c1 (P2, reproduced, only in a relaxed model) on z in h()
//	d.c  DL-d1, a deadlock finding (not tried)
//	e.c  AV-e1 (P1) on w in k(), without reproduction
//
// and in the order of reproductions: b.c, a.c (AV-a2 first), c.c, then d.c
// and e.c as they were.
func reproReport() *bugs.Report {
	r := &bugs.Report{Schema: bugs.SchemaVersion, Tool: bugs.Tool{Name: "mcpredict", Version: "test", Engine: "native"},
		Trace: "t.csv", Semantics: "precise",
		Stats: bugs.Stats{Events: 40, Threads: 3, SharedVars: 4, Models: 4, Claims: 40, Patterns: []string{"P1", "P2", "P3"}},
		Analyses: []bugs.AnalysisRun{
			{Name: "mcpatom", Doc: "atomicity violations: unserializable access patterns", ModelChecked: true,
				Kinds: []bugs.FindingKind{{ID: "P1"}, {ID: "P2"}, {ID: "P3"}}},
			{Name: "deadlock", Doc: "lock-order deadlocks: cycles of nested acquisitions",
				Kinds: []bugs.FindingKind{{ID: "DL", Name: "lock-order deadlock", Help: "Two threads take two locks in opposite orders."}}},
		}}
	pattern := func(id, p, name, v, file, fn string, line int, rep *bugs.Reproduction) {
		acc := func(h, role, action string, l int) bugs.Access {
			return bugs.Access{Thread: map[string]int{"T1": 1, "T2": 2}[h], Handle: h, Role: role, Action: action,
				File: file, Line: l, Func: fn, Instance: true, Essential: true}
		}
		as := []bugs.Access{acc("T1", "local", "Read", line), acc("T2", "remote", "Write", line+5), acc("T1", "local", "Write", line+1)}
		r.Violations = append(r.Violations, bugs.Violation{Var: v, Local: tracemodel.ThreadRef{ID: 1, Handle: "T1"},
			Remote: tracemodel.ThreadRef{ID: 2, Handle: "T2"}, Pattern: p, PatternName: name, Claim: p + "_1",
			Accesses: as, Interleaving: as, Engine: "native", BugID: id, Analysis: "mcpatom"})
		r.Bugs = append(r.Bugs, bugs.Bug{ID: id, Pattern: p, PatternName: name, Vars: []string{v}, Count: 1,
			Instances: []int{len(r.Violations) - 1}, Analysis: "mcpatom", Locations: bugs.LocationsOf(as), Reproduction: rep})
	}
	pattern("AV-a1", "P1", "unrepeatable read", "x", "a.c", "f", 10, &bugs.Reproduction{Status: bugs.NotReproduced, Runs: 4,
		Evidence: "no directed run had the pattern in the predicted order\nrun 1: the remote write came first"})
	pattern("AV-b1", "P3", "lost update", "y", "b.c", "g", 20, &bugs.Reproduction{Status: bugs.Reproduced, Observed: true, Failed: true, Runs: 3,
		Evidence: failedEvidence, Schedule: "/tmp/repro/AV-b1.sched"})
	pattern("AV-e1", "P1", "unrepeatable read", "w", "e.c", "k", 50, nil)
	pattern("AV-c1", "P2", "stale read after local write", "z", "c.c", "h", 30, &bugs.Reproduction{Status: bugs.Reproduced, Observed: true, Runs: 1,
		Relaxed: true, Schedule: "/tmp/repro/AV-c1.sched"})
	pattern("AV-a2", "P3", "lost update", "x", "a.c", "f", 12, &bugs.Reproduction{Status: bugs.Reproduced, Observed: true, Runs: 2,
		Evidence: "t.repro.csv:7 T1 Read a.c:12\nt.repro.csv:9 T2 Write a.c:17\nt.repro.csv:11 T1 Write a.c:13", Schedule: "/tmp/repro/AV-a2.sched"})
	dl := []bugs.Access{
		{Thread: 1, Handle: "T1", Role: "local", Action: "Lock", File: "d.c", Line: 40, Func: "m", Object: "A"},
		{Thread: 2, Handle: "T2", Role: "remote", Action: "Lock", File: "d.c", Line: 44, Func: "n", Object: "B"},
	}
	r.Violations = append(r.Violations, bugs.Violation{Var: "A, B", Objects: []string{"A", "B"},
		Local: tracemodel.ThreadRef{ID: 1, Handle: "T1"}, Remote: tracemodel.ThreadRef{ID: 2, Handle: "T2"},
		Threads: []tracemodel.ThreadRef{{ID: 1, Handle: "T1"}, {ID: 2, Handle: "T2"}}, Pattern: "DL", PatternName: "lock-order deadlock",
		Accesses: dl, Interleaving: dl, Engine: "deadlock", BugID: "DL-d1", Analysis: "deadlock", Message: "T1 holds A and waits for B; T2 holds B and waits for A"})
	r.Bugs = append(r.Bugs, bugs.Bug{ID: "DL-d1", Pattern: "DL", PatternName: "lock-order deadlock", Vars: []string{"A", "B"}, Count: 1,
		Instances: []int{len(r.Violations) - 1}, Analysis: "deadlock", Locations: bugs.LocationsOf(dl),
		Reproduction: &bugs.Reproduction{Status: bugs.NotTried, Evidence: "reproduce does not direct deadlock cycles"}})
	return r
}

// reproFailuresReport is reproReport with what reproduce adds since every
// failing run is a finding: a bug that failed without its pattern
// observed, failing runs no bug accounts for, and the runs' counts.
func reproFailuresReport() *bugs.Report {
	r := reproReport()
	pattern := func(id, p, name, v, file, fn string, line int, rep *bugs.Reproduction) {
		as := []bugs.Access{
			{Thread: 2, Handle: "T2", Role: "local", Action: "Write", File: file, Line: line, Func: fn, Instance: true, Essential: true},
			{Thread: 1, Handle: "T1", Role: "remote", Action: "Read", File: file, Line: line + 9, Func: "main", Instance: true, Essential: true},
			{Thread: 2, Handle: "T2", Role: "local", Action: "Write", File: file, Line: line + 1, Func: fn, Instance: true, Essential: true}}
		r.Violations = append(r.Violations, bugs.Violation{Var: v, Local: tracemodel.ThreadRef{ID: 2, Handle: "T2"},
			Remote: tracemodel.ThreadRef{ID: 1, Handle: "T1"}, Pattern: p, PatternName: name, Claim: p + "_1",
			Accesses: as, Interleaving: as, Engine: "native", BugID: id, Analysis: "mcpatom"})
		r.Bugs = append(r.Bugs, bugs.Bug{ID: id, Pattern: p, PatternName: name, Vars: []string{v}, Count: 1,
			Instances: []int{len(r.Violations) - 1}, Analysis: "mcpatom", Locations: bugs.LocationsOf(as), Reproduction: rep})
	}
	// A failed run without the pattern observed, and failing runs no bug
	// accounts for.
	pattern("AV-f1", "P4", "dirty (intermediate) read", "g", "f.c", "t", 8, &bugs.Reproduction{Status: bugs.NotReproduced, Failed: true, Runs: 1,
		Relaxed: true, Schedule: "/tmp/repro/AV-f1.sched", Evidence: "the run failed: killed by signal 6 (aborted)\nthe program failed while a thread was held at after-unlock (event 9) until the program ended",
		Window: &bugs.Window{Hold: "held at after-unlock (event 9) until the program ended", Interleaved: []string{"g: f.c:8 Write by thread 2, then f.c:17 Read by thread 1"}}})
	r.Failures = []bugs.Failure{
		{ID: "FAIL-0a1b2c3d4e5f", Ended: "killed by signal 11 (segmentation fault)", Why: "killed by signal 11 (segmentation fault) (the recorded run: exit status 0)",
			Source: "AV-a1", Attribution: bugs.AttrOutside, Runs: 2, Schedule: "/tmp/repro/AV-a1/run2.sched",
			Window:   &bugs.Window{Hold: "held at before-lock from event 10 to 12 (300 ms, let go: timeout)", Events: 100000, Ms: 900},
			Evidence: "the run failed: killed by signal 11\noutside any window: the failure came 100000 events and 900 ms after the last hold ended"},
		{ID: "FAIL-5f4e3d2c1b0a", Ended: "killed by signal 6 (aborted)", Why: "stderr: Assertion `top > 0' failed.", Source: "explore",
			Attribution: bugs.AttrWindow, Pinned: "the hold at L s.c:20#1 m alone fails (run 4)", Runs: 1, Schedule: "/tmp/repro/explore/run3.sched",
			Evidence: "the run failed: stderr: Assertion `top > 0' failed.\nchange points: L s.c:20#1 m; R s.c:31#2 top", Site: "s.c:33"},
	}
	r.Reproduce = &bugs.ReproduceSummary{Candidates: 7, Tried: 5, Untried: 1, Runs: 19, ExploreRuns: 0, FailedRuns: 4, ReproducedRuns: 3, BudgetSpent: "--budget"}
	return r
}

// headings are the bug and group ids of a text report, in order.
func headings(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && (strings.HasPrefix(f[0], "AV-") || strings.HasPrefix(f[0], "DL-") || strings.HasPrefix(f[0], "GR-")) {
			out = append(out, f[0])
		}
	}
	return out
}

func TestTextReproduction(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteText(&b, reproReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	group := bugs.GroupID("mcpatom", []string{"x"}, "f")
	if got, want := strings.Join(headings(out), " "), "AV-b1 "+group+" AV-a2 AV-a1 AV-c1 DL-d1 AV-e1"; got != want {
		t.Errorf("order %s, want %s:\n%s", got, want, out)
	}
	tests := []struct {
		name, want string
	}{
		{"failed", "b.c\n  AV-b1  P3 lost update on y (1 instance)\n" +
			"    FAILED in a directed run (3 runs), pattern observed: exit status 1 — schedule: /tmp/repro/AV-b1.sched\n" +
			strings.Repeat("      stderr: assertion `balance == 200' failed\n", 7) +
			"      … 4 more lines of evidence (see the JSON report)\n    thread T1 (local) in g()"},
		{"reproduced in a group", "    AV-a2  P3 lost update on x (1 instance)\n" +
			"      reproduced in a directed run (2 runs), outcome unchanged — schedule: /tmp/repro/AV-a2.sched\n" +
			"        t.repro.csv:7 T1 Read a.c:12\n        t.repro.csv:9 T2 Write a.c:17\n        t.repro.csv:11 T1 Write a.c:13\n" +
			"      thread T1"},
		{"not reproduced", "    AV-a1  P1 unrepeatable read on x (1 instance)\n" +
			"      not reproduced (4 runs): no directed run had the pattern in the predicted order\n" +
			"        run 1: the remote write came first\n      thread T1"},
		{"relaxed", "  AV-c1  P2 stale read after local write on z (1 instance) (only in a relaxed model; reproduced)\n" +
			"    reproduced in a directed run (1 run), outcome unchanged — schedule: /tmp/repro/AV-c1.sched\n    thread T1"},
		{"finding not tried", "  DL-d1  DL lock-order deadlock on A, B (1 instance)\n" +
			"    not tried: reproduce does not direct deadlock cycles\n    T1 holds A"},
		{"no reproduction", "  AV-e1  P1 unrepeatable read on w (1 instance)\n    thread T1"},
		{"summary", "6 bugs in 5 groups predicted from 6 violation instances\n" +
			"reproduce: 1 failed, 2 reproduced, 1 not reproduced, 1 not tried (10 directed runs)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(out, tt.want) {
				t.Errorf("text lacks:\n%s\ngot:\n%s", tt.want, out)
			}
		})
	}
}

// TestTextReproductionColor checks that the labels are marked up and that
// color changes nothing else.
func TestTextReproductionColor(t *testing.T) {
	var plain, color bytes.Buffer
	if err := report.WriteTextOptions(&plain, reproReport(), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteTextOptions(&color, reproReport(), report.TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\x1b[1;31mFAILED\x1b[0m in a directed run", "\x1b[1;35mreproduced\x1b[0m in a directed run", "\x1b[2mnot tried\x1b[0m: "} {
		if !strings.Contains(color.String(), want) {
			t.Errorf("colored text lacks %q", want)
		}
	}
	stripped := color.String()
	for strings.Contains(stripped, "\x1b[") {
		i := strings.Index(stripped, "\x1b[")
		j := strings.IndexByte(stripped[i:], 'm')
		stripped = stripped[:i] + stripped[i+j+1:]
	}
	if stripped != plain.String() {
		t.Errorf("colored text differs from plain text beyond escapes")
	}
}

// sarifResults are the results of a SARIF log, as far as the tests read
// them.
type sarifResults struct {
	Runs []struct {
		Results []struct {
			Level   string `json:"level"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
			Properties struct {
				BugIDs       []string          `json:"bugIds"`
				Reproduction *json.RawMessage  `json:"reproduction"`
				States       map[string]string `json:"reproductionStates"`
			} `json:"properties"`
		} `json:"results"`
	} `json:"runs"`
}

func TestSARIFReproduction(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteSARIF(&buf, reproReport(), report.Options{Patterns: ltl.Builtin()}); err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, sarifSchema(t), buf.Bytes())
	var log sarifResults
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		example, level, property, suffix string
		states                           map[string]string
	}{
		{"AV-a2", "warning", `{"bugId":"AV-a2","status":"reproduced","failed":false,"runs":2,"schedule":"/tmp/repro/AV-a2.sched","relaxed":false}`,
			"(1 instance). Reproduced in a directed run (2 runs); the program's outcome did not change. Schedule: /tmp/repro/AV-a2.sched.",
			map[string]string{"AV-a1": "not_reproduced", "AV-a2": "reproduced"}},
		{"AV-b1", "error", `{"bugId":"AV-b1","status":"reproduced","failed":true,"runs":3,"schedule":"/tmp/repro/AV-b1.sched","relaxed":false}`,
			"(1 instance). Reproduced in a directed run (3 runs); the run failed: exit status 1. Schedule: /tmp/repro/AV-b1.sched.", nil},
		{"AV-e1", "warning", "", "(1 instance)", nil},
		{"AV-c1", "warning", `{"bugId":"AV-c1","status":"reproduced","failed":false,"runs":1,"schedule":"/tmp/repro/AV-c1.sched","relaxed":true}`,
			"(1 instance). Only a relaxed model predicts it. Reproduced in a directed run (1 run); the program's outcome did not change. Schedule: /tmp/repro/AV-c1.sched.", nil},
		{"DL-d1", "warning", `{"bugId":"DL-d1","status":"not_tried","failed":false,"runs":0,"relaxed":false}`,
			"waits for A. No directed run was made: reproduce does not direct deadlock cycles.", nil},
	}
	results := log.Runs[0].Results
	if len(results) != len(tests) {
		t.Fatalf("%d results, want %d", len(results), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.example, func(t *testing.T) {
			res := results[i]
			if res.Properties.BugIDs[0] != tt.example {
				t.Errorf("example bug %s, want %s", res.Properties.BugIDs[0], tt.example)
			}
			if res.Level != tt.level {
				t.Errorf("level %s, want %s", res.Level, tt.level)
			}
			got := ""
			if res.Properties.Reproduction != nil {
				var c bytes.Buffer
				if err := json.Compact(&c, *res.Properties.Reproduction); err != nil {
					t.Fatal(err)
				}
				got = c.String()
			}
			if got != tt.property {
				t.Errorf("reproduction property %s, want %s", got, tt.property)
			}
			if !strings.HasSuffix(res.Message.Text, tt.suffix) {
				t.Errorf("message %q, want it to end with %q", res.Message.Text, tt.suffix)
			}
			if fmt.Sprint(res.Properties.States) != fmt.Sprint(tt.states) {
				t.Errorf("reproductionStates %v, want %v", res.Properties.States, tt.states)
			}
		})
	}
}

func TestHTMLReproduction(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, reproReport(), report.Options{Patterns: ltl.Builtin()}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	tests := []struct {
		name, want string
	}{
		{"failed badge", `<span class="id">AV-b1</span><span class="repro repro-failed">FAILED</span></h3>`},
		{"evidence", "<pre class=\"evidence\">exit status 1\nstderr: assertion `balance == 200&#39; failed\n"},
		{"schedule", "Reproduced in a directed run (3 runs); the run failed. Schedule: <code>/tmp/repro/AV-b1.sched</code></p>"},
		{"reproduced badge", `<span class="id">AV-a2</span><span class="repro repro-reproduced">reproduced</span></h3>`},
		{"not reproduced badge", `<span class="repro repro-not-reproduced">not reproduced</span>`},
		{"not tried badge", `<span class="id">DL-d1</span><span class="repro repro-not-tried">not tried</span></h3>`},
		{"relaxed", "Only a relaxed model predicts this bug"},
		{"group badge", `">` + bugs.GroupID("mcpatom", []string{"x"}, "f") + `</a><span class="repro repro-reproduced">reproduced</span>`},
		{"style", `.repro-failed {`},
		{"summary", "Directed runs (mcpredict reproduce): 1 failed, 2 reproduced, 1 not reproduced, 1 not tried (10 directed runs).</p>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(page, tt.want) {
				t.Errorf("page lacks %q", tt.want)
			}
		})
	}
	// One per bug with a reproduction, and one per group whose best bug
	// has one, in the table.
	if got := strings.Count(page, `<span class="repro `); got != 5+4 {
		t.Errorf("%d badges, want 9", got)
	}
	// The ranks of the text report: failed, reproduced, the others. (The
	// page has no level of source files: within a rank, groups are in the
	// order of mcpredict run's page.)
	var order []string
	for _, part := range strings.Split(page, `<section class="bug" id="`)[1:] {
		order = append(order, part[:strings.IndexByte(part, '"')])
	}
	if got, want := strings.Join(order, " "), "AV-b1 AV-a2 AV-a1 AV-c1 AV-e1 DL-d1"; got != want {
		t.Errorf("bug sections %s, want %s", got, want)
	}
}

// TestGoldenReproduction pins the text, JSON, SARIF and HTML of a report
// with reproductions (golden files reproduce.*; -update rewrites them).
func TestGoldenReproduction(t *testing.T) {
	rep := reproFailuresReport()
	var text, js, sarif, page bytes.Buffer
	if err := report.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := bugs.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteSARIF(&sarif, rep, report.Options{Patterns: ltl.Builtin()}); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&page, rep, report.Options{Patterns: ltl.Builtin()}); err != nil {
		t.Fatal(err)
	}
	golden(t, "reproduce.txt", text.Bytes())
	golden(t, "reproduce.json", js.Bytes())
	golden(t, "reproduce.sarif", sarif.Bytes())
	golden(t, "reproduce.html", page.Bytes())
	validateSARIF(t, sarifSchema(t), sarif.Bytes())
	back, err := bugs.ReadJSON(bytes.NewReader(js.Bytes()), "reproduce.json")
	if err != nil {
		t.Fatal(err)
	}
	if back.Bugs[1].Reproduction == nil || !back.Bugs[1].Reproduction.Failed {
		t.Errorf("reproduction lost through JSON: %+v", back.Bugs[1])
	}
}
