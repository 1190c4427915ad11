// Package sidetrack implements SideTrack (Yi, Sadowski and Flanagan,
// "SideTrack: Generalizing Dynamic Atomicity Analysis", PADTAD 2009;
// ../shared/seeds/000_*): a predictive atomicity analysis over the
// synchronization of a trace that reports only violations some feasible
// trace of the program exhibits.
//
// Whenever a transaction acquires the same lock twice, the stretch between
// the two acquires is a vulnerable window: a culprit acquire of that lock
// by another thread scheduled inside it makes the transaction
// unserializable. Analyze runs the online algorithm of the paper's §3
// (Figure 6) over the trace in observed order with vector clocks of the
// happens-before relation (program order, lock release→acquire,
// fork/join) and reports
//
//   - "in": the culprit ran inside the window in the observed trace: the
//     last release of the lock at the second acquire is not before the
//     transaction's clock ([SECOND ACQUIRE], R_m ⋢ C_t);
//   - "before": the culprit ran before the window, but concurrently with its
//     first acquire, so it could have run after it ([FIRST ACQUIRE] records
//     the lock as interfering, [SECOND ACQUIRE] reports);
//   - "after": the culprit ran after the window and is not ordered after
//     its second acquire, so it could have run before it (the common
//     antecedent V_m ⋢ C_t of every acquire).
//
// Each error carries the blame of §4: the transactions (methods or
// labels) in the common prefix of the call stacks of the window's two
// acquires, innermost last (invocations, not names, are compared: two
// calls of one method are two frames).
//
// Transactions come from package txn (Enter/Exit and Begin/End, chosen
// by Options.Atomic and Options.NotAtomic; see txn for the precedence).
// As in the paper's implementation, transactions nest and the thread is in
// a transaction while any is open (H_t is reset when the outermost one
// begins); re-entrant acquires and releases are ignored.
//
// # What it does not do
//
// Reads and writes are not analysed: like the paper it assumes the program
// is race-free and treats every critical section as conflicting with every
// other on the same lock. It predicts only windows between two acquires of
// one lock; use the block package or McPatom for data-centric violations.
//
// # Departures from the paper
//
//   - The trace format has more synchronization than the paper's
//     acquire/release/fork/join. Signal/Broadcast→Wait, SemPost→SemWait
//     (after the latest post, as in tracemodel) and BarrierWait (a thread's
//     next event is after every arrival so far) join clocks like fork
//     does; adding happens-before edges only removes reports. A cond Wait
//     with a mutex is a release before it (performed when another thread
//     takes the mutex over, as the parser allows) and an acquire after it,
//     checked like any acquire.
//   - RdLock is a read acquire: it is ordered after the previous write
//     release but is neither a window end nor a culprit (two readers
//     commute); WrLock, Lock and TryLock are exclusive acquires.
//   - Errors are deduplicated: one Error per kind, lock and source
//     locations of the events, with Count instances.
//
// # Complexity
//
// One pass over the events. A lock operation costs O(T) for the vector
// clocks of T threads plus O(h) for the h locks held in the current
// transaction; every other event O(1). Memory: O(T) per thread and per
// lock. Transaction extraction (package txn) adds two int32 per event.
package sidetrack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Kinds of Error, as named in the paper.
const (
	Before = "before"
	In     = "in"
	After  = "after"
)

// Roles of the events of an Error.
const (
	RoleFirst   = "first"   // the transaction's acquire that opens the window
	RoleSecond  = "second"  // the transaction's acquire of the same lock that closes it
	RoleCulprit = "culprit" // the other thread's acquire that can run inside the window
)

// Options selects the transactions (see package txn).
type Options struct {
	Atomic    []string // if not empty, only these functions or labels are transactions
	NotAtomic []string // these functions or labels are never transactions
}

// EventRef names an event of the trace.
type EventRef = txn.EventRef

// TxnInfo describes a transaction.
type TxnInfo = txn.Info

