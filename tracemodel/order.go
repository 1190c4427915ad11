package tracemodel

import (
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// Order is a causal (happens-before) order over the events of a trace, kept
// as vector-clock snapshots per thread. Two orders exist for a trace:
//
//   - the synchronization order (Model.Clock): program order, Create → the
//     child's first event, the child's last event → Join, Signal/Broadcast →
//     the Wait it releases, SemPost → SemWait, barrier episodes. Locks are
//     not causal.
//   - the data-flow order of a variable v (Model.DataflowOrder): the
//     synchronization order plus the observed data flow of every other
//     variable (see DataflowOrder). It is the order of the model of v under
//     the precise semantics.
type Order struct {
	clocks []snapLog // per thread (index = model id - 1)
	arena  *snapArena

	// A data-flow order is replayed only as far as it is asked about
	// (replayTo): the models of a variable ask about the stretch of the
	// trace where it is used, and a server's variables are mostly objects
	// of one request, whose orders a replay to the end of the trace made
	// most of the time of a run (a 4 M-event Apache trace: 85%). The
	// snapshots of a position are final once its event is replayed.
	mu       sync.Mutex
	replay   *orderBuilder // the replay to go on with (under mu); nil: none
	next     int           // the next event index to replay (under mu)
	replayed atomic.Bool   // the order is complete: no locking
	shared   bool          // the order of every variable's data flow (allFlowOrder): never released
}

// Clock returns how many events of thread other happen before (or at)
// position pos of thread tid in the order: the position in other of the
// latest event that is causally before it, 0 if none.
func (o *Order) Clock(tid int, pos int32, other int) int32 {
	hint := -1
	return o.clockFrom(tid, pos, other, &hint)
}

// clockFrom is Clock for a caller that asks of one thread's positions in
// increasing order: *hint carries the snapshot found last (start with -1).
func (o *Order) clockFrom(tid int, pos int32, other int, hint *int) int32 {
	if pos <= 0 || tid-1 >= len(o.clocks) {
		return 0
	}
	if !o.replayed.Load() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.replayTo(tid, pos)
	}
	l := &o.clocks[tid-1]
	i := l.atFrom(pos, *hint)
	*hint = i
	if i < 0 {
		return 0
	}
	return l.get(i, other-1)
}

// firstDependence returns the first position of thread tid before
// position limit that causally depends on an event of thread other, 0 if
// none.
func (o *Order) firstDependence(tid, other int, limit int32) int32 {
	if !o.replayed.Load() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.replayTo(tid, limit)
	}
	l := &o.clocks[tid-1]
	i := sort.Search(l.len(), func(i int) bool { return l.get(i, other-1) > 0 })
	if i == l.len() || l.pos(i) >= limit {
		return 0
	}
	return l.pos(i)
}

// replayTo replays the trace until thread tid has reached position pos (or
// the trace ends). o.mu is held.
func (o *Order) replayTo(tid int, pos int32) {
	b := o.replay
	if b == nil {
		return
	}
	m := b.m
	for o.next < len(m.Events) && b.n[tid-1] < pos {
		m.Pace(o.next)
		b.event(&m.Events[o.next], int32(o.next))
		o.next++
	}
	if o.next == len(m.Events) {
		o.replay = nil
		o.replayed.Store(true)
	}
}

// eventRef is an event by thread and position (1-based).
type eventRef struct {
	thread int32
	pos    int32
}

// varFlow is the observed data flow of one variable so far in a replay: its
// latest write that is not an update, the latest update of each thread
// since that write, and the latest read of each thread since it that is not
// part of an update.
type varFlow struct {
	write   eventRef
	updates []eventRef // the write of each thread's latest update
	reads   []eventRef
}

// orderBuilder replays the events of a trace in trace order and computes
// vector clocks.
type orderBuilder struct {
	m       *Model
	exclude [2]int32 // variables whose data flow is left out; -1: no data flow at all
	// joinAll: joinEvent joins events the thread knows already (for the
	// tests, which compare the orders with and without that skip).
	joinAll bool
	clocks  []snapLog
	arena   *snapArena // where clocks' rows are; nil: the heap
	vc      []vclock   // current clock per thread (own component not kept)
	n       []int32    // events so far per thread
	pending []vclock   // per thread: the clock of its Create, joined at its first event
	// pendingBarrier: per thread, the barrier whose clock its next event
	// joins (0: none).
	pendingBarrier []int32
	release        map[int32]eventRef
	barrier        map[int32]vclock
	// withFlow: the data flow of the variables (but exclude) orders too.
	withFlow bool
	// flow, by variable id, is the data-flow state of the replay of every
	// variable (checkpoints), touched marking those changed since the last
	// checkpoint, in changed; flows holds it in a data-flow order, which
	// replays a stretch of the trace and touches few variables.
	flow    []varFlow
	touched []bool
	changed []int32
	flows   *flowTable
	// ordered, by variable id, in the replay of every variable: its data
	// flow changed a clock (flowCheckpoints.ordered).
	ordered []bool
	// versions and at, when restored from checkpoint at: the variables'
	// states, copied into flows on first use.
	versions [][]flowVersion
	at       int32
	// holds, per thread, its operations of each of its locks
	// (Model.threadLockOps) with the place of the last question (flowEdge).
	holds [][]holdCursor
}

