// Package block implements the block-based atomicity checker of L. Wang's
// dissertation (Analysis of Synchronization Errors for Multithreaded
// Programs, Stony Brook 2006, ch. 5; ../shared/seeds/004_*, implementation
// notes ../shared/specs/wang-dissertation.md S2): it predicts, from one
// trace, interleavings of the observed transactions that are not
// serializable, over every schedule consistent with the locks and the
// causal order.
//
// For each transaction it builds the 1v-blocks of Figure 5.1 — pairs of
// accesses of one variable (the last write or else the last read before
// each access, and every transaction-initial read with the final write),
// with the locks held continuously between them — and compares them with
// the accesses of other threads (§5.1): an access o of another thread can
// occur between the two accesses of block b when the locks held at o are
// disjoint from those held continuously across b and their thread periods
// are concurrent. Matching patterns (first, mid, last):
//
//   - view-atomicity (Kind "view", the dissertation's checker): W R W, R W R,
//     W W R, and R FW W where FW is the final write of its transaction;
//   - conflict-atomicity (Kind "conflict", with Options.Conflict): the
//     patterns where mid conflicts with both first and last but that are
//     view-serializable: W W W and R W W with a non-final W.
//
// Violations that are view-unserializable are also conflict-unserializable;
// each is reported once, with the stronger kind "view".
//
// Two variables (§5.2, Theorem 5.2.1; Kind "view-2v"): the 2v-blocks of a
// transaction are the pairs e1 before e2 of its transaction-initial reads
// IR(t) and transaction-final writes FW(t) on two different variables x,
// y, with held(e1), held(e2), held12 and heldmid12 (the locks the thread
// takes after e1 and releases before e2, not held at either). A 2v-block
// b' of a transaction t' of another thread, in a concurrent period, over
// the same two variables, is unserializable with b when its operations
// conflict with those of b on both variables and a feasible interleaving
// orders t before t' on one variable and t' before t on the other:
//
//   - b' inside b (e1 f1 f2 e2): both operations of b' can occur between
//     e1 and e2 and held12(b) ∩ heldmid12(b') = ∅ (§5.2);
//   - crossing (e1 f1 e2 f2, f1 on y and f2 on x): f1 can occur between e1
//     and e2 and e2 between f1 and f2 (spec note S8.6: the dissertation
//     states the test only for nesting).
//
// Each ordered pair of blocks is checked, so b inside b' is found from
// b'; the nesting is reported in preference to the crossing. Pattern
// spells the interleaving with x = Var (the variable of RoleFirst), y =
// Var2 and a prime for t': "W(x) R'(x) R'(y) W(y)" is t' reading the new x
// and the old y; R are initial reads and W final writes. Since the four
// operations are initial reads and final writes of two transactions, the
// violation is both view- and conflict-unserializable, and it is reported
// in both modes. (With no single-variable conflict pattern on x and y,
// the order of t and t' on each variable is that of their IR/FW
// operations, so the conflict variant needs no other 2v-blocks.)
//
// Transactions come from package txn (Options.Atomic, Options.NotAtomic;
// see txn for the precedence of Begin/End over Enter/Exit). Only
// outermost transactions are checked. As in §2/§7.2 they are split into
// units at thread-period boundaries, which belong to no unit; outermost
// critical sections outside every transaction are implicit transactions
// (spec S5), and every other access is a non-transactional unit of its
// own, which can be the mid operation of a pattern but never the block.
//
// # Departures and limits
//
//   - Thread periods are delimited by every causal event of the trace
//     model (Create, Join, BarrierWait, as in the dissertation, and also
//     Signal, Broadcast, Wait, SemPost, SemWait, which tracemodel orders);
//     concurrency of periods is the synchronization order of tracemodel
//     (Model.Clock), not a period graph.
//   - Theorem 5.3.1 (every trace of IR-FW(T) serializable, exponential)
//     is not implemented: cyclic dependencies of three or more
//     transactions that are pairwise atomic (trace (5.6)) are missed, as in
//     the dissertation's experiments, which used Theorem 5.2.1 (§5.4, §7).
//   - 2v-blocks are built only on variables that IR/FW operations of two
//     threads access, one writing, and only for units with at most
//     Options.Max2vOps such operations (their number is quadratic); the
//     optimisation of §5.6 drops an initial read with the location and
//     locks of an earlier one and no lock release since.
//   - Units are split into 2v-blocks per fragment (a transaction split by
//     a thread-period boundary gives two units), as for 1v-blocks.
//   - No deadlock-potential check: the test assumes none, as the theorems
//     do.
//   - No escape analysis: every variable is escaped from its first access
//     (spec S0.4 [interp]). Accesses to synchronization objects are
//     ignored.
//   - RdLock holds exclude only write holds of the same rwlock.
//   - Violations are deduplicated: one per kind, pattern and source
//     locations of (first, mid, last), with Count matches; the events are
//     those of one concurrent instance.
//
// # Complexity
//
// Building blocks and operations is one pass over the events: O(E) time
// plus O(r) per write for the r distinct initial reads of its variable in
// the unit. Identical blocks and operations (same variable, operations,
// source locations, locks) are stored once with the set of their periods,
// as in §5.1. Checking compares, per variable, every distinct block with
// every distinct operation of the same variable: O(B·O) per variable, and
// a concurrent pair of periods is found by binary search over the
// operation's periods of each thread (O(P·T·log P) per pair for P periods
// and T threads). For traces whose accesses come from a bounded set of
// source locations and locksets this is linear in the trace.
//
// 2v-blocks: the pass keeps the IR/FW operations of each unit with a
// snapshot of its holds per lock event and its releases; after it, each
// unit yields O(k²) blocks for its k ≤ Max2vOps operations on
// conflicting variables (O(k²·r) with r releases for heldmid), stored
// once per distinct content, and blocks are compared only within a pair
// of variables.
package block

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpredict/mcpredict/analysis/internal/intset"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Kinds of Violation.
const (
	View     = "view"
	Conflict = "conflict"
	// View2v is a violation of two transactions on two variables found
	// with 2v-blocks (§5.2): four operations, two of each transaction.
	// With initial reads and final writes of two transactions it is also
	// the conflict-atomicity violation, so it is reported in both modes.
	View2v = "view-2v"
)

