// Package conflict checks that the transactions of the observed trace are
// conflict-serializable: that the trace is equivalent, by swapping adjacent
// non-conflicting events of different threads, to a trace in which every
// transaction runs without interruption. It is the check of Velodrome
// (Flanagan, Freund and Yi, PLDI 2008) with the linear-time vector-clock
// algorithm of Aerodrome (Mathur and Viswanathan, ASPLOS 2020), over
// reads, writes and every synchronization event of the trace format, for
// transactions of any number of variables and locks.
//
// # Transactions and the conflict graph
//
// The transactions are those of package txn (Begin/End labels when the
// trace has any, else function invocations; --atomic, --not-atomic): each
// outermost one is a node of the transaction graph, and so is every event
// outside transactions (a unary transaction). An edge A → B joins the
// transactions of two events of different threads that conflict, A's
// first in the trace, and each transaction of a thread to its next one
// (program order). The trace is conflict-serializable if and only if the
// graph is acyclic; a cycle through a transaction T shows that T cannot be
// moved to run at once: some event of T precedes, through the cycle, an
// event of another transaction that precedes a later event of T.
//
// # What conflicts
//
// Two accesses of different threads to one object conflict unless both
// read it (accessor lists them): reads and writes of variables; every
// operation of a mutex (a write of the lock, as Velodrome takes every two
// operations of a lock to conflict; for acyclicity this is the same as
// RAPID's release→acquire edges, because the operations of one lock by two
// threads alternate); a read hold of a rwlock is a read; Signal,
// Broadcast, SemPost and SemWait write their object and Wait reads its
// condition variable (and writes its mutex); BarrierWait writes the
// barrier and the thread's next event reads it; Create writes the child
// and the child's first event reads it; Join orders the joiner after the
// child's events before it. Accesses of synchronization objects as
// variables, Alloc, Free, Enter, Exit, Begin, End and Blocked conflict
// with nothing.
//
// # The algorithm
//
// One pass in trace order (Check). Each thread t has a vector clock C_t:
// C_t[u] is the index of the latest transaction of thread u that reaches
// t's current one in the graph; t's index grows at each Begin of a
// transaction (a unary transaction keeps the index of the transaction
// before it: no check ever asks about a finished one). Each object keeps
// the clock of its last write and the join of its reads (and of its reads
// without each reader's own entry, to check a writer against other
// threads only). An event of an open transaction T of thread t that
// receives a clock that already knows T (its entry for t is at least T's
// index) closes a cycle through T: that is a finding. A clock that an open
// transaction X has given away can become stale when X later receives more
// (what reaches X reaches everything X reached): while X is open, its
// writes and reads are not copied but point to its live clock; at its end,
// if X received anything, every thread clock and every object clock that
// knows X gets X's final clock (the objects that may know X are recorded
// when their clock is set, for each open transaction it knows). The
// handshake at the end can itself close a cycle. This is Aerodrome's
// algorithm with one difference: at the end of a transaction that received
// nothing, RAPID's Aerodrome forgets its writes ("a fresh variable") — which
// loses the edge from that transaction to later readers when an earlier
// transaction of its thread, or its own Begin, is reached from a
// transaction that is still open. RAPID's Aerodrome then misses the cycle
// (testdata/fresh.std: AerodromeBasic and Velodrome report it); here such
// writes keep the transaction's clock.
//
// Cost: O(T) per event that receives a clock or is registered with the
// open transactions it knows (T threads), O(T) per object and per thread
// of memory, and O(T + objects touched) at the end of a transaction that
// received something. A trace without transactions costs O(T) per
// conflicting event and never registers anything.
//
// # Findings
//
// After a cycle closes, its closing edge is left out (the pass goes on as
// if the event had not received that clock), so every later finding is
// another cycle of the graph. For each cycle the pass reports the
// transaction it closed on: its thread, Begin and End, the event where the
// cycle closed, and a witness — a cycle through the transaction with the
// fewest conflict edges, rebuilt by a breadth-first search of the graph
// of the trace up to that event (witness.go), from the start of the
// transactions that overlap it (a cycle through T never leaves them). Each
// conflict edge of the witness is shown as its two events, with their
// objects and source locations. Findings are deduplicated by the
// transaction's Begin location and the closing event's location (one
// witness each, with a count); at most MaxWitnesses are rebuilt, the
// others name the closing event only.
//
// # Reading as a stream
//
// Stream (stream.go) is CheckFirst on a trace as it is parsed
// (tracemodel.Options.Visit): mcpredict run --analysis conflict --first
// stops reading once the first cycle is found and the prefix decides the
// report, which is then CheckFirst's of the whole trace (the conditions,
// and the one departure, are in Stream's comment). The pass keeps no state
// that needs the whole trace: clocks grow as threads appear, objects are
// numbered by kind as the trace names them, a barrier's departure is
// known from the thread's previous event.
//
// # What it does not do
//
// It checks the observed order only, as Velodrome does: a transaction
// that a feasible reordering of the trace would split (SideTrack's
// before- and after-errors, McPatom's predicted violations) is not
// reported. Conflict-serializability is stronger than atomicity of
// values: a cycle whose conflicts do not change what the transaction
// computes (two writes of the same value, a read whose value is not used)
// is reported all the same. Every function invocation is a transaction by
// default, as for sidetrack and block; name the atomic ones with --atomic.
package conflict

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// MaxWitnesses is the number of distinct findings whose witness cycle is
// rebuilt (each costs a pass over the trace since the oldest transaction
// overlapping the one reported).
const MaxWitnesses = 256

