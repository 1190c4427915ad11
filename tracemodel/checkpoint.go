package tracemodel

import (
	"maps"
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
// computed once, on the first DataflowOrder that can use them.
type flowCheckpoints struct {
	once  sync.Once
	every int // events between checkpoints (0: the default)
	full  []snapLog
	at    []*flowCheckpoint // by increasing idx
}

// flowCheckpoint is the state of an orderBuilder before event idx.
type flowCheckpoint struct {
	idx            int
	clocks         []int // per thread: snapshots so far (of full)
	vc, pending    []vclock
	n              []int32
	pendingBarrier []int32
	release        map[int32]eventRef
	barrier        map[int32]vclock
	flow           []varFlow // read-only: restored entries are copied
}

const (
	// minCheckpointEvery is the least distance between checkpoints, and
	// maxCheckpoints their number: each costs a copy of the data-flow
	// state of every variable.
	minCheckpointEvery = 1 << 16
	maxCheckpoints     = 16
	// checkpointBudget bounds the variables' states kept by all
	// checkpoints together (entries; about 64 bytes each, and their reads).
	checkpointBudget = 1 << 21
)

// checkpoints returns the checkpoints of the all-data-flow replay, nil when
// the trace is too short for them to save anything, or has too many
// variables to keep their states.
func (m *Model) checkpoints() []*flowCheckpoint {
	ck := m.flowCk
	if ck == nil {
		return nil
	}
	ck.once.Do(func() {
		every := ck.every
		if every <= 0 {
			every = max(minCheckpointEvery, len(m.Events)/maxCheckpoints)
			if n := checkpointBudget / max(len(m.Vars), 1); n < 2 {
				return
			} else if n < maxCheckpoints {
				every = max(every, len(m.Events)/n)
			}
		}
		if len(m.Events) < 2*every {
			return
		}
		b := m.newOrderBuilder([2]int32{-1, -1})
		b.setArena(m.newSnapArena(len(m.Events)))
		b.flow = make([]varFlow, len(m.Vars))
		for i := range m.Events {
			m.Pace(i)
			if i > 0 && i%every == 0 {
				ck.at = append(ck.at, b.save(i))
			}
			b.event(&m.Events[i], int32(i))
		}
		ck.full = b.clocks
	})
	return ck.at
}

// save returns the builder's state before event idx.
func (b *orderBuilder) save(idx int) *flowCheckpoint {
	cp := &flowCheckpoint{
		idx:            idx,
		clocks:         make([]int, len(b.clocks)),
		vc:             append([]vclock(nil), b.vc...),
		pending:        append([]vclock(nil), b.pending...),
		n:              append([]int32(nil), b.n...),
		pendingBarrier: append([]int32(nil), b.pendingBarrier...),
		release:        maps.Clone(b.release),
		barrier:        maps.Clone(b.barrier),
		flow:           make([]varFlow, len(b.flow)),
	}
	for t := range b.clocks {
		cp.clocks[t] = b.clocks[t].len()
	}
	for i := range b.flow {
		cp.flow[i] = b.flow[i].clone()
	}
	return cp
}

// restore sets a fresh builder (with its own flow) to checkpoint cp of the
// replay whose snapshots are full; the flow entries are copied from cp as
// they are first used (flowAt).
func (b *orderBuilder) restore(cp *flowCheckpoint, full []snapLog) {
	for t := range b.clocks {
		b.clocks[t] = full[t].prefix(cp.clocks[t]) // appending copies: full stays as it is
	}
	copy(b.vc, cp.vc)
	copy(b.pending, cp.pending)
	copy(b.n, cp.n)
	copy(b.pendingBarrier, cp.pendingBarrier)
	b.release = maps.Clone(cp.release)
	b.barrier = maps.Clone(cp.barrier)
	b.base = cp.flow
	b.copied = make([]bool, len(b.flow))
}

// flowAt returns the builder's data-flow state of variable v.
func (b *orderBuilder) flowAt(v int32) *varFlow {
	if b.base != nil && !b.copied[v] {
		b.flow[v] = b.base[v].clone()
		b.copied[v] = true
	}
	return &b.flow[v]
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
