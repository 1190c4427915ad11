// Package flow infers intra-thread value flow — which earlier reads of a
// thread may feed a later write (or a branch, or a returned value) — from
// a trace that does not record it, for the analyses that need it: SVD's
// computational units (seeds/003 §4.2: CU references propagated through
// registers), and the causal dependencies of Pessanha, Dias and Lourenço
// (seeds/001 §4: stale values, common correlation).
//
// # What traces carry
//
// No trace format of mcpredict records value flow: a Pin trace and a
// recording of `mcpredict record` have the address, kind and source line
// of each access, the Enter/Exit of function invocations, and — only in
// recordings — whether a read's value steered its thread (`Read`: a
// comparison with equal operands, a switch or an address used it) or was
// not seen to (`DataRead`). The recorder cannot record more with its
// instrumentation: gcc's -fsanitize=thread calls a hook for every access
// to *memory* as GIMPLE sees it, and locals whose address is not taken are
// GIMPLE registers even at -O0 (`int tmp = getX(); setX(tmp + v);` has no
// hook for tmp at any optimisation level), so the flows through locals,
// registers, arguments and return values never reach the runtime;
// -fsanitize-coverage=trace-cmp passes the values of compared operands,
// not where they came from. Recording them would take instruction-level
// instrumentation (Pin with register operands) or a taint sanitizer
// (DataFlowSanitizer, which gcc does not have).
//
// # The fallbacks
//
// The tracker therefore infers flow from the structure the trace has,
// with the fallbacks of the spec (A9, B8), finest first:
//
//   - the statement: a read feeds the writes of its statement — the
//     thread's run of events at one source line of one invocation — and of
//     the calls made from it (arguments), and a call returns the callee's
//     live reads into the caller's statement (`x = f() + 1`,
//     `setX(getX() + v)`, `buf->outcnt += len`). These flows are strong.
//   - the invocation: a read stays live in its invocation until the
//     invocation starts a new iteration of a loop (it comes back to a
//     source line it ran before, or repeats an access of its statement:
//     a spin on a flag), and in its callers after it returns (a returned
//     value: `lock; v = x; unlock; return v;`) once the call's statement
//     is over; a write of any frame below sees the live reads of the
//     frames above it (arguments). These flows are weak.
//
// Mode says how far an analysis follows them: Statement (strong flows
// only), Update (the default: strong flows, and a weak flow from the
// thread's latest read of x into a later write of the same x — the
// read-modify-write through a local, `b = balance; balance = b + n`,
// `tmp = getX(); setX(tmp + v)`, which is the one flow through locals
// that the trace itself suggests; an earlier read of x that the thread
// read again is taken to be dead),
// Invocation (every weak flow: the coarse fallback 3 of the spec). The
// analyses say in their summary which mode and which trace information
// they used (Describe).
//
// # Cost
//
// A Tracker is per thread: each frame keeps its live reads (at most Cap,
// the oldest dropped first: a register file does not hold a whole loop's
// worth either) and the source lines of its current loop iteration. Step,
// Read and Sources are O(live reads of the thread's frames).
package flow

import (
	"fmt"
	"strings"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// Mode says which inferred flows feed a write.
type Mode uint8

// The modes, finest first; Update is the default.
const (
	Update Mode = iota
	Statement
	Invocation
)

func (m Mode) String() string {
	switch m {
	case Statement:
		return "statement"
	case Invocation:
		return "invocation"
	}
	return "update"
}

// ParseMode returns the mode named s ("" is Update).
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "update":
		return Update, nil
	case "statement":
		return Statement, nil
	case "invocation":
		return Invocation, nil
	}
	return Update, fmt.Errorf("unknown value-flow mode %q: want statement, update or invocation", s)
}

// Traits are what a trace carries that the inference uses.
type Traits struct {
	// Funcs: the trace has Enter/Exit events (invocations); without them
	// each thread is one invocation.
	Funcs bool
	// DataRead: the trace marks the reads whose value steered nothing
	// (a recording of mcpredict record).
	DataRead bool
}

