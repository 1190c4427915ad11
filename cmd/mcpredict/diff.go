package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
)

const diffDescription = `
Compares two JSON reports (mcpredict run --format json) by stable bug id and
lists the new bugs (in NEW, not in BASE), the fixed ones (in BASE, not in
NEW) and the unchanged ones. A bug id is a hash of the pattern and the source
locations, so it survives changes of trace line numbers, thread handles and
addresses. Suppressed bugs of NEW are not compared; every bug of BASE,
suppressed or not, counts as known. Then the groups of bugs (one analysis,
variables and local function) are compared the same way, by group id: the
new groups and the fixed ones are listed.

When either report comes from mcpredict reproduce (its bugs have a
reproduction), each bug's state is shown (failed, reproduced, not
reproduced, not tried; none for a bug never reproduced), bugs whose
directed run failed are listed first, the unchanged bugs whose state
changed are listed (AV-…  reproduced -> failed), and the summary counts
the newly failed bugs: new bugs that failed, and known ones that fail now.

For a CI gate: mcpredict diff main.json branch.json fails when the branch
adds a bug. mcpredict run --baseline BASE.json does the same filtering in one
step.

Exit status: 0 no new bug, 1 new bugs, 2 bad usage or an unreadable report.`

func cmdDiff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("diff", "[flags] BASE.json NEW.json", diffDescription, stderr)
	format := fs.String("format", "text", "text or json")
	out := fs.String("o", "", "write the comparison to `FILE` instead of standard output")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	var err error
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "mcpredict diff: want two arguments, BASE.json and NEW.json (see mcpredict diff -h)")
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "mcpredict diff: unknown --format %q: want text or json\n", *format)
		return exitUsage
	}
	var reps [2]*bugs.Report
	for i, p := range pos {
		if reps[i], err = readReport(p); err != nil {
			return fail(stderr, "diff", &predict.UsageError{Msg: err.Error()})
		}
	}
	d := bugs.Compare(reps[0], reps[1], pos[0], pos[1])
	render := writeDiffText
	if *format == "json" {
		render = writeDiffJSON
	}
	if err := writeOutput(*out, stdout, func(w io.Writer) error { return render(w, d) }); err != nil {
		return fail(stderr, "diff", fmt.Errorf("writing comparison: %w", err))
	}
	if len(d.Added) > 0 {
		return exitViolation
	}
	return exitOK
}

// writeDiffText lists the new, fixed and unchanged bugs, one a line, then
// the new and fixed groups of bugs (bugs.Groups), then the counts:
//
//	new (1):
//	  AV-3975107bf35b  P3 lost update on balance  bank.c:11, bank.c:15 (deposit)
//	...
//	new groups (0):
//	fixed groups (0):
//	1 new, 0 fixed, 1 unchanged; groups: 0 new, 0 fixed, 1 unchanged (base ...)
//
// When d compares reproductions, each bug line ends with its state
// ("  [failed]"; a fixed bug's as the base had it), a list of the state
// changes of unchanged bugs follows them, and the count says how many bugs
// newly failed (bugs.Diff.Summary).
func writeDiffText(w io.Writer, d bugs.Diff) error {
	var b strings.Builder
	for _, g := range []struct {
		name string
		bugs []bugs.Bug
	}{{"new", d.Added}, {"fixed", d.Fixed}, {"unchanged", d.Unchanged}} {
		fmt.Fprintf(&b, "%s (%d):\n", g.name, len(g.bugs))
		for _, bug := range g.bugs {
			fmt.Fprintf(&b, "  %s  %s %s on %s  %s", bug.ID, bug.Pattern, bug.PatternName, strings.Join(bug.Vars, ", "), bugWhere(bug))
			if d.Reproductions {
				fmt.Fprintf(&b, "  [%s]", stateName(bug.ReproductionState()))
			}
			b.WriteString("\n")
		}
	}
	if d.Reproductions {
		fmt.Fprintf(&b, "status changes (%d):\n", len(d.StatusChanges))
		for _, c := range d.StatusChanges {
			fmt.Fprintf(&b, "  %s  %s -> %s\n", c.ID, stateName(c.Base), stateName(c.New))
		}
	}
	for _, gs := range []struct {
		name   string
		groups []bugs.Group
	}{{"new groups", d.AddedGroups}, {"fixed groups", d.FixedGroups}} {
		fmt.Fprintf(&b, "%s (%d):\n", gs.name, len(gs.groups))
		for _, g := range gs.groups {
			fmt.Fprintf(&b, "  %s  %s: %s\n", g.ID, report.GroupHeading(g), report.GroupPatterns(g))
		}
	}
	fmt.Fprintf(&b, "%s; %s (base %s, new %s)\n", d.Summary(), d.GroupSummary(), d.Base, d.New)
	_, err := io.WriteString(w, b.String())
	return err
}

// stateName is how the text shows a reproduction state
// (bugs.Bug.ReproductionState): "not reproduced", and "none" for a bug
// without reproduction.
func stateName(state string) string {
	if state == "" {
		return "none"
	}
	return strings.ReplaceAll(state, "_", " ")
}

// bugWhere is the distinct source lines of a bug with their functions,
// e.g. "bank.c:11, bank.c:15 (deposit)".
func bugWhere(b bugs.Bug) string {
	var locs, funcs []string
	for _, l := range b.Locations {
		if s := l.String(); !containsStr(locs, s) {
			locs = append(locs, s)
		}
		if l.Func != "" && !containsStr(funcs, l.Func) {
			funcs = append(funcs, l.Func)
		}
	}
	s := strings.Join(locs, ", ")
	if len(funcs) > 0 {
		s += " (" + strings.Join(funcs, ", ") + ")"
	}
	return s
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func writeDiffJSON(w io.Writer, d bugs.Diff) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}