// Roles of the events of a Violation.
const (
	RoleFirst = "first" // the block's first access (in the transaction)
	RoleMid   = "mid"   // the other thread's access that can occur between
	RoleLast  = "last"  // the block's second access (in the transaction)
	// View2v: the other transaction's 2v-block, in its program order.
	RoleOtherFirst = "other-first"
	RoleOtherLast  = "other-last"
)

// Options selects the transactions (see package txn) and the variants.
type Options struct {
	Atomic    []string // if not empty, only these functions or labels are transactions
	NotAtomic []string // these functions or labels are never transactions
	// Conflict also reports the violations of conflict-atomicity that are
	// view-serializable (W W W, R W W with a non-final W).
	Conflict bool
	// Max2vOps bounds the initial reads and final writes (on variables
	// that another thread's transactions can conflict with) of a unit
	// whose 2v-blocks are built: units with more are not checked for
	// View2v violations (their number of 2v-blocks is quadratic). 0 means
	// DefaultMax2vOps; a negative value disables 2v-blocks (only the
	// single-variable test of Theorem 5.1.2).
	Max2vOps int
}

// EventRef names an event of the trace.
type EventRef = txn.EventRef

// TxnInfo describes a transaction (unit).
type TxnInfo = txn.Info

// Violation is one predicted unserializable interleaving (deduplicated).
type Violation struct {
	Kind    string // View or Conflict
	Pattern string // the operations first, mid, last: "R W R", "R FW W", ...
	Var     string // the variable (of the first instance); View2v: x, that of RoleFirst
	Var2    string // View2v: y, the variable of RoleLast; "" otherwise
	// Txn is the unit of the block: Kind is "function" or "label" for a
	// (fragment of a) transaction, "critical section" for an implicit one
	// (Name is the lock).
	Txn TxnInfo
	// Other is the other transaction (View2v only).
	Other *TxnInfo
	// Events: the block's two accesses (RoleFirst, RoleLast) and the other
	// thread's access (RoleMid), in the order first, mid, last. View2v:
	// the four operations in the order of the unserializable interleaving
	// that Pattern spells (RoleFirst first, RoleLast or RoleOtherLast
	// last).
	Events  []EventRef
	Count   int // matches (variable, block, access) merged into this one
	Message string
}

