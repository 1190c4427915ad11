// Package txn extracts the transactions (the code regions expected to be
// atomic) of a parsed trace, for the atomicity analyses of package analysis
// (sidetrack, block). It is pure: it reads a tracemodel.Model and returns
// plain data.
//
// # Frames
//
// Every Enter/Exit pair of a thread is a function frame and every Begin/End
// pair a label frame. Exit closes the thread's innermost open function frame
// (as the parser does for Event.Func); End closes the innermost open label
// frame with the same label (an End without one is ignored). Frames still
// open when the thread's events end are closed by its last event. A frame's
// parent is the innermost frame open when it was opened.
//
// # Which frames are transactions
//
// Options.Atomic and Options.NotAtomic name functions and labels (exact
// names; they mirror the CLI flags --atomic and --not-atomic). The rule, in
// order of precedence:
//
//  1. A name in NotAtomic is never a transaction.
//  2. If Atomic is not empty, exactly the frames named in it are
//     transactions (functions and labels alike); nothing else is.
//  3. Otherwise, if the trace has any Begin event, exactly the label frames
//     are transactions: explicit annotations replace the default.
//  4. Otherwise every function frame is a transaction (the default of
//     SideTrack, "all methods are atomic", and of Wang's checkers), except
//     the threads' start routines, which span whole threads (Wang §2,
//     §7.2): a frame opened by a thread's first event at an unknown
//     location "?" (how mcpredict record enters a start routine), and any
//     frame of the function "main".
//
// # Transactions
//
// Transactions nest (a method calling a method); as in both papers only the
// outermost one is checked as a unit. A Txn is a maximal run of a thread's
// events during which at least one transaction frame is open: from the
// Enter/Begin that opens the outermost one to the Exit/End that closes the
// last one. The frames inside it are still available (Set.Frames, FrameOf)
// for blame assignment.
//
// Extract is one pass over the events in trace order: O(events + frames)
// time, O(frames) memory (nothing per event: an event is placed by its
// position in its thread). Stream is the same pass fed one event at a
// time as a trace is read, for an analysis that decides on a prefix.
package txn

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// Options selects the transactions; see the package comment.
type Options struct {
	Atomic    []string // functions or labels that are the only transactions
	NotAtomic []string // functions or labels that are never transactions
}

// FrameKind says what opened a frame.
type FrameKind uint8

// Frame kinds.
const (
	Func  FrameKind = iota + 1 // Enter/Exit
	Label                      // Begin/End
)

func (k FrameKind) String() string {
	switch k {
	case Func:
		return "function"
	case Label:
		return "label"
	}
	return "unknown"
}

// Frame is one function invocation or one labelled region of one thread.
type Frame struct {
	Parent int32 // index in Set.Frames of the enclosing frame, -1 if none
	Thread int32 // model thread id
	Kind   FrameKind
	Name   string // the function or label
	Start  int32  // index in Model.Events of the Enter or Begin event
	End    int32  // index of the Exit or End event, or of the thread's last event if never closed
	Atomic bool   // the frame is a transaction
}

// Txn is an outermost transaction: a maximal run of one thread's events
// inside at least one atomic frame.
type Txn struct {
	Thread int32 // model thread id
	Frame  int32 // the atomic frame that opened it (index in Set.Frames)
	First  int32 // index in Model.Events of its first event (the Enter or Begin)
	Last   int32 // index of its last event
}

// Set is the result of Extract.
type Set struct {
	Frames []Frame // in the order of their Enter or Begin
	Txns   []Txn   // ordered by First
	// Labels reports whether the trace has Begin/End events.
	Labels bool

	m  *tracemodel.Model
	th []threadIndex // by model thread id
}

// threadIndex locates a thread's events in its frames and transactions by
// their position in the thread: memory in the frames and transactions, not
// in the events.
type threadIndex struct {
	spans []span // its transactions, in order
	marks []mark // where its innermost frame changes, in order
	// hint is the span of the last TxnOf answered from spans (a scan in
	// trace order asks about the same or the next one).
	hint atomic.Int32
}

// span is a transaction of one thread: its first and last positions in
// the thread, and its index in Set.Txns.
type span struct{ first, last, x int32 }

// mark says that from position pos on, the innermost frame of a thread's
// events is frame (-1: none).
type mark struct{ pos, frame int32 }