// Options selects the transactions (see package txn) and how far to go.
type Options struct {
	Atomic    []string // if not empty, only these functions or labels are transactions
	NotAtomic []string // these functions or labels are never transactions
	// First stops at the first cycle (with its witness): a CI gate that
	// needs only to know whether the trace is serializable, as RAPID's
	// Aerodrome does.
	First bool
}

// Roles of the events of a Violation.
const (
	RoleBegin = "begin" // the transaction's first event (Begin or Enter)
	RoleEnd   = "end"   // its last event (End or Exit, or the thread's last)
	RoleOut   = "out"   // an event whose conflict leaves its transaction along the cycle
	RoleIn    = "in"    // an event whose conflict enters its transaction along the cycle
	RoleClose = "close" // the event at which the cycle closed (no witness rebuilt)
)

// EventRef names an event of the trace.
type EventRef = txn.EventRef

// A Step is one conflict edge of a witness cycle: From, an event of one
// transaction, precedes and conflicts with To, an event of the next
// transaction along the cycle, on Object. Program-order steps (from a
// transaction to a later one of its thread) are not listed.
type Step struct {
	From, To EventRef
	Object   string

	fromEv, toEv int32 // event indexes
}

// Violation is a transaction that is not conflict-serializable in the
// observed trace (deduplicated).
type Violation struct {
	Txn   txn.Info
	Begin EventRef // the transaction's first event
	End   EventRef // its last event
	// Close is the event at which the cycle closed (an event of the
	// transaction, or the End of another transaction of the cycle).
	Close EventRef
	// Cycle is the witness: from an event of the transaction back to one
	// of its events, through the other transactions; nil when not rebuilt
	// (more than MaxWitnesses findings).
	Cycle []Step
	// Threads are the handles of the threads of the cycle's transactions,
	// the transaction's first.
	Threads []string
	// Count is the number of instances with the same Begin and Close
	// locations.
	Count   int
	Message string

	txn            int32 // index in txn.Set.Txns of the first instance
	close          int32 // event index of Close
	beginEv, endEv int32
}

// TxnIndex returns the index in the transaction set of the transaction of
// the violation's first instance.
func (v *Violation) TxnIndex() int32 { return v.txn }

// Stats describe a pass.
type Stats struct {
	Txns      int // transactions checked (outermost)
	Cycles    int // cycles found (instances, before deduplication)
	Witnesses int // witness cycles rebuilt
}

// Analyze extracts the transactions of m and checks them.
func Analyze(ctx context.Context, m *tracemodel.Model, opts Options) ([]Violation, Stats, error) {
	ts, err := txn.Extract(ctx, m, txn.Options{Atomic: opts.Atomic, NotAtomic: opts.NotAtomic})
	if err != nil {
		return nil, Stats{}, fmt.Errorf("conflict: %w", err)
	}
	return check(ctx, m, ts, opts.First)
}

