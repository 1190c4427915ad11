// Package predict is the model-checking pipeline of the model-checked
// analyses (McPatom's models of one variable, the models of atomic sets):
// Plan lists the models of the kinds the options name (TaskKind), each
// model is projected from the trace and every claim of its patterns is
// decided (Checker: natively, with Spin, or both), ConfirmBugs lets Spin
// confirm one model per distinct bug, and Assemble collects the
// violations — mapped back to the trace and the source by FromWitness —
// into a report whose bugs and violations name the analysis of their kind
// of models. Run does all of it in this process.
//
// It is the library behind the model-checked analyzers of package
// analysis, which run all their models in one pass through it (Run here;
// the service distributes Plan's tasks to workers and assembles their
// results). It does not parse command lines, render output, or know the
// analyses by name: callers name them in Options.Models.
package predict

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/cache"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Engine selects how claims are decided.
type Engine string

// The engines.
const (
	// EngineAuto decides every claim with the native search and sends only
	// models with a violation to Spin, which confirms it and gives the trail.
	EngineAuto Engine = "auto"
	// EngineSpin sends every model to Spin, as the paper does.
	EngineSpin Engine = "spin"
	// EngineNative never runs Spin.
	EngineNative Engine = "native"
)

// Confirm says which violating models Spin checks with EngineAuto. Every
// verdict is the native search's (exact, and differential-tested against
// Spin); Spin's confirmation adds an independent check and a trail.
type Confirm string

// The confirmation modes.
const (
	// ConfirmOne runs Spin on one representative model per distinct bug:
	// the smallest model with an instance of it (fewest statements; the
	// first in plan order among equals).
	ConfirmOne Confirm = "one"
	// ConfirmAll runs Spin on every model with a violation.
	ConfirmAll Confirm = "all"
	// ConfirmNone never runs Spin on a model the native search decided.
	ConfirmNone Confirm = "none"
)

// ParseConfirm checks a confirmation mode.
func ParseConfirm(s string) (Confirm, error) {
	switch c := Confirm(s); c {
	case ConfirmOne, ConfirmAll, ConfirmNone:
		return c, nil
	}
	return "", fmt.Errorf("unknown confirmation %q: want one, all or none", s)
}

// ParseEngine checks an engine name.
func ParseEngine(s string) (Engine, error) {
	switch e := Engine(s); e {
	case EngineAuto, EngineSpin, EngineNative:
		return e, nil
	}
	return "", fmt.Errorf("unknown engine %q: want auto, spin or native", s)
}

// Options configure a run.
type Options struct {
	Vars []string // variable names or path.Match globs; empty = all shared variables
	// ExcludeVars leaves out the variables matching these globs (applied
	// after Vars); a glob that matches nothing is not an error, so that
	// one list serves a batch of traces.
	ExcludeVars []string
	// MaxModels refuses a selection of more models (*TooManyModelsError);
	// 0 means DefaultMaxModels, negative no bound.
	MaxModels int
	Threads   []string // thread handles: one = pairs with it, several = pairs within them; empty = all
	// Models are the kinds of models to plan and check, each with its
	// patterns and the analysis it is for, at most one entry per kind;
	// nil: the models of one variable with the built-in patterns P1..P5,
	// for no named analysis.
	Models []Models
	// Sets chooses the atomic sets (tracemodel.AtomicSets).
	Sets tracemodel.SetOptions
	// KeepOrderedPairs plans the models of thread pairs whose conflicting
	// accesses the synchronization order orders completely, which Plan
	// otherwise leaves out when no pattern can match them (tests compare
	// both).
	KeepOrderedPairs bool
	// KeepLockedPairs plans the models of thread pairs whose locks keep
	// each thread's accesses out of the other's (AccessIndex.Locked),
	// which Plan otherwise leaves out when every pattern needs a remote
	// access between two local ones (tests compare both).
	KeepLockedPairs bool
	Project         tracemodel.ProjectOptions
	Engine          Engine // default EngineAuto
	// Confirm selects the violating models Spin checks with EngineAuto;
	// default ConfirmOne. EngineSpin checks every model, EngineNative
	// none, whatever Confirm says.
	Confirm Confirm
	// ConfirmMaxSteps bounds the models ConfirmOne sends to Spin, in
	// statements of both threads (0: DefaultConfirmMaxSteps; negative:
	// none): Spin's time grows faster than a model's size, and a larger
	// representative leaves its bugs unconfirmed, with a warning.
	ConfirmMaxSteps int
	Jobs            int // models checked at once; default number of CPUs
	Spin            spinrunner.Options
	Tools           spinrunner.Tools // needed unless Engine is native
	Cache           *cache.Dir       // optional verdict cache
	// MaxInstances bounds the instances listed per claim of a model
	// (native.Checker.Instances); 0 means native.DefaultMaxInstances.
	MaxInstances int
	// PartAccesses is the size, in accesses of both threads, past which a
	// model is cut into parts at its next cut (tracemodel.Projection.Parts;
	// 0: tracemodel.DefaultPartAccesses; negative: never).
	PartAccesses int
	// decideListed: a model's later parts decide also the claims whose
	// instances the earlier parts listed enough of (tests compare).
	decideListed bool
	Version      string // tool version written into the report
	// Progress, if set, is called (serially) after each model.
	Progress func(Progress)
}

