package tracemodel

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// StepKind is the kind of a PairModel statement.
type StepKind uint8

// Statement kinds of a PairModel.
const (
	StepRead StepKind = iota + 1
	StepWrite
	StepLock     // mutex acquire
	StepUnlock   // mutex release
	StepRdLock   // rwlock shared acquire
	StepWrLock   // rwlock exclusive acquire
	StepRwUnlock // rwlock release
	StepBoundary // blocking synchronization: the thread's accesses before and after are not one atomic region
	// StepPublish is the release of a lock whose critical section accessed
	// the variable: for the patterns that start with a local write, the
	// accesses before and after are not one region (ltl.Pattern.PublishBreaks).
	StepPublish
)

var stepNames = [...]string{"", "Read", "Write", "Lock", "Unlock", "RdLock", "WrLock", "RwUnlock", "Boundary", "Publish"}

func (k StepKind) String() string {
	if int(k) < len(stepNames) && k > 0 {
		return stepNames[k]
	}
	return fmt.Sprintf("StepKind(%d)", k)
}

// MarshalText makes StepKind readable in JSON.
func (k StepKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses the names of MarshalText.
func (k *StepKind) UnmarshalText(b []byte) error {
	for i := 1; i < len(stepNames); i++ {
		if stepNames[i] == string(b) {
			*k = StepKind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown step kind %q", b)
}

// IsAccess reports whether k is a Read or Write.
func (k StepKind) IsAccess() bool { return k == StepRead || k == StepWrite }

// IsAcquire reports whether k acquires a lock.
func (k StepKind) IsAcquire() bool { return k == StepLock || k == StepRdLock || k == StepWrLock }

// IsRelease reports whether k releases a lock.
func (k StepKind) IsRelease() bool { return k == StepUnlock || k == StepRwUnlock }

// PairModel is the projection of the partial-order thread model onto one
// shared variable and two threads (DESIGN §3). It is plain data: it can be
// serialized (for example to send it to a remote worker) and it determines
// the verdicts by itself.
type PairModel struct {
	Trace string `json:"trace"`
	Var   string `json:"var"`
	// Var2 is the second variable of the model of an atomic set {Var,
	// Var2} (ProjectSet); "" for the model of one variable.
	Var2    string       `json:"var2,omitempty"`
	Threads [2]ThreadRef `json:"threads"` // model thread 1 and 2 of the pair
	Locks   []LockRef    `json:"locks"`   // the common locks the steps use
	Steps   [2][]Step    `json:"steps"`   // per thread, program order
	// OnlyUpdates, in a set model, marks a variable (0: Var, 1: Var2) whose
	// every write in the model, by either thread, is a read-modify-write
	// (see ProjectSet): its writes commute, so a pattern that only orders
	// two threads' writes of it describes no violation (ltl.Pattern.OnlyWrites).
	OnlyUpdates [2]bool `json:"onlyUpdates,omitempty"`
	// Part numbers the model among the parts of its pair (Projection.Parts),
	// from 0; a pair with no cut has one part.
	Part int `json:"part,omitempty"`
	// Parts is the number of parts of the pair's model (0 or 1: this is
	// the whole model).
	Parts int `json:"parts,omitempty"`
	// Broken: both threads start past a region boundary, as every run of
	// the whole model passes the cut that starts this part (Part > 0): no
	// region of either thread is open, and the claims see no access yet.
	Broken bool `json:"broken,omitempty"`

	// src and evPos: the model and, per thread, the positions of the
	// events of the steps, until ResolveEvents.
	src   *Model
	evPos [2][]int32
	// events holds, per thread, the resolved events of all its steps,
	// which the steps' Events are parts of (ResolveEvents).
	events [2][]EventRef
}

// modelLists are the lists of a released model (Model.Release), kept for
// the next models: a server's models are built, checked and dropped by the
// thousand, and their lists were a third of what a run allocated.
type modelLists struct {
	steps  [2][]Step
	events [2][]EventRef
}

// getLists returns the lists of a released model, or none.
func (m *Model) getLists() *modelLists {
	if l, ok := m.lists.Get().(*modelLists); ok {
		return l
	}
	return &modelLists{}
}

// Release gives the lists of pm, a model of the trace, to its next models:
// pm must not be used after, nor its steps' Events (the strings of the
// events stay valid). Releasing is optional: an unreleased model is
// collected as any value.
func (m *Model) Release(pm *PairModel) {
	l := &modelLists{steps: pm.Steps, events: pm.events}
	for x := range 2 {
		l.steps[x], l.events[x] = l.steps[x][:0], l.events[x][:0]
	}
	pm.Steps, pm.events = [2][]Step{}, [2][]EventRef{}
	m.lists.Put(l)
}

// StepRef identifies a step of a PairModel: Thread is 0 or 1 (model thread 1
// or 2), Index the position in PairModel.Steps[Thread].
type StepRef struct {
	Thread int `json:"thread"`
	Index  int `json:"index"`
}

// ThreadRef names a thread of the trace.
type ThreadRef struct {
	ID     int    `json:"id"`     // model id in the whole trace
	Handle string `json:"handle"` // the trace's token
}

// LockRef names a lock of the model.
type LockRef struct {
	Name string `json:"name"`
	RW   bool   `json:"rw,omitempty"` // a rwlock
}

// Step is one statement of a thread of a PairModel.
type Step struct {
	Kind StepKind `json:"kind"`
	// Second marks an access of PairModel.Var2 (a set model).
	Second bool `json:"second,omitempty"`
	Lock   int  `json:"lock,omitempty"` // index into PairModel.Locks, for lock steps
	// Guard: the step may run only once the other thread's progress
	// counter is at least Guard (0: no constraint). Encodes causal order.
	Guard int `json:"guard,omitempty"`
	// Progress: after the step, the thread's own progress counter is set to
	// Progress (0: unchanged).
	Progress int `json:"progress,omitempty"`
	// Source, on a read, is the other thread's progress at which the write
	// that the read observed in the recorded run has run (0: the read saw
	// its own thread's write, a third thread's or none). It constrains the
	// read only in the claims where its thread is the local one: a local
	// read that ran before its write would have seen another value, and
	// what the local thread did after it is not known (see
	// ProjectOptions.ObservedReads).
	Source int `json:"source,omitempty"`
	// Atomic marks a write step whose write is that of an atomic
	// read-modify-write (Event.RMW): the precise lost update does not end
	// at it (ltl.Pattern.PlainLast).
	Atomic bool       `json:"atomic,omitempty"`
	Events []EventRef `json:"events"` // the trace events this step stands for
	// evLo, evHi: the step's events in PairModel.evPos of its thread,
	// while they are not resolved (ProjectOptions.LazyEvents).
	evLo, evHi int32
}

// EventRef is a trace event, as reports show it.
type EventRef struct {
	TraceLine int    `json:"trace_line"`
	Action    string `json:"action"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	Func      string `json:"func,omitempty"`
	// Source is the text of the event's source line, when the trace has
	// it (Model.Sources).
	Source string `json:"source,omitempty"`
	// Atomic marks the Write of an atomic read-modify-write (Event.RMW).
	Atomic bool `json:"atomic,omitempty"`
	// Library is where an event in library code really was; File, Line,
	// Func and Source are then the user's call that led to it (library.go).
	Library *LibrarySite `json:"library,omitempty"`
}

// Loc returns the source location of the event.
func (e EventRef) Loc() Loc { return Loc{File: e.File, Line: e.Line} }

// ProjectOptions tune Project. The zero value is the paper's causal order
// with the region boundaries at blocking synchronization and published
// writes; Precise returns the options of the default (precise) semantics.
type ProjectOptions struct {
	// NoBoundaries omits region boundaries (the paper's literal semantics):
	// blocking synchronization, published writes and hand-offs.
	NoBoundaries bool
	// Handoffs ends regions where a thread hands control to others:
	// Create, Signal, Broadcast and SemPost (see handoffs).
	Handoffs bool
	// Scope ends regions at the end of an operation: the accesses of a
	// region must lie in one iteration of one function invocation (see
	// scopeBreak).
	Scope bool
	// WaitConditions ends a variable's regions at the release of a critical
	// section that checks it at a cond-wait loop's condition, even when the
	// thread did not block (see waitcond.go).
	WaitConditions bool
	// ObservedReads keeps a local read after the other thread's write that
	// it observed (Step.Source) when, read before that write, it would have
	// seen its own thread's last write or the initial value: a flag that
	// the other thread sets and the local thread polls and clears
	// (handoff_lockflag.c) is no lost update of the very write the poll
	// saw, since a poll that sees its own value acts otherwise. A read that
	// would have seen an older write of the other thread (a counter both
	// update) stays free: that is the lost update.
	ObservedReads bool
	// FreeSetReads lets a set model's read that its thread follows, in its
	// region, with another access of the set run before the other thread's
	// last write of its variable before it: see another value, and steer
	// the thread anywhere. The precise semantics keeps it after that write
	// (what the thread does with another value is not in the trace); the
	// relaxed models of mcpredict reproduce drop the rule, as a directed
	// run decides (aget's save_log checks the total it then saves).
	FreeSetReads bool
	// TryLocksFail leaves out the holds that a TryLock opened: a
	// trylock that succeeded in the recorded run may fail in another
	// interleaving (another thread holds the lock), and the thread then
	// goes on without it. The relaxed model assumes it goes on to the same
	// accesses (the result ignored, or both paths alike); a directed run
	// decides (mcpredict reproduce --relaxed trylocks).
	TryLocksFail bool
	// Dataflow orders the model by Model.DataflowOrder of the variable
	// instead of the synchronization order. Project computes it (one pass
	// over the trace) unless Order is set.
	Dataflow bool
	// Order, if set, is the causal order of the model (the caller's cached
	// DataflowOrder of the variable, or any other); nil means the order
	// that Dataflow selects.
	Order *Order `json:"-"`
	// Steps, if set, shares each thread's region breaks among the
	// projections of one variable (or atomic set) under these options:
	// every pair of the thread computes the same ones (NewStepCache).
	Steps *StepCache `json:"-"`
	// LazyEvents leaves the steps' Events out until
	// PairModel.ResolveEvents: a server's models are mostly checked and
	// dropped, and their events were a tenth of the time.
	LazyEvents bool `json:"-"`
	// KeepEmptyHolds keeps the locks that a model would leave out because
	// their holds are all empty of its steps (instant.go), for the tests
	// that check that leaving them out changes no verdict.
	KeepEmptyHolds bool `json:"-"`
}

// rawStep is a step before merging, with its positions in the thread. It
// holds no pointer (its further events are a range of a buffer), so that
// the few million a server's model moves are copied and swept cheaply.
type rawStep struct {
	Kind     StepKind
	Second   bool
	order    int8  // tie-break at equal positions (Wait: unlock, boundary, lock)
	update   bool  // set models: the read of a read-modify-write kept as a read
	atomic   bool  // as Step.Atomic
	Lock     int32 // as Step.Lock
	Progress int32 // as Step.Progress
	pos      int32 // position of the (last) event
	first    int32 // position of the first event (merged steps)
	guardPos int32 // position whose clock gives the guard
	k        int32 // causal requirement: position in the other thread
	src      int32 // a read's observed write: position in the other thread (0: none)
	pin      int32 // set models: the other thread's last write of a read's variable before it (0: none)
	ev       int32 // position of the event the step stands for
	ev2      int32 // position of an update's write, which it stands for too (0: none)
	// moreLo, moreHi: a merged step's further events, after ev, in
	// modelScratch.more of its thread.
	moreLo, moreHi int32
}

// sortSteps orders steps by (pos, order), in place; keys is a buffer it
// may use, returned for the next call. The steps are a few sorted runs
// (accesses, each lock's operations, boundaries) of a struct too large to
// move cheaply: already sorted, they are kept; otherwise packed keys
// (position, order, index) are sorted and the steps permuted once, cycle
// by cycle.
func sortSteps(steps []rawStep, keys []uint64) []uint64 {
	compare := func(a, b rawStep) int {
		if a.pos != b.pos {
			return cmp.Compare(a.pos, b.pos)
		}
		return cmp.Compare(a.order, b.order)
	}
	// A key: the position (positive int32), the order (int8, offset to
	// sort as unsigned) and the index, which fits 24 bits below 16 M
	// steps; a larger model is sorted in place.
	if sortedSteps(steps) {
		return keys
	}
	if len(steps) >= 1<<24 {
		slices.SortFunc(steps, compare)
		return keys
	}
	keys = keys[:0]
	for i := range steps {
		keys = append(keys, uint64(steps[i].pos)<<32|uint64(uint8(int16(steps[i].order)+128))<<24|uint64(i))
	}
	slices.Sort(keys)
	// steps[i] becomes steps[from(i)]; bit 63 (positions are below 2^31)
	// marks the slots done.
	const index, done = 1<<24 - 1, 1 << 63
	from := func(i int) int { return int(keys[i] & index) }
	for i := range steps {
		if keys[i]&done != 0 {
			continue
		}
		tmp := steps[i]
		j := i
		for {
			keys[j] |= done
			k := from(j)
			if k == i {
				steps[j] = tmp
				break
			}
			steps[j] = steps[k]
			j = k
		}
	}
	return keys
}

// sortedSteps reports whether steps are in (pos, order) order; it reads
// them in place (a rawStep is large).
func sortedSteps(steps []rawStep) bool {
	for i := 1; i < len(steps); i++ {
		a, b := &steps[i-1], &steps[i]
		if b.pos < a.pos || b.pos == a.pos && b.order < a.order {
			return false
		}
	}
	return true
}

// mergeSteps orders the steps by (pos, order): in place (merged false),
// or into out (merged true). steps is a few runs, starting at the indexes
// runs (ascending, the first 0), each ordered but for a run of region
// breaks (a gap's Publish may come before its Boundary), which is sorted
// in place first; keys is sortSteps's buffer, returned.
func mergeSteps(steps []rawStep, runs []int, out []rawStep, keys []uint64) (_ []rawStep, merged bool, _ []uint64) {
	less := func(a, b *rawStep) bool { return a.pos < b.pos || a.pos == b.pos && a.order < b.order }
	var heads, ends [8]int
	if len(runs) > len(heads) {
		return out, false, sortSteps(steps, keys)
	}
	n := 0
	for r, lo := range runs {
		hi := len(steps)
		if r+1 < len(runs) {
			hi = runs[r+1]
		}
		if lo == hi {
			continue
		}
		keys = sortSteps(steps[lo:hi], keys)
		heads[n], ends[n] = lo, hi
		n++
	}
	if n <= 1 || sortedSteps(steps) {
		return out, false, keys
	}
	for len(out) < len(steps) {
		best := -1
		for r := 0; r < n; r++ {
			if heads[r] < ends[r] && (best < 0 || less(&steps[heads[r]], &steps[heads[best]])) {
				best = r
			}
		}
		out = append(out, steps[heads[best]])
		heads[best]++
	}
	return out, true, keys
}

// modelScratch holds the buffers of one Projection.Model call.
type modelScratch struct {
	raw, steps, merged [2][]rawStep
	more               [2][]int32 // the merged steps' further events
	keys               []uint64
	rank, progress     [2][]int
	runs               []int
}

func (m *Model) getScratch() *modelScratch {
	if sc, ok := m.scratch.Get().(*modelScratch); ok {
		return sc
	}
	return &modelScratch{}
}

// putScratch keeps the buffers for the next model.
func (m *Model) putScratch(sc *modelScratch) {
	for x := range 2 {
		sc.raw[x], sc.steps[x], sc.merged[x], sc.rank[x], sc.progress[x] = sc.raw[x][:0], sc.steps[x][:0], sc.merged[x][:0], sc.rank[x][:0], sc.progress[x][:0]
		sc.more[x] = sc.more[x][:0]
	}
	m.scratch.Put(sc)
}

// Project builds the PairModel of variable v for threads t1 and t2 (model
// ids). Both threads must access v.
func (m *Model) Project(v, t1, t2 int, opts ProjectOptions) (*PairModel, error) {
	if v <= 0 || v >= len(m.Vars) {
		return nil, fmt.Errorf("trace %s: no variable #%d", m.Name, v)
	}
	return m.project([]int32{int32(v)}, t1, t2, opts)
}

// ProjectSet builds the PairModel of the atomic set {v, w} for threads t1
// and t2: the accesses of both variables (those of w are Step.Second), with
// the semantics of Project — regions end at the same boundaries (the
// update-return rule counts a write of either variable), read sources are
// per variable, and the data-flow order leaves out both variables. Both
// threads must access v or w.
//
// A read-modify-write — a read of a variable followed, as the thread's
// next access of the set, by its write of it, with no synchronization and
// no other write between (x++, x += n, tmp = x; x = tmp + 1) — is one write
// step: its read is consumed by the update, so it starts no view of the
// set, and a pattern's read never matches it. Only an update that directly
// follows the thread's plain read of the other variable keeps its read, and
// only when the other thread stores the variable other than by updates (a
// store before all of the first thread's accesses, an initialization, does
// not count): the update may then depend on the value read first (a writer that looked
// up the log's generation adds its record's size to the bytes of that
// generation, which a rotation resets), whereas two updates commute.
// Assumed, as for the commutative updates of the data-flow order: an
// update stores a commutative function of the value read
// (PairModel.OnlyUpdates).
func (m *Model) ProjectSet(v, w, t1, t2 int, opts ProjectOptions) (*PairModel, error) {
	for _, x := range []int{v, w} {
		if x <= 0 || x >= len(m.Vars) {
			return nil, fmt.Errorf("trace %s: no variable #%d", m.Name, x)
		}
	}
	if v == w {
		return nil, fmt.Errorf("trace %s: an atomic set needs two variables, got %s twice", m.Name, m.Vars[v].Name)
	}
	return m.project([]int32{int32(v), int32(w)}, t1, t2, opts)
}

// at returns xs[i], 0 when xs is empty (the pins of a one-variable model).
func at(xs []int32, i int) int32 {
	if len(xs) == 0 {
		return 0
	}
	return xs[i]
}

// lastInRegion reports whether the steps that follow an access in its
// thread (rest) reach a region boundary, or the end, before another access
// (other than the write of the update whose read it is, with update).
func lastInRegion(rest []rawStep, update bool) bool {
	for _, s := range rest {
		switch s.Kind {
		case StepRead, StepWrite:
			if update && s.Kind == StepWrite {
				update = false // the update's own write: its read flows there
				continue
			}
			return false
		case StepBoundary:
			return true
		}
	}
	return true
}

// readModifyWrite reports whether access i of thread tid (pos: the
// positions of the thread's accesses of the model's variables, write
// whether each writes, which their variables) is the read of a
// read-modify-write: the thread's next access of the model's variables
// writes the same variable, with no synchronization and no other write of
// the thread between (x++; tmp = x; x = tmp + 1).
func (m *Model) readModifyWrite(tid int, write []bool, pos []int32, which []int8, i int) bool {
	if i+1 >= len(pos) || which[i] != which[i+1] || write[i] || !write[i+1] {
		return false
	}
	for p := pos[i] + 1; p < pos[i+1]; p++ {
		if k := m.EventAt(tid, p).Kind; k.IsSync() || k == Create || k == Join || k == Write {
			return false
		}
	}
	return true
}

func (m *Model) project(vars []int32, t1, t2 int, opts ProjectOptions) (*PairModel, error) {
	p, err := m.newProjection(vars, t1, t2, opts)
	if err != nil {
		return nil, err
	}
	return p.Model(p.Whole())
}

// newProjection gathers what every model of the variables (one, or an
// atomic set) and the thread pair needs: each thread's accesses, their
// observed writes, and the common locks.
func (m *Model) newProjection(vars []int32, t1, t2 int, opts ProjectOptions) (*Projection, error) {
	if t1 == t2 || t1 <= 0 || t2 <= 0 || t1 > len(m.Threads) || t2 > len(m.Threads) {
		return nil, fmt.Errorf("trace %s: bad thread pair %d,%d", m.Name, t1, t2)
	}
	ord := opts.Order
	switch {
	case ord != nil:
	case opts.Dataflow:
		ord = m.order(vars...)
	default:
		ord = m.sync
	}
	p := &Projection{m: m, vars: vars, tids: [2]int{t1, t2}, opts: opts, ord: ord, steps: opts.Steps}
	if p.steps == nil {
		p.steps = NewStepCache()
	}
	shared := p.steps
	if opts.Steps == nil {
		shared = nil // the projection's own cache: gather only its threads'
	}
	ta := m.threadAccessesOf(shared, vars, t1, t2, opts)
	for x := range 2 {
		a := ta[x]
		p.acc[x], p.accEv[x], p.accVar[x], p.accWrite[x], p.rmw[x] = a.pos, a.ev, a.varOf, a.write, a.rmw
		p.src[x] = make([]int32, len(a.pos))
		if opts.ObservedReads {
			for i, t := range a.srcThread {
				if int(t) == p.tids[1-x] {
					p.src[x][i] = a.srcPos[i]
				}
			}
		}
		if len(vars) == 2 {
			p.pin[x] = m.pinsOf(a, ta[1-x])
		}
	}
	p.name = m.Vars[vars[0]].Name
	if len(vars) == 2 {
		p.name += " and " + m.Vars[vars[1]].Name
	}
	for x := 0; x < 2; x++ {
		if len(p.acc[x]) == 0 {
			return nil, fmt.Errorf("trace %s: thread %s does not access %s", m.Name, m.Threads[p.tids[x]-1].Handle, p.name)
		}
	}
	p.common = intersect(m.threadLocks[t1-1], m.threadLocks[t2-1])
	p.commonOps = [2][][]lockOp{m.opsOf(t1, p.common), m.opsOf(t2, p.common)}
	if opts.TryLocksFail {
		for x := range 2 {
			p.commonOps[x] = m.withoutTryHolds(p.tids[x], p.commonOps[x])
		}
	}
	return p, nil
}

// Model builds the PairModel of one part of the projection (Whole: all of
// it).
func (p *Projection) Model(part Part) (*PairModel, error) {
	m, vars, tids, opts, ord := p.m, p.vars, p.tids, p.opts, p.ord
	if part.From[0] < 0 || part.From[1] < 0 || part.To[0] > len(p.acc[0]) || part.To[1] > len(p.acc[1]) ||
		part.From[0] >= part.To[0] || part.From[1] >= part.To[1] {
		return nil, fmt.Errorf("trace %s: model of %s: bad part %v", m.Name, p.name, part)
	}
	t1, t2 := tids[0], tids[1]
	var acc, accEv [2][]int32
	var accVar [2][]int8
	var accWrite [2][]bool
	var src, pin [2][]int32
	var rmw [2][]bool
	for x := 0; x < 2; x++ {
		lo, hi := part.From[x], part.To[x]
		acc[x], accEv[x], accVar[x], src[x] = p.acc[x][lo:hi], p.accEv[x][lo:hi], p.accVar[x][lo:hi], p.src[x][lo:hi]
		accWrite[x] = p.accWrite[x][lo:hi]
		if len(vars) == 2 {
			pin[x], rmw[x] = p.pin[x][lo:hi], p.rmw[x][lo:hi]
		}
	}
	// viewOf(x, i): the thread's access before access i of the part (in
	// the whole projection, so that a part's steps are those of the whole
	// model) is a plain read of the other variable of the set.
	viewOf := func(x, i int) bool {
		g := part.From[x] + i
		return g > 0 && m.Events[p.accEv[x][g-1]].Kind == Read && p.accVar[x][g-1] != p.accVar[x][g]
	}

	// Windows [start, end] of positions that matter (see DESIGN §3 and the
	// comments in window).
	var start, end [2]int32
	for x := 0; x < 2; x++ {
		c := acc[x][0]
		if part.From == [2]int{} {
			if d := ord.firstDependence(tids[x], tids[1-x], c); d > 0 {
				c = d
			}
		}
		start[x] = openAt(p.commonOps[x], c)
		end[x] = acc[x][len(acc[x])-1]
	}
	for changed := true; changed; {
		changed = false
		for x := 0; x < 2; x++ {
			e := end[x]
			if k := ord.Clock(tids[1-x], end[1-x], tids[x]); k > e {
				e = k
			}
			e = closeAfter(p.commonOps[x], e)
			if e > end[x] {
				end[x], changed = e, true
			}
		}
	}

	// The locks whose holds are all empty of the model's steps are left
	// out (instant.go).
	locks := p.keptLocks(part, acc, start, end)

	// Raw steps.
	sc := m.getScratch()
	defer m.putScratch(sc)
	lockIndex := map[int32]int{}
	raw := &sc.raw
	// In set models: rmw[x][i], access i of thread x is the read of a
	// read-modify-write; stores[x][v], thread x writes variable v other
	// than by one.
	// In set models: stores[x][v], thread x writes variable v other than
	// by a read-modify-write.
	stores := p.storesOf()
	for x := 0; x < 2; x++ {
		tid := tids[x]
		raw[x] = raw[x][:0]
		runs := sc.runs[:0] // where each sorted run of raw[x] starts
		runs = append(runs, 0)
		for i := 0; i < len(acc[x]); i++ {
			m.Pace(i)
			pos := acc[x][i]
			k := StepRead
			if accWrite[x][i] {
				k = StepWrite
			}
			if len(vars) == 2 && rmw[x][i] && i+1 < len(acc[x]) && !(stores[1-x][accVar[x][i]] && viewOf(x, i)) {
				raw[x] = append(raw[x], rawStep{Kind: StepWrite, Second: accVar[x][i] == 1, atomic: m.Events[accEv[x][i+1]].RMW,
					pos: acc[x][i+1], guardPos: acc[x][i+1], ev: pos, ev2: acc[x][i+1]})
				i++
				continue
			}
			raw[x] = append(raw[x], rawStep{Kind: k, Second: accVar[x][i] == 1, pos: pos, guardPos: pos, ev: pos, src: src[x][i], pin: at(pin[x], i),
				update: len(vars) == 2 && rmw[x][i], atomic: k == StepWrite && m.Events[accEv[x][i]].RMW})
		}
		for _, k := range locks {
			l, ops := p.common[k], p.commonOps[x][k]
			runs = append(runs, len(raw[x]))
			i := sort.Search(len(ops), func(i int) bool { return ops[i].Pos >= start[x] })
			for ; i < len(ops) && ops[i].Pos <= end[x]; i++ {
				op := ops[i]
				rs := rawStep{Kind: op.Kind, pos: op.Pos, guardPos: op.Pos, ev: op.Pos}
				if op.Wait {
					if op.Kind.IsRelease() {
						rs.guardPos, rs.order = op.Pos-1, -1
					} else {
						rs.order = 1
					}
				}
				idx, ok := lockIndex[l]
				if !ok {
					idx = len(lockIndex)
					lockIndex[l] = idx
				}
				rs.Lock = int32(idx)
				raw[x] = append(raw[x], rs)
			}
		}
		if !opts.NoBoundaries {
			runs = append(runs, len(raw[x]))
			raw[x] = p.appendBreaks(raw[x], x, part)
		}
		// (pos, order) is unique: one event per position, and the steps
		// that share one (a cond Wait's release, boundary and reacquire; an
		// unlock and its publish) differ in order.
		sc.runs = runs
		var merged bool
		sc.merged[x], merged, sc.keys = mergeSteps(raw[x], runs, sc.merged[x][:0], sc.keys)
		if merged {
			raw[x], sc.merged[x] = sc.merged[x], raw[x]
		}
		hint := -1
		for i := range raw[x] {
			r := &raw[x][i]
			r.first = r.pos
			r.k = ord.clockFrom(tid, r.guardPos, tids[1-x], &hint)
			// In a set model a read that the thread follows, in its region,
			// with another access of the set stays after the other thread's
			// last write of its variable before it (the write it observed,
			// or one a third thread's overwrote), in both views: a
			// two-variable pattern reads twice, and what a thread does after
			// a read of another value than recorded (a flag not yet set: it
			// keeps waiting) is not known, whether the trace calls the read
			// DataRead or not (the recorder's DataRead misses comparisons
			// whose operands differ). The thread's last access of the set in
			// its region may read another value: the pattern has then
			// happened.
			if len(vars) == 2 && !opts.FreeSetReads && r.Kind == StepRead && r.pin > 0 && !lastInRegion(raw[x][i+1:], r.update) {
				r.k, r.src = max(r.k, r.pin), 0
			}
		}
	}

	// needed[x]: positions of thread x that the other thread waits for.
	var needed [2][]int32
	for x := 0; x < 2; x++ {
		sources := false
		for i := range raw[1-x] {
			s := &raw[1-x][i]
			if s.k > 0 && (len(needed[x]) == 0 || needed[x][len(needed[x])-1] != s.k) {
				needed[x] = append(needed[x], s.k)
			}
			if s.src > 0 {
				needed[x] = append(needed[x], s.src)
				sources = true
			}
		}
		if sources { // two nondecreasing sequences, interleaved
			slices.Sort(needed[x])
			needed[x] = slices.Compact(needed[x])
		}
	}
	steps, more := &sc.steps, &sc.more
	for x := 0; x < 2; x++ {
		steps[x], more[x] = mergeBreaks(raw[x], raw[1-x], needed[x], steps[x][:0], more[x][:0])
	}
	// Progress marks and guards.
	rank := &sc.rank // per step: its progress value, 0 if unmarked
	for x := 0; x < 2; x++ {
		rank[x] = markProgress(steps[x], needed[x], rank[x])
	}
	pm := &PairModel{
		Trace:   m.Name,
		Var:     m.Vars[vars[0]].Name,
		Threads: [2]ThreadRef{{ID: t1, Handle: m.Threads[t1-1].Handle}, {ID: t2, Handle: m.Threads[t2-1].Handle}},
		Locks:   make([]LockRef, len(lockIndex)),
		Part:    part.Index,
		Parts:   part.Of,
		Broken:  part.Index > 0,
	}
	if len(vars) == 2 {
		pm.Var2 = m.Vars[vars[1]].Name
		pm.OnlyUpdates = [2]bool{!stores[0][0] && !stores[1][0], !stores[0][1] && !stores[1][1]}
	}
	for l, i := range lockIndex {
		pm.Locks[i] = LockRef{Name: m.Objects[l], RW: m.rwObj[l]}
	}
	// progress[x][i]: thread x's progress once its step i has run (the
	// rank of its last marked step up to i; ranks increase).
	progress := &sc.progress
	for x := 0; x < 2; x++ {
		progress[x] = append(progress[x][:0], rank[x]...)
		for i := 1; i < len(progress[x]); i++ {
			if progress[x][i] == 0 {
				progress[x][i] = progress[x][i-1]
			}
		}
	}
	lists := m.getLists()
	pm.events = lists.events // room for ResolveEvents
	for x := 0; x < 2; x++ {
		pm.Steps[x], pm.evPos[x] = appendSteps(slices.Grow(lists.steps[x][:0], len(steps[x])), make([]int32, 0, len(steps[x])),
			steps[x], more[x], steps[1-x], progress[1-x])
	}
	pm.src = m
	if !opts.LazyEvents {
		pm.ResolveEvents()
	}
	return pm, nil
}

// markProgress returns, per step of a thread (steps, in position order),
// its progress value, 0 if unmarked (rank, emptied, is its room): the steps
// at or before which a position of needed (that the other thread waits
// for) falls are marked, numbered from 1 in order, and given their
// Progress.
func markProgress(steps []rawStep, needed []int32, rank []int) []int {
	rank = append(rank[:0], make([]int, len(steps))...)
	i := 0 // the first step past the last position asked (they mostly grow)
	for _, k := range needed {
		if i > 0 && steps[i-1].pos > k {
			i = 0
		}
		if i < len(steps) && steps[i].pos <= k { // else the same step as last
			i = searchFrom(len(steps), i+1, func(j int) bool { return steps[j].pos > k })
		}
		if i > 0 {
			rank[i-1] = 1
		}
	}
	r := 0
	for i := range rank {
		if rank[i] != 0 {
			r++
			rank[i] = r
			steps[i].Progress = int32(r)
		}
	}
	return rank
}

// appendSteps appends to out the model steps of a thread's raw steps
// (steps, with more: their further events) and to evPos their events,
// each step guarded by the progress (otherProgress, per step of other)
// that the other thread's steps other must have made before it.
func appendSteps(out []Step, evPos []int32, steps []rawStep, more []int32, other []rawStep, otherProgress []int) ([]Step, []int32) {
	// rankAt: the other thread's progress once its position k has run; *h
	// is the other thread's first step past the position of the last such
	// question (the steps ask in position order: requirements and sources
	// each mostly grow).
	rankAt := func(k int32, h *int) int {
		if k <= 0 {
			return 0
		}
		i := *h
		if i > 0 && other[i-1].pos > k {
			i = 0
		}
		if i < len(other) && other[i].pos <= k { // else the same step as last
			i = searchFrom(len(other), i+1, func(j int) bool { return other[j].pos > k })
		}
		if *h = i; i == 0 {
			return 0
		}
		return otherProgress[i-1]
	}
	last, hk, hs := 0, 0, 0
	for i := range steps {
		s := &steps[i]
		st := Step{Kind: s.Kind, Second: s.Second, Lock: int(s.Lock), Progress: int(s.Progress), Atomic: s.atomic}
		if g := rankAt(s.k, &hk); g > last {
			st.Guard = g
			last = g
		}
		if g := rankAt(s.src, &hs); g > last {
			st.Source = g
		}
		st.evLo = int32(len(evPos))
		evPos = append(append(evPos, s.ev), more[s.moreLo:s.moreHi]...)
		st.evHi = int32(len(evPos))
		out = append(out, st)
	}
	return out, evPos
}

// ResolveEvents fills in the Events of the steps of a model built with
// ProjectOptions.LazyEvents; it does nothing on any other. A model whose
// events are not resolved says nothing of the trace (reports, Promela
// comments, a worker's copy need them); the checks do not read them. Not
// safe for concurrent use on one model.
func (pm *PairModel) ResolveEvents() {
	m := pm.src
	if m == nil {
		return
	}
	for x := range 2 {
		tid := pm.Threads[x].ID
		refs := slices.Grow(pm.events[x][:0], len(pm.evPos[x]))[:len(pm.evPos[x])]
		pm.events[x] = refs
		for i, pos := range pm.evPos[x] {
			refs[i] = m.ref(m.EventAt(tid, pos))
		}
		for i := range pm.Steps[x] {
			st := &pm.Steps[x][i]
			st.Events = refs[st.evLo:st.evHi:st.evHi]
			st.evLo, st.evHi = 0, 0
		}
		pm.evPos[x] = nil
	}
	pm.src = nil
}

// mergeBreaks appends to steps the raw steps of a thread, merging each
// run of mergeable steps (region breaks) that no position of needed (that
// the other thread waits for) separates and whose requirements fall
// between the same two raw steps of the other thread (other); more gets
// each step's further events: its update's write, then those of the steps
// merged into it (a step is the last one while they merge).
func mergeBreaks(raw, other []rawStep, needed []int32, steps []rawStep, more []int32) ([]rawStep, []int32) {
	// slot(k): number of raw steps of the other thread at or before
	// position k.
	slot := func(k int32) int {
		return sort.Search(len(other), func(i int) bool { return other[i].pos > k })
	}
	for i := range raw {
		s := &raw[i]
		if n := len(steps); n > 0 {
			p := &steps[n-1]
			if mergeable(p, s) && !anyIn(needed, p.pos, s.first) && slot(p.k) == slot(s.k) {
				more = appendEvents(more, s)
				p.pos, p.moreHi = s.pos, int32(len(more))
				continue
			}
		}
		steps = append(steps, *s)
		p := &steps[len(steps)-1]
		p.moreLo = int32(len(more))
		if s.ev2 > 0 {
			more = append(more, s.ev2)
		}
		p.moreHi = int32(len(more))
	}
	return steps, more
}

// appendEvents appends the events that step s stands for to a merged
// step's further events: its own, its update's write.
func appendEvents(more []int32, s *rawStep) []int32 {
	more = append(more, s.ev)
	if s.ev2 > 0 {
		more = append(more, s.ev2)
	}
	return more
}

// mergeable reports whether two consecutive steps can be one statement.
// Only region boundaries merge: two accesses of a thread, even of the same
// kind, must stay separate statements, since the other thread may run
// between them (R1 W2 R1 between two reads is P1, W1 W2 W1 between two
// writes is P5).
func mergeable(a, b *rawStep) bool {
	return a.Kind == b.Kind && (a.Kind == StepBoundary || a.Kind == StepPublish)
}

// A regionBreak is a Boundary or Publish step of a thread, before its
// materialization as a rawStep: the position, the event that reports show
// for it, and the gap (between the thread's accesses gap and gap+1) it
// lies in.
type regionBreak struct {
	pos, shown, gap int32
	kind            StepKind
	order           int8
}

// breaks returns the region breaks of thread tid between consecutive
// accesses at positions acc, of vars[accVar[i]] (accVar nil: all of
// vars[0]), write[i] when access i writes. In each gap it places at most
// one Boundary, at the first of: a blocking event, a hand-off (with
// opts.Handoffs), the end of an operation (with opts.Scope); and at most
// one Publish, at the first release of a lock held at the earlier access.
// Later ones in the same gap would only repeat them. Implicit releases of cond waits are boundaries
// already. They depend on the thread alone, not on the pair: the
// projections of the thread's pairs share them (StepCache).
func (m *Model) breaks(tid int, vars []int32, acc []int32, accVar []int8, write []bool, opts ProjectOptions) []regionBreak {
	var out []regionBreak
	bl := m.blocking[tid-1]
	ho := m.handoffs[tid-1]
	locks, lockOps := m.threadLocks[tid-1], m.threadLockOps[tid-1]
	// The gaps come in position order: each list is read on from where the
	// last gap left it.
	first := func(list []int32, j *int, a, b int32) int32 { // first position in (a, b), 0 if none
		for *j < len(list) && list[*j] <= a {
			*j++
		}
		if *j < len(list) && list[*j] < b {
			return list[*j]
		}
		return 0
	}
	var jb, jh int
	atomics, waits := m.atomicGapsOf(tid), m.waitCondsOf(tid, vars)
	next := make([]int, len(locks)) // per lock: its first operation after the gap's start (firstRelease)
	lastWrite := int32(0)           // the thread's last write of the variables at or before a
	for i := 0; i+1 < len(acc); i++ {
		a, b := acc[i], acc[i+1]
		v := vars[0]
		if accVar != nil {
			v = vars[accVar[i]]
		}
		if opts.Scope && write[i] {
			lastWrite = a
		}
		at, order := int32(0), int8(0)
		if p := first(bl, &jb, a, b); p > 0 {
			at = p
		}
		if opts.Handoffs {
			if p := first(ho, &jh, a, b); p > 0 && (at == 0 || p < at) {
				at = p
			}
		}
		if opts.WaitConditions {
			// Before the release's lock step.
			if p := waits.release(v, a); p > 0 && p < b && (at == 0 || p < at) {
				at, order = p, -2
			}
		}
		// A write made by a mutex-based atomic and then used outside its
		// lock: neither the helper's unlock nor its return ends the region.
		atomicLock, atomicGap := atomics.gap(a, b, v, !write[i+1])
		if opts.Scope {
			w := lastWrite
			if atomicGap {
				w = 0 // no update-return break in this gap
			}
			// Before any lock step or access at that position.
			bound := b + 1
			if at > 0 {
				bound = at
			}
			if p := m.scopeBreakBefore(tid, w, a, b, bound); p > 0 {
				at, order = p, -2
			}
		}
		if at > 0 {
			// A scope break at the next access itself is shown as the
			// event before it: reports list each event once (the first
			// step that stands for it), and that must be the access.
			shown := at
			if at == b {
				shown = b - 1
			}
			out = append(out, regionBreak{pos: at, shown: shown, gap: int32(i), kind: StepBoundary, order: order})
		}
		skip := int32(-1)
		if atomicGap {
			skip = atomicLock
		}
		if pub := firstRelease(locks, lockOps, next, skip, a, b); pub < b {
			out = append(out, regionBreak{pos: pub, shown: pub, gap: int32(i), kind: StepPublish, order: 2})
		}
	}
	return out
}

// firstRelease returns the first release, before b, of a hold (of the
// locks but skip) that contains position a, b if none. next holds, per
// lock, its first operation after the previous call's a: the positions a
// come in increasing order.
func firstRelease(locks []int32, lockOps [][]lockOp, next []int, skip int32, a, b int32) int32 {
	pub := b
	for k, l := range locks {
		ops := lockOps[k]
		for next[k] < len(ops) && ops[next[k]].Pos <= a {
			next[k]++
		}
		if l == skip {
			continue
		}
		// The first operation after a hold that contains a is its release.
		if j := next[k]; j < len(ops) && ops[j].Pos < pub && ops[j].Kind.IsRelease() && !ops[j].Wait && ops[j].Start <= a {
			pub = ops[j].Pos
		}
	}
	return pub
}

// anyIn reports whether a sorted list has a value in [lo, hi).
func anyIn(sorted []int32, lo, hi int32) bool {
	i := sort.Search(len(sorted), func(i int) bool { return sorted[i] >= lo })
	return i < len(sorted) && sorted[i] < hi
}

func intersect(a, b []int32) []int32 {
	var out []int32
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return out
}

// Ref returns what a report shows of event e: its location, function and
// source text (the user's call that led to it when e is in library code,
// EventRef.Library).
func (m *Model) Ref(e *Event) EventRef { return m.ref(e) }

func (m *Model) ref(e *Event) EventRef {
	l := m.Locs[e.Loc]
	r := EventRef{TraceLine: int(e.Line), Action: e.Kind.String(), File: l.File, Line: l.Line, Atomic: e.RMW}
	switch {
	case int(e.Loc) < len(m.locSource):
		r.Source = m.locSource[e.Loc]
	case m.Sources != nil:
		r.Source = m.Sources[l]
	}
	if e.Func != 0 {
		r.Func = m.Objects[e.Func]
	}
	if m.libLoc != nil {
		m.attribute(e, &r)
	}
	return r
}

// opsOf returns thread tid's operations of each of the locks.
func (m *Model) opsOf(tid int, locks []int32) [][]lockOp {
	ops := make([][]lockOp, len(locks))
	for k, l := range locks {
		ops[k] = m.lockOps[lockThread{lock: l, thread: int32(tid)}]
	}
	return ops
}

// withoutTryHolds returns thread tid's operations of each lock (ops, as
// opsOf gives them) without those of the holds that a TryLock opened.
func (m *Model) withoutTryHolds(tid int, ops [][]lockOp) [][]lockOp {
	out := make([][]lockOp, len(ops))
	for k, list := range ops {
		// A copy: the lists are the model's own.
		out[k] = slices.DeleteFunc(slices.Clone(list), func(op lockOp) bool { return m.EventAt(tid, op.Start).Kind == TryLock })
	}
	return out
}

// HasTryLock reports whether the trace has a TryLock (the relaxed model of
// TryLocksFail differs from the precise one only then).
func (m *Model) HasTryLock() bool {
	for i := range m.Events {
		if m.Events[i].Kind == TryLock {
			return true
		}
	}
	return false
}

// openAt moves position c back to the start of every hold (in one
// thread's operations of each lock) that is open at c, so that the window
// never cuts a critical section in two.
func openAt(locks [][]lockOp, c int32) int32 {
	for moved := true; moved; {
		moved = false
		for _, ops := range locks {
			i := sort.Search(len(ops), func(i int) bool { return ops[i].Pos >= c }) - 1
			if i >= 0 && ops[i].Kind.IsAcquire() && ops[i].Start < c {
				c, moved = ops[i].Start, true
			}
		}
	}
	return c
}

// closeAfter moves position e forward to the release of every hold (in one
// thread's operations of each lock) open at e.
func closeAfter(locks [][]lockOp, e int32) int32 { return closeAfterFrom(locks, nil, e) }

// closeAfterFrom is closeAfter for a caller that knows each lock's
// operations before from[k] (nil: none) to be at or before e.
func closeAfterFrom(locks [][]lockOp, from []int, e int32) int32 {
	for moved := true; moved; {
		moved = false
		for k, ops := range locks {
			lo := 0
			if from != nil {
				lo = from[k]
			}
			// i: the first operation after e; the one before it opens a
			// hold that its next one, at i, releases.
			i := searchFrom(len(ops), lo, func(i int) bool { return ops[i].Pos > e })
			if i > 0 && ops[i-1].Kind.IsAcquire() && i < len(ops) {
				e, moved = ops[i].Pos, true
			}
		}
	}
	return e
}

// holdScan is closeAfter for a scan that asks of one thread's positions in
// increasing order: each lock's operations are read on from the last
// position's.
type holdScan struct {
	ops  [][]lockOp
	from []int // per lock: its first operation after the last position asked
}

func (h *holdScan) closeAfter(e int32) int32 {
	for k, ops := range h.ops {
		for h.from[k] < len(ops) && ops[h.from[k]].Pos <= e {
			h.from[k]++
		}
	}
	return closeAfterFrom(h.ops, h.from, e)
}

// Semantics names a set of ProjectOptions: "precise" (the default of
// mcpredict) or "paper" (McPatom's literal over-approximation).
const (
	SemanticsPrecise = "precise"
	SemanticsPaper   = "paper"
)

// SemanticsOptions returns the projection options of a named semantics.
func SemanticsOptions(name string) (ProjectOptions, error) {
	switch name {
	case SemanticsPrecise, "":
		return ProjectOptions{Handoffs: true, Scope: true, WaitConditions: true, Dataflow: true, ObservedReads: true}, nil
	case SemanticsPaper:
		return ProjectOptions{NoBoundaries: true}, nil
	}
	return ProjectOptions{}, fmt.Errorf("unknown semantics %q: want precise or paper", name)
}

// String describes the options as `mcpredict run` prints them: the name of
// the semantics when they are one, else the rules that are on.
func (o ProjectOptions) String() string {
	o.Order, o.Steps, o.LazyEvents = nil, nil, false
	if p, _ := SemanticsOptions(SemanticsPrecise); o == p {
		return SemanticsPrecise
	}
	if p, _ := SemanticsOptions(SemanticsPaper); o == p {
		return SemanticsPaper
	}
	var on []string
	if !o.NoBoundaries {
		on = append(on, "boundaries")
		if o.Handoffs {
			on = append(on, "handoffs")
		}
	}
	if o.Scope {
		on = append(on, "scope")
	}
	if o.WaitConditions {
		on = append(on, "wait conditions")
	}
	if o.Dataflow {
		on = append(on, "dataflow")
	}
	if o.ObservedReads {
		on = append(on, "observed reads")
	}
	if o.FreeSetReads {
		on = append(on, "free set reads")
	}
	if o.TryLocksFail {
		on = append(on, "trylocks fail")
	}
	if len(on) == 0 {
		return "custom (none)"
	}
	return "custom (" + strings.Join(on, ", ") + ")"
}