// Analyze runs the block-based checker on m. Violations are ordered by the
// trace lines of their events. It fails only if ctx is done.
func Analyze(ctx context.Context, m *tracemodel.Model, opts Options) ([]Violation, error) {
	ts, err := txn.Extract(ctx, m, txn.Options{Atomic: opts.Atomic, NotAtomic: opts.NotAtomic})
	if err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	return Check(ctx, m, ts, opts)
}

// Check runs the block-based checker on m with the transactions ts
// (txn.Extract of m; opts.Atomic and opts.NotAtomic are not used), as
// Analyze does.
func Check(ctx context.Context, m *tracemodel.Model, ts *txn.Set, opts Options) ([]Violation, error) {
	if ts == nil {
		return nil, errors.New("block: no transactions")
	}
	b := newBuilder(m, ts)
	if err := b.build(ctx); err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	if err := b.build2v(ctx, opts.Max2vOps); err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	out, err := b.check(ctx, opts.Conflict)
	if err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	return out, nil
}

const (
	opR uint8 = iota + 1
	opW
	opFW // a write that is the final write of its unit (mid operations only)
)

type period struct {
	thread      int32
	first, last int32 // positions in the thread (1-based), inclusive
}

// blockKey identifies a distinct 1v-block.
type blockKey struct {
	v          int32
	op1, op2   uint8
	loc1, loc2 int32
	held12     int32 // interned lockset
}

type opKey struct {
	v    int32
	op   uint8
	loc  int32
	held int32
}

// occ is a set of periods with one example per period.
type occ struct {
	periods []int32 // ascending (periods are numbered thread by thread, in order)
	ex      [][2]int32
	unit    []int32
}

func (o *occ) add(p int32, e1, e2, unit int32) {
	if n := len(o.periods); n > 0 && o.periods[n-1] == p {
		return
	}
	o.periods = append(o.periods, p)
	o.ex = append(o.ex, [2]int32{e1, e2})
	o.unit = append(o.unit, unit)
}

type hold struct {
	lock  int32
	read  bool
	acq   int32 // event
	count int32
}

type varState struct {
	stamp        int32 // unit
	lastW, lastR int32
	irs          []int32 // distinct (loc, held) initial reads
	irHeld       []int32
	pendW        int32 // last write, emitted as a mid at the next write or unit end
	pendHeld     int32
	pendFW       []pendBlock // blocks (ir, last write)
	pendSnap     int32       // holds snapshot at pendW
	ir2          []int32     // 2v candidates (indexes in b.cands) of the unit's initial reads
	ir2Rel       []int32     // len(b.rels) when each was added
}

type pendBlock struct {
	key    blockKey
	e1, e2 int32
}

