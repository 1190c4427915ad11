package conflict

import "github.com/mcpredict/mcpredict/tracemodel"

// An access is what an event does to one object, for the conflict
// relation: two accesses of different threads to one object conflict
// unless both read it. Objects are dense ids (objects.id).
type access struct {
	obj   int32
	write bool
	// pseudo marks an access that the event makes on behalf of an earlier
	// one of its thread: the departure from a barrier (the thread's first
	// event after its BarrierWait) and a thread's start (its first event
	// after its Create).
	pseudo bool
}

// objects numbers the objects of the conflict relation densely: the
// variables (by generation), then the synchronization objects (locks,
// condition variables, semaphores, barriers), then one object per thread
// (written by its Create, read by its first event).
type objects struct {
	nVars, nObjs int32
}

func newObjects(m *tracemodel.Model) objects {
	return objects{nVars: int32(len(m.Vars)), nObjs: int32(len(m.Objects))}
}

func (o objects) count(m *tracemodel.Model) int { return int(o.nVars+o.nObjs) + len(m.Threads) + 1 }
func (o objects) variable(v int32) int32        { return v }
func (o objects) sync(obj int32) int32          { return o.nVars + obj }
func (o objects) thread(tid int32) int32        { return o.nVars + o.nObjs + tid }

// name returns the name of object id.
func (o objects) name(m *tracemodel.Model, id int32) string {
	switch {
	case id < o.nVars:
		return m.Vars[id].Name
	case id < o.nVars+o.nObjs:
		return m.Objects[id-o.nVars]
	}
	return m.Threads[id-o.nVars-o.nObjs-1].Handle
}

// accessor computes the accesses of events in trace order. The
// conflict relation (package comment, "What conflicts"):
//
//   - Read (DataRead too) and Write of a variable that is not a
//     synchronization object: read, write;
//   - Lock, TryLock, WrLock, Unlock, and RwUnlock of a write hold: a
//     write of the lock; RdLock and RwUnlock of a read hold: a read of it
//     (every two operations of one mutex conflict, as in Velodrome;
//     read holds of a rwlock commute);
//   - Signal, Broadcast, SemPost, SemWait: a write of the object; Wait: a
//     read of the condition variable and, with a mutex, a write of the
//     mutex (its release and reacquisition);
//   - BarrierWait: a write of the barrier, and the thread's next event a
//     read of it (the departure);
//   - Create: a write of the child, and the child's first event a read of
//     it (if it comes after the Create).
//
// Join is no access: the joiner is ordered after every event of the child
// before it (the analyzer joins the child's clock).
type accessor struct {
	m   *tracemodel.Model
	obj objects
	// created marks threads whose Create was seen.
	created []bool
	// rw are the modes of the holds of rwlocks, per thread and lock
	// (outermost last): true for a read hold.
	rw map[uint64][]bool
	// shared records the RwUnlock events that release a read hold, so
	// that a replay from the middle of the trace (the witness) knows them.
	shared map[int32]bool
	// replay uses shared instead of tracking holds.
	replay bool
}

func newAccessor(m *tracemodel.Model) *accessor {
	return &accessor{m: m, obj: newObjects(m), created: make([]bool, len(m.Threads)+1), rw: map[uint64][]bool{}, shared: map[int32]bool{}}
}

// replayer returns an accessor for a replay of part of the trace that a
// acc has seen whole: it knows the rwlock modes, and every thread created
// before the replay's start counts as created.
func (a *accessor) replayer(start int32) *accessor {
	r := &accessor{m: a.m, obj: a.obj, created: make([]bool, len(a.m.Threads)+1), shared: a.shared, replay: true}
	for i := int32(0); i < start; i++ {
		if e := &a.m.Events[i]; e.Kind == tracemodel.Create {
			r.created[e.Obj] = true
		}
	}
	return r
}

// of appends the accesses of event ev to buf.
func (a *accessor) of(ev int32, buf []access) []access {
	m := a.m
	e := &m.Events[ev]
	if e.Pos == 1 && a.created[e.Thread] {
		buf = append(buf, access{obj: a.obj.thread(e.Thread), pseudo: true})
	}
	if e.Pos > 1 {
		if p := &m.Events[m.Threads[e.Thread-1].Events[e.Pos-2]]; p.Kind == tracemodel.BarrierWait {
			buf = append(buf, access{obj: a.obj.sync(p.Obj), pseudo: true})
		}
	}
	switch e.Kind {
	case tracemodel.Read, tracemodel.Write:
		if !m.IsSyncVar(int(e.Obj)) {
			buf = append(buf, access{obj: a.obj.variable(e.Obj), write: e.Kind == tracemodel.Write})
		}
	case tracemodel.Lock, tracemodel.TryLock, tracemodel.Unlock,
		tracemodel.Signal, tracemodel.Broadcast, tracemodel.SemPost, tracemodel.SemWait, tracemodel.BarrierWait:
		buf = append(buf, access{obj: a.obj.sync(e.Obj), write: true})
	case tracemodel.WrLock, tracemodel.RdLock:
		if !a.replay {
			k := uint64(e.Thread)<<32 | uint64(uint32(e.Obj))
			a.rw[k] = append(a.rw[k], e.Kind == tracemodel.RdLock)
		}
		buf = append(buf, access{obj: a.obj.sync(e.Obj), write: e.Kind == tracemodel.WrLock})
	case tracemodel.RwUnlock:
		read := a.shared[ev]
		if !a.replay {
			k := uint64(e.Thread)<<32 | uint64(uint32(e.Obj))
			if hs := a.rw[k]; len(hs) > 0 {
				read = hs[len(hs)-1]
				if len(hs) == 1 {
					delete(a.rw, k)
				} else {
					a.rw[k] = hs[:len(hs)-1]
				}
			}
			if read {
				a.shared[ev] = true
			}
		}
		buf = append(buf, access{obj: a.obj.sync(e.Obj), write: !read})
	case tracemodel.Wait:
		buf = append(buf, access{obj: a.obj.sync(e.Obj)})
		if e.Obj2 != 0 {
			buf = append(buf, access{obj: a.obj.sync(e.Obj2), write: true})
		}
	case tracemodel.Create:
		buf = append(buf, access{obj: a.obj.thread(e.Obj), write: true})
		a.created[e.Obj] = true
	}
	return buf
}
