package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
)

// What every renderer shows of a bug's reproduction (bugs.Reproduction,
// filled by mcpredict reproduce). A report without reproductions (that of
// mcpredict run) renders exactly as it did before they existed: every
// addition below is conditional on a non-nil Reproduction, and the
// orderings are stable sorts on a rank that is then the same for all bugs.

// maxEvidenceLines is the number of lines of a bug's evidence that the
// text report shows: the last lines of a run's standard error can be
// long, and the JSON report has them all.
const maxEvidenceLines = 8

// reproView is a bug's reproduction as the renderers show it.
type reproView struct {
	Label    string   // "FAILED", "reproduced", "not reproduced", "not tried"
	Class    string   // for CSS: "failed", "reproduced", "not-reproduced", "not-tried"
	Sentence string   // what happened, e.g. "Reproduced in a directed run (3 runs); the run failed"
	Evidence []string // the evidence's lines, without trailing blank ones
	Schedule string
	Relaxed  bool
	Failed   bool
	Status   string
	Runs     int
}

// reproViewOf returns the view of b's reproduction, or nil without one.
func reproViewOf(b bugs.Bug) *reproView {
	r := b.Reproduction
	if r == nil {
		return nil
	}
	v := &reproView{Label: strings.ReplaceAll(r.Status, "_", " "), Evidence: evidenceLines(r.Evidence),
		Schedule: r.Schedule, Relaxed: r.Relaxed, Failed: r.Failed, Status: r.Status, Runs: r.Runs}
	runs := runCount(r.Runs)
	switch {
	case r.Failed && r.Status != bugs.Reproduced:
		v.Label = "FAILED"
		v.Sentence = "A directed run" + runs + " failed in the bug's window, the pattern not observed in order"
	case r.Failed:
		v.Label = "FAILED"
		v.Sentence = "Reproduced in a directed run" + runs + "; the run failed"
	case r.Status == bugs.Reproduced:
		v.Sentence = "Reproduced in a directed run" + runs + "; the program's outcome did not change"
	case r.Status == bugs.NotReproduced:
		v.Sentence = fmt.Sprintf("Not reproduced in %d directed %s", r.Runs, plural(r.Runs, "run", "runs"))
	case r.Status == bugs.NotTried:
		v.Sentence = "No directed run was made"
	default: // a status this version does not know: say it as it is
		v.Sentence = "Reproduction: " + v.Label + runs
	}
	v.Class = strings.ReplaceAll(strings.ToLower(v.Label), " ", "-")
	return v
}

// runCount is " (3 runs)", or "" for none.
func runCount(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%d %s)", n, plural(n, "run", "runs"))
}

// evidenceLines splits evidence into lines, without the blank ones at its
// ends (a captured standard error usually ends with a newline).
func evidenceLines(ev string) []string {
	ev = strings.Trim(ev, "\r\n")
	if strings.TrimSpace(ev) == "" {
		return nil
	}
	lines := strings.Split(ev, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return lines
}

// textLine is the line of the text report under the bug's heading, e.g.
// "FAILED in a directed run (3 runs): exit status 1 — schedule: x.sched",
// with the label styled; it says the evidence's first line, except for a
// reproduced bug whose outcome did not change (its evidence, the trace
// lines of the pattern, is listed under the line). It returns how many
// lines of the evidence it used.
func (v *reproView) textLine(st func(style, string) string) (string, int) {
	runs := runCount(v.Runs)
	s := st(v.style(), v.Label)
	switch {
	case v.Failed && v.Status != bugs.Reproduced:
		s += " in a directed run" + runs + ", pattern not observed in order"
	case v.Failed:
		s += " in a directed run" + runs + ", pattern observed"
	case v.Status == bugs.Reproduced:
		s += " in a directed run" + runs + ", outcome unchanged"
	default:
		s += runs
	}
	used := 0
	if len(v.Evidence) > 0 && (v.Failed || v.Status != bugs.Reproduced) {
		s += ": " + v.Evidence[0]
		used = 1
	}
	if v.Schedule != "" {
		s += " — schedule: " + v.Schedule
	}
	return s, used
}

// style is the text style of the label: a failure stands out, a
// reproduction is marked, the rest is dim.
func (v *reproView) style() style {
	switch {
	case v.Failed:
		return styleFailed
	case v.Status == bugs.Reproduced:
		return styleReproduced
	}
	return styleID
}

// sarifSentence is the sentence the SARIF message of a bug ends with, e.g.
// "Reproduced in a directed run (3 runs); the run failed: exit status 1.
// Schedule: x.sched.", with the evidence's first line as the text line has
// it.
func (v *reproView) sarifSentence() string {
	s := v.Sentence
	if len(v.Evidence) > 0 && (v.Failed || v.Status != bugs.Reproduced) {
		s += ": " + strings.TrimRight(v.Evidence[0], ".")
	}
	s += "."
	if v.Relaxed {
		s = "Only a relaxed model predicts it. " + s
	}
	if v.Schedule != "" {
		s += " Schedule: " + v.Schedule + "."
	}
	return s
}

// writeTextReproduction writes, under a bug's heading indented by in, its
// reproduction line and the rest of its evidence (at most
// maxEvidenceLines in all).
func writeTextReproduction(ew *errWriter, st func(style, string) string, b bugs.Bug, in string) {
	v := reproViewOf(b)
	if v == nil {
		return
	}
	line, used := v.textLine(st)
	ew.printf("%s  %s\n", in, line)
	rest := v.Evidence[used:]
	shown := min(len(rest), maxEvidenceLines-used)
	for _, l := range rest[:shown] {
		ew.printf("%s    %s\n", in, l)
	}
	if n := len(rest) - shown; n > 0 {
		ew.printf("%s    … %d more %s of evidence (see the JSON report)\n", in, n, plural(n, "line", "lines"))
	}
}

// relaxedMark is what the heading of a bug that only a relaxed model
// predicts ends with, e.g. " (only in a relaxed model; reproduced)": it was
// not predicted like the others, and is reported only because a directed
// run reproduced it.
func relaxedMark(b bugs.Bug) string {
	v := reproViewOf(b)
	if v == nil || !v.Relaxed {
		return ""
	}
	return " (only in a relaxed model; " + v.Label + ")"
}

// ReproduceSummary counts the reproductions of bs, e.g. "1 failed, 2
// reproduced, 0 not reproduced, 1 not tried (7 directed runs)"; "" when
// no bug has one. A failed bug is counted as failed only.
func ReproduceSummary(bs []bugs.Bug) string {
	var failed, reproduced, notReproduced, notTried, runs int
	some := false
	for _, b := range bs {
		r := b.Reproduction
		if r == nil {
			continue
		}
		some = true
		runs += r.Runs
		switch {
		case r.Failed:
			failed++
		case r.Status == bugs.Reproduced:
			reproduced++
		case r.Status == bugs.NotReproduced:
			notReproduced++
		default:
			notTried++
		}
	}
	if !some {
		return ""
	}
	return fmt.Sprintf("%d failed, %d reproduced, %d not reproduced, %d not tried (%d directed %s)",
		failed, reproduced, notReproduced, notTried, runs, plural(runs, "run", "runs"))
}

// rankBugs orders bugs failed first, then reproduced, then the others
// (bugs.Bug.ReproductionRank), keeping the order within a rank: without
// reproductions it changes nothing.
func rankBugs(bs []bugs.Bug) {
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].ReproductionRank() < bs[j].ReproductionRank() })
}