// TraitsOf scans m once.
func TraitsOf(m *tracemodel.Model) Traits {
	var tr Traits
	for i := 0; i < len(m.Events) && !(tr.Funcs && tr.DataRead); i++ {
		m.Pace(i)
		e := &m.Events[i]
		switch {
		case e.Kind == tracemodel.Enter:
			tr.Funcs = true
		case e.Kind == tracemodel.Read && e.Data:
			tr.DataRead = true
		}
	}
	return tr
}

// Describe is the account of the fallback an analysis used, for its
// summary line: the mode and what the trace gave it.
func Describe(mode Mode, tr Traits) string {
	var b strings.Builder
	fmt.Fprintf(&b, "value flow: %s (not in the trace; inferred from source lines", mode)
	if tr.Funcs {
		b.WriteString(", invocations")
	} else {
		b.WriteString(", no Enter/Exit: one invocation per thread")
	}
	if tr.DataRead {
		b.WriteString(", DataRead marks")
	}
	b.WriteString(")")
	return b.String()
}

// DefaultCap is the default number of live reads a frame keeps.
const DefaultCap = 64

// An Entry is a live read.
type Entry struct {
	Tag  int32 // the analysis's payload (a computational unit, a read event)
	Var  int32 // the variable read
	step int32 // the frame's step when it entered the frame
	stmt int32 // the statement of the frame it belongs to, 0: none (weak)
}

// locStep is a source location and the step of its first run.
type locStep struct{ loc, step int32 }

type key struct {
	kind tracemodel.Kind
	obj  int32
}

// frame is one invocation of the thread.
type frame struct {
	live     []Entry
	seen     []locStep       // locations of the current iteration, by step of first run
	index    map[int32]int32 // location → index in seen, when seen is long
	keys     []key           // accesses and calls of the current statement
	loc      int32           // location of the current statement, 0: none yet
	stmt     int32           // id of the current statement
	stmtStep int32           // step at which it began
	step     int32           // events run directly in the frame
	inst     uint32          // the invocation's number in the thread
	iter     uint32          // its current loop iteration
}

// A Tracker follows one thread's invocations, statements and live reads.
// Feed it every event of the thread in order (Step), then tell it about
// the reads whose values the analysis tracks (Read).
type Tracker struct {
	// Cap bounds the live reads per frame (DefaultCap if 0).
	Cap int
	// Drop, if set, is called with each entry that stops being live:
	// killed at a new loop iteration, evicted past Cap, or at Close.
	// Entries that move to the caller at a return are not dropped.
	Drop func(Entry)

	frames   []frame // frames[:n] are active; frames[0] is the thread outside any known function
	n        int
	nextStmt int32
	nextInst uint32
	version  uint64 // changes whenever the live reads do
}

// Version changes whenever the set of live reads does.
func (t *Tracker) Version() uint64 { return t.version }

func (t *Tracker) top() *frame {
	if t.n == 0 {
		t.push()
	}
	return &t.frames[t.n-1]
}

func (t *Tracker) push() {
	if t.n == len(t.frames) {
		t.frames = append(t.frames, frame{})
	}
	f := &t.frames[t.n]
	f.live, f.keys, f.seen = f.live[:0], f.keys[:0], f.seen[:0]
	f.index = nil
	f.loc, f.stmt, f.stmtStep, f.step = 0, 0, 0, 0
	t.nextInst++
	f.inst, f.iter = t.nextInst, 0
	t.n++
}

func (t *Tracker) capacity() int {
	if t.Cap > 0 {
		return t.Cap
	}
	return DefaultCap
}

