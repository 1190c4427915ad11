package tracemodel

import "sync/atomic"

// Commutative updates.
//
// A recording that tells which reads steer their thread (mcpredict record
// writes DataRead for a read whose value decided no comparison, switch or
// address) lets the data-flow order leave out the order between updates of
// a counter: reference counts, statistics and sequence numbers updated
// under a lock would otherwise chain every operation of two threads that
// touch them, and hide the bug that did not happen in the recorded run.
//
// An update of u is a DataRead of u followed, as the thread's next access
// of u, by a Write of u, with no synchronization event of the thread in
// between, inside a critical section of an exclusive lock (so the update is
// atomic against the others under that lock). Assumed: its write stores a
// commutative function of the value read (x + c, x | bit), and the value
// flows nowhere else. Then the updates between two other accesses of u can
// run in any order and every other access sees the same value as in the
// trace, so every thread takes the same branches (see Model.DataflowOrder).
// Traces without DataRead (Pin traces, older recordings) have no updates.

// findUpdates marks the events of commutative updates (both the read and
// the write) in m.update; nil when the trace has no DataRead.
func (m *Model) findUpdates() {
	has := false
	for i := range m.Events {
		m.Pace(i)
		if m.Events[i].Data {
			has = true
			break
		}
	}
	if !has {
		return
	}
	m.update = make([]uint64, (len(m.Events)+63)/64)
	// One trace-order scan per share of the threads (shares.go); the
	// shares' bits may share words, so they are set atomically.
	type dataRead struct{ idx, pos int32 }
	reset := func(p *map[int32]dataRead) {
		if *p == nil {
			*p = map[int32]dataRead{}
		}
		clear(*p)
	}
	share, n := m.threadShares()
	eachShare(n, func(sh int) {
		// pending: variable → its DataRead, the thread's latest access of it
		for idx, pending := range shareEvents(m, share, int32(sh), reset) {
			e := &m.Events[idx]
			switch {
			case e.Kind.IsSync() || e.Kind == Create || e.Kind == Join:
				clear(*pending)
			case e.Kind == Read || e.Kind == Write:
				if r, ok := (*pending)[e.Obj]; ok && e.Kind == Write && m.inExclusiveHold(e.Thread, r.pos) {
					atomic.OrUint64(&m.update[r.idx/64], 1<<(r.idx%64))
					atomic.OrUint64(&m.update[idx/64], 1<<(idx%64))
				}
				delete(*pending, e.Obj)
				if e.Data {
					(*pending)[e.Obj] = dataRead{idx, e.Pos}
				}
			}
		}
	})
}

// isUpdate reports whether event idx belongs to a commutative update.
func (m *Model) isUpdate(idx int32) bool {
	return m.update != nil && m.update[idx/64]&(1<<(idx%64)) != 0
}

// inExclusiveHold reports whether thread tid holds some lock exclusively at
// position pos.
func (m *Model) inExclusiveHold(tid, pos int32) bool {
	for _, l := range m.threadLocks[tid-1] {
		if m.holdsAt(l, tid, pos) {
			return true
		}
	}
	return false
}