// FrameOf returns the innermost frame containing event ev (an index in
// Model.Events), -1 if none. The Enter/Begin and Exit/End events of a frame
// belong to it.
func (s *Set) FrameOf(ev int32) int32 {
	e := &s.m.Events[ev]
	ms := s.th[e.Thread].marks
	i := sort.Search(len(ms), func(i int) bool { return ms[i].pos > e.Pos }) - 1
	if i < 0 {
		return -1
	}
	return ms[i].frame
}

// TxnOf returns the index in Txns of the outermost transaction containing
// event ev, -1 if ev is outside every transaction. A scan in trace order
// costs O(1) a call; otherwise a binary search of the thread's
// transactions. Safe for concurrent use.
func (s *Set) TxnOf(ev int32) int32 {
	e := &s.m.Events[ev]
	ti := &s.th[e.Thread]
	sp, p := ti.spans, e.Pos
	if len(sp) == 0 {
		return -1
	}
	h := int(ti.hint.Load())
	for k := h; k <= h+1 && k < len(sp); k++ {
		switch {
		case p < sp[k].first:
			if k > 0 && p > sp[k-1].last {
				return -1 // between two transactions
			}
		case p <= sp[k].last:
			if k != h {
				ti.hint.Store(int32(k))
			}
			return sp[k].x
		case k+1 == len(sp):
			return -1 // after the last
		}
	}
	i := sort.Search(len(sp), func(i int) bool { return sp[i].first > p }) - 1
	if i < 0 || p > sp[i].last {
		return -1
	}
	ti.hint.Store(int32(i))
	return sp[i].x
}

// Name returns the name of the frame of Txn t.
func (s *Set) Name(t int32) string { return s.Frames[s.Txns[t].Frame].Name }

// Stack returns frame f and its enclosing frames, outermost first.
func (s *Set) Stack(f int32) []int32 {
	var st []int32
	for ; f >= 0; f = s.Frames[f].Parent {
		st = append(st, f)
	}
	slices.Reverse(st)
	return st
}

// Extract computes the frames and transactions of m. It fails only when ctx
// is done.
//
// One pass over the events in trace order (a second one from the start
// only if the trace's first Begin comes after a function frame that the
// pass took for a transaction); the result's memory is O(frames), not
// O(events): a transaction's events are found by their positions in their
// thread.
func Extract(ctx context.Context, m *tracemodel.Model, opts Options) (*Set, error) {
	s, restart, err := extract(ctx, m, opts, false)
	if err == nil && restart {
		s, _, err = extract(ctx, m, opts, true)
	}
	return s, err
}

// tstate is a thread's state during extract.
type tstate struct {
	funcs, labels []int32 // open frames
	nAtomic       int     // open atomic frames
	cur           int32   // current span (index in threadIndex.spans), -1
	last          int32   // frame of its previous event (the last mark)
}

// extractor is the state of one pass of extract, fed one event at a time
// in trace order (Extract over a whole model, Stream as a trace is read).
type extractor struct {
	s         *Set
	m         *tracemodel.Model
	not, only map[string]bool
	byDefault bool // a function frame is atomic by the all-functions default
	ts        []tstate
}

func newExtractor(m *tracemodel.Model, opts Options, labels bool) *extractor {
	x := &extractor{s: &Set{m: m, Labels: labels}, m: m, not: set(opts.NotAtomic), only: set(opts.Atomic)}
	x.grow(int32(len(m.Threads)))
	return x
}

// grow makes room for the threads up to model id t.
func (x *extractor) grow(t int32) {
	for int32(len(x.ts)) <= t {
		x.ts = append(x.ts, tstate{cur: -1, last: -1})
		x.s.th = append(x.s.th, threadIndex{})
	}
}

func (x *extractor) atomic(kind FrameKind, name string, startRoutine bool) bool {
	switch {
	case x.not[name]:
		return false
	case len(x.only) > 0:
		return x.only[name]
	case x.s.Labels:
		return kind == Label
	}
	if kind == Func && !startRoutine && name != "main" {
		x.byDefault = true
		return true
	}
	return false
}

