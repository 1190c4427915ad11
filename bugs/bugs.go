// Package bugs turns model-checking counterexamples into violations mapped
// back to the trace and the source, groups them into bugs with stable ids,
// and holds the report that the output formats render.
//
// It does not run any checker: it receives the executed steps of a witness
// interleaving (from a Spin trail or the native search) and the PairModel
// they refer to.
package bugs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpredict/mcpredict/ltl"
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
	// bug (see essential): their locations are the bug's.
	Essential bool `json:"essential,omitempty"`
	// Object names the lock or variable of the event in findings of other
	// analyses than McPatom (whose accesses are all on Violation.Var).
	Object string `json:"object,omitempty"`
}

// Location returns "file:line" or "?".
func (a Access) Location() string {
	return tracemodel.Loc{File: a.File, Line: a.Line}.String()
}

// Violation is one pattern instance found in one (variable, thread pair).
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
	Elided int    `json:"elided_steps,omitempty"`
	Engine string `json:"engine"` // "spin" or "native"
	BugID  string `json:"bug_id"`

	// The fields below are those of findings of other analyses than McPatom
	// (package analysis); a McPatom violation leaves them empty.

	// Analysis names the analysis that found it ("" for McPatom).
	Analysis string `json:"analysis,omitempty"`
	// Threads are all the threads of a finding that involves any number of
	// them (a deadlock cycle), in order; Local and Remote are its first two.
	Threads []tracemodel.ThreadRef `json:"threads,omitempty"`
	// Objects are the variables or locks of the finding (a deadlock's
	// locks, in cycle order); Var joins them.
	Objects []string `json:"objects,omitempty"`
	// Message is a one-line description of the finding.
	Message string `json:"message,omitempty"`
	// Occurred is set when the finding happened in the recorded run (a
	// deadlock the recording ended in), not only predicted.
	Occurred bool `json:"occurred,omitempty"`
}

