package analysis

import (
	"sort"
	"sync"
	"unsafe"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// facts are the shared facts of one run, each computed once.
type facts struct {
	m          *tracemodel.Model
	lockOnce   sync.Once
	locks      *LockSetIndex
	periodOnce sync.Once
	periods    *Periods
}

func (f *facts) get(fact Fact) {
	switch fact {
	case LockSets:
		f.lockSets()
	case ThreadPeriods:
		f.threadPeriods()
	}
}

// HeldLock is a lock a thread holds.
type HeldLock struct {
	Lock int32 // object id (index into Model.Objects)
	// Shared is set for a rwlock held for reading: read holds of
	// different threads do not exclude each other.
	Shared bool
	// Acquired is the event index of the outermost acquisition of the hold
	// (re-entrant re-acquisitions are folded into it).
	Acquired int32
}

// LockSetIndex gives the locks each thread holds at each of its events.
// It costs 4 bytes per event plus 4 per lock operation and 12 per lock
// held then, in flat slices of int32s (Model.Scratch: a spilled model's
// are in temporary files, so that a 100 M-event server trace does not
// keep them in the heap; a slice per lock set made that trace's lock sets
// take gigabytes).
type LockSetIndex struct {
	holds  []HeldLock // every set's holds, set after set
	start  []int32    // by set id: where its holds start in holds; set id+1's start ends it
	before []int32    // by event index: the set held just before it
	end    []int32    // by thread (model id - 1): the set held at the end of the trace
}

// set returns the holds of set id.
func (l *LockSetIndex) set(id int32) []HeldLock {
	return l.holds[l.start[id]:l.start[id+1]:l.start[id+1]]
}

// AtEnd returns the locks thread tid (a model id) holds at the end of the
// trace.
func (l *LockSetIndex) AtEnd(tid int) []HeldLock { return l.set(l.end[tid-1]) }

// Before returns the locks the thread of event ev holds just before ev, in
// acquisition order: for an acquisition, what the thread holds while it
// acquires; for an access, the locks protecting it. The slice must not be
// modified.
func (l *LockSetIndex) Before(ev int32) []HeldLock { return l.set(l.before[ev]) }

// SetID returns an id of the set Before(ev) returns: two events with the
// same id hold the same holds.
func (l *LockSetIndex) SetID(ev int32) int32 { return l.before[ev] }

// Holds reports whether hs holds lock.
func Holds(hs []HeldLock, lock int32) (HeldLock, bool) {
	for _, h := range hs {
		if h.Lock == lock {
			return h, true
		}
	}
	return HeldLock{}, false
}

// Excludes reports whether two hold sets of different threads cannot be
// held at once: they have a lock in common that one of them holds
// exclusively (a gate lock).
func Excludes(a, b []HeldLock) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Lock == y.Lock && !(x.Shared && y.Shared) {
				return true
			}
		}
	}
	return false
}

func (f *facts) lockSets() *LockSetIndex {
	f.lockOnce.Do(func() { f.locks = computeLockSets(f.m) })
	return f.locks
}

// computeLockSets replays the lock operations: Lock, TryLock, WrLock (and
// RdLock, shared) add a hold unless the thread holds the lock already
// (re-entrant: a depth count); Unlock and RwUnlock end it at depth 0; a
// cond Wait with a mutex releases and reacquires it, keeping the hold; a
// Blocked acquisition adds nothing. Each change of a thread's holds makes
// a new set (its holds in acquisition order), set 0 being the empty one.
// A first replay counts the sets and their holds, so that the second
// fills slices of their final size.
func computeLockSets(m *tracemodel.Model) *LockSetIndex {
	nsets, nholds := 1, 0
	replayLocks(m, func(_ int32, _ int, _ bool, _ int32, _ bool, _ int32, size int) int32 {
		if size > 0 {
			nsets++
			nholds += size
		}
		return 0
	})
	l := &LockSetIndex{
		holds:  heldLocks(m.Scratch(nholds * heldLockWords)),
		start:  m.Scratch(nsets + 1),
		before: m.Scratch(len(m.Events)),
	}
	next, fill := int32(1), int32(0)
	l.end = replayLocks(m, func(_ int32, i int, acquire bool, obj int32, shared bool, prev int32, size int) int32 {
		if size == 0 {
			return 0
		}
		id := next
		next++
		l.start[id] = fill
		for _, h := range l.set(prev) {
			if acquire || h.Lock != obj {
				l.holds[fill] = h
				fill++
			}
		}
		if acquire {
			l.holds[fill] = HeldLock{Lock: obj, Shared: shared, Acquired: int32(i)}
			fill++
		}
		l.start[id+1] = fill
		return id
	}, l.before)
	return l
}

