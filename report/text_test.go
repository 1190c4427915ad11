package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// textReport has two bugs in different files, the second with accesses in
// two functions of the local thread.
func textReport() *bugs.Report {
	acc := func(h, role, action, file string, line int, fn string) bugs.Access {
		return bugs.Access{Handle: h, Role: role, Action: action, File: file, Line: line, Func: fn}
	}
	v1 := bugs.Violation{
		Var: "x", Local: tracemodel.ThreadRef{ID: 1, Handle: "T1"}, Remote: tracemodel.ThreadRef{ID: 2, Handle: "T2"},
		Pattern: "P1", PatternName: "unrepeatable read", BugID: "AV-b",
		Accesses: []bugs.Access{
			acc("T1", "local", "Read", "z.c", 1, "f"),
			acc("T2", "remote", "Write", "z.c", 9, "g"),
			acc("T1", "local", "Read", "z.c", 2, "f"),
		},
	}
	v2 := bugs.Violation{
		Var: "y", Local: tracemodel.ThreadRef{ID: 1, Handle: "T1"}, Remote: tracemodel.ThreadRef{ID: 2, Handle: "T2"},
		Pattern: "P3", PatternName: "lost update", BugID: "AV-a",
		Accesses: []bugs.Access{
			acc("T1", "local", "Read", "a.c", 5, "get"),
			acc("T2", "remote", "Write", "a.c", 7, ""),
			acc("T1", "local", "Write", "a.c", 6, "put"),
		},
	}
	return &bugs.Report{
		Schema: bugs.SchemaVersion, Trace: "t.csv",
		Stats: bugs.Stats{Events: 10, Threads: 2, SharedVars: 2, Models: 2, Claims: 20},
		Bugs: []bugs.Bug{
			{ID: "AV-b", Pattern: "P1", PatternName: "unrepeatable read", Vars: []string{"x"}, Count: 1, Instances: []int{0},
				Locations: []bugs.Location{{Role: "local", File: "z.c", Line: 1}}},
			{ID: "AV-a", Pattern: "P3", PatternName: "lost update", Vars: []string{"y"}, Count: 3, Instances: []int{1},
				Locations: []bugs.Location{{Role: "local", File: "a.c", Line: 5}}},
		},
		Violations: []bugs.Violation{v1, v2},
	}
}