// add places event ev, the next in trace order. It returns the
// transaction of ev (-1 if none) and whether ev is its last event
// (closes its last atomic frame); restart is true, and nothing else is
// done, when ev is the trace's first Begin and a function frame was taken
// for a transaction by the all-functions default (the pass is void: the
// trace has labels).
func (x *extractor) add(ev int32) (txn int32, ends, restart bool) {
	s, m := x.s, x.m
	e := &m.Events[ev]
	t := e.Thread
	x.grow(t)
	st, ti := &x.ts[t], &s.th[t]
	innermost := func() int32 {
		f, l := int32(-1), int32(-1)
		if k := len(st.funcs); k > 0 {
			f = st.funcs[k-1]
		}
		if k := len(st.labels); k > 0 {
			l = st.labels[k-1]
		}
		if f < 0 || (l >= 0 && s.Frames[l].Start > s.Frames[f].Start) {
			return l
		}
		return f
	}
	var closed int32 = -1
	switch e.Kind {
	case tracemodel.Enter, tracemodel.Begin:
		kind := Func
		if e.Kind == tracemodel.Begin {
			kind = Label
			if !s.Labels {
				s.Labels = true
				if x.byDefault {
					return -1, false, true
				}
			}
		}
		name := m.Objects[e.Obj]
		start := e.Pos == 1 && e.Loc == 0 && kind == Func
		f := int32(len(s.Frames))
		s.Frames = append(s.Frames, Frame{
			Parent: innermost(), Thread: t, Kind: kind, Name: name,
			Start: ev, End: -1, Atomic: x.atomic(kind, name, start),
		})
		if kind == Func {
			st.funcs = append(st.funcs, f)
		} else {
			st.labels = append(st.labels, f)
		}
		if s.Frames[f].Atomic {
			if st.nAtomic == 0 {
				st.cur = int32(len(ti.spans))
				ti.spans = append(ti.spans, span{first: e.Pos, last: e.Pos, x: int32(len(s.Txns))})
				s.Txns = append(s.Txns, Txn{Thread: t, Frame: f, First: ev, Last: ev})
			}
			st.nAtomic++
		}
	case tracemodel.Exit:
		if k := len(st.funcs); k > 0 {
			closed = st.funcs[k-1]
			st.funcs = st.funcs[:k-1]
		}
	case tracemodel.End:
		name := m.Objects[e.Obj]
		for k := len(st.labels) - 1; k >= 0; k-- {
			if s.Frames[st.labels[k]].Name == name {
				closed = st.labels[k]
				st.labels = append(st.labels[:k], st.labels[k+1:]...)
				break
			}
		}
	}
	f := closed
	if closed >= 0 {
		s.Frames[closed].End = ev
	} else {
		f = innermost()
	}
	if f != st.last {
		ti.marks = append(ti.marks, mark{pos: e.Pos, frame: f})
		st.last = f
	}
	txn = -1
	if st.cur >= 0 {
		sp := &ti.spans[st.cur]
		sp.last = e.Pos
		s.Txns[sp.x].Last = ev
		txn = sp.x
	}
	if closed >= 0 && s.Frames[closed].Atomic {
		st.nAtomic--
		if st.nAtomic == 0 {
			st.cur = -1
			ends = true
		}
	}
	return txn, ends, false
}

// open reports whether transaction i is still open: no event closed it.
func (x *extractor) open(i int32) bool {
	tx := &x.s.Txns[i]
	st := &x.ts[tx.Thread]
	return st.cur >= 0 && x.s.th[tx.Thread].spans[st.cur].x == i
}

// finish closes the frames still open at the end of the trace by their
// thread's last event.
func (x *extractor) finish() {
	m := x.m
	for t := 1; t < len(x.ts); t++ {
		evs := m.Threads[t-1].Events
		if len(evs) == 0 {
			continue
		}
		last := evs[len(evs)-1]
		for _, f := range x.ts[t].funcs {
			x.s.Frames[f].End = last
		}
		for _, f := range x.ts[t].labels {
			x.s.Frames[f].End = last
		}
	}
}

// extract is Extract, with labels telling whether the trace has Begin
// events. Without labels, it reports restart when it finds a Begin after
// it has made a function frame a transaction by the all-functions default.
func extract(ctx context.Context, m *tracemodel.Model, opts Options, labels bool) (s *Set, restart bool, err error) {
	x := newExtractor(m, opts, labels)
	for ev := range m.Events {
		m.Pace(ev)
		if ev&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, false, fmt.Errorf("extracting transactions: %w", err)
			}
		}
		if _, _, restart := x.add(int32(ev)); restart {
			return nil, true, nil
		}
	}
	x.finish()
	return x.s, false, nil
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
