package tracemodel

import (
	"iter"
	"sort"
	"sync"
)

// Model is a parsed trace: every event in observed order plus the indexes the
// projection needs. Build one with Parse or Open.
type Model struct {
	Name    string   // the trace file name, for messages
	Events  []Event  // in trace order
	Threads []Thread // index = model id - 1
	Objects []string // interned object names; index 0 is ""
	Locs    []Loc    // interned locations; index 0 is unknown
	Vars    []Var    // variables (object + generation); index 0 unused

	// Skipped counts malformed lines skipped in lenient mode; Problems
	// keeps the messages of the first of them.
	Skipped  int
	Problems []string
	// Warnings are oddities that do not stop the analysis.
	Warnings []string
	// Reached holds, by object name, the pointer path through which the
	// program first reached a heap variable that the recorder named by
	// its type and allocation site ("# reached:" comment lines); nil when
	// the trace has none.
	Reached map[string]string
	// Sources holds the source text of the trace's locations that the
	// recorder could read ("# source:" comment lines); nil when the trace
	// has none (a Pin trace). Bug ids are made from it (bugs.LineKey).
	Sources map[Loc]string
	// locSource is Sources by location index (Locs), made once the trace
	// is read: a model's every step looks its source up.
	locSource []string
	// Library holds the files of library code ("# library:" comment lines,
	// library.go); nil when the trace has none.
	Library map[string]bool
	// Containers names, by variable name, the user's variable whose
	// internals a variable touched only in library code is: "svc::g_cache.
	// map_ (std::unordered_map internals)" (library.go); nil when none.
	Containers map[string]string
	// libLoc, by location index, marks locations in library code, and
	// userRuns, per thread - 1, the user's calls that led to its events
	// there (attributeLibrary); nil when the trace names no library file.
	libLoc   []bool
	userRuns [][]userRun

	sync        *Order                  // the synchronization order
	flowCk      *flowCheckpoints        // data-flow replay states (checkpoint.go); nil: none
	syncObj     []bool                  // by object id: used by a synchronization action
	lockOps     map[lockThread][]lockOp // per (lock object, thread): its lock operations
	rwObj       []bool                  // by object id: used as a rwlock
	blocking    [][]int32               // per thread: positions of blocking events
	handoffs    [][]int32               // per thread: positions of Create, Signal, Broadcast, SemPost
	scope       []*scopeIndex           // per thread: region-scope queries (scope.go)
	waitSites   map[waitSite]bool       // wait-loop conditions (waitcond.go)
	threadLocks [][]int32               // per thread: sorted lock objects it uses
	// threadLockOps, per thread, the operations of each lock of
	// threadLocks (lockOps without a map lookup, for the data-flow
	// replays' every edge).
	threadLockOps [][][]lockOp
	update        []uint64    // bitset by event index: commutative updates (update.go); nil if none
	atomicLock    []bool      // by object id: mutexes used only as atomics (atomiclock.go); nil if none
	spill         *spillStore // the on-disk store of Events and the indexes (spill.go); nil: in memory
	maxShares     int         // the most shares of the threads' scans (shares.go); 0: GOMAXPROCS
	share         []int32     // by thread - 1: its share (threadShares), dealt by the parse
	shares        int         // the number of shares
	// scratch holds *modelScratch: the step buffers of Projection.Model,
	// reused from one model to the next (a server's models are built and
	// dropped by the thousand, and clearing fresh buffers cost a tenth).
	scratch sync.Pool
	// lists holds *modelLists: the lists of released models
	// (Model.Release), for the next models.
	lists sync.Pool
}

// Thread is one thread of the trace.
type Thread struct {
	ID     int     // model id, 1-based, in order of first appearance
	Handle string  // the token of the trace (pthread handle)
	Events []int32 // indexes into Model.Events, program order
}

// Var is a variable: an accessed object, split into generations by Free.
type Var struct {
	Name     string  // object name, with "#g" for generation g ≥ 2
	Obj      int32   // object id
	Accesses []int32 // indexes into Model.Events of its Read/Write events
	access   []Access
}

// Access is a variable's access as the scans of one variable need it: a
// copy of its event's fields, stored by variable, so that such a scan reads
// memory in order instead of events scattered over the trace (a page each
// when the trace is spilled to disk).
type Access struct {
	Ev     int32 // index into Model.Events
	Thread int32
	Pos    int32
	Kind   Kind // Read or Write
	Data   bool // Event.Data
}

// AccessesOf returns the accesses of variable v in trace order, parallel
// to Vars[v].Accesses.
func (m *Model) AccessesOf(v int) []Access { return m.Vars[v].access }

type lockThread struct {
	lock   int32
	thread int32
}

// lockOp is an operation on a lock by one thread, as the model sees it
// (recursive re-acquisitions are folded away: only outermost ones remain).
// Its fields are ordered to take 12 bytes: a server trace has one per lock
// operation, kept for the whole trace.
type lockOp struct {
	Pos int32 // position in the thread
	// Start is the position of the Lock that opened the hold this op belongs
	// to (for a Lock: its own position).
	Start int32
	Kind  StepKind
	// Wait marks the implicit release/reacquire of a cond Wait.
	Wait bool
}

// ThreadByHandle returns the model id of the thread with the given handle, or 0.
func (m *Model) ThreadByHandle(h string) int {
	for i := range m.Threads {
		if m.Threads[i].Handle == h {
			return i + 1
		}
	}
	return 0
}

// VarByName returns the id of the variable with the given name, or 0.
func (m *Model) VarByName(name string) int {
	for i := 1; i < len(m.Vars); i++ {
		if m.Vars[i].Name == name {
			return i
		}
	}
	return 0
}