// Step advances the tracker over the thread's next event e, before the
// analysis handles it: a new statement or loop iteration of the current
// frame, a call (Enter: an event of the caller's statement, then a new
// frame) or a return (Exit: the callee's live reads move to the caller,
// those of its last statement into the caller's current statement).
func (t *Tracker) Step(e *tracemodel.Event) {
	switch e.Kind {
	case tracemodel.Exit:
		t.pop()
		return
	case tracemodel.Enter:
		t.advance(t.top(), e)
		t.push()
		return
	}
	t.advance(t.top(), e)
}

// advance runs event e in frame f: a change of source location starts a
// statement, and a new loop iteration when the iteration ran that location
// already; an access or call that repeats one of the statement's starts a
// new iteration at the statement (a loop on one line).
func (t *Tracker) advance(f *frame, e *tracemodel.Event) {
	f.step++
	if e.Loc == 0 {
		return
	}
	if e.Loc != f.loc {
		if s, ok := f.firstRun(e.Loc); ok {
			t.newIteration(f, s)
		}
		f.ran(e.Loc)
		t.newStatement(f, e.Loc)
		f.keys = append(f.keys, key{e.Kind, e.Obj})
		return
	}
	k := key{e.Kind, e.Obj}
	for _, x := range f.keys {
		if x == k {
			t.newIteration(f, f.stmtStep)
			f.ran(e.Loc)
			t.newStatement(f, e.Loc)
			break
		}
	}
	if len(f.keys) < 64 {
		f.keys = append(f.keys, k)
	}
}

func (t *Tracker) newStatement(f *frame, loc int32) {
	t.nextStmt++
	f.loc, f.stmt, f.stmtStep = loc, t.nextStmt, f.step
	f.keys = f.keys[:0]
}

// newIteration ends the values of the loop iteration that began at step s
// of f: the reads made since, and the locations first run since.
func (t *Tracker) newIteration(f *frame, s int32) {
	f.iter++
	i := len(f.live)
	for i > 0 && f.live[i-1].step >= s {
		i--
	}
	t.drop(f.live[i:])
	f.live = f.live[:i]
	j := len(f.seen)
	for j > 0 && f.seen[j-1].step >= s {
		j--
		if f.index != nil {
			delete(f.index, f.seen[j].loc)
		}
	}
	f.seen = f.seen[:j]
}

// firstRun returns the step at which the current iteration first ran loc.
func (f *frame) firstRun(loc int32) (int32, bool) {
	if f.index != nil {
		i, ok := f.index[loc]
		if !ok {
			return 0, false
		}
		return f.seen[i].step, true
	}
	for _, x := range f.seen {
		if x.loc == loc {
			return x.step, true
		}
	}
	return 0, false
}

// ran notes that the current iteration runs loc from the current step
// (past 32 locations, through an index).
func (f *frame) ran(loc int32) {
	f.seen = append(f.seen, locStep{loc, f.step})
	switch {
	case f.index != nil:
		f.index[loc] = int32(len(f.seen) - 1)
	case len(f.seen) > 32:
		f.index = make(map[int32]int32, 64)
		for i, x := range f.seen {
			f.index[x.loc] = int32(i)
		}
	}
}

func (t *Tracker) drop(es []Entry) {
	if len(es) > 0 {
		t.version++
	}
	if t.Drop == nil {
		return
	}
	for _, e := range es {
		t.Drop(e)
	}
}

// pop returns from the top frame (an Exit without an Enter is ignored):
// the callee's live reads move into the caller's current statement, the
// call's: its returned value may carry any of them (`lock; v = x;
// unlock; return v;` returns the read of x from an earlier statement).
func (t *Tracker) pop() {
	if t.n <= 1 {
		return
	}
	c := &t.frames[t.n-1]
	p := &t.frames[t.n-2]
	t.version++
	for _, e := range c.live {
		t.add(p, Entry{Tag: e.Tag, Var: e.Var, step: p.step, stmt: p.stmt})
	}
	c.live = c.live[:0]
	t.n--
}