// Progress is the state of a run.
type Progress struct {
	Done, Total int
	Violations  int
	Started     time.Time
	// Confirming is set while Spin confirms the bugs (ConfirmOne): Done
	// and Total then count the representative models.
	Confirming bool
}

// TaskKind is a kind of models that Plan lists.
type TaskKind string

// The kinds of models.
const (
	// VariableModels are the models of one shared variable and a pair of
	// threads that access it (McPatom), checked with the single-variable
	// patterns.
	VariableModels TaskKind = "variable"
	// SetModels are the models of an atomic set of two variables (inferred
	// by tracemodel.AtomicSets or declared in Options.Sets) and a pair of
	// threads that access both, checked with the two-variable patterns
	// (ltl.Pattern.TwoVariable) in both assignments of the set's variables.
	SetModels TaskKind = "set"
)

// Takes reports whether the models of kind k are checked with pattern p:
// a two-variable pattern on set models, any other on variable models.
func (k TaskKind) Takes(p ltl.Pattern) bool { return p.TwoVariable() == (k == SetModels) }

// Builtin returns the built-in patterns of the kind: P1..P5 or M1..M6.
func (k TaskKind) Builtin() []ltl.Pattern {
	if k == SetModels {
		return ltl.BuiltinSets()
	}
	return ltl.Builtin()
}

// Models selects one kind of models of a run.
type Models struct {
	Kind TaskKind `json:"kind"`
	// Analysis names the analysis the models are checked for: it is
	// stamped on their violations and bugs, and Assemble lists it in
	// Report.Analyses with its bugs, models and claims. "": none.
	Analysis string `json:"analysis,omitempty"`
	// Patterns are checked on the models (those the kind Takes; others
	// are left out). A kind without patterns plans no model.
	Patterns []ltl.Pattern `json:"patterns"`
}

// Task is one (variable, thread pair) model to check, or one (atomic set,
// thread pair) model when Var2 is set.
type Task struct {
	Var     int    // variable id in the trace model
	VarName string // its name
	T1, T2  int    // model thread ids, T1 < T2
	// Var2 is the second variable of an atomic set {Var, Var2}; 0: none.
	Var2     int    `json:",omitempty"`
	Var2Name string `json:",omitempty"`
}

// Kind is the kind of the task's model.
func (t Task) Kind() TaskKind {
	if t.Var2 != 0 {
		return SetModels
	}
	return VariableModels
}

// Name names the task's variable or set in messages.
func (t Task) Name() string {
	if t.Var2 != 0 {
		return "{" + t.VarName + ", " + t.Var2Name + "}"
	}
	return t.VarName
}

// Project builds the task's model.
func (t Task) Project(m *tracemodel.Model, opts tracemodel.ProjectOptions) (*tracemodel.PairModel, error) {
	if t.Var2 != 0 {
		return m.ProjectSet(t.Var, t.Var2, t.T1, t.T2, opts)
	}
	return m.Project(t.Var, t.T1, t.T2, opts)
}

// UsageError is an option that does not fit the trace (an unknown variable
// or thread): the user's mistake, exit status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// DefaultMaxModels is the default bound of the models of one run
// (Options.MaxModels): about a minute of native checking on two cores at
// the speed of the shipped benchmarks, and 40 MB of plan.
const DefaultMaxModels = 1_000_000

// TooManyModelsError refuses a run whose selection needs more models than
// Options.MaxModels: a trace of thousands of threads that all touch one
// variable needs a model per pair of them.
type TooManyModelsError struct {
	Trace   string
	Models  int
	Max     int
	Largest string // the variable with the most models
	Its     int    // its models
}

func (e *TooManyModelsError) Error() string {
	return fmt.Sprintf("%s needs %d models (one per shared variable and pair of threads; %d of them for %s), more than --max-models=%d: select variables with --vars or --exclude-vars or threads with --threads, or raise --max-models",
		e.Trace, e.Models, e.Its, e.Largest, e.Max)
}