// cursorsOf returns the hold cursors of thread t, one per lock of
// Model.threadLocks, made on first use.
func (b *orderBuilder) cursorsOf(t int32) []holdCursor {
	if b.holds == nil {
		b.holds = make([][]holdCursor, len(b.m.Threads))
	}
	hs := b.holds[t-1]
	if hs == nil {
		ops := b.m.threadLockOps[t-1]
		hs = make([]holdCursor, len(ops))
		for k := range ops {
			hs[k].ops = ops[k]
		}
		b.holds[t-1] = hs
	}
	return hs
}

// order computes the order of the trace. No variables give the
// synchronization order; otherwise the data flow of every variable except
// those (one, or the two of an atomic set) is added (replayed from the last
// checkpoint before their first access, checkpoint.go).
func (m *Model) order(exclude ...int32) *Order {
	ex := [2]int32{-1, -1}
	copy(ex[:], exclude)
	if len(exclude) == 1 {
		ex[1] = ex[0]
	}
	b := m.newOrderBuilder(ex)
	start := 0
	if ex[0] >= 0 {
		if o := m.allFlowOrder(ex); o != nil {
			return o
		}
		b.withFlow, b.flows = true, newFlowTable(len(m.Vars))
		first := int32(-1)
		for _, v := range ex {
			if acc := m.Vars[v].Accesses; len(acc) > 0 && (first < 0 || acc[0] < first) {
				first = acc[0]
			}
		}
		if first >= 0 {
			cps := m.checkpoints()
			i := sort.Search(len(cps), func(i int) bool { return cps[i].idx > int(first) }) - 1
			if i >= 0 {
				b.restore(cps[i], m.flowCk)
				start = cps[i].idx
			}
		}
	}
	b.setArena(m.newSnapArena(len(m.Events) - start))
	o := &Order{clocks: b.clocks, arena: b.arena}
	if ex[0] < 0 {
		// The synchronization order, which every model and analysis
		// reads: all of it, at once.
		for i := start; i < len(m.Events); i++ {
			m.Pace(i)
			b.event(&m.Events[i], int32(i))
		}
		o.replayed.Store(true)
	} else {
		o.replay, o.next = b, start
		if start == len(m.Events) {
			o.replay = nil
			o.replayed.Store(true)
		}
	}
	if b.arena != nil && ex[0] >= 0 {
		// A data-flow order is dropped when the models of its variable
		// are made; its file goes with it (or with the model's Close).
		runtime.AddCleanup(o, (*snapArena).close, b.arena)
	}
	return o
}

// Release gives back the temporary file of a data-flow order of a spilled
// model at once; the order must not be used after. Releasing is optional:
// the garbage collector releases an unreachable order's file, and
// Model.Close every file of the model.
func (o *Order) Release() {
	if o.arena != nil && !o.shared {
		o.arena.close()
	}
}

// setArena has the rows of the builder's snapshots from now on come from
// arena.
func (b *orderBuilder) setArena(arena *snapArena) {
	b.arena = arena
	for t := range b.clocks {
		b.clocks[t].arena = arena
	}
}

// newOrderBuilder returns a builder at the start of the trace, without
// data flow.
func (m *Model) newOrderBuilder(exclude [2]int32) *orderBuilder {
	nt := len(m.Threads)
	return &orderBuilder{
		m:              m,
		exclude:        exclude,
		clocks:         newSnapLogs(nt, nil),
		vc:             make([]vclock, nt),
		n:              make([]int32, nt),
		pending:        make([]vclock, nt),
		pendingBarrier: make([]int32, nt),
		release:        map[int32]eventRef{},
		barrier:        map[int32]vclock{},
	}
}