type builder struct {
	m  *tracemodel.Model
	ts *txn.Set

	periods []period
	units   []txn.Info

	sets    *intset.Table // interned locksets: sorted lock*2+read
	blocks  map[blockKey]*occ
	ops     map[opKey]*occ
	bOrder  []blockKey
	oOrder  []opKey
	vs      []varState
	touched []int32

	// 2v-blocks (§5.2): candidate operations (initial reads and final
	// writes) of every unit with at least two variables, built after the
	// pass (block2v.go).
	cands     []cand
	units2    []unit2
	snaps     []snap
	snapArena []hold
	rels      []rel
	curSnap   int32 // snapshot of the current thread's holds
	unitCand  int32 // start of the current unit in cands
	unitRel   int32 // start of the current unit in rels
	released  hold  // set by lockEvent when a lock is fully released
	didRel    bool
	blocks2   map[block2Key]*occ
	b2Order   []block2Key
}

func newBuilder(m *tracemodel.Model, ts *txn.Set) *builder {
	b := &builder{
		m: m, ts: ts,
		sets:   intset.NewTable(),
		blocks: map[blockKey]*occ{},
		ops:    map[opKey]*occ{},
		vs:     make([]varState, len(m.Vars)),
	}
	for i := range b.vs {
		b.vs[i].stamp = -1
	}
	return b
}

func boundary(k tracemodel.Kind) bool {
	switch k {
	case tracemodel.Create, tracemodel.Join, tracemodel.BarrierWait, tracemodel.Signal,
		tracemodel.Broadcast, tracemodel.Wait, tracemodel.SemPost, tracemodel.SemWait:
		return true
	}
	return false
}

func (b *builder) intern(holds []hold, filter func(h hold) bool) int32 {
	var ls []int32
	for _, h := range holds {
		if filter == nil || filter(h) {
			x := h.lock * 2
			if h.read {
				x++
			}
			ls = append(ls, x)
		}
	}
	return b.sets.Intern(ls)
}

// excludes reports whether locksets x and y (ids) cannot be held at the
// same time by two threads.
func (b *builder) excludes(x, y int32) bool {
	if x == 0 || y == 0 {
		return false
	}
	p, q := b.sets.Set(x), b.sets.Set(y)
	i, j := 0, 0
	for i < len(p) && j < len(q) {
		lp, lq := p[i]/2, q[j]/2
		switch {
		case lp < lq:
			i++
		case lp > lq:
			j++
		default:
			if p[i]%2 == 0 || q[j]%2 == 0 {
				return true
			}
			i++
			j++
		}
	}
	return false
}

func (b *builder) addBlock(k blockKey, p, e1, e2, unit int32) {
	o := b.blocks[k]
	if o == nil {
		o = &occ{}
		b.blocks[k] = o
		b.bOrder = append(b.bOrder, k)
	}
	o.add(p, e1, e2, unit)
}

func (b *builder) addOp(k opKey, p, e, unit int32) {
	o := b.ops[k]
	if o == nil {
		o = &occ{}
		b.ops[k] = o
		b.oOrder = append(b.oOrder, k)
	}
	o.add(p, e, e, unit)
}

