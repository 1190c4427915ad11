package tracemodel

import (
	"maps"
	"sort"
	"sync"
)

// Data-flow orders from checkpoints.
//
// The data-flow order of variable v (DataflowOrder) is the order with the
// observed data flow of every variable but v. Before v's first access
// nothing of v has happened, so up to there it is the order with the data
// flow of every variable: one replay of the trace with all the data flow
// saves its state at checkpoints, and the order of v replays only from the
// last checkpoint before v's first access. A server trace whose thousands
// of variables each live for a moment of the run then costs a fraction of
// a pass per variable instead of a whole one.

// flowCheckpoints are the saved states of the all-data-flow replay,
// computed once, on the first DataflowOrder that can use them. A
// checkpoint keeps the state of the synchronization (clocks, pending
// hand-offs), and the variables' data-flow states are kept as versions: a
// variable's state is saved at a checkpoint only when the stretch before
// it accessed the variable. Checkpoints then cost what the accesses between
// them touch, not every variable each, so there can be many: a replay
// starts close to its variable's first access.
type flowCheckpoints struct {
	once  sync.Once
	every int // events between checkpoints (0: chosen by checkpointSpacing)
	full  []snapLog
	at    []*flowCheckpoint // by increasing idx
	// versions, by variable id: its data-flow state at the checkpoints
	// whose stretch before accessed it, by increasing checkpoint.
	versions [][]flowVersion
	// ordered, by variable id: its data flow changed a clock in the replay
	// of every variable. A variable whose data flow never did adds nothing
	// to that order: its data-flow order is the order of every variable's
	// data flow (allFlowOrder), replayed once.
	ordered []bool
	all     *Order
}

// flowVersion is a variable's data-flow state at checkpoint k (and at the
// later ones, until its next version).
type flowVersion struct {
	k    int32
	flow varFlow // read-only: restored states are copied
}

// flowCheckpoint is the state of an orderBuilder before event idx.
type flowCheckpoint struct {
	idx            int
	k              int32 // its index in flowCheckpoints.at
	clocks         []int // per thread: snapshots so far (of full)
	vc, pending    []vclock
	n              []int32
	pendingBarrier []int32
	release        map[int32]eventRef
	barrier        map[int32]vclock
}

const (
	// minCheckpointEvery is the least distance between checkpoints, and
	// maxCheckpoints their number.
	minCheckpointEvery = 1 << 12
	maxCheckpoints     = 1 << 10
	// checkpointBudget bounds the variables' states kept by all
	// checkpoints together (versions; about 64 bytes each, and their
	// reads).
	checkpointBudget = 1 << 21
	// versionBytes is what a version takes with its reads, about.
	versionBytes = 96
)

// PrepareDataflow replays the trace with every variable's data flow now,
// if no data-flow order has yet: the checkpoints that the data-flow orders
// of the variables start from (and the order of those whose data flow
// orders nothing). It is one pass over the trace that the first data-flow
// order would otherwise make while the others wait; a caller calls it
// where it can overlap other work. Safe for concurrent use.
func (m *Model) PrepareDataflow() { m.checkpoints() }

// checkpoints returns the checkpoints of the all-data-flow replay, nil when
// the trace is too short for them to save anything.
func (m *Model) checkpoints() []*flowCheckpoint {
	ck := m.flowCk
	if ck == nil {
		return nil
	}
	ck.once.Do(func() {
		every := ck.every
		if every <= 0 {
			every = m.checkpointSpacing()
		}
		if len(m.Events) < 2*every {
			return
		}
		b := m.newOrderBuilder([2]int32{-1, -1})
		b.setArena(m.newSnapArena(len(m.Events)))
		b.withFlow, b.flow = true, make([]varFlow, len(m.Vars))
		b.touched = make([]bool, len(m.Vars))
		b.ordered = make([]bool, len(m.Vars))
		ck.versions = make([][]flowVersion, len(m.Vars))
		for i := range m.Events {
			m.Pace(i)
			if i > 0 && i%every == 0 {
				k := int32(len(ck.at))
				for _, v := range b.changed {
					ck.versions[v] = append(ck.versions[v], flowVersion{k: k, flow: b.flow[v].clone()})
					b.touched[v] = false
				}
				b.changed = b.changed[:0]
				ck.at = append(ck.at, b.save(i, k))
			}
			b.event(&m.Events[i], int32(i))
		}
		ck.full = b.clocks
		ck.ordered = b.ordered
		ck.all = &Order{clocks: b.clocks, arena: b.arena, shared: true}
		ck.all.replayed.Store(true)
	})
	return ck.at
}

// allFlowOrder returns the order of every variable's data flow when it is
// the data-flow order of the variables ex (one, or an atomic set): the
// data flow of neither changed a clock in that replay, so leaving it out
// changes none. Nil otherwise, or when the trace has no checkpoints.
//
// Most variables of a server are objects whose every read is already
// ordered after its write by the locks and hand-offs of other data; a
// replay of the trace for each of them was most of the time of a run
// (an Apache recording of 4.27 M events: hundreds of replays of millions
// of events each).
func (m *Model) allFlowOrder(ex [2]int32) *Order {
	if m.checkpoints() == nil {
		return nil
	}
	ck := m.flowCk
	if ck.ordered == nil || ck.ordered[ex[0]] || ck.ordered[ex[1]] {
		return nil
	}
	return ck.all
}