// joinEvent joins the clock of event r (including r itself) into thread t's
// clock and reports whether it changed.
func (b *orderBuilder) joinEvent(t int32, r eventRef) bool {
	vc, changed := b.vc[t-1], false
	if r.thread != t && !b.joinAll && vc.get(int(r.thread-1)) >= r.pos {
		// t has the event already, so its clock holds the event's:
		// a data-flow edge mostly repeats what an earlier one gave.
		return false
	}
	l := &b.clocks[r.thread-1]
	if i := l.at(r.pos); i >= 0 {
		vc, changed = l.joinInto(vc, i)
	}
	if r.thread != t {
		var own bool
		vc, own = vc.set(int(r.thread-1), r.pos)
		changed = changed || own
	}
	b.vc[t-1] = vc
	return changed
}

// copyWithSelf returns thread t's clock at its current event pos, own
// component included.
func (b *orderBuilder) copyWithSelf(t, pos int32) vclock {
	vc, _ := b.vc[t-1].set(int(t-1), pos)
	return vc
}

func (b *orderBuilder) event(e *Event, idx int32) {
	t := e.Thread
	b.n[t-1]++
	pos := b.n[t-1]
	changed := false
	if p := b.pending[t-1]; p.root != nil {
		var c bool
		b.vc[t-1], c = b.vc[t-1].join(p)
		changed = changed || c
		b.pending[t-1] = vclock{}
	}
	if obj := b.pendingBarrier[t-1]; obj != 0 {
		var c bool
		b.vc[t-1], c = b.vc[t-1].join(b.barrier[obj])
		changed = changed || c
		b.pendingBarrier[t-1] = 0
	}
	switch e.Kind {
	case Create:
		// A Create of a thread that already ran gives no order (the
		// parser warns about it).
		if c := e.Obj; b.n[c-1] == 0 {
			b.pending[c-1] = b.copyWithSelf(t, pos)
		}
	case Join:
		c := e.Obj
		if b.n[c-1] > 0 {
			changed = b.joinEvent(t, eventRef{thread: c, pos: b.n[c-1]}) || changed
		}
	case Signal, Broadcast, SemPost:
		b.release[e.Obj] = eventRef{thread: t, pos: pos}
	case Wait, SemWait:
		if r, ok := b.release[e.Obj]; ok {
			changed = b.joinEvent(t, r) || changed
		}
	case BarrierWait:
		b.barrier[e.Obj], _ = b.barrier[e.Obj].join(b.copyWithSelf(t, pos))
		// The thread's next event is after every BarrierWait on the
		// barrier until then, including later arrivals.
		b.pendingBarrier[t-1] = e.Obj
	case Read, Write:
		if b.withFlow && e.Obj != b.exclude[0] && e.Obj != b.exclude[1] && !b.m.IsSyncVar(int(e.Obj)) {
			if b.dataflow(e, idx, pos) {
				changed = true
				if b.ordered != nil {
					b.ordered[e.Obj] = true
				}
			}
		}
	}
	if changed {
		b.clocks[t-1].add(pos, b.vc[t-1])
	}
}

// dataflow adds the observed data flow of access e (at position pos of its
// thread) to the thread's clock: a read is after the write it read from, a
// write after the reads of the previous value; when both accesses lie in
// critical sections of one lock, the whole earlier critical section is
// before the later access (and then two writes are ordered too). Accesses of
// one thread are ordered by program order already. Commutative updates
// (update.go) are not ordered with each other; every other access keeps its
// place among them.
func (b *orderBuilder) dataflow(e *Event, idx int32, pos int32) bool {
	t := e.Thread
	f := b.flowAt(e.Obj)
	after := func(refs []eventRef, plain bool) bool { return b.after(t, pos, refs, plain) }
	write := [1]eventRef{f.write} // the latest write that is not an update (thread 0: none)
	switch {
	case b.m.isUpdate(idx) && e.Kind == Read:
		// The update as a whole (it is inside one critical section) comes
		// after the value it builds on and after the reads that did not
		// see it.
		changed := after(write[:], true)
		return after(f.reads, true) || changed
	case b.m.isUpdate(idx):
		f.updates = setLatest(f.updates, eventRef{thread: t, pos: pos})
		return false
	case e.Kind == Read:
		changed := after(write[:], true)
		changed = after(f.updates, true) || changed
		f.reads = setLatest(f.reads, eventRef{thread: t, pos: pos})
		return changed
	}
	changed := after(f.reads, true)
	changed = after(f.updates, false) || changed
	changed = after(write[:], false) || changed
	f.write = eventRef{thread: t, pos: pos}
	f.reads = f.reads[:0]
	f.updates = f.updates[:0]
	return changed
}

