package conflict

import "github.com/mcpredict/mcpredict/tracemodel"

// An access is what an event does to one object, for the conflict
// relation: two accesses of different threads to one object conflict
// unless both read it. Objects are ids of objVar, objSync and objThread.
type access struct {
	obj   int32
	write bool
	// pseudo marks an access that the event makes on behalf of an earlier
	// one of its thread: the departure from a barrier (the thread's first
	// event after its BarrierWait) and a thread's start (its first event
	// after its Create).
	pseudo bool
}

// Objects are numbered by kind: the class in the high bits of an id, the
// index within the class below them: a variable is its index in
// Model.Vars, a synchronization object (lock, condition variable,
// semaphore, barrier) its index in Model.Objects, and each thread has an
// object (written by its Create, read by its first event) numbered by its
// model id. A class grows as a trace being read names more of its kind.
const (
	classVar    int32 = 0
	classSync   int32 = 1 << 29
	classThread int32 = 2 << 29
	classIndex  int32 = 1<<29 - 1 // the index bits
)

func objVar(v int32) int32      { return classVar | v }
func objSync(obj int32) int32   { return classSync | obj }
func objThread(tid int32) int32 { return classThread | tid }

// objName returns the name of object id.
func objName(m *tracemodel.Model, id int32) string {
	i := id & classIndex
	switch id &^ classIndex {
	case classVar:
		return m.Vars[i].Name
	case classSync:
		return m.Objects[i]
	}
	return m.Threads[i-1].Handle
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
	m *tracemodel.Model
	// created marks threads whose Create was seen.
	created []bool
	// rw are the modes of the holds of rwlocks, per thread and lock
	// (outermost last): true for a read hold.
	rw map[uint64][]bool
	// shared records the RwUnlock events that release a read hold, and
	// departs the events that leave a barrier (the barrier object), so
	// that a replay from the middle of the trace (the witness) knows them.
	shared  map[int32]bool
	departs map[int32]int32
	// barrier is, by thread, the barrier of its previous event if that was
	// a BarrierWait, 0 if not.
	barrier []int32
	// replay uses shared and departs instead of tracking holds and
	// barriers.
	replay bool
}

func newAccessor(m *tracemodel.Model) *accessor {
	return &accessor{m: m, rw: map[uint64][]bool{}, shared: map[int32]bool{}, departs: map[int32]int32{}}
}

// replayer returns an accessor for a replay of part of the trace that a
// acc has seen whole: it knows the rwlock modes and the barriers' departures,
// and every thread created before the replay's start counts as created.
func (a *accessor) replayer(start int32) *accessor {
	r := &accessor{m: a.m, shared: a.shared, departs: a.departs, replay: true}
	for i := int32(0); i < start; i++ {
		if e := &a.m.Events[i]; e.Kind == tracemodel.Create {
			r.mark(e.Obj)
		}
	}
	return r
}

// mark records that thread tid was created.
func (a *accessor) mark(tid int32) {
	for int(tid) >= len(a.created) {
		a.created = append(a.created, false)
	}
	a.created[tid] = true
}

// of appends the accesses of event ev to buf. Outside a replay it must be
// called for every event, in trace order.
func (a *accessor) of(ev int32, buf []access) []access {
	m := a.m
	e := &m.Events[ev]
	t := e.Thread
	if e.Pos == 1 && int(t) < len(a.created) && a.created[t] {
		buf = append(buf, access{obj: objThread(t), pseudo: true})
	}
	if a.replay {
		if b, ok := a.departs[ev]; ok {
			buf = append(buf, access{obj: objSync(b), pseudo: true})
		}
	} else {
		for int(t) >= len(a.barrier) {
			a.barrier = append(a.barrier, 0)
		}
		if b := a.barrier[t]; b != 0 {
			buf = append(buf, access{obj: objSync(b), pseudo: true})
			a.departs[ev] = b
		}
		a.barrier[t] = 0
		if e.Kind == tracemodel.BarrierWait {
			a.barrier[t] = e.Obj
		}
	}
	switch e.Kind {
	case tracemodel.Read, tracemodel.Write:
		if !m.SyncObjectSoFar(m.Vars[e.Obj].Obj) {
			buf = append(buf, access{obj: objVar(e.Obj), write: e.Kind == tracemodel.Write})
		}
	case tracemodel.Lock, tracemodel.TryLock, tracemodel.Unlock,
		tracemodel.Signal, tracemodel.Broadcast, tracemodel.SemPost, tracemodel.SemWait, tracemodel.BarrierWait:
		buf = append(buf, access{obj: objSync(e.Obj), write: true})
	case tracemodel.WrLock, tracemodel.RdLock:
		if !a.replay {
			k := uint64(e.Thread)<<32 | uint64(uint32(e.Obj))
			a.rw[k] = append(a.rw[k], e.Kind == tracemodel.RdLock)
		}
		buf = append(buf, access{obj: objSync(e.Obj), write: e.Kind == tracemodel.WrLock})
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
		buf = append(buf, access{obj: objSync(e.Obj), write: !read})
	case tracemodel.Wait:
		buf = append(buf, access{obj: objSync(e.Obj)})
		if e.Obj2 != 0 {
			buf = append(buf, access{obj: objSync(e.Obj2), write: true})
		}
	case tracemodel.Create:
		buf = append(buf, access{obj: objThread(e.Obj), write: true})
		a.mark(e.Obj)
	}
	return buf
}