// build walks every thread once and records blocks and operations.
func (b *builder) build(ctx context.Context) error {
	m := b.m
	n := 0
	for ti := range m.Threads {
		th := &m.Threads[ti]
		var holds []hold
		heldID := int32(0)
		unit := int32(-1)   // current unit, -1 none
		unitTx := int32(-1) // its transaction, -1 for an implicit one
		per := int32(-1)
		newPeriod := func(pos int32) {
			b.periods = append(b.periods, period{thread: int32(ti + 1), first: pos, last: pos})
			per = int32(len(b.periods) - 1)
		}
		endUnit := func() {
			if unit < 0 {
				return
			}
			for _, v := range b.touched {
				vs := &b.vs[v]
				if vs.pendW >= 0 {
					b.cands = append(b.cands, cand{ev: vs.pendW, v: v, op: opW, held: vs.pendHeld, snap: vs.pendSnap})
					b.addOp(opKey{v: v, op: opFW, loc: m.Events[vs.pendW].Loc, held: vs.pendHeld}, per, vs.pendW, unit)
				}
				for _, pb := range vs.pendFW {
					b.addBlock(pb.key, per, pb.e1, pb.e2, unit)
				}
			}
			b.touched = b.touched[:0]
			b.endUnit2(unit, per)
			unit = -1
		}
		newPeriod(1)
		for i, ev := range th.Events {
			m.Pace(i)
			if n++; n&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			e := &m.Events[ev]
			pos := int32(i + 1)
			if boundary(e.Kind) {
				endUnit()
				newPeriod(pos + 1)
				b.lockEvent(e, ev, &holds, &heldID)
				continue
			}
			b.periods[per].last = pos
			tx := b.ts.TxnOf(ev)
			if unit >= 0 && tx != unitTx {
				endUnit() // the transaction ended, or one starts inside an implicit one
			}
			switch e.Kind {
			case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock, tracemodel.RdLock:
				if unit < 0 && tx < 0 && len(holds) == 0 { // an implicit transaction
					unit = b.newUnit(txn.Info{Thread: th.Handle, Kind: "critical section", Name: m.Objects[e.Obj], First: int(e.Line)})
					unitTx = -1
					b.beginUnit2(holds)
				}
			}
			if unit < 0 && tx >= 0 {
				info := b.ts.Info(m, tx)
				info.First = int(e.Line)
				unit, unitTx = b.newUnit(info), tx
				b.beginUnit2(holds)
			}
			if unit >= 0 {
				b.units[unit].Last = int(e.Line)
			}
			switch e.Kind {
			case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock, tracemodel.RdLock,
				tracemodel.Unlock, tracemodel.RwUnlock:
				b.lockEvent(e, ev, &holds, &heldID)
				if unit >= 0 {
					if b.didRel {
						b.rels = append(b.rels, rel{lock: b.released.lock, read: b.released.read, acq: b.released.acq, ev: ev})
					}
					b.snapshot(holds)
				}
				if unit >= 0 && unitTx < 0 && len(holds) == 0 {
					endUnit()
				}
				continue
			}
			if !e.Kind.IsAccess() || m.IsSyncVar(int(e.Obj)) {
				continue
			}
			v := e.Obj
			if unit < 0 { // a non-transactional unit of its own
				op := opR
				if e.Kind == tracemodel.Write {
					op = opFW
				}
				b.addOp(opKey{v: v, op: op, loc: e.Loc, held: heldID}, per, ev, -1)
				continue
			}
			b.access(e, ev, v, unit, per, holds, heldID)
		}
		endUnit()
	}
	return nil
}

func (b *builder) newUnit(info txn.Info) int32 {
	b.units = append(b.units, info)
	return int32(len(b.units) - 1)
}

// held12 returns the lockset held continuously from e1 to now.
func (b *builder) held12(holds []hold, heldID, e1 int32) int32 {
	all := true
	for _, h := range holds {
		if h.acq > e1 {
			all = false
			break
		}
	}
	if all {
		return heldID
	}
	return b.intern(holds, func(h hold) bool { return h.acq < e1 })
}