// after orders every access in refs of a thread other than t before
// thread t's access at pos (see flowEdge) and reports whether t's clock
// changed.
func (b *orderBuilder) after(t, pos int32, refs []eventRef, plain bool) bool {
	changed := false
	for _, r := range refs {
		if r.thread != 0 && r.thread != t {
			changed = b.flowEdge(t, pos, r, plain) || changed
		}
	}
	return changed
}

// setLatest records r as its thread's latest event in refs.
func setLatest(refs []eventRef, r eventRef) []eventRef {
	for i := range refs {
		if refs[i].thread == r.thread {
			refs[i].pos = r.pos
			return refs
		}
	}
	return append(refs, r)
}

// flowEdge orders the earlier access src before thread t's access at pos.
// If both are inside critical sections of a lock, the release of src's
// critical section is joined instead (it is before pos since t holds the
// lock now). Without a common critical section, only plain edges (read
// from, read before overwrite) are added.
func (b *orderBuilder) flowEdge(t, pos int32, src eventRef, plain bool) bool {
	m := b.m
	rel := int32(0)
	locks, srcOps := m.threadLocks[src.thread-1], m.threadLockOps[src.thread-1]
	mine := m.threadLocks[t-1]
	for i, j := 0, 0; i < len(locks) && j < len(mine); {
		switch {
		case locks[i] < mine[j]:
			i++
		case locks[i] > mine[j]:
			j++
		default:
			// A release not yet in the trace is a hold taken over while its
			// holder was blocked in a cond Wait (recorded when it returns):
			// the mutex was released at the start of the wait, which the
			// trace does not show, so that hold orders nothing. (Thread t's
			// hold first: it holds few of the locks at any time.)
			if b.cursorsOf(t)[j].at(pos) >= 0 {
				srcHolds := &b.cursorsOf(src.thread)[i]
				if h := srcHolds.at(src.pos); h >= 0 && h+1 < len(srcOps[i]) {
					if r := srcOps[i][h+1].Pos; r <= b.n[src.thread-1] {
						rel = max(rel, r)
					}
				}
			}
			i++
			j++
		}
	}
	switch {
	case rel > 0:
		return b.joinEvent(t, eventRef{thread: src.thread, pos: rel})
	case plain:
		return b.joinEvent(t, src)
	}
	return false
}

// holdAt returns the index in ops of the exclusive acquisition whose hold
// contains position pos, or -1. Read holds of a rwlock do not exclude each
// other, so they order nothing.
func holdAt(ops []lockOp, pos int32) int {
	i := sort.Search(len(ops), func(i int) bool { return ops[i].Pos > pos }) - 1
	// A cond Wait is a release and an acquisition at one position; an
	// access is never at a lock operation's position.
	if i >= 0 && (ops[i].Kind == StepLock || ops[i].Kind == StepWrLock) && ops[i].Pos < pos {
		return i
	}
	return -1
}

// holdCursor is holdAt for a caller that asks of positions that mostly
// grow: it reads on from the last answer instead of bisecting.
type holdCursor struct {
	ops  []lockOp
	next int // the first operation after the last position asked
}

// at returns holdAt(c.ops, pos). A copy of the cursor answers for another
// position without moving it.
func (c *holdCursor) at(pos int32) int {
	if c.next > 0 && c.ops[c.next-1].Pos > pos || c.next+8 < len(c.ops) && c.ops[c.next+8].Pos <= pos {
		c.next = sort.Search(len(c.ops), func(i int) bool { return c.ops[i].Pos > pos })
	}
	for c.next < len(c.ops) && c.ops[c.next].Pos <= pos {
		c.next++
	}
	if i := c.next - 1; i >= 0 && (c.ops[i].Kind == StepLock || c.ops[i].Kind == StepWrLock) && c.ops[i].Pos < pos {
		return i
	}
	return -1
}

// lockCursors returns thread tid's locks of Model.threadLocks that keep
// selects, and a hold cursor over the thread's operations of each.
func (m *Model) lockCursors(tid int, keep func(l int32) bool) (locks []int32, holds []holdCursor) {
	for k, l := range m.threadLocks[tid-1] {
		if keep(l) {
			locks = append(locks, l)
			holds = append(holds, holdCursor{ops: m.threadLockOps[tid-1][k]})
		}
	}
	return locks, holds
}

// holdsAt reports whether thread tid holds lock l at position pos.
func (m *Model) holdsAt(l int32, tid, pos int32) bool {
	return holdAt(m.lockOps[lockThread{lock: l, thread: tid}], pos) >= 0
}