// Plan lists the models of a trace that the options select. It counts them
// before listing any: a selection over Options.MaxModels is refused with a
// *TooManyModelsError, in time and memory linear in the accesses. A
// cancelled ctx stops it between variables (a 100 M-event trace's plan
// takes most of a minute) with ctx's error.
func Plan(ctx context.Context, m *tracemodel.Model, opts Options) ([]Task, error) {
	opts.defaults()
	seen := map[TaskKind]bool{}
	for _, ms := range opts.Models {
		if ms.Kind != VariableModels && ms.Kind != SetModels {
			return nil, fmt.Errorf("predict: unknown kind of models %q", ms.Kind)
		}
		if seen[ms.Kind] {
			return nil, fmt.Errorf("predict: the %s models are selected twice", ms.Kind)
		}
		seen[ms.Kind] = true
	}
	variables := len(opts.patterns(VariableModels)) > 0
	shared := m.SharedVars()
	for _, pat := range opts.ExcludeVars {
		if _, err := path.Match(pat, ""); err != nil && m.VarByName(pat) == 0 {
			return nil, &UsageError{Msg: fmt.Sprintf("--exclude-vars: bad pattern %q: %v (a name with brackets is matched as written; in a glob, \\[ is a bracket)", pat, err)}
		}
	}
	for _, pat := range opts.Vars {
		if _, err := path.Match(pat, ""); err != nil && m.VarByName(pat) == 0 {
			return nil, &UsageError{Msg: fmt.Sprintf("--vars: bad pattern %q: %v (a name with brackets is matched as written; in a glob, \\[ is a bracket)", pat, err)}
		}
		found := false
		for _, sv := range shared {
			if nameMatch(m, pat, sv.Name) {
				found = true
				break
			}
		}
		if !found {
			msg := fmt.Sprintf("--vars: no shared variable matches %q in %s", pat, m.Name)
			if v := m.VarByName(pat); v != 0 {
				msg += " (it is accessed, but not by two threads with a write, or it is a synchronization object)"
			}
			return nil, &UsageError{Msg: msg}
		}
	}
	want := map[int]bool{}
	for _, h := range opts.Threads {
		id := m.ThreadByHandle(h)
		if id == 0 {
			return nil, &UsageError{Msg: fmt.Sprintf("--threads: no thread %q in %s", h, m.Name)}
		}
		want[id] = true
	}
	selected := make([]tracemodel.SharedVar, 0, len(shared))
	for _, sv := range shared {
		if matchAny(m, opts.ExcludeVars, sv.Name) || len(opts.Vars) > 0 && !matchAny(m, opts.Vars, sv.Name) {
			continue
		}
		selected = append(selected, sv)
	}
	// Count first: listing the pairs of 20,000 threads would not end.
	total, tooMany := 0, &TooManyModelsError{Trace: m.Name, Max: opts.MaxModels}
	for _, sv := range selected {
		if !variables {
			break
		}
		n := pairsWith(sv, want)
		total += n
		if n > tooMany.Its {
			tooMany.Largest, tooMany.Its = sv.Name, n
		}
	}
	conc := m.NewConcurrency() // Model.Concurrent's tables, shared by both kinds
	var sets []setPlan
	if len(opts.patterns(SetModels)) > 0 {
		var err error
		// Thread pairs whose accesses of a set the synchronization order
		// orders completely are left out when every pattern needs a remote
		// access between two local ones of one region (boundaries on).
		ordered := !opts.Project.NoBoundaries && !slices.ContainsFunc(opts.patterns(SetModels), func(p ltl.Pattern) bool { return !p.Interleaved() })
		locked := !opts.KeepLockedPairs && !opts.Project.TryLocksFail && !slices.ContainsFunc(opts.patterns(SetModels), func(p ltl.Pattern) bool { return !p.Interleaved() })
		sets, err = planSets(ctx, m, conc, shared, selected, want, opts.Sets, ltl.BothAssignments(opts.patterns(SetModels)), ordered, locked, !opts.Project.NoBoundaries, opts.Jobs)
		if err != nil {
			return nil, err
		}
		for _, sp := range sets {
			total += len(sp.pairs)
			if len(sp.pairs) > tooMany.Its {
				tooMany.Largest, tooMany.Its = "{"+sp.set.Names[0]+", "+sp.set.Names[1]+"}", len(sp.pairs)
			}
		}
	}
	if opts.MaxModels > 0 && total > opts.MaxModels {
		tooMany.Models = total
		return nil, tooMany
	}
	// Thread pairs whose conflicting accesses of a variable the
	// synchronization order orders completely are left out when every
	// pattern needs a remote access between two local ones of one region
	// (boundaries on): no pattern can match them (Model.Concurrent). A
	// barrier-phased program's pairs are nearly all such.
	interleaved := !slices.ContainsFunc(opts.patterns(VariableModels), func(p ltl.Pattern) bool { return !p.Interleaved() })
	skipOrdered := !opts.KeepOrderedPairs && !opts.Project.NoBoundaries && interleaved
	// Thread pairs whose locks keep each one's accesses out of the
	// other's, between two of its own, are left out too when every
	// pattern needs that (AccessIndex.Locked): a server's statistics,
	// updated under one lock, are most of its accesses.
	// (Not in the relaxed model where trylocks fail: the index counts
	// their holds.)
	skipLocked := !opts.KeepLockedPairs && interleaved && !opts.Project.TryLocksFail
	tasks := make([]Task, 0, min(total, 1<<16))
	if variables {
		// Each variable's pairs on its own, the variables on --jobs
		// goroutines: indexing a server's variables took seconds.
		byVar := make([][]Task, len(selected))
		err := forEach(ctx, len(selected), opts.Jobs, func(ctx context.Context, i int) error {
			byVar[i] = varTasks(conc, selected[i], want, skipOrdered, skipLocked, !opts.Project.NoBoundaries)
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, ts := range byVar {
			tasks = append(tasks, ts...)
		}
	}
	for _, sp := range sets {
		for _, p := range sp.pairs {
			tasks = append(tasks, Task{Var: sp.set.Vars[0], VarName: sp.set.Names[0], Var2: sp.set.Vars[1], Var2Name: sp.set.Names[1], T1: p[0], T2: p[1]})
		}
	}
	return tasks, nil
}

// varTasks lists the tasks of variable sv: its thread pairs that want
// selects, but for those that the synchronization order orders completely
// (with skipOrdered) or its locks keep apart (with skipLocked; regions:
// region boundaries are on).
func varTasks(conc *tracemodel.Concurrency, sv tracemodel.SharedVar, want map[int]bool, skipOrdered, skipLocked, regions bool) []Task {
	var tasks []Task
	var index *tracemodel.AccessIndex
	for t1, t2 := range sv.Pairs() {
		if !selects(want, t1, t2) {
			continue
		}
		if (skipOrdered || skipLocked) && index == nil {
			index = conc.Index([]int{sv.Var})
		}
		if skipOrdered && !index.Concurrent(t1, t2) || skipLocked && index.Locked(t1, t2, regions) {
			continue
		}
		tasks = append(tasks, Task{Var: sv.Var, VarName: sv.Name, T1: t1, T2: t2})
	}
	return tasks
}

// setPlan is an atomic set with the thread pairs of its models.
type setPlan struct {
	set   tracemodel.AtomicSet
	pairs [][2]int
}

// planSets chooses the atomic sets among the shared variables and lists
// their thread pairs: both threads access both variables, and one of them
// can be the local thread (it accessed both in one region). Only sets of
// selected variables are kept; the thread selection applies as for
// single-variable models.
func planSets(ctx context.Context, m *tracemodel.Model, conc *tracemodel.Concurrency, shared, selected []tracemodel.SharedVar, want map[int]bool, so tracemodel.SetOptions, pats []ltl.Pattern, skipOrdered, skipLocked, regions bool, jobs int) ([]setPlan, error) {
	sets, err := m.AtomicSets(shared, so)
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	byVar := map[int]tracemodel.SharedVar{}
	for _, sv := range selected {
		byVar[sv.Var] = sv
	}
	// Each set's pairs on its own, the sets on jobs goroutines.
	plans := make([]setPlan, len(sets))
	err = forEach(ctx, len(sets), jobs, func(ctx context.Context, k int) error {
		s := sets[k]
		a, okA := byVar[s.Vars[0]]
		b, okB := byVar[s.Vars[1]]
		if !okA || !okB {
			return nil
		}
		// Threads that access both, increasing.
		var both []int
		for i, j := 0, 0; i < len(a.Threads) && j < len(b.Threads); {
			switch {
			case a.Threads[i] == b.Threads[j]:
				both = append(both, a.Threads[i])
				i++
				j++
			case a.Threads[i] < b.Threads[j]:
				i++
			default:
				j++
			}
		}
		sp := setPlan{set: s}
		var index *tracemodel.AccessIndex
		indexed := func() *tracemodel.AccessIndex {
			if index == nil {
				index = conc.Index(s.Vars[:])
			}
			return index
		}
		for i, t1 := range both {
			for _, t2 := range both[i+1:] {
				if (usable(s, pats, t1, t2) || usable(s, pats, t2, t1)) && selects(want, t1, t2) &&
					(!skipOrdered || indexed().Concurrent(t1, t2)) && (!skipLocked || !indexed().Locked(t1, t2, regions)) {
					sp.pairs = append(sp.pairs, [2]int{t1, t2})
				}
			}
		}
		plans[k] = sp
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []setPlan
	for _, sp := range plans {
		if len(sp.pairs) > 0 {
			out = append(out, sp)
		}
	}
	return out, nil
}

// usable reports whether some pattern of pats (both assignments of x and
// y) can match on set s with local thread l and remote thread r, as far as
// the accesses the pattern's terms need (those not repeated with *) show:
// the local thread's first terms on x and on y in one region of l
// (AtomicSet.CoAccess), each remote term's kind and variable somewhere in
// r (AtomicSet.Uses). A torn read needs a reader of both in one
// operation and a writer of both; a pair of counters that each thread
// updates in its own operation needs nothing checked.
func usable(s tracemodel.AtomicSet, pats []ltl.Pattern, l, r int) bool {
	kinds := func(a ltl.Access) []tracemodel.Kind {
		switch a {
		case ltl.Read:
			return []tracemodel.Kind{tracemodel.Read}
		case ltl.Write:
			return []tracemodel.Kind{tracemodel.Write}
		}
		return []tracemodel.Kind{tracemodel.Read, tracemodel.Write}
	}
	for _, p := range pats {
		var first [3]*ltl.Term // the local thread's first term on x, y
		ok := true
		for i := range p.Terms {
			t := &p.Terms[i]
			if t.Quant == ltl.Star || t.Var == ltl.VarAny {
				continue
			}
			if t.Side == ltl.Local {
				if first[t.Var] == nil {
					first[t.Var] = t
				}
				continue
			}
			ok = ok && slices.ContainsFunc(kinds(t.Access), func(k tracemodel.Kind) bool { return s.Uses(r, int(t.Var)-1, k) })
		}
		switch x, y := first[ltl.VarX], first[ltl.VarY]; {
		case !ok:
		case x != nil && y != nil:
			ok = false
			for _, kx := range kinds(x.Access) {
				for _, ky := range kinds(y.Access) {
					ok = ok || s.CoAccess(l, kx, ky)
				}
			}
		case x != nil:
			ok = slices.ContainsFunc(kinds(x.Access), func(k tracemodel.Kind) bool { return s.Uses(l, 0, k) })
		case y != nil:
			ok = slices.ContainsFunc(kinds(y.Access), func(k tracemodel.Kind) bool { return s.Uses(l, 1, k) })
		}
		if ok {
			return true
		}
	}
	return false
}

// matchAny reports whether name matches one of the globs.
func matchAny(m *tracemodel.Model, globs []string, name string) bool {
	for _, g := range globs {
		if nameMatch(m, g, name) {
			return true
		}
	}
	return false
}

// nameMatch reports whether a variable's name is pat, or, when no
// variable of m is named pat, matches it as a path.Match glob:
// "table[0].refs" names the element as written (as a glob, its [0] would
// match "table0.refs"); `table\[*\].refs` is the glob of every element.
func nameMatch(m *tracemodel.Model, pat, name string) bool {
	if pat == name {
		return true
	}
	if m.VarByName(pat) != 0 {
		return false
	}
	ok, _ := path.Match(pat, name)
	return ok
}

// selects reports whether the thread selection of --threads keeps a pair:
// one thread selects every pair with it, several the pairs within them.
func selects(want map[int]bool, t1, t2 int) bool {
	switch {
	case len(want) == 1:
		return want[t1] || want[t2]
	case len(want) > 1:
		return want[t1] && want[t2]
	}
	return true
}

// pairsWith counts the candidate pairs of sv that the thread selection
// keeps, without listing them.
func pairsWith(sv tracemodel.SharedVar, want map[int]bool) int {
	if len(want) == 0 {
		return sv.PairCount()
	}
	// Keep only the selected threads (several) or count the pairs with
	// the one selected thread.
	var sub tracemodel.SharedVar
	for i, t := range sv.Threads {
		if want[t] {
			sub.Threads = append(sub.Threads, t)
			sub.Writes = append(sub.Writes, sv.Writes[i])
		}
	}
	if len(want) > 1 {
		return sub.PairCount()
	}
	if len(sub.Threads) == 0 {
		return 0
	}
	n := 0
	for i := range sv.Threads {
		if sv.Threads[i] != sub.Threads[0] && (sv.Writes[i] || sub.Writes[0]) {
			n++
		}
	}
	return n
}

// Claims returns the claims of a model for the patterns: each pattern in
// both views, local thread 1 then 2.
func Claims(pats []ltl.Pattern) []promela.Claim {
	var cs []promela.Claim
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			cs = append(cs, promela.Claim{
				Name:    p.ClaimName(local),
				Formula: p.Formula(local),
				Comment: fmt.Sprintf("%s %s, local thread t%d: %s", p.ID, p.Name, local, p.Source),
			})
		}
	}
	return cs
}

// patterns returns the patterns checked on the models of kind k (defaults
// applied): those of its Models entry that it takes, as the semantics
// checks them (CheckedPatterns), a two-variable one in both assignments
// (ltl.BothAssignments); none when the kind is not selected.
func (o Options) patterns(k TaskKind) []ltl.Pattern {
	o.defaults()
	var pats []ltl.Pattern
	for _, ms := range o.Models {
		if ms.Kind != k {
			continue
		}
		for _, p := range ms.Patterns {
			if k.Takes(p) {
				pats = append(pats, p)
			}
		}
	}
	pats = CheckedPatterns(pats, o.Project)
	if k == SetModels {
		return ltl.BothAssignments(pats)
	}
	return pats
}

// CheckedPatterns returns the patterns as the semantics of opts checks
// them: as written under McPatom's literal semantics (Literal), else each
// in its precise form (ltl.Pattern.Precise: the lost update P3 is searched
// as one without a local read between the remote write and the local
// write, nor an atomic local write).
func CheckedPatterns(pats []ltl.Pattern, opts tracemodel.ProjectOptions) []ltl.Pattern {
	if Literal(opts) {
		return pats
	}
	out := make([]ltl.Pattern, len(pats))
	for i, p := range pats {
		out[i] = p.Precise()
	}
	return out
}

// Literal reports whether opts are McPatom's literal semantics, every rule
// of the precise semantics off (tracemodel.SemanticsPaper): the patterns
// are then checked as the paper writes them. Any rule on makes the
// semantics check the precise forms (CheckedPatterns).
func Literal(opts tracemodel.ProjectOptions) bool {
	return opts.NoBoundaries && !opts.Scope && !opts.WaitConditions && !opts.Dataflow && !opts.ObservedReads
}

// analysis returns the analysis named for the models of kind k.
func (o Options) analysis(k TaskKind) string {
	for _, ms := range o.Models {
		if ms.Kind == k {
			return ms.Analysis
		}
	}
	return ""
}

// claimCount is the number of claims of the task's model.
func (o Options) claimCount(t Task) int { return 2 * len(o.patterns(t.Kind())) }

// claimOf finds the pattern and view of a claim name.
func claimOf(pats []ltl.Pattern, name string) (ltl.Pattern, int, bool) {
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			if p.ClaimName(local) == name {
				return p, local, true
			}
		}
	}
	return ltl.Pattern{}, 0, false
}