// checkpointSpacing returns the distance between checkpoints: the least
// (a power of two times minCheckpointEvery) that makes at most
// maxCheckpoints checkpoints whose versions fit checkpointBudget. A
// variable has a version at each checkpoint after a stretch that accessed
// it, so the versions of a spacing are counted from the accesses. A
// spilled model keeps its versions, which stay on the heap, within an
// quarter of the resident size it was given (--max-memory): at its default
// budget they alone took 170 MB of a 2 M-event trace run with 256 MiB.
func (m *Model) checkpointSpacing() int {
	budget := checkpointBudget
	if m.spill != nil {
		budget = min(budget, int(max(m.spill.maxResident/4/versionBytes, 1<<12)))
	}
	every := max(minCheckpointEvery, len(m.Events)/maxCheckpoints)
	for ; every < len(m.Events); every *= 2 {
		versions := 0
		for v := 1; v < len(m.Vars) && versions <= budget; v++ {
			last := int32(-1)
			for _, ev := range m.Vars[v].Accesses {
				if s := ev / int32(every); s != last {
					versions, last = versions+1, s
				}
			}
		}
		if versions <= budget {
			break
		}
	}
	return every
}

// save returns the builder's state before event idx, checkpoint k (the
// variables' states are saved as versions by the caller).
func (b *orderBuilder) save(idx int, k int32) *flowCheckpoint {
	cp := &flowCheckpoint{
		idx:            idx,
		k:              k,
		clocks:         make([]int, len(b.clocks)),
		vc:             append([]vclock(nil), b.vc...),
		pending:        append([]vclock(nil), b.pending...),
		n:              append([]int32(nil), b.n...),
		pendingBarrier: append([]int32(nil), b.pendingBarrier...),
		release:        maps.Clone(b.release),
		barrier:        maps.Clone(b.barrier),
	}
	for t := range b.clocks {
		cp.clocks[t] = b.clocks[t].len()
	}
	return cp
}

// restore sets a fresh builder to checkpoint cp of the replay whose
// snapshots are full; the variables' states are copied from their versions
// as they are first used (flowAt).
func (b *orderBuilder) restore(cp *flowCheckpoint, ck *flowCheckpoints) {
	for t := range b.clocks {
		b.clocks[t] = ck.full[t].prefix(cp.clocks[t]) // appending copies: full stays as it is
	}
	copy(b.vc, cp.vc)
	copy(b.pending, cp.pending)
	copy(b.n, cp.n)
	copy(b.pendingBarrier, cp.pendingBarrier)
	b.release = maps.Clone(cp.release)
	b.barrier = maps.Clone(cp.barrier)
	b.versions, b.at = ck.versions, cp.k
}

// flowAt returns the builder's data-flow state of variable v.
func (b *orderBuilder) flowAt(v int32) *varFlow {
	if b.flows == nil {
		// The replay of every variable (checkpoints): note the change.
		if b.touched != nil && !b.touched[v] {
			b.touched[v] = true
			b.changed = append(b.changed, v)
		}
		return &b.flow[v]
	}
	f := b.flows.get(v)
	if f == nil {
		f = &varFlow{}
		if b.versions != nil {
			vs := b.versions[v]
			if i := sort.Search(len(vs), func(i int) bool { return vs[i].k > b.at }) - 1; i >= 0 {
				*f = vs[i].flow.clone()
			}
		}
		b.flows.put(v, f)
	}
	return f
}

// clone returns a copy of f that shares no memory with it.
func (f varFlow) clone() varFlow {
	if len(f.updates) > 0 {
		f.updates = append([]eventRef(nil), f.updates...)
	} else {
		f.updates = nil
	}
	if len(f.reads) > 0 {
		f.reads = append([]eventRef(nil), f.reads...)
	} else {
		f.reads = nil
	}
	return f
}

// flowTable holds a data-flow order's variable states by variable id: a
// slice when the trace has few enough variables that one per order costs
// little (its lookups were a tenth of an Apache run, in a map), else a map.
type flowTable struct {
	dense  []*varFlow
	sparse map[int32]*varFlow
}

// maxDenseFlows is the most variables for which a flowTable is a slice
// (1 MiB of pointers).
const maxDenseFlows = 1 << 17

func newFlowTable(vars int) *flowTable {
	if vars <= maxDenseFlows {
		return &flowTable{dense: make([]*varFlow, vars)}
	}
	return &flowTable{sparse: map[int32]*varFlow{}}
}

func (t *flowTable) get(v int32) *varFlow {
	if t.dense != nil {
		return t.dense[v]
	}
	return t.sparse[v]
}

func (t *flowTable) put(v int32, f *varFlow) {
	if t.dense != nil {
		t.dense[v] = f
		return
	}
	t.sparse[v] = f
}
