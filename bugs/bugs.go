// Package bugs is the report schema of mcpredict (mcpredict.report/v1): the
// Report of a run, its bugs, violations and accesses, the stable ids of
// bugs, the grouping of violations into bugs (Dedupe) and of bugs into
// groups (Groups), suppressions, baselines and the comparison of two
// reports (diff), and reading and writing the JSON form.
//
// It is plain data shared by every analysis and every renderer. It runs no
// analysis and knows none by name: model-checked analyses (package predict
// maps their witnesses to violations) and the other analyses (package
// analysis turns their findings into violations) fill it alike. It renders
// only JSON; the text, SARIF and HTML renderers are package report.
package bugs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// SchemaVersion identifies the JSON report schema (see README, "JSON report").
const SchemaVersion = "mcpredict.report/v1"

// Access is one event of a violation instance or of its interleaving.
type Access struct {
	Thread    int    `json:"thread"` // model thread id in the trace
	Handle    string `json:"handle"` // the trace's thread token
	Role      string `json:"role"`   // "local" or "remote"
	Action    string `json:"action"` // Read, Write, Lock, Unlock, Wait, ...
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	Func      string `json:"func,omitempty"`
	TraceLine int    `json:"trace_line"`
	// Instance marks, in an interleaving, the accesses that form the
	// pattern instance.
	Instance bool `json:"instance,omitempty"`
	// Essential marks, in a violation's accesses, those that identify its
	// bug (Violation.EssentialAccesses): their locations are the bug's.
	Essential bool `json:"essential,omitempty"`
	// Object names the lock or variable of the event when a violation
	// involves several (a finding of an analysis that is not model-checked,
	// a violation of an atomic set); empty when every access is on
	// Violation.Var.
	Object string `json:"object,omitempty"`
	// Source is the text of the access's source line, when the trace has
	// it (a recording of mcpredict record): bug ids are made from it.
	Source string `json:"source,omitempty"`
	// Locks are the locks the thread held, Stack its call chain (innermost
	// function first), Created where the thread was created: the context
	// of the essential accesses of a bug's first instance (tracemodel.
	// Context); empty elsewhere.
	// Atomic marks the Write of an atomic read-modify-write (a successful
	// compare-and-swap, a fetch-and-add).
	Atomic bool     `json:"atomic,omitempty"`
	Locks  []string `json:"locks,omitempty"`
	Stack  []string `json:"stack,omitempty"`
	// StackLibrary marks the frames of Stack in library code
	// (tracemodel.Context.StackLibrary).
	StackLibrary []bool `json:"stack_library,omitempty"`
	Created      string `json:"created,omitempty"`
	// Allocated is where the heap block accessed was allocated.
	Allocated string `json:"allocated,omitempty"`
	// Library is where an access in library code (a C++ standard
	// library header) really was: File, Line and Func are then the call
	// of the user's code that led to it, and Executed the library's line.
	Library *tracemodel.LibrarySite `json:"library,omitempty"`
}

// Executed returns where the access's code is: its library location when
// it is shown at the user's call, else its location.
func (a Access) Executed() tracemodel.Loc {
	if a.Library != nil {
		return a.Library.Loc()
	}
	return tracemodel.Loc{File: a.File, Line: a.Line}
}

// Location returns "file:line" or "?".
func (a Access) Location() string {
	return tracemodel.Loc{File: a.File, Line: a.Line}.String()
}