func (o *Options) defaults() {
	if o.Models == nil {
		o.Models = []Models{{Kind: VariableModels, Patterns: ltl.Builtin()}}
	}
	if o.Engine == "" {
		o.Engine = EngineAuto
	}
	if o.Confirm == "" {
		o.Confirm = ConfirmOne
	}
	if o.Jobs <= 0 {
		o.Jobs = o.Spin.Jobs
	}
	if o.MaxModels == 0 {
		o.MaxModels = DefaultMaxModels
	}
	if o.MaxInstances <= 0 {
		o.MaxInstances = native.DefaultMaxInstances
	}
	if o.ConfirmMaxSteps == 0 {
		o.ConfirmMaxSteps = DefaultConfirmMaxSteps
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	o.Spin.Jobs = o.Jobs
}

// Run checks every selected model of the trace and returns the report. A
// tool failure (Spin, gcc, a disagreement between the native search and
// Spin) is an error; violations are not.
func Run(ctx context.Context, m *tracemodel.Model, opts Options) (*bugs.Report, error) {
	start := time.Now()
	opts.defaults()
	tasks, err := Plan(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	if len(tasks) > 0 {
		defer prepareDataflow(m, opts)()
	}
	checker := NewChecker(opts)
	proj := newProjector(m, opts, tasks)
	results := make([]PairResult, len(tasks))
	var (
		mu   sync.Mutex
		prog = Progress{Total: len(tasks), Started: start}
	)
	done := make([]bool, len(tasks))
	order := startOrder(tasks, opts.Jobs)
	err = forEach(ctx, len(tasks), opts.Jobs, func(ctx context.Context, k int) error {
		i := order[k]
		t := tasks[i]
		// The parts of the model one at a time, merged as they come.
		acc := newPartsResult(opts.MaxInstances)
		err := proj.each(ctx, t, func(pm *tracemodel.PairModel, holds bool) error {
			defer m.Release(pm) // its violations hold none of it
			acc.cutInto(pm.Parts)
			if holds && opts.Engine != EngineSpin {
				// Decided by the projector's native search: no claim
				// is violated, and the native verdict is the engine's.
				acc.holds(opts.claimCount(t))
				return nil
			}
			res, err := checker.check(ctx, pm, acc.left)
			if err == nil {
				acc.add(res)
			}
			return err
		})
		res := acc.result()
		if err != nil {
			u, ok := undecided(ctx, m, t, err)
			if !ok {
				return err
			}
			res = PairResult{Undecided: u}
		}
		mu.Lock()
		defer mu.Unlock()
		results[i] = res
		done[i] = true
		prog.Done++
		prog.Violations += len(res.Violations)
		if opts.Progress != nil {
			opts.Progress(prog)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			return nil, err
		}
		// Interrupted: the report of the models checked so far.
		var (
			gotTasks []Task
			got      []PairResult
		)
		for i, d := range done {
			if d {
				gotTasks = append(gotTasks, tasks[i])
				got = append(got, results[i])
			}
		}
		rep := Assemble(m, opts, gotTasks, got)
		rep.Incomplete = true
		rep.Stats.Elapsed = time.Since(start)
		return rep, fmt.Errorf("interrupted after %d of %d models: %w", len(got), len(tasks), ctx.Err())
	}
	if err := ConfirmBugs(ctx, m, opts, tasks, results); err != nil {
		if ctx.Err() == nil {
			return nil, err
		}
		rep := Assemble(m, opts, tasks, results)
		rep.Incomplete = true
		rep.Stats.Elapsed = time.Since(start)
		return rep, fmt.Errorf("interrupted while Spin confirmed the bugs: %w", ctx.Err())
	}
	rep := Assemble(m, opts, tasks, results)
	rep.Stats.Elapsed = time.Since(start)
	return rep, nil
}

// prepareDataflow starts, under the data-flow semantics, the replay that
// the data-flow orders start from (Model.PrepareDataflow), to run while
// the first models are built under the synchronization order: at 10 M
// events, a second and a half that every worker would wait for at its
// first data-flow order. (Not before Plan: a trace of a million threads
// that Plan refuses, or that has no task, must not pay for it.) The
// function it returns waits for the replay (the model must outlive it).
func prepareDataflow(m *tracemodel.Model, opts Options) (wait func()) {
	if !opts.Project.Dataflow || opts.Project.Order != nil {
		return func() {}
	}
	var prepared sync.WaitGroup
	prepared.Go(m.PrepareDataflow)
	return prepared.Wait
}

// ModelChecker returns the function that checks the given models of a
// trace in this process with Run and the other options of opts: the
// model-checking step of the analyses of package analysis for `mcpredict
// run` and batch (analysis.Options.CheckModels).
func ModelChecker(opts Options) func(ctx context.Context, m *tracemodel.Model, models []Models) (*bugs.Report, error) {
	return func(ctx context.Context, m *tracemodel.Model, models []Models) (*bugs.Report, error) {
		o := opts
		o.Models = models
		return Run(ctx, m, o)
	}
}

// DefaultConfirmMaxSteps is the default of Options.ConfirmMaxSteps: Spin
// generates and compiles the verifier of a model of 10,000 statements in
// about 2 s, of 100,000 in minutes.
const DefaultConfirmMaxSteps = 50_000

// ConfirmBugs runs Spin, with ConfirmOne and EngineAuto, on one
// representative model of every distinct bug of the results (the smallest
// model with an instance of it, see representatives; models Spin checked
// already are skipped), in parallel, and records in each representative's
// result the bugs Spin confirmed. Spin must agree with the native verdict
// on every claim of the model (else a *DisagreementError) and its trails
// must show the patterns. A representative over Options.ConfirmMaxSteps,
// or over Spin's time or memory limit, leaves its bugs unconfirmed, with a
// warning in the result. With other options it does nothing.
func ConfirmBugs(ctx context.Context, m *tracemodel.Model, opts Options, tasks []Task, results []PairResult) error {
	opts.defaults()
	if opts.Engine != EngineAuto || opts.Confirm != ConfirmOne {
		return nil
	}
	confirmed := map[string]bool{}
	for _, r := range results {
		for _, v := range r.Violations {
			if r.Spin {
				confirmed[v.BugID] = true
			}
		}
		for _, id := range r.Confirmed {
			confirmed[id] = true
		}
	}
	reps := representatives(results, confirmed)
	if len(reps) == 0 {
		return nil
	}
	repTasks := make([]Task, len(reps))
	for k, r := range reps {
		repTasks[k] = tasks[r.Result]
	}
	checker := NewChecker(opts)
	proj := newProjector(m, opts, repTasks)
	var (
		mu   sync.Mutex
		prog = Progress{Total: len(reps), Started: time.Now(), Confirming: true}
	)
	for _, r := range results {
		prog.Violations += len(r.Violations)
	}
	return forEach(ctx, len(reps), opts.Jobs, func(ctx context.Context, k int) error {
		i := reps[k].Result
		part := results[i].Parts[reps[k].Part]
		pm, err := proj.smallPart(ctx, repTasks[k], part.Part, part.Bugs, func(pm *tracemodel.PairModel) ([]string, error) {
			res, err := checker.Check(ctx, pm)
			if err != nil || len(res.Parts) == 0 {
				return nil, err
			}
			return res.Parts[0].Bugs, nil
		})
		var warning string
		switch {
		case err != nil:
		case opts.ConfirmMaxSteps > 0 && len(pm.Steps[0])+len(pm.Steps[1]) > opts.ConfirmMaxSteps:
			t := repTasks[k]
			warning = fmt.Sprintf(
				"Spin did not confirm the bugs of %s threads %s,%s: their smallest model has %d statements, over --confirm-max-steps %d (the native verdict stands; raise it to confirm them)",
				t.Name(), m.Threads[t.T1-1].Handle, m.Threads[t.T2-1].Handle, len(pm.Steps[0])+len(pm.Steps[1]), opts.ConfirmMaxSteps)
		default:
			err = checker.Confirm(ctx, pm)
		}
		if err != nil {
			u, ok := undecided(ctx, m, repTasks[k], err)
			if !ok {
				return err
			}
			warning = fmt.Sprintf("Spin could not confirm the bugs of %s threads %s,%s: %s (%s)", u.Var, u.Threads[0], u.Threads[1], u.Reason, u.Hint)
		}
		mu.Lock()
		defer mu.Unlock()
		r := &results[i]
		if warning != "" {
			r.Warnings = append(r.Warnings, warning)
		} else {
			for _, id := range part.Bugs {
				if !slices.Contains(r.Confirmed, id) {
					r.Confirmed = append(r.Confirmed, id)
				}
			}
		}
		prog.Done++
		if opts.Progress != nil {
			opts.Progress(prog)
		}
		return nil
	})
}

// A representative is a part of a model that Spin checks: Parts[Part] of
// results[Result].
type representative struct{ Result, Part int }

// representatives returns the model parts Spin checks so that every bug not
// yet confirmed is (in plan order, then part order): the smallest parts
// first (plan order among equals), since Spin's cost grows with a model's
// size and a bug of a server trace has models of tens of statements and of
// hundreds of thousands; each covers all its bugs.
func representatives(results []PairResult, confirmed map[string]bool) []representative {
	var all []representative
	for i, r := range results {
		for k := range r.Parts {
			all = append(all, representative{i, k})
		}
	}
	steps := func(r representative) int { return results[r.Result].Parts[r.Part].Steps }
	slices.SortStableFunc(all, func(a, b representative) int { return cmp.Compare(steps(a), steps(b)) })
	var reps []representative
	for _, r := range all {
		bugs := results[r.Result].Parts[r.Part].Bugs
		if slices.ContainsFunc(bugs, func(id string) bool { return !confirmed[id] }) {
			for _, id := range bugs {
				confirmed[id] = true
			}
			reps = append(reps, r)
		}
	}
	slices.SortFunc(reps, func(a, b representative) int {
		return cmp.Or(cmp.Compare(a.Result, b.Result), cmp.Compare(a.Part, b.Part))
	})
	return reps
}

// undecided turns a model's failure into an undecided entry when it is a
// limit of the model (states, time, memory), not of the run or the tools.
func undecided(ctx context.Context, m *tracemodel.Model, t Task, err error) (*bugs.Undecided, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	u := &bugs.Undecided{Var: t.Name(), Threads: [2]string{m.Threads[t.T1-1].Handle, m.Threads[t.T2-1].Handle}, Reason: err.Error()}
	var tooLarge *native.TooLargeError
	var timeout *spinrunner.TimeoutError
	switch {
	case errors.As(err, &tooLarge):
		u.Hint = "use --engine auto or spin, or leave the variable out with --vars"
	case errors.As(err, &timeout):
		u.Hint = "raise --timeout"
	case errors.Is(err, spinrunner.ErrMemoryLimit):
		u.Hint = "raise --memory"
	default:
		return nil, false
	}
	return u, true
}

// Assemble builds the report of a trace from the results of its tasks
// (results[i] is that of tasks[i], in any order; violations are sorted).
// The violations and bugs of each kind of models name its analysis
// (Models.Analysis), and each named analysis is listed in Report.Analyses
// with its bugs and a summary of its models and claims. Elapsed is left to
// the caller.
func Assemble(m *tracemodel.Model, opts Options, tasks []Task, results []PairResult) *bugs.Report {
	opts.defaults()
	rep := &bugs.Report{
		Schema:    bugs.SchemaVersion,
		Tool:      bugs.Tool{Name: "mcpredict", Version: opts.Version, Engine: string(opts.Engine)},
		Semantics: opts.Project.String(),
		Trace:     m.Name,
		Skipped:   m.Skipped,
		Problems:  m.Problems,
		Warnings:  m.Warnings,
	}
	rep.Stats.Events = m.EventCount()
	rep.Stats.SpillBytes = m.Spill().DiskBytes
	rep.Stats.Threads = len(m.Threads)
	rep.Stats.SharedVars = len(m.SharedVars())
	for _, ms := range opts.Models {
		for _, p := range ms.Patterns {
			if ms.Kind.Takes(p) {
				rep.Stats.Patterns = append(rep.Stats.Patterns, p.ID)
			}
		}
	}
	type counts struct{ models, claims int }
	byKind := map[TaskKind]*counts{}
	confirmed := map[string]bool{}
	for i, r := range results {
		kind := tasks[i].Kind()
		c := byKind[kind]
		if c == nil {
			c = &counts{}
			byKind[kind] = c
		}
		c.models++
		c.claims += r.Claims
		if r.Undecided != nil {
			rep.Undecided = append(rep.Undecided, *r.Undecided)
		}
		for _, v := range r.Violations {
			if r.Spin {
				confirmed[v.BugID] = true
			}
		}
		for _, id := range r.Confirmed {
			confirmed[id] = true
		}
		rep.Warnings = append(rep.Warnings, r.Warnings...)
		name := opts.analysis(kind)
		for _, v := range r.Violations {
			v.Analysis = name
			rep.Violations = append(rep.Violations, v)
		}
		rep.Stats.Claims += r.Claims
		rep.Stats.Parts += max(1, r.Cut)
		if r.Spin || len(r.Confirmed) > 0 {
			rep.Stats.SpinModels++
		}
		if r.Cached {
			rep.Stats.CacheHits++
		}
	}
	rep.Stats.Models = len(results)
	sortViolations(rep.Violations)
	rep.Bugs = bugs.Dedupe(rep.Violations)
	rep.TrimInterleavings()
	orderSetVars(rep)
	rep.SetReached(m.Reached)
	rep.SetContainers(m.Containers)
	for i := range rep.Bugs {
		if confirmed[rep.Bugs[i].ID] {
			rep.Bugs[i].Confirmed = true
			rep.Stats.Confirmed++
		}
	}
	for _, ms := range opts.Models {
		if ms.Analysis == "" {
			continue
		}
		ar := bugs.AnalysisRun{Name: ms.Analysis, ModelChecked: true}
		for _, b := range rep.Bugs {
			if b.Analysis == ms.Analysis {
				ar.Bugs++
			}
		}
		var c counts
		if bc := byKind[ms.Kind]; bc != nil {
			c = *bc
		}
		ar.Summary = fmt.Sprintf("%d %s, %d %s", c.models, plural(c.models, "model", "models"), c.claims, plural(c.claims, "claim", "claims"))
		rep.Analyses = append(rep.Analyses, ar)
	}
	if opts.Engine == EngineAuto {
		rep.Tool.Confirm = string(opts.Confirm)
	}
	if rep.Violations == nil {
		rep.Violations = []bugs.Violation{}
	}
	if rep.Bugs == nil {
		rep.Bugs = []bugs.Bug{}
	}
	Annotate(m, rep)
	return rep
}

// orderSetVars lists the variables of a bug of atomic sets as its
// instances name them, x of the pattern first (bugs.Dedupe sorts them).
func orderSetVars(rep *bugs.Report) {
	for i := range rep.Bugs {
		b := &rep.Bugs[i]
		if len(rep.Violations[b.Instances[0]].Objects) == 0 {
			continue // a model of one variable
		}
		b.Vars = b.Vars[:0]
		for _, k := range b.Instances {
			for _, o := range rep.Violations[k].Objects {
				if !slices.Contains(b.Vars, o) {
					b.Vars = append(b.Vars, o)
				}
			}
		}
	}
}

// sortViolations orders violations deterministically whatever the order in
// which workers finished.
func sortViolations(vs []bugs.Violation) {
	sort.SliceStable(vs, func(i, j int) bool { return violationLess(&vs[i], &vs[j]) })
}

// violationLess is the order of a report's violations: by variable, local
// and remote thread, claim.
func violationLess(a, b *bugs.Violation) bool {
	if a.Var != b.Var {
		return a.Var < b.Var
	}
	if a.Local.ID != b.Local.ID {
		return a.Local.ID < b.Local.ID
	}
	if a.Remote.ID != b.Remote.ID {
		return a.Remote.ID < b.Remote.ID
	}
	return a.Claim < b.Claim
}

// plural returns one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