func TestWriteText(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, textReport()); err != nil {
		t.Fatal(err)
	}
	const want = `a.c
  AV-a  P3 lost update on y (3 instances)
    thread T1 (local)    thread T2 (remote)
    Read  a.c:5 get()
                         Write a.c:7
    Write a.c:6 put()

z.c
  AV-b  P1 unrepeatable read on x (1 instance)
    thread T1 (local) in f()    thread T2 (remote) in g()
    Read  z.c:1
                                Write z.c:9
    Read  z.c:2

t.csv: 10 events, 2 threads, 2 shared variables, 2 models, 20 claims
2 bugs in 2 groups predicted from 4 violation instances
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteTextSummary(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *bugs.Report)
		want   string
	}{
		{"suppressed", func(r *bugs.Report) {
			r.Bugs[0].Suppressed = true
			r.Stats.Suppressed = 1
		}, "1 bug in 1 group predicted from 3 violation instances, 1 suppressed\n"},
		{"baseline", func(r *bugs.Report) {
			r.Bugs = r.Bugs[:0]
			r.Baseline, r.Stats.Baseline = "base.json", 2
		}, "no new atomicity violation predicted, 2 known from baseline base.json\n"},
		{"skipped", func(r *bugs.Report) {
			r.Skipped, r.Problems = 2, []string{"t.csv:3: bad"}
		}, "skipped 2 malformed lines (--lenient); first: t.csv:3: bad\n2 bugs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := textReport()
			tt.change(r)
			var b strings.Builder
			if err := WriteText(&b, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("got:\n%s\nwant it to contain %q", b.String(), tt.want)
			}
		})
	}
}

func TestWriteTextColor(t *testing.T) {
	for _, r := range []*bugs.Report{textReport(), groupedReport(5)} {
		testWriteTextColor(t, r)
	}
}

func testWriteTextColor(t *testing.T, r *bugs.Report) {
	t.Helper()
	var plain, color strings.Builder
	if err := WriteTextOptions(&plain, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTextOptions(&color, r, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("escape sequences without color")
	}
	if !strings.Contains(color.String(), "\x1b[1;31mWrite\x1b[0m") {
		t.Errorf("writes are not marked up:\n%q", color.String())
	}
	// Removing the escapes gives back the plain text: color never shifts columns.
	stripped := color.String()
	for strings.Contains(stripped, "\x1b[") {
		i := strings.Index(stripped, "\x1b[")
		j := strings.IndexByte(stripped[i:], 'm')
		stripped = stripped[:i] + stripped[i+j+1:]
	}
	if stripped != plain.String() {
		t.Errorf("colored text differs from plain text beyond escapes:\n%s\nvs\n%s", stripped, plain.String())
	}
}

// groupedReport has one group of n bugs: the lost update of x at line
// 10+i of bump, for i < n, and one P1 bug of x in bump too.
func groupedReport(n int) *bugs.Report {
	r := &bugs.Report{Schema: bugs.SchemaVersion, Trace: "t.csv",
		Stats: bugs.Stats{Events: 100, Threads: 3, SharedVars: 1, Models: 3, Claims: 30}}
	add := func(id, pattern, name string, line int) {
		v := bugs.Violation{
			Var: "x", Local: tracemodel.ThreadRef{ID: 1, Handle: "T1"}, Remote: tracemodel.ThreadRef{ID: 2, Handle: "T2"},
			Pattern: pattern, PatternName: name, BugID: id, Analysis: "mcpatom",
			Accesses: []bugs.Access{
				{Handle: "T1", Role: "local", Action: "Read", File: "c.c", Line: line, Func: "bump"},
				{Handle: "T2", Role: "remote", Action: "Write", File: "c.c", Line: 50, Func: "bump"},
				{Handle: "T1", Role: "local", Action: "Write", File: "c.c", Line: line, Func: "bump"},
			},
		}
		r.Violations = append(r.Violations, v)
		r.Bugs = append(r.Bugs, bugs.Bug{ID: id, Pattern: pattern, PatternName: name, Vars: []string{"x"}, Count: 1,
			Instances: []int{len(r.Violations) - 1}, Analysis: "mcpatom",
			Locations: bugs.LocationsOf(v.Accesses)})
	}
	add("AV-p1", "P1", "unrepeatable read", 9)
	for i := 0; i < n; i++ {
		add(fmt.Sprintf("AV-%02d", i), "P3", "lost update", 10+i)
	}
	return r
}

func TestWriteTextGroup(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		expand bool
		bugs   int    // bug headings shown
		more   string // the line about the others, "" for none
		failed []int  // the bugs whose directed run failed
	}{
		{"two", 2, false, 3, "", nil},
		{"three", 3, false, 3, "    … and 1 more bug in this group (--expand to list them)\n", nil},
		{"many", 20, false, 3, "    … and 18 more bugs in this group (--expand to list them)\n", nil},
		{"expanded", 20, true, 21, "", nil},
		// A failure is never behind "more bugs".
		{"many, five failed", 20, false, 5, "    … and 16 more bugs in this group (--expand to list them)\n", []int{2, 5, 8, 11, 14}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			r := groupedReport(tt.n)
			for _, i := range tt.failed {
				r.Bugs[i].Reproduction = &bugs.Reproduction{Status: bugs.Reproduced, Failed: true, Observed: true}
			}
			if err := WriteTextOptions(&b, r, TextOptions{Expand: tt.expand}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if len(tt.failed) > 0 {
				if got := strings.Count(out, "FAILED in a directed run"); got != len(tt.failed) || strings.Count(out, "    AV-") != tt.bugs || !strings.Contains(out, tt.more) {
					t.Errorf("%d failed bugs shown, want %d:\n%s", got, len(tt.failed), out)
				}
				return
			}
			g := bugs.Groups(groupedReport(tt.n).Bugs)[0]
			head := fmt.Sprintf("c.c\n  %s  %d bugs on x, local thread in bump() (mcpatom, %d instances)\n"+
				"    P1 unrepeatable read: 1, P3 lost update: %d; remote accesses in bump()\n"+
				"    AV-p1  P1 unrepeatable read on x (1 instance)\n", g.ID, tt.n+1, tt.n+1, tt.n)
			if !strings.HasPrefix(out, head) {
				t.Errorf("got:\n%s\nwant it to start with:\n%s", out, head)
			}
			if got := strings.Count(out, "    AV-"); got != tt.bugs {
				t.Errorf("%d bugs shown, want %d:\n%s", got, tt.bugs, out)
			}
			if got := strings.Contains(out, "more bug"); got != (tt.more != "") || !strings.Contains(out, tt.more) {
				t.Errorf("got:\n%s\nwant the line %q", out, tt.more)
			}
			summary := fmt.Sprintf("%d bugs in 1 group predicted from %d violation instances\n", tt.n+1, tt.n+1)
			if !strings.HasSuffix(out, summary) {
				t.Errorf("summary: got:\n%s\nwant it to end with %q", out, summary)
			}
		})
	}
}

// TestWriteHTMLGroup checks the HTML of a group: one summary row, its first
// FirstShown bugs in view and the others behind a disclosure, or all in
// view when expanded; a swimlane for every bug either way.
func TestWriteHTMLGroup(t *testing.T) {
	for _, expand := range []bool{false, true} {
		var b strings.Builder
		if err := WriteHTML(&b, groupedReport(20), Options{Expand: expand}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if n := strings.Count(page, `<a class="mono" href="#GR-`); n != 1 {
			t.Errorf("expand %v: %d summary rows, want 1", expand, n)
		}
		if n := strings.Count(page, `<svg class="swimlane"`); n != 21 {
			t.Errorf("expand %v: %d diagrams, want 21", expand, n)
		}
		if !strings.Contains(page, "21 bugs in 1 group predicted from 21 violation instances.") {
			t.Errorf("expand %v: no summary of bugs and groups", expand)
		}
		before, rest, found := strings.Cut(page, `<details class="more">`)
		if found == expand {
			t.Errorf("expand %v: disclosure of the other bugs: %v", expand, found)
		}
		if !found {
			continue
		}
		if n := strings.Count(before, `<section class="bug"`); n != FirstShown {
			t.Errorf("%d bugs before the disclosure, want %d", n, FirstShown)
		}
		if n := strings.Count(rest, `<section class="bug"`); n != 21-FirstShown {
			t.Errorf("%d bugs in the disclosure, want %d", n, 21-FirstShown)
		}
		if !strings.Contains(rest, "<summary>… and 18 more bugs in this group</summary>") {
			t.Errorf("the disclosure does not say how many bugs it has")
		}
	}
}