// Violation is one instance of a bug: a pattern instance found in one
// model of a model-checked analysis (a variable or an atomic set, and a
// thread pair), or one finding of another analysis.
type Violation struct {
	Var         string               `json:"var"`
	Local       tracemodel.ThreadRef `json:"local"`
	Remote      tracemodel.ThreadRef `json:"remote"`
	Pattern     string               `json:"pattern"`      // P1..P5 or U1..
	PatternName string               `json:"pattern_name"` // e.g. "lost update"
	Claim       string               `json:"claim"`        // e.g. "P3_1"
	// Accesses are the accesses of the instance, in interleaving order.
	Accesses []Access `json:"accesses"`
	// Interleaving is the witness: the model steps executed, in order, up
	// to the end of the instance, from at most WitnessContext steps before
	// the instance's first access; the steps before are counted in
	// Elided. (From the start of a long trace, every instance's witness
	// would be as long as the trace: gigabytes for hundreds of instances,
	// and no reader goes through it.)
	Interleaving []Access `json:"interleaving"`
	// Elided is the number of witness steps before Interleaving.
	Elided int `json:"elided_steps,omitempty"`
	// InterleavingOmitted marks an instance beyond its bug's first
	// InterleavingsKept: its Interleaving is left out (Report.
	// TrimInterleavings), its Accesses say where it is.
	InterleavingOmitted bool   `json:"interleaving_omitted,omitempty"`
	Engine              string `json:"engine"` // "spin" or "native"
	BugID               string `json:"bug_id"`

	// Analysis names the analysis that found it (Report.Analyses); empty
	// in a report of package predict run alone, or written before every
	// analysis named its violations.
	Analysis string `json:"analysis,omitempty"`

	// The fields below are those of violations that involve more than one
	// variable or two threads; the others leave them empty.

	// Threads are all the threads of a finding that involves any number of
	// them (a deadlock cycle), in order; Local and Remote are its first two.
	// Only findings of analyses that are not model-checked have them.
	Threads []tracemodel.ThreadRef `json:"threads,omitempty"`
	// Objects are the variables or locks of the violation (a deadlock's
	// locks, in cycle order; an atomic set's variables, x of the pattern
	// first); Var joins them.
	Objects []string `json:"objects,omitempty"`
	// Message is a one-line description of the finding.
	Message string `json:"message,omitempty"`
	// Occurred is set when the finding happened in the recorded run (a
	// deadlock the recording ended in), not only predicted.
	Occurred bool `json:"occurred,omitempty"`
}

// EssentialAccesses returns the accesses marked Essential (all of them in a
// report written before the mark existed): those that identify its bug.
func (v Violation) EssentialAccesses() []Access {
	var out []Access
	for _, a := range v.Accesses {
		if a.Essential {
			out = append(out, a)
		}
	}
	if out == nil {
		return v.Accesses
	}
	return out
}

