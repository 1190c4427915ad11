package gen

import "strconv"

// Objects of the random workload, as constants sliced by index (no
// package-level tables): variables x, y, z; locks m1, m2 (mutexes, lock
// ids 0 and 1) and rw (the rwlock, lock id 2); conds c1, c2; one barrier
// and one semaphore; and two synchronization objects that are also read or
// written by mistake, which the parser must drop.
const (
	randVarNames  = "xyz"
	randLockNames = "m1m2rw"
	randCondNames = "c1c2"
	randMisused   = "m1c2"
	randNumVars   = len(randVarNames)
	randNumConds  = 2
	randFile      = "rand.c"
	randRW        = 2 // lock id of the rwlock
	randMaxTh     = 4
)

func randVar(i int) string  { return randVarNames[i : i+1] }
func randLock(i int) string { return randLockNames[2*i : 2*i+2] }
func randCond(i int) string { return randCondNames[2*i : 2*i+2] }

// Actions of the random workload.
const (
	aRead = iota
	aWrite
	aLock
	aUnlock
	aRdLock
	aWrLock
	aRwUnlock
	aCondWait // block in a cond wait with the only mutex held
	aWaitNoMutex
	aSignal
	aBroadcast
	aBarrier
	aSemPost
	aSemWait
	aCreate
	aJoin
	aFree
	aSyncAccess
	numActions
)

// actionWeight is how often each action is drawn when it is possible.
func actionWeight(a int) int {
	switch a {
	case aRead:
		return 12
	case aWrite:
		return 10
	case aLock, aUnlock:
		return 8
	case aRwUnlock:
		return 5
	case aCondWait, aCreate:
		return 4
	case aRdLock, aWrLock, aSignal, aJoin:
		return 3
	case aBroadcast, aBarrier, aSemPost, aSemWait:
		return 2
	}
	return 1
}

// rlock is a lock as the parser sees it.
type rlock struct {
	holder  int // exclusive holder, -1 if none
	depth   int
	readers [randMaxTh]int // read-hold depth per thread (rwlock)
	// suspended has bit t set while thread t is blocked in a cond wait
	// and another thread took the mutex over (the trace records the
	// Wait only when it returns).
	suspended uint8
}

// rthread is a thread of the random workload.
type rthread struct {
	handle  string
	started bool
	// needsCreate: the thread starts only after another thread's Create.
	needsCreate, created bool
	done                 bool // joined
	// waiting: blocked in a cond wait on cond with mutex (its only lock);
	// the Wait line is written when it returns.
	waiting      bool
	cond, mutex  int
	locksHeld    int // outermost holds of any lock
	rwRead, rwWr bool
}

type randGen struct {
	e     *emitter
	r     *rng
	th    []rthread
	locks [3]rlock
	vars  int
}

// writeRandom writes a random valid trace: each step picks a thread that
// can act and one of the actions it can do in the current state of the
// locks, so that the trace is accepted by the parser by construction (see
// DESIGN §2): locks are balanced and only unlocked by their holder, a cond
// Wait with a mutex is written when it returns, another thread may take the
// mutex of a thread blocked in a cond wait, and a waiter returns holding
// its mutex, taking it over from its holder only if that one is blocked in
// a wait on it too; joined
// threads do nothing more, and every thread ends with no lock held.
func writeRandom(e *emitter, r *rng, c Config) (Stats, error) {
	n := c.Threads
	if n == 0 {
		n = 2 + r.intn(3)
	}
	if n < 2 || n > randMaxTh {
		return Stats{}, &ConfigError{Msg: "random needs 2-4 threads"}
	}
	nv := c.Vars
	if nv == 0 {
		nv = 1 + r.intn(3)
	}
	if nv > randNumVars {
		return Stats{}, &ConfigError{Msg: "random needs 1-3 variables"}
	}
	steps := c.Events
	if steps == 0 {
		steps = int64(10 + r.intn(31))
	}
	g := &randGen{e: e, r: r, th: make([]rthread, n), vars: nv}
	for i := range g.th {
		g.th[i].handle = "T" + strconv.Itoa(i+1)
		g.th[i].needsCreate = i > 0 && r.chance(2, 3)
	}
	for i := range g.locks {
		g.locks[i].holder = -1
	}
	err := func() error {
		for i := int64(0); i < steps; i++ {
			if err := g.step(); err != nil {
				return err
			}
		}
		return g.finish()
	}()
	st := Stats{}
	for i := range g.th {
		if g.th[i].started || g.th[i].created {
			st.Threads++
		}
	}
	return st, e.stopErr(err)
}

func (g *randGen) emit(t int, action, obj, obj2 string) error {
	g.th[t].started = true
	return g.e.event(g.th[t].handle, randFile, int(g.e.events+1), action, obj, obj2)
}