// Error is one predicted atomicity violation (deduplicated).
type Error struct {
	Kind string // Before, In or After
	// Var is the lock whose vulnerable window the culprit can split
	// (SideTrack reasons about locks, not data).
	Var string
	// Txn is the (outermost) transaction containing the window, of the
	// first instance found.
	Txn TxnInfo
	// Events are the window's two acquires (RoleFirst, RoleSecond) and the
	// culprit acquire (RoleCulprit), in trace order.
	Events []EventRef
	// Blame lists the transactions (functions or labels) that are not
	// atomic: those in the common prefix of the call stacks of the two
	// acquires, outermost first (paper §4, "Blame assignment").
	Blame []string
	// Count is the number of instances with these kind, lock and source
	// locations.
	Count   int
	Message string
}

// Analyze runs SideTrack on m. The errors are in order of first detection
// (trace order of the event that revealed them). It fails only if ctx is
// done.
func Analyze(ctx context.Context, m *tracemodel.Model, opts Options) ([]Error, error) {
	ts, err := txn.Extract(ctx, m, txn.Options{Atomic: opts.Atomic, NotAtomic: opts.NotAtomic})
	if err != nil {
		return nil, fmt.Errorf("sidetrack: %w", err)
	}
	return Check(ctx, m, ts)
}

// Check runs SideTrack on m with the transactions ts (txn.Extract of m),
// as Analyze does.
func Check(ctx context.Context, m *tracemodel.Model, ts *txn.Set) ([]Error, error) {
	if ts == nil {
		return nil, errors.New("sidetrack: no transactions")
	}
	a := newAnalyzer(m, ts)
	for i := range m.Events {
		m.Pace(i)
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("sidetrack: %w", err)
			}
		}
		a.event(int32(i))
	}
	return a.out, nil
}

type vc []uint32

func (v vc) leq(w vc) bool {
	for i, x := range v {
		if x > w[i] {
			return false
		}
	}
	return true
}

func (v vc) join(w vc) {
	for i, x := range w {
		if x > v[i] {
			v[i] = x
		}
	}
}

// window is a vulnerable window: two acquires of one lock in a transaction.
type window struct {
	txn           int32
	first, second int32 // events
}

type lockState struct {
	a, r, v vc // last exclusive acquire, last release, last window (nil until set)
	aEv     int32
	rAcq    int32 // acquire event of the hold the last release ended
	win     window
	holder  int32 // thread holding it exclusively, 0 if none
}

// held is a lock the thread acquired in its current transaction (H_t) or
// holds.
type txnLock struct {
	lock        int32
	last        int32 // event of the latest acquire in the transaction
	interfering bool  // in I_t
	culprit     int32 // the concurrent previous acquire that made it interfering
}

type hold struct {
	lock  int32
	count int32
	read  bool
	acq   int32 // outermost acquire event
}

type threadState struct {
	c        vc
	txn      int32 // current transaction, -1
	h        []txnLock
	holds    []hold
	barrier  int32 // pending barrier join, 0 if none
	waitHold int32 // recursive count of a mutex released by a takeover
}

type analyzer struct {
	m      *tracemodel.Model
	ts     *txn.Set
	th     []threadState
	locks  []*lockState // by object id
	signal map[int32]vc // cond, semaphore: latest post
	bar    map[int32]vc // barrier: join of arrivals
	out    []Error
	index  map[string]int
}

func newAnalyzer(m *tracemodel.Model, ts *txn.Set) *analyzer {
	n := len(m.Threads)
	a := &analyzer{
		m: m, ts: ts,
		th:     make([]threadState, n),
		locks:  make([]*lockState, len(m.Objects)),
		signal: map[int32]vc{},
		bar:    map[int32]vc{},
		index:  map[string]int{},
	}
	for i := range a.th {
		a.th[i].c = make(vc, n)
		a.th[i].c[i] = 1 // inc_t(c0)
		a.th[i].txn = -1
	}
	return a
}

func (a *analyzer) lock(obj int32) *lockState {
	l := a.locks[obj]
	if l == nil {
		n := len(a.m.Threads)
		l = &lockState{aEv: -1, rAcq: -1}
		l.a, l.r = make(vc, n), make(vc, n)
		a.locks[obj] = l
	}
	return l
}

func (a *analyzer) tick(t int32) { a.th[t-1].c[t-1]++ }