// Location is a distinct source location of a bug, with its role.
type Location struct {
	Role   string `json:"role"`
	Action string `json:"action"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Func   string `json:"func,omitempty"`
	Source string `json:"source,omitempty"` // the line's text, when the trace has it
}

func (l Location) String() string {
	return tracemodel.Loc{File: l.File, Line: l.Line}.String()
}

// locKey is what tells two locations of a bug apart: key's fields.
type locKey struct {
	role, action, file string
	line               int
}

func (l Location) dedupKey() locKey { return locKey{l.Role, l.Action, l.File, l.Line} }

// addLocations is locations(append(have, more...)) for have made by
// locations: have itself when it has every location of more already (a
// bug's thousands of instances at its few sites).
func addLocations(have, more []Location) []Location {
	for _, l := range more {
		if !slices.ContainsFunc(have, func(h Location) bool { return h.dedupKey() == l.dedupKey() }) {
			return locations(append(have, more...))
		}
	}
	return have
}

func (l Location) key() string {
	return fmt.Sprintf("%s|%s|%s|%d", l.Role, l.Action, l.File, l.Line)
}

// idKey is what a location contributes to a bug id: with its source text,
// the role, action, file base name, function and the text without
// comments and spacing, so that lines added or removed elsewhere (a
// comment at the top of the file) and the spelling of the path keep the
// id; without it (a Pin trace), key.
func (l Location) idKey() string {
	text := normalizeSource(l.Source)
	if text == "" {
		return l.key()
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s", l.Role, l.Action, path.Base(l.File), l.Func, text)
}

// normalizeSource is a line of C without its comments and with single
// spaces: what the code says, not how it is laid out or annotated.
func normalizeSource(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "//"):
			i = len(s)
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
				break
			}
			i += end + 3
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// locationAccesses turns accesses into locations (not deduplicated).
func locationAccesses(as []Access) []Location {
	out := make([]Location, len(as))
	for i, a := range as {
		out[i] = Location{Role: a.Role, Action: a.Action, File: a.File, Line: a.Line, Func: a.Func, Source: a.Source}
	}
	return out
}

// locations returns the distinct locations, sorted: local ones first.
func locations(ls []Location) []Location {
	seen := make(map[locKey]bool, len(ls))
	var out []Location
	for _, l := range ls {
		if k := l.dedupKey(); !seen[k] {
			seen[k] = true
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Role != b.Role {
			return a.Role == "local"
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Action < b.Action
	})
	return out
}

// PatternID is the stable id of a bug of a model-checked pattern: "AV-"
// and a hash of key (the pattern's family or id, or the text of a user
// pattern) and the distinct source locations of the local accesses of as
// (the region that should have been atomic), independent of trace line
// numbers, thread handles and variable addresses, so that the same bug
// keeps its id across runs. The remote accesses are not part of it: which
// remote write of several an instance shows depends on the interleaving
// the search met first, and a different recording or a different engine
// may meet another; the bug lists the remote locations of all its
// instances.
func PatternID(key string, as []Access) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", key)
	var keys []string
	for _, l := range locations(locationAccesses(as)) {
		if l.Role == "local" {
			keys = append(keys, l.idKey())
		}
	}
	if hasSource(as) {
		// Ordered by text, not by line: code moved keeps its id.
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	for _, k := range keys {
		fmt.Fprintf(h, "%s\n", k)
	}
	return "AV-" + hex.EncodeToString(h.Sum(nil))[:12]
}

func hasSource(as []Access) bool {
	for _, a := range as {
		if a.Source != "" {
			return true
		}
	}
	return false
}

// FindingID is the stable id of a finding of an analysis that is not
// model-checked: prefix, "-", and a hash of its kind and its distinct source
// locations (role, action, file, line), so that it is independent of trace
// line numbers, thread handles and addresses, and of the order in which
// the locations are given.
func FindingID(prefix, kind string, locs []Location) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", kind)
	keys := make([]string, 0, len(locs))
	for _, l := range locs {
		keys = append(keys, l.idKey())
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			fmt.Fprintf(h, "%s\n", k)
		}
	}
	return prefix + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// LocationsOf returns the locations of accesses (not deduplicated).
func LocationsOf(as []Access) []Location { return locationAccesses(as) }

// Bug is a group of violations with the same pattern and source locations.
type Bug struct {
	ID          string     `json:"id"`
	Pattern     string     `json:"pattern"`
	PatternName string     `json:"pattern_name"`
	Vars        []string   `json:"vars"`
	Locations   []Location `json:"locations"`
	Count       int        `json:"count"` // number of violation instances
	// Instances are indexes into Report.Violations.
	Instances []int `json:"instances"`
	// Suppressed is set when a suppression rule matched (the bug is then
	// only counted, not reported).
	Suppressed bool `json:"suppressed,omitempty"`
	// Confirmed is set when Spin confirmed the bug: it found the pattern
	// in a model the bug has an instance in (README, "--confirm").
	Confirmed bool `json:"confirmed,omitempty"`
	// Analysis names the analysis that found it (as Violation.Analysis).
	Analysis string `json:"analysis,omitempty"`
	// Occurred is set when an instance happened in the recorded run.
	Occurred bool `json:"occurred,omitempty"`
	// Reproduction is what mcpredict reproduce found when it re-ran the
	// program under a schedule that forces the bug's interleaving; nil in
	// a report of mcpredict run.
	Reproduction *Reproduction `json:"reproduction,omitempty"`
}

// Reproduction statuses.
const (
	Reproduced    = "reproduced"     // a directed run's own trace has the pattern, in the predicted order
	NotReproduced = "not_reproduced" // directed runs were made; none had it
	NotTried      = "not_tried"      // no directed run (budget, or an analysis reproduce does not direct)
)

// Reproduction is the outcome of the directed runs of one bug.
type Reproduction struct {
	Status string `json:"status"` // Reproduced, NotReproduced or NotTried
	// Failed is set when a run that reproduced the bug ended differently
	// from the recorded run (exit status, signal, an abort or sanitizer
	// message, or the --check command failing): the bug changed the
	// program's outcome. A reproduced bug that did not fail may be benign.
	Failed bool `json:"failed"`
	// Runs counts the directed runs made for the bug.
	Runs int `json:"runs"`
	// Evidence says what happened in the run that decides the status: how
	// it ended, the last lines of its standard error, the --check output,
	// the trace lines of the pattern; or why no run reproduced it.
	Evidence string `json:"evidence,omitempty"`
	// Schedule is the schedule file of the reproducing run (mcpredict
	// replay runs it again).
	Schedule string `json:"schedule,omitempty"`
	// Controls counts the runs made without a schedule before the
	// directed runs, ControlsChanged those that ended differently from the
	// recorded run: when some did, the program fails on its own and a
	// failed directed run says less (its evidence says so).
	Controls        int `json:"controls,omitempty"`
	ControlsChanged int `json:"controls_changed,omitempty"`
	// Relaxed is set for a bug that the default model does not predict
	// (no sound reordering of the recorded run contains it) and that a
	// relaxed model proposed: it is reported only because a directed run
	// failed (or, on request, reproduced it).
	Relaxed bool `json:"relaxed,omitempty"`
	// Observed says, for a failed bug, whether the failing run's trace had
	// the pattern in the predicted order (Status is then Reproduced): a
	// run that failed in the bug's window without it failed all the same,
	// and its evidence says what was observed instead.
	Observed bool `json:"observed"`
	// Window places the failure after the hold of the bug's window, for a
	// failed bug.
	Window *Window `json:"window,omitempty"`
}

// Window is where a directed run's failure came, relative to the hold of
// the schedule it ran: the trace's events and the milliseconds from the
// end of the hold to the failure (0 when the program failed while held).
type Window struct {
	// Hold says what the run held, and why it was let go.
	Hold string `json:"hold"`
	// Events and Ms are how far after the hold's end the program failed.
	Events int   `json:"events"`
	Ms     int64 `json:"ms"`
	// Why says, for a failure far from the hold, what put it in the
	// window or outside it ("" near the hold).
	Why string `json:"why,omitempty"`
	// Interleaved are accesses near the failure made in an order of
	// threads the recorded run never had (each "VAR: SITE by thread A,
	// then SITE by thread B").
	Interleaved []string `json:"interleaved,omitempty"`
}

// Failure attributions.
const (
	AttrWindow  = "window"  // the failure came in the hold's window (or close after it)
	AttrOutside = "outside" // it came long after the window, away from its variables
	AttrNoHold  = "no_hold" // the schedule never held a thread: the program failed on its own
)

// Failure is a directed run that ended differently from the recorded run
// and that no bug's reproduction accounts for: a run of the exploration
// (schedules chosen from the recording, not from a bug), or a failure that
// came outside the window of the bug the run was directed at.
type Failure struct {
	// ID is stable for the same way of failing at the same place:
	// "FAIL-" and a hash of how the run ended and the failing thread's
	// last site.
	ID string `json:"id"`
	// Ended is how the run ended; Why what made it a failure (the
	// outcome, an assertion on standard error, the --check command).
	Ended string `json:"ended"`
	Why   string `json:"why"`
	// Source is what the run was: "explore", or the id of the bug it was
	// directed at.
	Source string `json:"source"`
	// Attribution is AttrWindow, AttrOutside or AttrNoHold.
	Attribution string  `json:"attribution"`
	Window      *Window `json:"window,omitempty"`
	// Pinned says which of the run's holds the failure needs, from runs
	// with each hold alone ("" when not tried).
	Pinned string `json:"pinned,omitempty"`
	// Runs counts the runs that failed this way; Schedule replays the
	// first, Trace is its recording.
	Runs     int    `json:"runs"`
	Schedule string `json:"schedule,omitempty"`
	Trace    string `json:"trace,omitempty"`
	Evidence string `json:"evidence,omitempty"`
	// Site is the failing thread's last access before the failure
	// ("file:line"; "" unknown).
	Site string `json:"site,omitempty"`
}

// ReproduceSummary counts what mcpredict reproduce did, so that a budget
// that ran out or an interruption is said, not inferred.
type ReproduceSummary struct {
	Candidates int `json:"candidates"`
	// Tried counts the candidates with at least one directed run;
	// Untried those the budget or an interruption left without one.
	Tried   int `json:"tried"`
	Untried int `json:"untried"`
	// Undirected counts those no schedule can direct (a deadlock cycle of
	// more than eight threads, an instance without a local and a remote
	// access): Tried + Untried + Undirected = Candidates.
	Undirected int `json:"undirected,omitempty"`
	// Runs counts every directed run: of the candidates, of the
	// exploration and of the re-runs that pin a failure on a hold.
	Runs        int `json:"runs"`
	ExploreRuns int `json:"explore_runs"`
	// Outcomes of the runs: failed (ended differently), of them observed
	// (the pattern in order), reproduced without failing, neither.
	FailedRuns     int `json:"failed_runs"`
	ReproducedRuns int `json:"reproduced_runs"`
	// BudgetSpent says which budget stopped the runs ("--budget",
	// "--max-runs"; "" when none did); Interrupted a signal.
	BudgetSpent string        `json:"budget_spent,omitempty"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	// Warnings: the binary rebuilt since the recording, a relaxed model
	// stopped at its memory bound, ...
	Warnings []string `json:"warnings,omitempty"`
}