// Check checks the transactions ts of m (txn.Extract of m). The
// violations are in the order their cycles closed. It fails only if ctx
// is done.
func Check(ctx context.Context, m *tracemodel.Model, ts *txn.Set) ([]Violation, Stats, error) {
	return check(ctx, m, ts, false)
}

// CheckFirst is Check that stops at the first violation, which it returns
// with its witness: the rest of the trace is not read.
func CheckFirst(ctx context.Context, m *tracemodel.Model, ts *txn.Set) ([]Violation, Stats, error) {
	return check(ctx, m, ts, true)
}

func check(ctx context.Context, m *tracemodel.Model, ts *txn.Set, first bool) ([]Violation, Stats, error) {
	if ts == nil {
		return nil, Stats{}, errors.New("conflict: no transactions")
	}
	c := newChecker(m, ts)
	var buf []access
	for i := range m.Events {
		m.Pace(i)
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, c.stats, fmt.Errorf("conflict: %w", err)
			}
		}
		buf = c.event(int32(i), buf[:0])
		if first && len(c.out) > 0 {
			break
		}
	}
	c.stats.Txns = len(ts.Txns)
	return c.out, c.stats, nil
}

// Verdict reports whether m's transactions ts are conflict-serializable,
// stopping at the first cycle (no witness).
func Verdict(ctx context.Context, m *tracemodel.Model, ts *txn.Set) (bool, error) {
	c := newChecker(m, ts)
	c.stopFirst = true
	var buf []access
	for i := range m.Events {
		m.Pace(i)
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return false, fmt.Errorf("conflict: %w", err)
			}
		}
		buf = c.event(int32(i), buf[:0])
		if c.stats.Cycles > 0 {
			return false, nil
		}
	}
	return true, nil
}

// vc is a vector clock, indexed by model thread id - 1. Entries past its
// length are 0 (a clock that never heard of a thread; threads appear as a
// trace is read).
type vc []uint32

// at returns entry i.
func (v vc) at(i int) uint32 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// fit makes v at least n entries long.
func (v *vc) fit(n int) {
	if len(*v) < n {
		*v = append(*v, make(vc, n-len(*v))...)
	}
}

// join sets v to v ⊔ w and reports whether an entry other than own
// (an index, -1 for none) grew.
func (v *vc) join(w vc, own int) bool {
	v.fit(len(w))
	d := *v
	grew := false
	for i, x := range w {
		if x > d[i] {
			d[i] = x
			if i != own {
				grew = true
			}
		}
	}
	return grew
}

// joinBut sets v to v ⊔ w, except entry skip.
func (v *vc) joinBut(w vc, skip int) {
	v.fit(len(w))
	d := *v
	for i, x := range w {
		if x > d[i] && i != skip {
			d[i] = x
		}
	}
}

// set sets v to a copy of w.
func (v *vc) set(w vc) {
	v.fit(len(w))
	d := *v
	copy(d, w)
	clear(d[len(w):])
}

type objState struct {
	w   vc // clock of the last write (materialized), nil if none
	r   vc // join of the materialized reads
	chr vc // the same without each reader's own entry
	// lastW is the thread of the last write (0: none) and lastEv its event.
	lastW, lastEv int32
	// stale: the last write belongs to lastW's open transaction, whose
	// live clock stands for it.
	stale bool
	// staleR are the threads whose reads in their open transaction are
	// not yet in r.
	staleR []int32
}

type thread struct {
	c      vc
	open   bool   // in a transaction
	b      uint32 // the transaction's index: c[t] at its Begin
	txn    int32  // its index in the transaction set
	grew   bool   // it received an entry of another thread since its Begin
	found  bool   // a cycle closed on it
	writes []int32
	reads  []int32
	upd    []int32 // objects whose clocks may know the open transaction
}

