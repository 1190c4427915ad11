package tracemodel

import "slices"

// Wait conditions (the precise semantics, ProjectOptions.WaitConditions).
//
// A variable read in the condition of a cond-wait loop —
//
//	lock(m); while (st != WORK) wait(c, m); ...; unlock(m)
//
// — is a synchronization variable for the thread that checks it: had the
// value been different, the thread would have blocked there. When the
// check passes at once, no Wait is recorded and nothing marks the point.
// The trace still shows the loop wherever some thread did block: the
// accesses to v in a critical section of m that ends in a cond Wait on m
// (or in an Unlock of m directly followed by a Wait without a mutex, as
// mcpredict record writes a wait) are the condition's code locations (wait
// sites). Every critical section
// of m that accesses v at a wait site then ends v's regions at its release,
// like the blocking point it could have been: a thread that waits for
// st == WORK and later sets st = DONE performs two operations, not a
// check-then-act. Other variables of the critical section keep their
// regions, so a value read after the wait and written back later is still
// a lost update.

// waitSite is a code location where a variable is read or written in the
// condition of a cond wait on a mutex.
type waitSite struct {
	v    int32 // variable id
	lock int32 // mutex object id
	loc  int32
}

// buildWaitSites finds the wait sites of the trace.
func (m *Model) buildWaitSites() map[waitSite]bool {
	sites := map[waitSite]bool{}
	pc := m.Pacer()
	for tid := range m.Threads {
		for _, l := range m.threadLocks[tid] {
			for _, op := range m.lockOps[lockThread{lock: l, thread: int32(tid + 1)}] {
				pc.Step()
				if !op.Kind.IsRelease() {
					continue
				}
				// A cond Wait with its mutex, or (as mcpredict record
				// writes it) an Unlock followed by a Wait without one.
				if !op.Wait {
					th := &m.Threads[tid]
					if int(op.Pos) >= len(th.Events) {
						continue
					}
					if next := m.EventAt(tid+1, op.Pos+1); next.Kind != Wait || next.Obj2 != 0 {
						continue
					}
				}
				for p := op.Start + 1; p < op.Pos; p++ {
					if e := m.EventAt(tid+1, p); e.Kind.IsAccess() && e.Loc != 0 {
						sites[waitSite{v: e.Obj, lock: l, loc: e.Loc}] = true
					}
				}
			}
		}
	}
	return sites
}

// waitConds answers waitCondRelease for the accesses of one thread of
// the variables vars, in position order.
type waitConds struct {
	m     *Model
	tid   int
	locks []int32      // the thread's locks with a wait site of one of vars
	holds []holdCursor // their operations by the thread
}

// waitCondsOf returns the waitConds of thread tid and variables vars.
func (m *Model) waitCondsOf(tid int, vars []int32) *waitConds {
	w := &waitConds{m: m, tid: tid}
	if len(m.waitSites) == 0 {
		return w
	}
	w.locks, w.holds = m.lockCursors(tid, func(l int32) bool {
		for s := range m.waitSites {
			if s.lock == l && slices.Contains(vars, s.v) {
				return true
			}
		}
		return false
	})
	return w
}

// release returns the release of the critical section around the access
// at position a of the thread when that critical section accesses
// variable v at a wait site of its mutex, 0 otherwise. The positions a
// must not decrease from one call to the next.
func (w *waitConds) release(v int32, a int32) int32 {
	best := int32(0)
	for k, l := range w.locks {
		ops := w.holds[k].ops
		i := w.holds[k].at(a)
		if i < 0 || i+1 >= len(ops) || ops[i+1].Wait {
			continue // not held, never released, or a wait: a boundary already
		}
		rel := ops[i+1].Pos
		for p := ops[i].Pos + 1; p < rel; p++ {
			if e := w.m.EventAt(w.tid, p); e.Kind.IsAccess() && e.Obj == v && w.m.waitSites[waitSite{v: v, lock: l, loc: e.Loc}] {
				if best == 0 || rel < best {
					best = rel
				}
				break
			}
		}
	}
	return best
}