// IsSyncVar reports whether variable v is a synchronization object, whose
// accesses are not analysed (paper §2.1).
func (m *Model) IsSyncVar(v int) bool { return m.syncObj[m.Vars[v].Obj] }

// Position returns the 1-based position in its thread of event index ev.
//
// It and EventAt pace the reads of a spilled model (Model.Pace) by the
// event's index: the loops that read the events through them jump from
// critical section to access, and a step in a new page maps 64 KB; about
// one index in paceEvents, by a hash that no stride defeats, looks at the
// clock.
func (m *Model) Position(ev int32) int32 {
	m.paceIndex(ev)
	return m.Events[ev].Pos
}

// EventAt returns the event at 1-based position pos of thread tid.
func (m *Model) EventAt(tid int, pos int32) *Event {
	ei := m.Threads[tid-1].Events[pos-1]
	m.paceIndex(ei)
	return &m.Events[ei]
}

// Clock returns how many events of thread other happen before (or at)
// position pos of thread tid: the position in other of the latest event
// that is causally before it, 0 if none.
// This is the synchronization order (see Order).
func (m *Model) Clock(tid int, pos int32, other int) int32 {
	return m.sync.Clock(tid, pos, other)
}

// SyncOrder returns the synchronization order of the trace.
func (m *Model) SyncOrder() *Order { return m.sync }

// DataflowOrder returns the order of the model of variable v under the
// precise semantics: the synchronization order plus the data flow observed
// on every other variable, so that no predicted interleaving makes a read of
// another variable see a different write than it saw in the recorded run.
// For every non-synchronization variable u ≠ v, across threads:
//
//   - a read of u is after the write it read from (the latest write of u
//     before it in the trace);
//   - a write of u is after the reads of u since the previous write (they
//     read the value it overwrites);
//   - when the earlier access lies in a critical section of a (non-shared)
//     lock that the later thread holds at its access, the release of that
//     critical section is before the later access, and then two writes are
//     ordered as well: critical sections that conflict on u keep their
//     order.
//
// Commutative updates of u (update.go; only in traces with DataRead) are
// not ordered with each other: an update is after the latest other write of
// u and after the other reads of u since it, and every other access of u
// keeps its place among the updates (a read is after every update before
// it since the latest other write, a write after them too), so each access
// that is not an update sees the same value as in the trace.
//
// The accesses of v itself add nothing: they are what the model reorders.
// It costs one pass over the trace.
func (m *Model) DataflowOrder(v int) *Order { return m.order(int32(v)) }

// DataflowOrderSet is DataflowOrder for the model of an atomic set {v, w}:
// the data flow of every variable but v and w.
func (m *Model) DataflowOrderSet(v, w int) *Order { return m.order(int32(v), int32(w)) }

// SharedVar is a variable accessed by at least two threads, at least one of
// which writes it. Its candidate pairs (DESIGN §3) are the pairs of its
// threads of which one writes; they are enumerated by Pairs, not stored: a
// variable written by 20,000 threads has 200 million of them.
type SharedVar struct {
	Var     int
	Name    string
	Threads []int  // model ids of the threads that access it, increasing
	Writes  []bool // Writes[i]: Threads[i] writes it
}

// PairCount returns the number of candidate pairs.
func (sv SharedVar) PairCount() int {
	n, w := len(sv.Threads), 0
	for _, b := range sv.Writes {
		if b {
			w++
		}
	}
	r := n - w // readers only: pairs of two of them are not candidates
	return n*(n-1)/2 - r*(r-1)/2
}

// Pairs enumerates the candidate pairs (t1 < t2) in increasing order.
func (sv SharedVar) Pairs() iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i, a := range sv.Threads {
			for j := i + 1; j < len(sv.Threads); j++ {
				if sv.Writes[i] || sv.Writes[j] {
					if !yield(a, sv.Threads[j]) {
						return
					}
				}
			}
		}
	}
}

// SharedVars returns the shared variables of the trace, in order of first
// access. Synchronization objects are excluded. It costs one pass over the
// accesses.
func (m *Model) SharedVars() []SharedVar {
	var out []SharedVar
	// By thread: 0 not seen, 1 reads only, 2 writes; touched lists the
	// threads to reset (a slice, not a map: this is once per access).
	state := make([]int8, len(m.Threads)+1)
	var touched []int32
	pc := m.Pacer()
	for v := 1; v < len(m.Vars); v++ {
		if m.IsSyncVar(v) {
			continue
		}
		for _, t := range touched {
			state[t] = 0
		}
		touched = touched[:0]
		anyWrite := false
		for i := range m.Vars[v].access {
			pc.Step()
			e := &m.Vars[v].access[i]
			if state[e.Thread] == 0 {
				touched = append(touched, e.Thread)
				state[e.Thread] = 1
			}
			if e.Kind == Write {
				state[e.Thread], anyWrite = 2, true
			}
		}
		if len(touched) < 2 || !anyWrite {
			continue
		}
		sv := SharedVar{Var: v, Name: m.Vars[v].Name, Threads: make([]int, 0, len(touched)), Writes: make([]bool, 0, len(touched))}
		for _, t := range touched {
			sv.Threads = append(sv.Threads, int(t))
		}
		sort.Ints(sv.Threads)
		for _, t := range sv.Threads {
			sv.Writes = append(sv.Writes, state[t] == 2)
		}
		out = append(out, sv)
	}
	return out
}

// EventCount returns the number of events kept.
func (m *Model) EventCount() int { return len(m.Events) }