// canRun reports whether thread t can write an event now.
func (g *randGen) canRun(t int) bool {
	th := &g.th[t]
	switch {
	case th.done:
		return false
	case th.waiting:
		return g.canWake(t)
	case !th.started:
		return !th.needsCreate || th.created
	}
	return true
}

// canWake reports whether the blocked thread t can return from its wait:
// the parser wants the mutex back with it, so nobody else may hold it.
func (g *randGen) canWake(t int) bool {
	l := &g.locks[g.th[t].mutex]
	if l.holder == t {
		return true
	}
	return l.suspended&(1<<t) != 0 && (l.holder < 0 || g.blockedHolder(g.th[t].mutex))
}

// canLock reports whether t may lock mutex m: it is free, t's own, or its
// holder is blocked in a cond wait on it.
func (g *randGen) canLock(t, m int) bool {
	l := &g.locks[m]
	return l.holder < 0 || l.holder == t || g.blockedHolder(m)
}

// blockedHolder reports whether the holder of mutex m is blocked in a cond
// wait on it, so that another thread can take m over: the holder is then
// suspended until its Wait is recorded.
func (g *randGen) blockedHolder(m int) bool {
	h := g.locks[m].holder
	return h >= 0 && g.th[h].waiting && g.th[h].mutex == m
}

func (g *randGen) step() error {
	var cand [randMaxTh]int
	k := 0
	for t := range g.th {
		if g.canRun(t) {
			cand[k] = t
			k++
		}
	}
	if k == 0 {
		return nil // everybody joined
	}
	t := cand[g.r.intn(k)]
	if g.th[t].waiting {
		return g.wake(t)
	}
	var w [numActions]int
	total := 0
	for a := 0; a < numActions; a++ {
		if g.possible(t, a) {
			w[a] = actionWeight(a)
			total += w[a]
		}
	}
	x := g.r.intn(total)
	a := 0
	for ; x >= w[a]; a++ {
		x -= w[a]
	}
	return g.do(t, a)
}

// possible reports whether thread t can do action a now.
func (g *randGen) possible(t, a int) bool {
	th := &g.th[t]
	rw := &g.locks[randRW]
	switch a {
	case aLock:
		return g.canLock(t, 0) || g.canLock(t, 1)
	case aUnlock:
		return g.locks[0].holder == t || g.locks[1].holder == t
	case aRdLock:
		return rw.holder < 0 || rw.holder == t
	case aWrLock:
		return (rw.holder < 0 || rw.holder == t) && g.noReaders()
	case aRwUnlock:
		return th.rwRead || th.rwWr
	case aCondWait:
		// Only with exactly one lock held, a mutex, once: then a waiter
		// holds nothing another thread could need, so no schedule can
		// get stuck.
		return th.locksHeld == 1 && !th.rwRead && !th.rwWr &&
			((g.locks[0].holder == t && g.locks[0].depth == 1) || (g.locks[1].holder == t && g.locks[1].depth == 1))
	case aCreate:
		return g.pick(t, func(u int) bool { return g.th[u].needsCreate && !g.th[u].created && !g.th[u].started }) >= 0
	case aJoin:
		return g.pick(t, g.joinable) >= 0
	}
	return true
}

// noReaders reports whether nobody holds the rwlock for reading.
func (g *randGen) noReaders() bool {
	for _, d := range g.locks[randRW].readers {
		if d > 0 {
			return false
		}
	}
	return true
}

// joinable reports whether thread u can be joined: it exists, is not
// blocked and holds no lock.
func (g *randGen) joinable(u int) bool {
	th := &g.th[u]
	return (th.started || th.created) && !th.done && !th.waiting && th.locksHeld == 0
}

// pick returns a random thread other than t that satisfies ok, or -1,
// without drawing when there is none.
func (g *randGen) pick(t int, ok func(int) bool) int {
	var c [randMaxTh]int
	k := 0
	for u := range g.th {
		if u != t && ok(u) {
			c[k] = u
			k++
		}
	}
	if k == 0 {
		return -1
	}
	return c[g.r.intn(k)]
}