func (a *analyzer) event(ev int32) {
	e := &a.m.Events[ev]
	t := e.Thread
	st := &a.th[t-1]
	if b := st.barrier; b != 0 {
		st.c.join(a.bar[b])
		st.barrier = 0
	}
	if tx := a.ts.TxnOf(ev); tx != st.txn {
		st.txn = tx
		st.h = st.h[:0] // [ENTER]: H_t := ∅, I_t := ∅
	}
	switch e.Kind {
	case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock:
		a.acquire(ev, t, e.Obj, false)
	case tracemodel.RdLock:
		a.acquire(ev, t, e.Obj, true)
	case tracemodel.Unlock, tracemodel.RwUnlock:
		a.release(t, e.Obj)
	case tracemodel.Create:
		u := e.Obj
		if evs := a.m.Threads[u-1].Events; len(evs) == 0 || evs[0] > ev {
			a.th[u-1].c.join(st.c) // [FORK]
		}
		a.tick(t)
	case tracemodel.Join:
		u := e.Obj
		st.c.join(a.th[u-1].c) // [JOIN]
		a.tick(u)
	case tracemodel.Signal, tracemodel.Broadcast, tracemodel.SemPost:
		s := a.signal[e.Obj]
		if s == nil {
			s = make(vc, len(a.th))
			a.signal[e.Obj] = s
		}
		copy(s, st.c)
		a.tick(t)
	case tracemodel.Wait, tracemodel.SemWait:
		if e.Kind == tracemodel.Wait && e.Obj2 != 0 {
			cnt := int32(1)
			if h := a.findHold(t, e.Obj2); h != nil { // the implicit release
				cnt, h.count = h.count, 1
				a.release(t, e.Obj2)
			} else if st.waitHold > 0 { // released by a takeover
				cnt, st.waitHold = st.waitHold, 0
			}
			if s := a.signal[e.Obj]; s != nil {
				st.c.join(s)
			}
			a.acquire(ev, t, e.Obj2, false) // the implicit acquire
			if h := a.findHold(t, e.Obj2); h != nil {
				h.count = cnt
			}
			return
		}
		if s := a.signal[e.Obj]; s != nil {
			st.c.join(s)
		}
	case tracemodel.BarrierWait:
		b := a.bar[e.Obj]
		if b == nil {
			b = make(vc, len(a.th))
			a.bar[e.Obj] = b
		}
		b.join(st.c)
		a.tick(t)
		st.barrier = e.Obj
	}
}

func (a *analyzer) findHold(t, lock int32) *hold {
	hs := a.th[t-1].holds
	for i := range hs {
		if hs[i].lock == lock {
			return &hs[i]
		}
	}
	return nil
}

// takeOver releases the exclusive hold of l by its holder, which is blocked
// in a cond wait: the parser lets another thread lock the mutex then, and
// the holder's Wait line comes later. The holder's recursive count is kept
// for the acquire after its Wait.
func (a *analyzer) takeOver(l *lockState, obj int32) {
	u := l.holder
	h := a.findHold(u, obj)
	if h == nil {
		l.holder = 0
		return
	}
	a.th[u-1].waitHold = h.count
	h.count = 1
	a.release(u, obj)
}

func (a *analyzer) acquire(ev, t, obj int32, read bool) {
	st := &a.th[t-1]
	if h := a.findHold(t, obj); h != nil {
		h.count++ // re-entrant: filtered out, as RoadRunner does
		return
	}
	l := a.lock(obj)
	if !read && l.holder != 0 && l.holder != t {
		a.takeOver(l, obj)
	}
	st.holds = append(st.holds, hold{lock: obj, count: 1, read: read, acq: ev})
	if read {
		st.c.join(l.r)
		return
	}
	l.holder = t

	c := st.c // C_t before the join with R_m
	if l.v != nil && !l.v.leq(c) {
		a.report(After, obj, l.win.txn, l.win.first, l.win.second, ev)
	}
	second := false
	if st.txn >= 0 {
		var tl *txnLock
		for i := range st.h {
			if st.h[i].lock == obj {
				tl = &st.h[i]
				break
			}
		}
		if tl == nil { // [FIRST ACQUIRE]
			x := txnLock{lock: obj, last: ev, culprit: -1}
			if l.aEv >= 0 && !l.a.leq(c) {
				x.interfering, x.culprit = true, l.aEv
			}
			st.h = append(st.h, x)
		} else { // [SECOND ACQUIRE]
			second = true
			if tl.interfering {
				a.report(Before, obj, st.txn, tl.last, ev, tl.culprit)
			}
			if l.rAcq >= 0 && !l.r.leq(c) {
				a.report(In, obj, st.txn, tl.last, ev, l.rAcq)
			}
			l.win = window{txn: st.txn, first: tl.last, second: ev}
			tl.last = ev
		}
	}
	c.join(l.r)
	copy(l.a, c)
	l.aEv = ev
	if second {
		if l.v == nil {
			l.v = make(vc, len(c))
		}
		copy(l.v, c)
	}
}