// ClearReproductions leaves out what an earlier mcpredict reproduce wrote
// into the report: the bugs only a relaxed model predicted (with their
// instances) and every bug's Reproduction, so that the report can be
// reproduced afresh.
func (r *Report) ClearReproductions() {
	keep := r.Bugs[:0]
	for _, b := range r.Bugs {
		if b.Reproduction != nil && b.Reproduction.Relaxed {
			continue
		}
		b.Reproduction = nil
		keep = append(keep, b)
	}
	r.Bugs = keep
	r.Failures, r.Reproduce = nil, nil
}

// ReproductionRank orders bugs for reading: failed first, then reproduced,
// then the others.
func (b Bug) ReproductionRank() int {
	switch r := b.Reproduction; {
	case r == nil:
		return 2
	case r.Failed:
		return 0
	case r.Status == Reproduced:
		return 1
	}
	return 2
}

// Dedupe groups violations into bugs, ordered by pattern and first location.
// A bug's Vars are the objects (or the variable) of its instances, sorted;
// its Analysis is its first instance's.
func Dedupe(vs []Violation) []Bug {
	byID := map[string]*Bug{}
	var order []string
	for i, v := range vs {
		b := byID[v.BugID]
		if b == nil {
			b = &Bug{ID: v.BugID, Pattern: v.Pattern, PatternName: v.PatternName, Locations: locations(locationAccesses(v.EssentialAccesses())),
				Analysis: v.Analysis}
			byID[v.BugID] = b
			order = append(order, v.BugID)
		}
		b.Count++
		b.Instances = append(b.Instances, i)
		b.Occurred = b.Occurred || v.Occurred
		if b.Count > 1 {
			b.Locations = addLocations(b.Locations, locationAccesses(v.EssentialAccesses()))
		}
		for _, o := range v.ObjectNames() {
			if !slices.Contains(b.Vars, o) {
				b.Vars = append(b.Vars, o)
			}
		}
	}
	out := make([]Bug, 0, len(order))
	for _, id := range order {
		b := byID[id]
		sort.Strings(b.Vars)
		out = append(out, *b)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Pattern != b.Pattern {
			return patternLess(a.Pattern, b.Pattern)
		}
		la, lb := a.Locations[0], b.Locations[0]
		if la.File != lb.File {
			return la.File < lb.File
		}
		if la.Line != lb.Line {
			return la.Line < lb.Line
		}
		return a.ID < b.ID
	})
	return out
}

// ObjectNames returns the variables or locks of v: its Objects, or its Var.
func (v Violation) ObjectNames() []string {
	if len(v.Objects) == 0 {
		return []string{v.Var}
	}
	return v.Objects
}

// patternLess orders P1..P5, then M1..M6, then user patterns, numerically.
func patternLess(a, b string) bool {
	if a[0] != b[0] {
		rank := func(c byte) int {
			if i := strings.IndexByte("PM", c); i >= 0 {
				return i
			}
			return 2
		}
		return rank(a[0]) < rank(b[0])
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