func (b *builder) access(e *tracemodel.Event, ev, v, unit, per int32, holds []hold, heldID int32) {
	m := b.m
	vs := &b.vs[v]
	if vs.stamp != unit {
		*vs = varState{stamp: unit, lastW: -1, lastR: -1, pendW: -1, irs: vs.irs[:0], irHeld: vs.irHeld[:0], pendFW: vs.pendFW[:0],
			ir2: vs.ir2[:0], ir2Rel: vs.ir2Rel[:0]}
		b.touched = append(b.touched, v)
	}
	op := opR
	if e.Kind == tracemodel.Write {
		op = opW
	}
	prev := vs.lastW
	if prev < 0 {
		prev = vs.lastR
	}
	if prev >= 0 {
		pe := &m.Events[prev]
		pop := opR
		if pe.Kind == tracemodel.Write {
			pop = opW
		}
		k := blockKey{v: v, op1: pop, op2: op, loc1: pe.Loc, loc2: e.Loc, held12: b.held12(holds, heldID, prev)}
		b.addBlock(k, per, prev, ev, unit)
	}
	if op == opR {
		b.addOp(opKey{v: v, op: opR, loc: e.Loc, held: heldID}, per, ev, unit)
		if vs.lastW < 0 {
			b.initialRead2(vs, e, ev, v, heldID)
			dup := false
			for i, r := range vs.irs {
				if m.Events[r].Loc == e.Loc && vs.irHeld[i] == heldID {
					dup = true
					break
				}
			}
			if !dup {
				vs.irs = append(vs.irs, ev)
				vs.irHeld = append(vs.irHeld, heldID)
			}
		}
		vs.lastR = ev
		return
	}
	if vs.pendW >= 0 {
		b.addOp(opKey{v: v, op: opW, loc: m.Events[vs.pendW].Loc, held: vs.pendHeld}, per, vs.pendW, unit)
	}
	vs.pendW, vs.pendHeld, vs.pendSnap = ev, heldID, b.curSnap
	vs.pendFW = vs.pendFW[:0]
	for _, r := range vs.irs {
		k := blockKey{v: v, op1: opR, op2: opW, loc1: m.Events[r].Loc, loc2: e.Loc, held12: b.held12(holds, heldID, r)}
		vs.pendFW = append(vs.pendFW, pendBlock{key: k, e1: r, e2: ev})
	}
	vs.lastW = ev
}

// lockEvent updates the held locks.
func (b *builder) lockEvent(e *tracemodel.Event, ev int32, holds *[]hold, heldID *int32) {
	hs := *holds
	find := func(l int32) int {
		for i := range hs {
			if hs[i].lock == l {
				return i
			}
		}
		return -1
	}
	acquire := func(l int32, read bool) {
		if i := find(l); i >= 0 {
			hs[i].count++
			return
		}
		hs = append(hs, hold{lock: l, read: read, acq: ev, count: 1})
	}
	b.didRel = false
	release := func(l int32) {
		if i := find(l); i >= 0 {
			if hs[i].count--; hs[i].count == 0 {
				b.released, b.didRel = hs[i], true
				hs = append(hs[:i], hs[i+1:]...)
			}
		}
	}
	switch e.Kind {
	case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock:
		acquire(e.Obj, false)
	case tracemodel.RdLock:
		acquire(e.Obj, true)
	case tracemodel.Unlock, tracemodel.RwUnlock:
		release(e.Obj)
	case tracemodel.Wait:
		// The mutex is released and taken again: a new hold.
		if e.Obj2 != 0 {
			if i := find(e.Obj2); i >= 0 {
				hs[i].acq = ev
			}
		}
	default:
		return
	}
	*holds = hs
	*heldID = b.intern(hs, nil)
}

// match returns the kind of violation of (first, mid, last), "" if none.
func match(first, mid, last uint8, conflict bool) string {
	w := func(o uint8) bool { return o == opW || o == opFW }
	switch {
	case first == opW && mid == opR && last == opW, // P1
		first == opR && w(mid) && last == opR,      // P2
		first == opW && w(mid) && last == opR,      // P3
		first == opR && mid == opFW && last == opW: // P4
		return View
	}
	if conflict && w(mid) && last == opW {
		return Conflict // W W W, R W W (non-final W)
	}
	return ""
}

func opName(o uint8) string {
	switch o {
	case opR:
		return "R"
	case opW:
		return "W"
	}
	return "FW"
}

// concurrent reports whether periods p and q can overlap.
func (b *builder) concurrent(p, q int32) bool {
	pp, qq := b.periods[p], b.periods[q]
	if pp.thread == qq.thread {
		return false
	}
	if b.m.Clock(int(qq.thread), qq.first, int(pp.thread)) >= pp.last {
		return false
	}
	return b.m.Clock(int(pp.thread), pp.first, int(qq.thread)) < qq.last
}

