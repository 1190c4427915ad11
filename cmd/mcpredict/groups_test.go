package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/report"
)

// racyCounter100 is the trace of examples/c/racy_counter_100.c recorded
// with mcpredict record: one counter incremented without a lock at a
// hundred lines of one function by three threads.
var racyCounter100 = filepath.Join("..", "..", "report", "testdata", "racy_counter_100.csv")

// TestRacyCounter100 checks that the hundreds of bugs of a counter bumped
// without a lock from a hundred lines are one group in every format: a
// text report of at most 60 lines with one group heading (all bugs with
// --expand), one group in JSON with every bug, one HTML section and
// summary row, one SARIF result whose related locations are every line of
// every bug.
func TestRacyCounter100(t *testing.T) {
	run := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := cli(t, append(append([]string{"run", "--engine", "native"}, args...), racyCounter100)...)
		if code != exitViolation {
			t.Fatalf("run %v: exit %d, want %d; stderr: %s", args, code, exitViolation, stderr)
		}
		return stdout
	}

	var rep struct {
		Bugs   []bugs.Bug   `json:"bugs"`
		Groups []bugs.Group `json:"groups"`
	}
	if err := json.Unmarshal([]byte(run("--format", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Bugs) < 100 {
		t.Fatalf("%d bugs, want hundreds", len(rep.Bugs))
	}
	if len(rep.Groups) != 1 {
		t.Fatalf("JSON: %d groups, want 1", len(rep.Groups))
	}
	g := rep.Groups[0]
	var ids []string
	for _, b := range rep.Bugs {
		ids = append(ids, b.ID)
	}
	if got := slices.Sorted(slices.Values(g.BugIDs)); !slices.Equal(got, slices.Sorted(slices.Values(ids))) {
		t.Errorf("JSON: the group has %d bugs, want every bug (%d)", len(g.BugIDs), len(ids))
	}
	n := 0
	for _, p := range g.Patterns {
		n += p.Bugs
	}
	if g.Analysis != "mcpatom" || !slices.Equal(g.Vars, []string{"counter"}) || g.LocalFunc != "bump_all" || n != len(ids) {
		t.Errorf("JSON: group %+v", g)
	}

	// Text: one heading, the first bugs, the number of the others.
	text := run()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > 60 {
		t.Errorf("text report of %d lines, want at most 60:\n%s", len(lines), text)
	}
	headings := regexp.MustCompile(`(?m)^  GR-[0-9a-f]{12}  `).FindAllString(text, -1)
	if len(headings) != 1 || strings.TrimSpace(headings[0]) != g.ID {
		t.Errorf("text: group headings %q, want one, %s", headings, g.ID)
	}
	shown := regexp.MustCompile(`(?m)^    AV-[0-9a-f]{12}  `).FindAllString(text, -1)
	if len(shown) != report.FirstShown {
		t.Errorf("text: %d bugs shown, want %d", len(shown), report.FirstShown)
	}
	for _, want := range []string{
		fmt.Sprintf("    … and %d more bugs in this group (--expand to list them)\n", len(ids)-report.FirstShown),
		fmt.Sprintf("\n%d bugs in 1 group predicted from ", len(ids)),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	expanded := run("--expand")
	if got := regexp.MustCompile(`(?m)^    AV-[0-9a-f]{12}  `).FindAllString(expanded, -1); len(got) != len(ids) || strings.Contains(expanded, "more bugs") {
		t.Errorf("text --expand: %d bugs shown, want all %d", len(got), len(ids))
	}

	// HTML: one group section and summary row; every bug's diagram, all
	// but the first behind one disclosure.
	page := run("--format", "html")
	for _, c := range []struct {
		what string
		n    int
	}{
		{`<section class="group"`, 1},
		{`<a class="mono" href="#GR-`, 1},
		{`<details class="more">`, 1},
		{`<section class="bug"`, len(ids)},
		{`<svg class="swimlane"`, len(ids)},
	} {
		if got := strings.Count(page, c.what); got != c.n {
			t.Errorf("HTML: %d × %s, want %d", got, c.what, c.n)
		}
	}
	if !strings.Contains(page, `<section class="group" id="`+g.ID+`">`) {
		t.Errorf("HTML: no section of group %s", g.ID)
	}

	// SARIF: one result, fingerprinted by the group, related to every
	// line of every bug.
	var log struct {
		Runs []struct {
			Results []struct {
				PartialFingerprints map[string]string `json:"partialFingerprints"`
				RelatedLocations    []struct {
					Physical struct {
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"relatedLocations"`
				Properties struct {
					BugIDs []string `json:"bugIds"`
				} `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(run("--format", "sarif")), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 {
		t.Fatalf("SARIF: %d runs, results %+v; want one result", len(log.Runs), log.Runs)
	}
	res := log.Runs[0].Results[0]
	if res.PartialFingerprints[report.FingerprintKey] != g.ID || len(res.Properties.BugIDs) != len(ids) {
		t.Errorf("SARIF: fingerprints %v, %d bug ids; want %s and %d", res.PartialFingerprints, len(res.Properties.BugIDs), g.ID, len(ids))
	}
	var related, want []int
	for _, l := range res.RelatedLocations {
		related = append(related, l.Physical.Region.StartLine)
	}
	for _, b := range rep.Bugs {
		for _, l := range b.Locations {
			if !slices.Contains(want, l.Line) {
				want = append(want, l.Line)
			}
		}
	}
	sort.Ints(related)
	sort.Ints(want)
	if !slices.Equal(related, want) {
		t.Errorf("SARIF: related lines %v, want every line of every bug once %v", related, want)
	}
}

// TestBatchExpand checks that batch writes grouped text reports, every bug
// with --expand, and counts groups in its summary.
func TestBatchExpand(t *testing.T) {
	for _, expand := range []bool{false, true} {
		out := t.TempDir()
		args := []string{"batch", "--engine", "native", "--no-cache", "--quiet", "--out-dir", out, "--formats", "text"}
		if expand {
			args = append(args, "--expand")
		}
		code, stdout, stderr := cli(t, append(args, racyCounter100)...)
		if code != exitViolation {
			t.Fatalf("batch %v: exit %d; %s%s", args, code, stdout, stderr)
		}
		text, err := os.ReadFile(filepath.Join(out, "reports", "racy_counter_100.csv.text"))
		if err != nil {
			t.Fatal(err)
		}
		if more := strings.Contains(string(text), "more bugs in this group (--expand to list them)"); more == expand {
			t.Errorf("expand %v: the text report says how many more bugs: %v", expand, more)
		}
		summary, err := os.ReadFile(filepath.Join(out, "summary.txt"))
		if err != nil || !regexp.MustCompile(`\d+ distinct bugs in 1 groups?`).Match(summary) {
			t.Errorf("summary.txt: %v\n%s", err, summary)
		}
	}
}