type checker struct {
	m   *tracemodel.Model
	ts  *txn.Set
	acc *accessor
	// live is the extraction of the transactions as the trace is read
	// (Stream); nil when ts holds the whole trace's.
	live *txn.Stream
	th   []thread
	// The objects' states by class (objVar, objSync, objThread).
	vars, syncs, thrs []objState
	open              []int32 // threads with an open transaction
	out               []Violation
	stats             Stats
	index             map[string]int
	// prefMax[i] is the latest Last of the transactions 0..i (witness).
	prefMax []int32
	// stopFirst stops recording at the first cycle (Verdict).
	stopFirst bool
}

func newChecker(m *tracemodel.Model, ts *txn.Set) *checker {
	n := len(m.Threads)
	c := &checker{m: m, ts: ts, acc: newAccessor(m), index: map[string]int{}}
	c.thread(int32(n))
	for t := 1; t <= n; t++ {
		c.th[t].c = make(vc, n)
	}
	c.vars = make([]objState, len(m.Vars))
	c.syncs = make([]objState, len(m.Objects))
	c.thrs = make([]objState, n+1)
	return c
}

// thread makes room for the threads up to model id t.
func (c *checker) thread(t int32) {
	for int32(len(c.th)) <= t {
		c.th = append(c.th, thread{txn: -1})
	}
}

// class returns the states of o's class and o's index in it.
func (c *checker) class(o int32) (*[]objState, int32) {
	switch o &^ classIndex {
	case classVar:
		return &c.vars, o & classIndex
	case classSync:
		return &c.syncs, o & classIndex
	}
	return &c.thrs, o & classIndex
}

// fitObj makes room for the state of object o.
func (c *checker) fitObj(o int32) {
	ss, i := c.class(o)
	if int(i) >= len(*ss) {
		*ss = append(*ss, make([]objState, int(i)+1-len(*ss))...)
	}
}

// obj returns the state of object o (fitObj made room for it).
func (c *checker) obj(o int32) *objState {
	ss, i := c.class(o)
	return &(*ss)[i]
}

// event checks event ev of a whole trace.
func (c *checker) event(ev int32, buf []access) []access {
	x := c.ts.TxnOf(ev)
	return c.step(ev, x, x >= 0 && c.ts.Txns[x].Last == ev, buf)
}

// step checks event ev, of transaction x (-1: none), the transaction's
// last event if ends.
func (c *checker) step(ev, x int32, ends bool, buf []access) []access {
	e := &c.m.Events[ev]
	t := e.Thread
	c.thread(t)
	if e.Kind == tracemodel.Create || e.Kind == tracemodel.Join {
		c.thread(e.Obj)
	}
	if x >= 0 && c.ts.Txns[x].First == ev {
		c.begin(t, x)
	}
	buf = c.acc.of(ev, buf)
	for _, a := range buf {
		c.fitObj(a.obj)
	}
	// An event is one node of the graph (or part of one): it receives on
	// all its accesses before any of them records its clock.
	for _, a := range buf {
		c.receiveAccess(t, a, ev)
	}
	if e.Kind == tracemodel.Join && e.Obj != t {
		u := c.th[e.Obj].c
		c.receive(t, u, u, ev)
	}
	for _, a := range buf {
		if a.write {
			c.recordWrite(t, a.obj, ev)
		} else {
			c.recordRead(t, a.obj)
		}
	}
	if ends && c.th[t].open {
		c.end(t, ev)
	}
	return buf
}

func (c *checker) begin(t, x int32) {
	th := &c.th[t]
	th.c.fit(int(t))
	th.c[t-1]++
	th.b, th.txn, th.open, th.grew, th.found = th.c[t-1], x, true, false, false
	c.open = append(c.open, t)
}

// receive joins clock from into thread t's clock, unless check shows that
// t's open transaction reaches the sender: then a cycle closed at ev.
func (c *checker) receive(t int32, check, from vc, ev int32) {
	th := &c.th[t]
	if th.open && check.at(int(t-1)) >= th.b {
		c.cycle(t, ev)
		return
	}
	if th.c.join(from, int(t-1)) && th.open {
		th.grew = true
	}
}

// source returns the clock that stands for object o's last write.
func (c *checker) source(s *objState) vc {
	if s.stale {
		return c.th[s.lastW].c
	}
	return s.w
}