func (a *analyzer) release(t, obj int32) {
	st := &a.th[t-1]
	hs := st.holds
	i := -1
	for k := range hs {
		if hs[k].lock == obj {
			i = k
			break
		}
	}
	if i < 0 { // a release the parser accepted but we do not track (suspended hold)
		return
	}
	h := &hs[i]
	if h.count > 1 {
		h.count--
		return
	}
	l := a.lock(obj)
	if h.read {
		l.r.join(st.c)
	} else {
		copy(l.r, st.c)
		l.holder = 0
	}
	l.rAcq = h.acq
	st.holds = append(hs[:i], hs[i+1:]...)
	a.tick(t)
}

// report records an error of kind k on lock obj for the window (first,
// second) of transaction tx, with the culprit acquire.
func (a *analyzer) report(k string, obj, tx, first, second, culprit int32) {
	m := a.m
	evs := []EventRef{
		txn.Ref(m, first, RoleFirst),
		txn.Ref(m, second, RoleSecond),
		txn.Ref(m, culprit, RoleCulprit),
	}
	slices.SortStableFunc(evs, func(x, y EventRef) int { return x.Line - y.Line })
	var key strings.Builder
	key.WriteString(k)
	key.WriteString("|" + m.Objects[obj])
	for _, r := range evs {
		fmt.Fprintf(&key, "|%s@%s", r.Role, r.Where())
	}
	blame := a.blame(first, second)
	if i, ok := a.index[key.String()]; ok {
		e := &a.out[i]
		e.Count++
		for _, b := range blame {
			if !slices.Contains(e.Blame, b) {
				e.Blame = append(e.Blame, b)
			}
		}
		return
	}
	info := a.ts.Info(m, tx)
	var f, s, c EventRef
	for _, r := range evs {
		switch r.Role {
		case RoleFirst:
			f = r
		case RoleSecond:
			s = r
		default:
			c = r
		}
	}
	where := map[string]string{
		Before: "ran before the window but concurrently with its first acquire",
		In:     "ran inside the window in the observed trace",
		After:  "ran after the window but is not ordered after its second acquire",
	}[k]
	msg := fmt.Sprintf("%s-error on lock %s: thread %s's acquire at %s (line %d) %s, so it can run between the acquires at %s (line %d) and %s (line %d) in %s %s of thread %s; not atomic: %s",
		k, m.Objects[obj], c.Thread, c.Where(), c.Line, where, f.Where(), f.Line, s.Where(), s.Line, info.Kind, info.Name, info.Thread, strings.Join(blame, ", "))
	a.index[key.String()] = len(a.out)
	a.out = append(a.out, Error{
		Kind: k, Var: m.Objects[obj], Txn: info, Events: evs, Blame: blame, Count: 1, Message: msg,
	})
}

// blame returns the names of the transaction frames in the common prefix of
// the call stacks at events x and y (same thread), outermost first.
func (a *analyzer) blame(x, y int32) []string {
	sx := a.ts.Stack(a.ts.FrameOf(x))
	sy := a.ts.Stack(a.ts.FrameOf(y))
	var out []string
	for i := 0; i < len(sx) && i < len(sy) && sx[i] == sy[i]; i++ {
		if f := a.ts.Frames[sx[i]]; f.Atomic {
			out = append(out, f.Name)
		}
	}
	return out
}
