// Package units splits the threads of a trace into the units of Wang's
// dissertation (seeds/004, ch. 2; ../shared/specs/wang-dissertation.md
// S0.2, S5), for the analyses lockset, reduction and commitnode: a unit is
// a maximal run of consecutive events of one thread; transactions are the
// units expected to be atomic, the other units are non-transactional.
//
// # The units of a thread
//
//   - Boundaries belong to no unit and end the current one: Create, Join
//     and BarrierWait (the dissertation's start, join and barrier, which
//     also end thread periods), and the blocking waits Wait and SemWait
//     (a departure: the dissertation ignores wait/notify; a code region
//     that blocks until another thread acts cannot be serial with it, and
//     the block analysis ends its units there too), and Blocked.
//   - A transaction of package txn (an outermost atomic function frame or
//     Begin/End region) is a unit of kind Txn; a boundary splits it into
//     fragments, each a unit (S5).
//   - Outside transactions, a run of events during which the thread holds
//     a lock is a unit of kind CS, an implicit transaction (S5: it keeps
//     the non-transactional units free of lock operations, as the
//     dissertation assumes): it starts at the acquisition (or at the first
//     event after a boundary or a transaction that the thread leaves
//     holding a lock) and ends with the release after which the thread
//     holds none. A transaction that starts inside it is part of it: the
//     critical section is the outermost atomic region.
//   - Every other run of events is a unit of kind Plain (non-transactional).
//
// Every unit lies in one thread period (package analysis, fact
// thread-periods), since periods end at Create, Join and BarrierWait.
package units

import (
	"context"
	"fmt"
	"sort"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Kind says what a unit is.
type Kind uint8

// Kinds of units.
const (
	Txn   Kind = iota + 1 // (a fragment of) a transaction of package txn
	CS                    // an outermost critical section outside transactions
	Plain                 // non-transactional
)

// Transaction reports whether units of kind k are checked for atomicity.
func (k Kind) Transaction() bool { return k == Txn || k == CS }

// Unit is one unit of a thread.
type Unit struct {
	Thread int32
	Kind   Kind
	Txn    int32 // Kind Txn: index in txn.Set.Txns; -1 otherwise
	// First and Last are the positions (1-based) in the thread of its
	// first and last events.
	First, Last int32
	Period      int32 // index in analysis.Periods.All
	// Held are the locks the thread holds when the unit starts, in
	// acquisition order (their acquisitions are in earlier units).
	Held []Hold
}

// Events returns the indexes in m.Events of the unit's events, in order.
func (u *Unit) Events(m *tracemodel.Model) []int32 {
	return m.Threads[u.Thread-1].Events[u.First-1 : u.Last]
}

// Boundary reports whether an event of kind k belongs to no unit and ends
// the current one.
func Boundary(k tracemodel.Kind) bool {
	switch k {
	case tracemodel.Create, tracemodel.Join, tracemodel.BarrierWait, tracemodel.Wait,
		tracemodel.SemWait, tracemodel.Blocked:
		return true
	}
	return false
}

// Acquires reports whether an event of kind k acquires a lock.
func Acquires(k tracemodel.Kind) bool {
	switch k {
	case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock, tracemodel.RdLock:
		return true
	}
	return false
}

// Split returns the units of m, ordered by thread and position, with the
// transactions ts and the thread periods ps. It fails only when ctx is
// done.
func Split(ctx context.Context, m *tracemodel.Model, ts *txn.Set, ps *analysis.Periods) ([]Unit, error) {
	var out []Unit
	n := 0
	for ti := range m.Threads {
		th := &m.Threads[ti]
		var h Holds
		cur := -1 // index in out of the open unit
		for i, ev := range th.Events {
			m.Pace(i)
			if n++; n&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("splitting units: %w", err)
				}
			}
			e := &m.Events[ev]
			pos := int32(i + 1)
			if Boundary(e.Kind) {
				cur = -1
				h.Step(m, ev)
				continue
			}
			tx := ts.TxnOf(ev)
			if cur >= 0 {
				u := &out[cur]
				switch {
				case u.Kind == Txn && tx != u.Txn,
					u.Kind == Plain && (tx >= 0 || Acquires(e.Kind)):
					cur = -1
				}
			}
			if cur < 0 {
				u := Unit{Thread: int32(ti + 1), Txn: -1, First: pos, Period: int32(ps.Of(ev).ID), Held: h.Snapshot()}
				switch {
				case tx >= 0:
					u.Kind, u.Txn = Txn, tx
				case Acquires(e.Kind) || h.Len() > 0:
					u.Kind = CS
				default:
					u.Kind = Plain
				}
				out = append(out, u)
				cur = len(out) - 1
			}
			out[cur].Last = pos
			h.Step(m, ev)
			if out[cur].Kind == CS && h.Len() == 0 {
				cur = -1
			}
		}
	}
	return out, nil
}