// add appends e to f's live reads, replacing one of the latest four that
// is the same read (kept strong if either was), evicting the oldest half
// past the cap. The live reads stay in step order.
func (t *Tracker) add(f *frame, e Entry) {
	t.version++
	for i := len(f.live) - 1; i >= 0 && i >= len(f.live)-4; i-- {
		x := f.live[i]
		if x.Tag == e.Tag && x.Var == e.Var {
			if e.stmt == 0 && x.stmt == f.stmt {
				e.stmt = x.stmt
			}
			copy(f.live[i:], f.live[i+1:])
			f.live[len(f.live)-1] = e
			t.drop([]Entry{x}) // the older of the two is not kept
			return
		}
	}
	if c := t.capacity(); len(f.live) >= c {
		k := c / 2
		t.drop(f.live[:k])
		f.live = append(f.live[:0], f.live[k:]...)
	}
	f.live = append(f.live, e)
}

// Read records that the thread's current event reads v, with the
// analysis's tag for the value.
func (t *Tracker) Read(v, tag int32) {
	f := t.top()
	t.add(f, Entry{Tag: tag, Var: v, step: f.step, stmt: f.stmt})
}

// Sources calls yield with each live read that mode lets feed a write of
// v at the current event, and whether its flow is strong (same
// statement); yield returns false to stop. In Update mode a weak flow
// comes only from the thread's latest read of v: a thread that read v
// again (`v++` in a later block) writes back what it read last.
func (t *Tracker) Sources(v int32, mode Mode, yield func(e Entry, strong bool) bool) {
	latest := false // the latest read of v was seen
	t.Live(func(e Entry, strong bool) bool {
		switch {
		case strong || mode == Invocation:
		case mode == Update && e.Var == v && !latest:
		default:
			if e.Var == v {
				latest = true
			}
			return true
		}
		if e.Var == v {
			latest = true
		}
		return yield(e, strong)
	})
}

// Live calls yield with every live read of the thread's active frames,
// latest first (innermost frame first: a caller runs nothing while its
// callee does), and whether its flow to the current event is strong.
func (t *Tracker) Live(yield func(e Entry, strong bool) bool) {
	for i := t.n - 1; i >= 0; i-- {
		f := &t.frames[i]
		for j := len(f.live) - 1; j >= 0; j-- {
			e := f.live[j]
			if !yield(e, e.stmt != 0 && e.stmt == f.stmt) {
				return
			}
		}
	}
}

// Returned calls yield with what the current event, an Exit, may
// return: every live read of the returning frame, and the reads of the
// callers' current statements (its arguments); yield returns false to
// stop.
func (t *Tracker) Returned(yield func(e Entry, strong bool) bool) {
	for i := t.n - 1; i >= 0; i-- {
		f := &t.frames[i]
		for j := len(f.live) - 1; j >= 0; j-- {
			e := f.live[j]
			strong := e.stmt != 0 && e.stmt == f.stmt
			if (i == t.n-1 || strong) && !yield(e, strong) {
				return
			}
		}
	}
}

// Ops appends to dst the operations the thread is in: one per active
// invocation from depth from on (0: the thread outside any function, 1:
// its outermost invocation), its number and loop iteration. Two events
// share an operation when some invocation ran both in one iteration of
// its loop.
func (t *Tracker) Ops(from int, dst []uint64) []uint64 {
	t.top()
	for i := from; i < t.n; i++ {
		f := &t.frames[i]
		dst = append(dst, uint64(f.inst)<<32|uint64(f.iter))
	}
	return dst
}

// Depth is the number of active invocations below the thread's root.
func (t *Tracker) Depth() int { return max(t.n-1, 0) }

// Close drops every live read (the thread ended).
func (t *Tracker) Close() {
	for i := 0; i < t.n; i++ {
		t.drop(t.frames[i].live)
		t.frames[i].live = t.frames[i].live[:0]
	}
	t.n = 0
}