// rankGroups orders the members of each group with rankBugs (and its
// BugIDs with them), then the groups by their best bug's rank, stably.
func rankGroups(gs []bugs.Group) {
	for k := range gs {
		g := &gs[k]
		rankBugs(g.Members)
		for i, b := range g.Members {
			g.BugIDs[i] = b.ID
		}
	}
	sort.SliceStable(gs, func(i, j int) bool { return groupRank(gs[i]) < groupRank(gs[j]) })
}

// groupRank is the rank of a group's best bug.
func groupRank(g bugs.Group) int {
	best := 2
	for _, b := range g.Members {
		best = min(best, b.ReproductionRank())
	}
	return best
}

// RunSummary says what mcpredict reproduce did in one line, e.g. "31
// candidates: 29 tried, 2 untried (--budget ran out); 57 directed runs (20
// exploring): 3 failed, 4 reproduced the pattern without failing".
func RunSummary(s bugs.ReproduceSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %d tried, %d untried", s.Candidates, plural(s.Candidates, "candidate", "candidates"), s.Tried, s.Untried)
	switch {
	case s.Interrupted:
		b.WriteString(" (interrupted)")
	case s.BudgetSpent != "":
		fmt.Fprintf(&b, " (%s ran out)", s.BudgetSpent)
	}
	if s.Undirected > 0 {
		fmt.Fprintf(&b, ", %d no schedule can direct", s.Undirected)
	}
	fmt.Fprintf(&b, "; %d directed %s", s.Runs, plural(s.Runs, "run", "runs"))
	if s.ExploreRuns > 0 {
		fmt.Fprintf(&b, " (%d exploring)", s.ExploreRuns)
	}
	fmt.Fprintf(&b, ": %d failed, %d reproduced the pattern without failing", s.FailedRuns, s.ReproducedRuns)
	return b.String()
}

// writeTextFailures writes the failing runs that no bug accounts for,
// first in the report: they are what the program really did.
func writeTextFailures(ew *errWriter, st func(style, string) string, fs []bugs.Failure) {
	if len(fs) == 0 {
		return
	}
	ew.printf("%s\n", st(styleFile, "failing runs"))
	for _, f := range fs {
		what := "an exploring run"
		if f.Source != "explore" {
			what = "a run directed at " + f.Source
		}
		where := map[string]string{bugs.AttrWindow: "in its holds' window", bugs.AttrOutside: "outside any window", bugs.AttrNoHold: "with no thread held"}[f.Attribution]
		ew.printf("  %s  %s %s (%s, %d %s) — schedule: %s\n", st(styleID, f.ID), st(styleFailed, "FAILED"), where, what, f.Runs, plural(f.Runs, "run", "runs"), f.Schedule)
		lines := evidenceLines(f.Evidence)
		shown := min(len(lines), maxEvidenceLines)
		for _, l := range lines[:shown] {
			ew.printf("    %s\n", l)
		}
		if n := len(lines) - shown; n > 0 {
			ew.printf("    … %d more %s of evidence (see the JSON report)\n", n, plural(n, "line", "lines"))
		}
	}
	ew.printf("\n")
}