// Hold is a lock a thread holds.
type Hold struct {
	Lock   int32 // object id
	Shared bool  // a rwlock held for reading
	Acq    int32 // the event that acquired it (or the Wait that reacquired it)
	depth  int32 // re-entrant acquisitions
}

// Holds tracks the locks one thread holds, replaying its lock events as
// the lock-sets fact does: re-entrant acquisitions are counted and folded,
// a release of a lock not held is ignored, a cond Wait with a mutex
// releases and reacquires it (a new hold).
type Holds struct{ hs []Hold }

// Change is what an event did to the holds.
type Change uint8

// Changes.
const (
	None       Change = iota
	Acquired          // a new hold (not re-entrant)
	Released          // a hold ended
	Reacquired        // a Wait released and reacquired its mutex
)

// Step applies event ev of the thread and returns what it did, with the
// hold concerned.
func (h *Holds) Step(m *tracemodel.Model, ev int32) (Change, Hold) {
	e := &m.Events[ev]
	switch e.Kind {
	case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock, tracemodel.RdLock:
		if i := h.find(e.Obj); i >= 0 {
			h.hs[i].depth++
			return None, h.hs[i]
		}
		nh := Hold{Lock: e.Obj, Shared: e.Kind == tracemodel.RdLock, Acq: ev, depth: 1}
		h.hs = append(h.hs, nh)
		return Acquired, nh
	case tracemodel.Unlock, tracemodel.RwUnlock:
		i := h.find(e.Obj)
		if i < 0 {
			return None, Hold{}
		}
		if h.hs[i].depth--; h.hs[i].depth > 0 {
			return None, h.hs[i]
		}
		old := h.hs[i]
		h.hs = append(h.hs[:i], h.hs[i+1:]...)
		return Released, old
	case tracemodel.Wait:
		if e.Obj2 == 0 {
			return None, Hold{}
		}
		if i := h.find(e.Obj2); i >= 0 {
			h.hs[i].Acq = ev
			return Reacquired, h.hs[i]
		}
		// A Wait on a mutex the thread does not hold returns holding it.
		nh := Hold{Lock: e.Obj2, Acq: ev, depth: 1}
		h.hs = append(h.hs, nh)
		return Acquired, nh
	}
	return None, Hold{}
}

func (h *Holds) find(l int32) int {
	for i := range h.hs {
		if h.hs[i].Lock == l {
			return i
		}
	}
	return -1
}

// Reset makes hs (a Snapshot, or Unit.Held) the holds.
func (h *Holds) Reset(hs []Hold) { h.hs = append(h.hs[:0], hs...) }

// Len returns the number of locks held.
func (h *Holds) Len() int { return len(h.hs) }

// Current returns the holds in acquisition order; the slice must not be
// modified and is valid until the next Step.
func (h *Holds) Current() []Hold { return h.hs }

// Snapshot returns a copy of the holds, nil if none.
func (h *Holds) Snapshot() []Hold {
	if len(h.hs) == 0 {
		return nil
	}
	return append([]Hold(nil), h.hs...)
}

// Segment is a stretch of a thread: a thread period (fact thread-periods:
// the thread split after Create, Join and BarrierWait) split further
// after each Signal, Broadcast, Wait, SemPost and SemWait. Other threads
// learn of a thread's events only through such events, and a thread learns
// of theirs only at them, so two accesses of different threads are
// concurrent (ordered neither way by the causal order of the trace) exactly
// when their segments are.
type Segment struct {
	Thread      int32
	First, Last int32 // positions (1-based) in the thread, inclusive
	Period      int32 // the thread period it is part of
}

// splitsSegment reports whether an event of kind k ends its segment.
func splitsSegment(k tracemodel.Kind) bool {
	switch k {
	case tracemodel.Signal, tracemodel.Broadcast, tracemodel.Wait, tracemodel.SemPost, tracemodel.SemWait:
		return true
	}
	return false
}

