package tracemodel

// Mutex-based atomics.
//
// Libraries without atomic instructions emulate them with a mutex: APR 0.9's
// apr_atomic_dec on x86_64 is "lock; *p -= 1; new = *p; unlock" (and the
// unlock reads the APR mutex's own nested field), and programs write their
// own atomic_inc the same way. The critical section of such a lock is one
// read-modify-write of one variable, like an atomic instruction; the
// caller then uses the variable as if it had done the operation itself
// (`if (apr_atomic_dec(&obj->refs) == 0)` and then a plain read of
// obj->refs, Apache bug 21287). The published-write boundary and the
// update-that-returned rule would end the caller's operation at the
// helper's unlock and return; for a write made under an atomic lock and
// followed, outside that lock and before any other shared access of the
// thread, by a read of the variable (the caller checks what its atomic
// operation left), neither ends the region (see breaks). A later use after
// other work (a reference taken, the object used, the reference dropped)
// stays another operation.

// findAtomicLocks marks the mutexes used only as atomics in m.atomicLock
// (by object id): every exclusive hold of the lock, in every thread,
// accesses one variable, reading it any number of times and writing it at
// most once (R W R: the helper returns the new value; R R W: it returns the
// old one), with no other synchronization inside and no other access but
// to settled variables (settledVars: the mutex object's own fields), and
// the lock is never the mutex of a cond Wait and never held for reading.
func (m *Model) findAtomicLocks() {
	atomic := map[int32]bool{}
	var settled []bool
	for k, ops := range m.lockOps {
		if ok, seen := atomic[k.lock]; seen && !ok {
			continue
		}
		if settled == nil {
			settled = m.settledVars()
		}
		atomic[k.lock] = !m.rwObj[k.lock] && m.atomicHolds(int(k.thread), ops, settled)
	}
	for l, ok := range atomic {
		if ok {
			if m.atomicLock == nil {
				m.atomicLock = make([]bool, len(m.Objects))
			}
			m.atomicLock[l] = true
		}
	}
}

// settledVars marks the variables (by id) that are written only before any
// other thread than their writer accesses them, by that writer: set up,
// then only read. Their reads carry nothing from one thread to another.
func (m *Model) settledVars() []bool {
	out := make([]bool, len(m.Vars))
	pc := m.Pacer()
	for v := 1; v < len(m.Vars); v++ {
		writer, other, ok := int32(0), false, true
		for i := range m.Vars[v].access {
			pc.Step()
			e := &m.Vars[v].access[i]
			if e.Kind == Write {
				if other || writer != 0 && e.Thread != writer {
					ok = false
					break
				}
				writer = e.Thread
			} else if writer != 0 && e.Thread != writer {
				other = true
			} else if writer == 0 {
				other = true // read before any write: the initial value
			}
		}
		out[v] = ok
	}
	return out
}

// atomicHolds reports whether every hold in the lock operations ops of
// thread tid is a single read-modify-write of one variable (besides
// settled ones).
func (m *Model) atomicHolds(tid int, ops []lockOp, settled []bool) bool {
	evs := m.Threads[tid-1].Events
	for i, op := range ops {
		m.Pace(i)
		if op.Wait {
			return false
		}
		if op.Kind.IsRelease() {
			// An Unlock directly followed by a Wait without a mutex is a
			// cond wait too (as mcpredict record writes it).
			if int(op.Pos) < len(evs) {
				if next := m.EventAt(tid, op.Pos+1); next.Kind == Wait {
					return false
				}
			}
			continue
		}
		end := int32(len(evs)) + 1
		if i+1 < len(ops) {
			end = ops[i+1].Pos
		}
		v, writes := int32(-1), 0
		for p := op.Pos + 1; p < end; p++ {
			e := m.EventAt(tid, p)
			switch {
			case (e.Kind == Read || e.Kind == Write) && settled[e.Obj]:
			case e.Kind == Read || e.Kind == Write:
				if v >= 0 && e.Obj != v {
					return false
				}
				v = e.Obj
				if e.Kind == Write {
					if writes++; writes > 1 {
						return false
					}
				}
			case e.Kind == Enter || e.Kind == Exit || e.Kind == Alloc || e.Kind == Free:
			default:
				return false // nested locks, cond ops, thread ops
			}
		}
	}
	return true
}

// atomicGaps answers, for the gaps between one thread's consecutive
// accesses in position order, whether a gap follows a write made under an
// atomic lock (gap).
type atomicGaps struct {
	m     *Model
	tid   int
	locks []int32      // the thread's atomic locks
	holds []holdCursor // their operations by the thread
}

// atomicGapsOf returns the atomicGaps of thread tid.
func (m *Model) atomicGapsOf(tid int) *atomicGaps {
	g := &atomicGaps{m: m, tid: tid}
	if m.atomicLock == nil {
		return g
	}
	g.locks, g.holds = m.lockCursors(tid, func(l int32) bool { return m.atomicLock[l] })
	return g
}

// gap reports, for consecutive accesses a < b by the thread (a of variable
// v; bRead: b is a read), whether a is in a hold of an atomic lock
// (findAtomicLocks) that wrote v by a or before it (the helper's write, or
// its re-read of the new value) and b is a read outside every hold of that
// lock, with no access of the thread between the release and b; lock is
// that lock. The gaps must come in position order.
func (g *atomicGaps) gap(a, b, v int32, bRead bool) (lock int32, ok bool) {
	if !bRead {
		return 0, false
	}
	for k, l := range g.locks {
		ops := g.holds[k].ops
		i := g.holds[k].at(a)
		if i < 0 || i+1 >= len(ops) || ops[i+1].Pos > b {
			continue
		}
		if later := g.holds[k]; later.at(b) >= 0 {
			continue // b in another hold: its next operation
		}
		wrote := false
		for p := ops[i].Pos + 1; p <= a && !wrote; p++ {
			e := g.m.EventAt(g.tid, p)
			wrote = e.Kind == Write && e.Obj == v
		}
		if !wrote {
			continue
		}
		for p := ops[i+1].Pos + 1; p < b; p++ {
			if g.m.EventAt(g.tid, p).Kind.IsAccess() {
				return 0, false
			}
		}
		return l, true
	}
	return 0, false
}