// receiveAccess receives what access a of thread t at event ev conflicts
// with: the last write of the object from another thread, and for a write
// its reads.
func (c *checker) receiveAccess(t int32, a access, ev int32) {
	s := c.obj(a.obj)
	if s.lastW != 0 && s.lastW != t {
		src := c.source(s)
		c.receive(t, src, src, ev)
	}
	if !a.write {
		return
	}
	for _, r := range s.staleR {
		c.joinRead(a.obj, c.th[r].c, r)
	}
	s.staleR = s.staleR[:0]
	if s.r != nil {
		c.receive(t, s.chr, s.r, ev)
	}
}

// recordWrite makes the write of o by t at ev the object's last.
func (c *checker) recordWrite(t, o, ev int32) {
	s := c.obj(o)
	th := &c.th[t]
	s.lastEv = ev
	if th.open {
		if s.lastW != t || !s.stale {
			th.writes = append(th.writes, o)
		}
		s.lastW, s.stale = t, true
		return
	}
	s.lastW, s.stale = t, false
	c.setWrite(o, th.c)
}

// recordRead adds a read of o by t to the object's reads.
func (c *checker) recordRead(t, o int32) {
	s := c.obj(o)
	th := &c.th[t]
	if !th.open {
		c.joinRead(o, th.c, t)
		return
	}
	for _, r := range s.staleR {
		if r == t {
			return
		}
	}
	s.staleR = append(s.staleR, t)
	th.reads = append(th.reads, o)
}

// setWrite sets the write clock of o to a copy of src.
func (c *checker) setWrite(o int32, src vc) {
	s := c.obj(o)
	if s.w == nil {
		s.w = make(vc, 0, len(src))
		c.register(o, nil, nil, src)
	} else {
		c.register(o, s.w, nil, src)
	}
	s.w.set(src)
}

// joinWrite joins src into the write clock of o.
func (c *checker) joinWrite(o int32, src vc) {
	s := c.obj(o)
	c.register(o, s.w, nil, src)
	s.w.join(src, -1)
}

// joinRead joins the clock src of a read by thread r into o's read clocks.
func (c *checker) joinRead(o int32, src vc, r int32) {
	s := c.obj(o)
	if s.r == nil {
		n := len(src)
		s.r, s.chr = make(vc, n), make(vc, n)
	}
	c.register(o, s.r, s.w, src)
	s.r.join(src, -1)
	s.chr.joinBut(src, int(r-1))
}

// register records o with every open transaction that src knows and that
// neither old1 nor old2 (o's clocks before) knew: its clock must follow
// that transaction's growth.
func (c *checker) register(o int32, old1, old2, src vc) {
	for _, u := range c.open {
		i := int(u - 1)
		b := c.th[u].b
		if src.at(i) < b || old1.at(i) >= b || old2.at(i) >= b {
			continue
		}
		c.th[u].upd = append(c.th[u].upd, o)
	}
}

// end closes the open transaction of t at event ev.
func (c *checker) end(t, ev int32) {
	th := &c.th[t]
	th.open = false
	for i, u := range c.open {
		if u == t {
			c.open = append(c.open[:i], c.open[i+1:]...)
			break
		}
	}
	i := int(t - 1)
	if th.grew {
		// Everyone who knows the transaction learns what reached it.
		for u := int32(1); u < int32(len(c.th)); u++ {
			o := &c.th[u]
			if u == t || o.c.at(i) < th.b {
				continue
			}
			c.receive(u, th.c, th.c, ev)
		}
		for _, o := range th.upd {
			s := c.obj(o)
			if s.w.at(i) >= th.b {
				c.joinWrite(o, th.c)
			}
			if s.r.at(i) >= th.b {
				c.joinRead(o, th.c, t)
			}
		}
	}
	for _, o := range th.writes {
		if s := c.obj(o); s.lastW == t && s.stale {
			s.stale = false
			c.setWrite(o, th.c)
		}
	}
	for _, o := range th.reads {
		c.joinRead(o, th.c, t)
		s := c.obj(o)
		for k, r := range s.staleR {
			if r == t {
				s.staleR = append(s.staleR[:k], s.staleR[k+1:]...)
				break
			}
		}
	}
	th.writes, th.reads, th.upd = th.writes[:0], th.reads[:0], th.upd[:0]
}