// Conc answers concurrency questions on segments quickly: the segments of
// one thread are totally ordered, so those of a thread that are concurrent
// with a given segment form a contiguous range.
//
// The dissertation's happens-before analysis (§3.2) orders thread periods
// by start, join and barriers only and ignores wait/notify; segments also
// follow condition variables and semaphores (a departure, as in the block
// analysis and the causal order of the trace model): data handed over
// with a signal, a semaphore or a condition-variable barrier is not
// concurrent with its producer.
type Conc struct {
	m        *tracemodel.Model
	All      []Segment
	index    []int32   // by segment: its index among its thread's segments
	byThread [][]int32 // by thread (model id - 1): its segments in order
	ranges   map[uint64][2]int32
}

// NewConc splits the thread periods ps of m into segments and indexes them.
func NewConc(m *tracemodel.Model, ps *analysis.Periods) *Conc {
	c := &Conc{m: m, byThread: make([][]int32, len(m.Threads)), ranges: map[uint64][2]int32{}}
	for _, p := range ps.All {
		first := p.First
		for pos := p.First; pos <= p.Last; pos++ {
			if pos < p.Last && !splitsSegment(m.EventAt(p.Thread, pos).Kind) {
				continue
			}
			t := int32(p.Thread)
			c.index = append(c.index, int32(len(c.byThread[t-1])))
			c.byThread[t-1] = append(c.byThread[t-1], int32(len(c.All)))
			c.All = append(c.All, Segment{Thread: t, First: first, Last: pos, Period: int32(p.ID)})
			first = pos + 1
		}
	}
	return c
}

// Of returns the segment of event ev.
func (c *Conc) Of(ev int32) int32 {
	e := &c.m.Events[ev]
	ss := c.byThread[e.Thread-1]
	i := sort.Search(len(ss), func(i int) bool { return c.All[ss[i]].Last >= e.Pos })
	return ss[i]
}

// Index returns the index of segment s among its thread's segments.
func (c *Conc) Index(s int32) int32 { return c.index[s] }

// before reports whether segment a happens before segment b.
func (c *Conc) before(a, b *Segment) bool {
	if a.Thread == b.Thread {
		return a.Last < b.First
	}
	return c.m.Clock(int(b.Thread), b.First, int(a.Thread)) >= a.Last
}

// Concurrent reports whether segments s and q of different threads are
// ordered neither way.
func (c *Conc) Concurrent(s, q int32) bool {
	a, b := &c.All[s], &c.All[q]
	return a.Thread != b.Thread && !c.before(a, b) && !c.before(b, a)
}

// Range returns the indexes [lo, hi) among the segments of thread (a model
// id) of those concurrent with segment s; empty for s's own thread.
// Ranges are cached: there are few segments, and many questions.
func (c *Conc) Range(s int32, thread int32) (lo, hi int) {
	k := uint64(s)<<32 | uint64(thread)
	if r, ok := c.ranges[k]; ok {
		return int(r[0]), int(r[1])
	}
	lo, hi = c.rangeOf(s, thread)
	c.ranges[k] = [2]int32{int32(lo), int32(hi)}
	return lo, hi
}

func (c *Conc) rangeOf(s int32, thread int32) (lo, hi int) {
	a := &c.All[s]
	if a.Thread == thread {
		return 0, 0
	}
	qs := c.byThread[thread-1]
	// q happens before s iff q's last event is causally before s's first.
	before := c.m.Clock(int(a.Thread), a.First, int(thread))
	lo = sort.Search(len(qs), func(i int) bool { return c.All[qs[i]].Last > before })
	// s happens before q iff s's last event is causally before q's first:
	// true from some q on.
	hi = lo + sort.Search(len(qs)-lo, func(i int) bool {
		q := &c.All[qs[lo+i]]
		return c.m.Clock(int(q.Thread), q.First, int(a.Thread)) >= a.Last
	})
	return lo, hi
}

// ThreadSegments returns the segments of thread (a model id), in order.
func (c *Conc) ThreadSegments(thread int32) []int32 { return c.byThread[thread-1] }

// Name describes a unit in messages: "function deposit", "label L",
// "critical section on m", "non-transactional code".
func Name(m *tracemodel.Model, ts *txn.Set, u *Unit) string {
	switch u.Kind {
	case Txn:
		in := ts.Info(m, u.Txn)
		return in.Kind + " " + in.Name
	case CS:
		if len(u.Held) > 0 {
			return "critical section on " + m.Objects[u.Held[0].Lock]
		}
		ev := m.Threads[u.Thread-1].Events[u.First-1]
		return "critical section on " + m.Objects[m.Events[ev].Obj]
	}
	return "non-transactional code"
}