// essentialAccesses returns the accesses marked Essential (all of them in a
// report written before the mark existed).
func (v Violation) essentialAccesses() []Access {
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

// WitnessContext is how many witness steps before an instance's first
// access a violation's Interleaving keeps.
const WitnessContext = 200

// FromWitness builds the violation of pattern pat, seen with local thread
// local (1 or 2), from the steps a checker executed.
func FromWitness(pm *tracemodel.PairModel, pat ltl.Pattern, local int, executed []tracemodel.StepRef, engine string) (Violation, error) {
	obs := make([]ltl.Obs, 1, len(executed)+1)
	cur := ltl.Obs{}
	for _, r := range executed {
		if r.Thread < 0 || r.Thread > 1 || r.Index < 0 || r.Index >= len(pm.Steps[r.Thread]) {
			return Violation{}, fmt.Errorf("witness step %d/%d outside the model", r.Thread, r.Index)
		}
		s := pm.Steps[r.Thread][r.Index]
		tid := int16(r.Thread + 1)
		switch s.Kind {
		case tracemodel.StepRead, tracemodel.StepWrite:
			cur.V = tid
			if s.Kind == tracemodel.StepWrite {
				cur.V += 64
			}
			if s.Second {
				cur.V += ltl.VarBit
			}
			cur = setFlag(cur, r.Thread, false, false)
			cur = setFlag(cur, r.Thread, true, false)
		case tracemodel.StepBoundary:
			cur = setFlag(cur, r.Thread, false, true)
		case tracemodel.StepPublish:
			cur = setFlag(cur, r.Thread, true, true)
		}
		obs = append(obs, cur)
	}
	start, end, ok := pat.Match(local, obs)
	if !ok {
		return Violation{}, fmt.Errorf("model %s threads %s,%s: the witness of claim %s does not contain pattern %s (%s)",
			pm.Var, pm.Threads[0].Handle, pm.Threads[1].Handle, pat.ClaimName(local), pat.ID, pat.Source)
	}
	// The match may start on a state that only repeats the value of the
	// access that set it (another step ran in between); the instance starts
	// at that access.
	for start > 1 && !pm.Steps[executed[start-1].Thread][executed[start-1].Index].Kind.IsAccess() {
		start--
	}
	v := Violation{
		Var:         pm.Var,
		Local:       pm.Threads[local-1],
		Remote:      pm.Threads[2-local],
		Pattern:     pat.ID,
		PatternName: pat.Name,
		Claim:       pat.ClaimName(local),
		Engine:      engine,
	}
	// The violation of a set model lists both variables, x of the pattern
	// first; each access names its variable.
	varOf := func(s tracemodel.Step) string { return "" }
	if pm.Var2 != "" {
		v.Objects = []string{pm.Var, pm.Var2}
		if pat.Swapped {
			v.Objects = []string{pm.Var2, pm.Var}
		}
		v.Var = v.Objects[0] + ", " + v.Objects[1]
		varOf = func(s tracemodel.Step) string {
			if !s.Kind.IsAccess() {
				return ""
			}
			if s.Second {
				return pm.Var2
			}
			return pm.Var
		}
	}
	// obs[i] is the state after executed[i-1]. Several steps can stand for
	// one event (a cond Wait's release, boundary and reacquire; an unlock and
	// its publish): each event is listed once.
	lastLine := [2]int{-1, -1}
	from := max(0, start-1-WitnessContext)
	v.Elided = from
	for i, r := range executed {
		if i+1 > end {
			break
		}
		if i < from {
			continue
		}
		s := pm.Steps[r.Thread][r.Index]
		if len(s.Events) == 1 && s.Events[0].TraceLine == lastLine[r.Thread] {
			continue
		}
		if n := len(s.Events); n > 0 {
			lastLine[r.Thread] = s.Events[n-1].TraceLine
		}
		inInstance := i+1 >= start && s.Kind.IsAccess()
		role := "remote"
		if r.Thread+1 == local {
			role = "local"
		}
		for _, e := range s.Events {
			a := Access{
				Thread: pm.Threads[r.Thread].ID, Handle: pm.Threads[r.Thread].Handle, Role: role,
				Action: e.Action, File: e.File, Line: e.Line, Func: e.Func, TraceLine: e.TraceLine,
				Instance: inInstance, Object: varOf(s),
			}
			v.Interleaving = append(v.Interleaving, a)
			if inInstance {
				a.Instance = false
				v.Accesses = append(v.Accesses, a)
			}
		}
	}
	for i := range v.Accesses {
		v.Accesses[i].Essential = isEssential(pat, v.Accesses[i])
	}
	v.BugID = bugID(pat, v.essentialAccesses())
	return v, nil
}

// setFlag sets thread's brk flag, or its pub flag if pub, to b.
func setFlag(o ltl.Obs, thread int, pub, b bool) ltl.Obs {
	switch {
	case thread == 0 && pub:
		o.Pub1 = b
	case thread == 0:
		o.Brk1 = b
	case pub:
		o.Pub2 = b
	default:
		o.Brk2 = b
	}
	return o
}

// Location is a distinct source location of a bug, with its role.
type Location struct {
	Role   string `json:"role"`
	Action string `json:"action"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Func   string `json:"func,omitempty"`
}

func (l Location) String() string {
	return tracemodel.Loc{File: l.File, Line: l.Line}.String()
}

func (l Location) key() string {
	return fmt.Sprintf("%s|%s|%s|%d", l.Role, l.Action, l.File, l.Line)
}

// locationAccesses turns accesses into locations (not deduplicated).
func locationAccesses(as []Access) []Location {
	out := make([]Location, len(as))
	for i, a := range as {
		out[i] = Location{Role: a.Role, Action: a.Action, File: a.File, Line: a.Line, Func: a.Func}
	}
	return out
}

// locations returns the distinct locations, sorted: local ones first.
func locations(ls []Location) []Location {
	seen := map[string]bool{}
	var out []Location
	for _, l := range ls {
		if !seen[l.key()] {
			seen[l.key()] = true
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

// isEssential tells the accesses that make an instance this bug: every local
// access (the region that should have been atomic) and the remote accesses
// of the kinds the pattern's unstarred remote terms need (the writes of
// P1-P3 and P5, the reads of P4). Remote accesses that a starred term only
// allows (A2*) depend on the witness the checker happened to find; leaving
// them out makes the same bug found twice, or by another engine, one bug.
func isEssential(pat ltl.Pattern, a Access) bool {
	if a.Role == "local" {
		return true
	}
	for _, t := range pat.Terms {
		if t.Side == ltl.Remote && t.Quant != ltl.Star &&
			(t.Access == ltl.Any || (t.Access == ltl.Read) == (a.Action == "Read")) {
			return true
		}
	}
	return false
}

// bugID is a stable id: a hash of the pattern and the source locations of the
// instance's local accesses (the region that should have been atomic),
// independent of trace line numbers, thread handles and variable addresses,
// so that the same bug keeps its id across runs. The remote accesses are
// not part of it: which remote write of several an instance shows depends
// on the interleaving the search met first, and a different recording or a
// different engine may meet another; the bug lists the remote locations of
// all its instances.
func bugID(pat ltl.Pattern, as []Access) string {
	h := sha256.New()
	id := pat.ID
	if pat.Family != "" {
		id = pat.Family
	}
	if !ltl.IsBuiltin(id) { // user patterns: the text, not the position on the command line
		id = pat.Source
	}
	fmt.Fprintf(h, "%s\n", id)
	for _, l := range locations(locationAccesses(as)) {
		if l.Role == "local" {
			fmt.Fprintf(h, "%s\n", l.key())
		}
	}
	return "AV-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// FindingID is the stable id of a finding of another analysis than
// McPatom: prefix, "-", and a hash of its kind and its distinct source
// locations (role, action, file, line), so that it is independent of trace
// line numbers, thread handles and addresses, and of the order in which
// the locations are given.
func FindingID(prefix, kind string, locs []Location) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", kind)
	keys := make([]string, 0, len(locs))
	for _, l := range locs {
		keys = append(keys, l.key())
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
	// Analysis names the analysis that found it ("" for McPatom).
	Analysis string `json:"analysis,omitempty"`
	// Occurred is set when an instance happened in the recorded run.
	Occurred bool `json:"occurred,omitempty"`
}

// Dedupe groups violations into bugs, ordered by pattern and first location.
// It fills each violation's BugID.
func Dedupe(vs []Violation) []Bug {
	type bug struct {
		Bug
		set bool // of a set model
	}
	byID := map[string]*bug{}
	var order []string
	for i, v := range vs {
		b := byID[v.BugID]
		if b == nil {
			b = &bug{Bug: Bug{ID: v.BugID, Pattern: v.Pattern, PatternName: v.PatternName, Locations: locations(locationAccesses(v.essentialAccesses())),
				Analysis: v.Analysis}, set: v.Analysis == "" && len(v.Objects) == 2}
			byID[v.BugID] = b
			order = append(order, v.BugID)
		}
		b.Count++
		b.Instances = append(b.Instances, i)
		b.Occurred = b.Occurred || v.Occurred
		if b.Count > 1 {
			b.Locations = locations(append(b.Locations, locationAccesses(v.essentialAccesses())...))
		}
		objs := v.Objects
		if len(objs) == 0 {
			objs = []string{v.Var}
		}
		for _, o := range objs {
			if !contains(b.Vars, o) {
				b.Vars = append(b.Vars, o)
			}
		}
	}
	out := make([]Bug, 0, len(order))
	for _, id := range order {
		b := byID[id]
		if !b.set {
			// A set's variables keep their order: x of the pattern first.
			sort.Strings(b.Vars)
		}
		out = append(out, b.Bug)
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

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