// findConcurrent returns indexes i, j with a.periods[i] concurrent with
// o.periods[j], or -1.
func (b *builder) findConcurrent(a, o *occ) (int, int) {
	for i, p := range a.periods {
		pp := b.periods[p]
		ps := o.periods
		for start := 0; start < len(ps); {
			th := b.periods[ps[start]].thread
			end := start
			for end < len(ps) && b.periods[ps[end]].thread == th {
				end++
			}
			if th != pp.thread {
				before := b.m.Clock(int(pp.thread), pp.first, int(th)) // events of th before p
				g := ps[start:end]
				k := sort.Search(len(g), func(x int) bool { return b.periods[g[x]].last > before })
				if k < len(g) && b.concurrent(p, g[k]) {
					return i, start + k
				}
			}
			start = end
		}
	}
	return -1, -1
}

func (b *builder) check(ctx context.Context, conflict bool) ([]Violation, error) {
	m := b.m
	// Operations by variable.
	byVar := map[int32][]opKey{}
	for _, k := range b.oOrder {
		byVar[k.v] = append(byVar[k.v], k)
	}
	// Periods must be grouped by thread and ascending: they are.
	var out []Violation
	index := map[string]int{}
	for n, bk := range b.bOrder {
		if n&0xff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		bo := b.blocks[bk]
		for _, ok := range byVar[bk.v] {
			kind := match(bk.op1, ok.op, bk.op2, conflict)
			if kind == "" || b.excludes(bk.held12, ok.held) {
				continue
			}
			oo := b.ops[ok]
			i, j := b.findConcurrent(bo, oo)
			if i < 0 {
				continue
			}
			mid := ok.op
			if mid == opFW && !(bk.op1 == opR && bk.op2 == opW) {
				mid = opW // FW matters only in R FW W
			}
			pattern := opName(bk.op1) + " " + opName(mid) + " " + opName(bk.op2)
			evs := []EventRef{
				txn.Ref(m, bo.ex[i][0], RoleFirst),
				txn.Ref(m, oo.ex[j][0], RoleMid),
				txn.Ref(m, bo.ex[i][1], RoleLast),
			}
			key := kind + "|" + pattern + "|" + evs[0].Where() + "|" + evs[1].Where() + "|" + evs[2].Where()
			if x, dup := index[key]; dup {
				out[x].Count++
				continue
			}
			info := b.units[bo.unit[i]]
			index[key] = len(out)
			out = append(out, Violation{
				Kind: kind, Pattern: pattern, Var: m.Vars[bk.v].Name, Txn: info, Events: evs, Count: 1,
				Message: fmt.Sprintf("%s-atomicity violation on %s (%s): thread %s's %s at %s (line %d) can occur between the %s at %s (line %d) and the %s at %s (line %d) of %s %s by thread %s",
					kind, m.Vars[bk.v].Name, pattern, evs[1].Thread, evs[1].Action, evs[1].Where(), evs[1].Line,
					evs[0].Action, evs[0].Where(), evs[0].Line, evs[2].Action, evs[2].Where(), evs[2].Line,
					info.Kind, info.Name, info.Thread),
			})
		}
	}
	if err := b.check2v(ctx, func(v Violation) {
		key := v.Kind + "|" + v.Pattern
		for _, r := range v.Events {
			key += "|" + r.Where()
		}
		if x, dup := index[key]; dup {
			out[x].Count++
			return
		}
		index[key] = len(out)
		out = append(out, v)
	}); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(x, y Violation) int {
		for i := range min(len(x.Events), len(y.Events)) {
			if c := cmp.Compare(x.Events[i].Line, y.Events[i].Line); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(len(x.Events), len(y.Events)); c != 0 {
			return c
		}
		return cmp.Compare(x.Kind+x.Pattern, y.Kind+y.Pattern)
	})
	return out, nil
}
