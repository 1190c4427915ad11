package gen

import "fmt"

// opKind says how an op interacts with the scheduler's lock table.
type opKind uint8

const (
	opPlain  opKind = iota // no constraint
	opLock                 // acquires lock op.lock; waits while it is held
	opUnlock               // releases lock op.lock
	// opWait is a cond Wait with mutex op.lock. The thread gives the mutex
	// up when it reaches the op (pthread_cond_wait blocks), and the op —
	// the Wait line, recorded at wake-up — takes it back.
	opWait
)

// op is one event of a thread's program in a phase.
type op struct {
	act       string // trace action
	obj, obj2 string
	line      int
	kind      opKind
	lock      int   // lock id, for lock kinds
	tag       uint8 // workload-specific, for sched.gate
}

// sthread is a thread of a phase schedule.
type sthread struct {
	handle string
	ops    []op
	pc     int
}

// sched interleaves the programs of the threads of one phase at random,
// respecting mutual exclusion and the workload's gates, and writes the
// events. Threads run until their program ends; the phase ends when all
// have.
type sched struct {
	e      *emitter
	r      *rng
	file   string
	th     []sthread
	holder []int // lock id -> holding thread + 1, 0 if free
	// gate, if set, may hold back an op whose lock is free.
	gate func(t int, o *op) bool
	// done, if set, is told about each op written.
	done   func(t int, o *op)
	active []int
}

func (s *sched) enabled(t int) bool {
	th := &s.th[t]
	o := &th.ops[th.pc]
	if (o.kind == opLock || o.kind == opWait) && s.holder[o.lock] != 0 {
		return false
	}
	return s.gate == nil || s.gate(t, o)
}

// run writes one phase.
func (s *sched) run() error {
	s.active = s.active[:0]
	for t := range s.th {
		s.th[t].pc = 0
		if len(s.th[t].ops) > 0 {
			s.active = append(s.active, t)
		}
	}
	for len(s.active) > 0 {
		n := len(s.active)
		start := s.r.intn(n)
		pick := -1
		for i := 0; i < n; i++ {
			if t := s.active[(start+i)%n]; s.enabled(t) {
				pick = (start + i) % n
				break
			}
		}
		if pick < 0 {
			return fmt.Errorf("gen: internal error: no thread can run (threads %v)", s.active)
		}
		t := s.active[pick]
		th := &s.th[t]
		o := &th.ops[th.pc]
		if err := s.e.event(th.handle, s.file, o.line, o.act, o.obj, o.obj2); err != nil {
			return err
		}
		switch o.kind {
		case opLock, opWait:
			s.holder[o.lock] = t + 1
		case opUnlock:
			s.holder[o.lock] = 0
		}
		if s.done != nil {
			s.done(t, o)
		}
		th.pc++
		if th.pc == len(th.ops) {
			s.active[pick] = s.active[n-1]
			s.active = s.active[:n-1]
		} else if nx := &th.ops[th.pc]; nx.kind == opWait {
			s.holder[nx.lock] = 0
		}
	}
	return nil
}