func (g *randGen) do(t, a int) error {
	th := &g.th[t]
	switch a {
	case aRead, aWrite:
		act := "Read"
		if a == aWrite {
			act = "Write"
		}
		return g.emit(t, act, randVar(g.r.intn(g.vars)), "")
	case aSyncAccess:
		act := "Read"
		if g.r.chance(1, 2) {
			act = "Write"
		}
		i := g.r.intn(2)
		return g.emit(t, act, randMisused[2*i:2*i+2], "")
	case aFree:
		return g.emit(t, "Free", randVar(g.r.intn(g.vars)), "")
	case aLock:
		m := g.r.intn(2)
		if !g.canLock(t, m) {
			m = 1 - m
		}
		l := &g.locks[m]
		act := "Lock"
		if g.r.chance(1, 4) {
			act = "TryLock"
		}
		switch {
		case l.holder == t:
			l.depth++
		case l.holder >= 0: // its holder is blocked in a cond wait
			l.suspended |= 1 << l.holder
			l.holder, l.depth = t, 1
			th.locksHeld++
		default:
			l.holder, l.depth = t, 1
			th.locksHeld++
		}
		return g.emit(t, act, randLock(m), "")
	case aUnlock:
		m := g.r.intn(2)
		if g.locks[m].holder != t {
			m = 1 - m
		}
		l := &g.locks[m]
		if l.depth--; l.depth == 0 {
			l.holder = -1
			th.locksHeld--
		}
		return g.emit(t, "Unlock", randLock(m), "")
	case aRdLock:
		rw := &g.locks[randRW]
		switch {
		case rw.holder == t: // nested in its own write hold
			rw.depth++
		default:
			if rw.readers[t] == 0 {
				th.locksHeld++
				th.rwRead = true
			}
			rw.readers[t]++
		}
		return g.emit(t, "RdLock", randLock(randRW), "")
	case aWrLock:
		rw := &g.locks[randRW]
		if rw.holder == t {
			rw.depth++
		} else {
			rw.holder, rw.depth = t, 1
			th.locksHeld++
			th.rwWr = true
		}
		return g.emit(t, "WrLock", randLock(randRW), "")
	case aRwUnlock:
		g.rwUnlock(t)
		return g.emit(t, "RwUnlock", randLock(randRW), "")
	case aCondWait:
		m := 0
		if g.locks[0].holder != t {
			m = 1
		}
		th.waiting, th.cond, th.mutex = true, g.r.intn(randNumConds), m
		return nil
	case aWaitNoMutex:
		return g.emit(t, "Wait", randCond(g.r.intn(randNumConds)), "")
	case aSignal:
		return g.emit(t, "Signal", randCond(g.r.intn(randNumConds)), "")
	case aBroadcast:
		return g.emit(t, "Broadcast", randCond(g.r.intn(randNumConds)), "")
	case aBarrier:
		return g.emit(t, "BarrierWait", "b", "")
	case aSemPost:
		return g.emit(t, "SemPost", "s", "")
	case aSemWait:
		return g.emit(t, "SemWait", "s", "")
	case aCreate:
		u := g.pick(t, func(u int) bool { return g.th[u].needsCreate && !g.th[u].created && !g.th[u].started })
		g.th[u].created = true
		return g.emit(t, "Create", g.th[u].handle, "")
	case aJoin:
		u := g.pick(t, g.joinable)
		g.th[u].done = true
		return g.emit(t, "Join", g.th[u].handle, "")
	}
	return nil
}

// rwUnlock releases one level of t's hold of the rwlock.
func (g *randGen) rwUnlock(t int) {
	th := &g.th[t]
	rw := &g.locks[randRW]
	if rw.holder == t {
		if rw.depth--; rw.depth == 0 {
			rw.holder = -1
			th.locksHeld--
			th.rwWr = false
		}
		return
	}
	if rw.readers[t]--; rw.readers[t] == 0 {
		th.locksHeld--
		th.rwRead = false
	}
}

// wake writes the Wait of a blocked thread, which returns with its mutex.
func (g *randGen) wake(t int) error {
	th := &g.th[t]
	l := &g.locks[th.mutex]
	if l.holder != t { // suspended: take the mutex back, over a blocked holder
		l.suspended &^= 1 << t
		if l.holder >= 0 {
			l.suspended |= 1 << l.holder
		}
		l.holder, l.depth = t, 1
	}
	th.waiting = false
	return g.emit(t, "Wait", randCond(th.cond), randLock(th.mutex))
}

// finish wakes every blocked thread and releases every lock, so that the
// trace ends with balanced locks. It always ends: a blocked thread that
// holds its mutex can wake, a suspended one can once its mutex is free or
// held by a blocked thread, and a thread that is not blocked can release
// what it holds.
func (g *randGen) finish() error {
	for progress := true; progress; {
		progress = false
		for t := range g.th {
			th := &g.th[t]
			switch {
			case th.done:
			case th.waiting:
				if g.canWake(t) {
					if err := g.wake(t); err != nil {
						return err
					}
					progress = true
				}
			case th.locksHeld > 0:
				if err := g.releaseOne(t); err != nil {
					return err
				}
				progress = true
			}
		}
	}
	for t := range g.th {
		if g.th[t].waiting || g.th[t].locksHeld > 0 {
			return &ConfigError{Msg: "internal error: random trace ends with a lock held"}
		}
	}
	return nil
}

// releaseOne writes one unlock of a lock thread t holds.
func (g *randGen) releaseOne(t int) error {
	for m := 0; m < 2; m++ {
		if l := &g.locks[m]; l.holder == t {
			if l.depth--; l.depth == 0 {
				l.holder = -1
				g.th[t].locksHeld--
			}
			return g.emit(t, "Unlock", randLock(m), "")
		}
	}
	g.rwUnlock(t)
	return g.emit(t, "RwUnlock", randLock(randRW), "")
}