// heldLockWords is the size of a HeldLock in int32s.
const heldLockWords = int(unsafe.Sizeof(HeldLock{}) / 4)

// heldLocks views w as HeldLocks (a HeldLock is three 4-byte words).
func heldLocks(w []int32) []HeldLock {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*HeldLock)(unsafe.Pointer(unsafe.SliceData(w))), len(w)/heldLockWords)
}

// replayLocks replays the lock operations of m (computeLockSets). At each
// change of a thread's holds it calls change with the thread (model id -
// 1), the event index, whether the lock is acquired or released, the
// lock, whether the hold is shared, the id of the thread's set until then
// and the size of the new set (0: the empty set, which change must not
// number); change returns the new set's id. If before is given, before[i] is set to the id of the set held just
// before event i. It returns each thread's set at the end.
func replayLocks(m *tracemodel.Model, change func(t int32, i int, acquire bool, obj int32, shared bool, prev int32, size int) int32, before ...[]int32) []int32 {
	cur := make([]int32, len(m.Threads))
	size := make([]int, len(m.Threads))
	type depthKey struct{ thread, lock int32 }
	depth := map[depthKey]int32{}
	for i := range m.Events {
		m.Pace(i)
		e := &m.Events[i]
		t := e.Thread - 1
		if len(before) > 0 {
			before[0][i] = cur[t]
		}
		switch e.Kind {
		case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock, tracemodel.RdLock:
			k := depthKey{e.Thread, e.Obj}
			depth[k]++
			if depth[k] > 1 {
				continue
			}
			size[t]++
			cur[t] = change(t, i, true, e.Obj, e.Kind == tracemodel.RdLock, cur[t], size[t])
		case tracemodel.Unlock, tracemodel.RwUnlock:
			k := depthKey{e.Thread, e.Obj}
			if depth[k] == 0 {
				continue
			}
			depth[k]--
			if depth[k] > 0 {
				continue
			}
			delete(depth, k)
			size[t]--
			cur[t] = change(t, i, false, e.Obj, false, cur[t], size[t])
		}
	}
	return cur
}

// Period is a thread period (Wang's dissertation §3.2): a stretch of a
// thread between Create, Join and BarrierWait events, which end it.
type Period struct {
	ID          int   // index into Periods.All
	Thread      int   // model thread id
	First, Last int32 // positions (1-based) of its first and last events in the thread
}

// Periods are the thread periods of a trace.
type Periods struct {
	m        *tracemodel.Model
	All      []Period
	byThread [][]int // per thread: ids of its periods in order
}

// Of returns the period of the event at index ev.
func (p *Periods) Of(ev int32) *Period {
	e := &p.m.Events[ev]
	ids := p.byThread[e.Thread-1]
	i := sort.Search(len(ids), func(i int) bool { return p.All[ids[i]].Last >= e.Pos })
	return &p.All[ids[i]]
}

// Before reports whether period a happens before period b: a's last event
// is causally before b's first (the synchronization order).
func (p *Periods) Before(a, b *Period) bool {
	if a.Thread == b.Thread {
		return a.Last < b.First
	}
	return p.m.Clock(b.Thread, b.First, a.Thread) >= a.Last
}

// Concurrent reports whether two periods of different threads are ordered
// neither way.
func (p *Periods) Concurrent(a, b *Period) bool {
	return a.Thread != b.Thread && !p.Before(a, b) && !p.Before(b, a)
}

func (f *facts) threadPeriods() *Periods {
	f.periodOnce.Do(func() {
		m := f.m
		p := &Periods{m: m, byThread: make([][]int, len(m.Threads))}
		for t := range m.Threads {
			first := int32(1)
			n := int32(len(m.Threads[t].Events))
			for pos := int32(1); pos <= n; pos++ {
				k := m.EventAt(t+1, pos).Kind
				if k == tracemodel.Create || k == tracemodel.Join || k == tracemodel.BarrierWait || pos == n {
					p.byThread[t] = append(p.byThread[t], len(p.All))
					p.All = append(p.All, Period{ID: len(p.All), Thread: t + 1, First: first, Last: pos})
					first = pos + 1
				}
			}
		}
		f.periods = p
	})
	return f.periods
}
