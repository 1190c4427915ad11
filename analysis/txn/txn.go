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
// Extract is one pass over the events: O(events + frames) time, two int32
// per event of memory.
package txn

import (
	"cmp"
	"context"
	"fmt"
	"slices"

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
	Frames []Frame
	Txns   []Txn // ordered by First
	// Labels reports whether the trace has Begin/End events.
	Labels bool

	frameOf []int32 // per event: innermost open frame, -1
	txnOf   []int32 // per event: index in Txns, -1
}

// FrameOf returns the innermost frame containing event ev (an index in
// Model.Events), -1 if none. The Enter/Begin and Exit/End events of a frame
// belong to it.
func (s *Set) FrameOf(ev int32) int32 { return s.frameOf[ev] }

// TxnOf returns the index in Txns of the outermost transaction containing
// event ev, -1 if ev is outside every transaction.
func (s *Set) TxnOf(ev int32) int32 { return s.txnOf[ev] }

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
func Extract(ctx context.Context, m *tracemodel.Model, opts Options) (*Set, error) {
	s := &Set{
		frameOf: make([]int32, len(m.Events)),
		txnOf:   make([]int32, len(m.Events)),
	}
	for i := range m.Events {
		m.Pace(i)
		if m.Events[i].Kind == tracemodel.Begin {
			s.Labels = true
			break
		}
	}
	not := set(opts.NotAtomic)
	only := set(opts.Atomic)
	atomic := func(kind FrameKind, name string, startRoutine bool) bool {
		switch {
		case not[name]:
			return false
		case len(only) > 0:
			return only[name]
		case s.Labels:
			return kind == Label
		}
		return kind == Func && !startRoutine && name != "main"
	}
	for ti := range m.Threads {
		th := &m.Threads[ti]
		var funcs, labels []int32 // open frames
		nAtomic := 0              // open atomic frames
		cur := int32(-1)          // current Txn
		innermost := func() int32 {
			f, l := int32(-1), int32(-1)
			if k := len(funcs); k > 0 {
				f = funcs[k-1]
			}
			if k := len(labels); k > 0 {
				l = labels[k-1]
			}
			if f < 0 || (l >= 0 && s.Frames[l].Start > s.Frames[f].Start) {
				return l
			}
			return f
		}
		for i, ev := range th.Events {
			m.Pace(i)
			if i&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("extracting transactions: %w", err)
				}
			}
			e := &m.Events[ev]
			var closed int32 = -1
			switch e.Kind {
			case tracemodel.Enter, tracemodel.Begin:
				kind := Func
				if e.Kind == tracemodel.Begin {
					kind = Label
				}
				name := m.Objects[e.Obj]
				start := i == 0 && e.Loc == 0 && kind == Func
				f := int32(len(s.Frames))
				s.Frames = append(s.Frames, Frame{
					Parent: innermost(), Thread: int32(ti + 1), Kind: kind, Name: name,
					Start: ev, End: -1, Atomic: atomic(kind, name, start),
				})
				if kind == Func {
					funcs = append(funcs, f)
				} else {
					labels = append(labels, f)
				}
				if s.Frames[f].Atomic {
					if nAtomic == 0 {
						cur = int32(len(s.Txns))
						s.Txns = append(s.Txns, Txn{Thread: int32(ti + 1), Frame: f, First: ev, Last: ev})
					}
					nAtomic++
				}
			case tracemodel.Exit:
				if k := len(funcs); k > 0 {
					closed = funcs[k-1]
					funcs = funcs[:k-1]
				}
			case tracemodel.End:
				name := m.Objects[e.Obj]
				for k := len(labels) - 1; k >= 0; k-- {
					if s.Frames[labels[k]].Name == name {
						closed = labels[k]
						labels = append(labels[:k], labels[k+1:]...)
						break
					}
				}
			}
			if closed >= 0 {
				s.Frames[closed].End = ev
				s.frameOf[ev] = closed
			} else {
				s.frameOf[ev] = innermost()
			}
			s.txnOf[ev] = cur
			if cur >= 0 {
				s.Txns[cur].Last = ev
			}
			if closed >= 0 && s.Frames[closed].Atomic {
				nAtomic--
				if nAtomic == 0 {
					cur = -1
				}
			}
		}
		if k := len(th.Events); k > 0 {
			last := th.Events[k-1]
			for _, f := range funcs {
				s.Frames[f].End = last
			}
			for _, f := range labels {
				s.Frames[f].End = last
			}
		}
	}
	sortTxns(s)
	return s, nil
}

// sortTxns orders Txns by First (they are built thread by thread) and
// renumbers txnOf.
func sortTxns(s *Set) {
	n := len(s.Txns)
	if n == 0 {
		return
	}
	perm := make([]int32, n) // new index of old
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Compare(s.Txns[a].First, s.Txns[b].First) })
	txns := make([]Txn, n)
	for newI, old := range idx {
		txns[newI] = s.Txns[old]
		perm[old] = int32(newI)
	}
	s.Txns = txns
	for i, t := range s.txnOf {
		if t >= 0 {
			s.txnOf[i] = perm[t]
		}
	}
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
