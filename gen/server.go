package gen

import (
	"sort"
	"strconv"
)

// Source lines of the server workload (file server.c).
const (
	srvFile      = "server.c"
	srvCreate    = 20
	srvLockQ     = 40 // main: lock(qlock)
	srvProduce   = 41 // main: count++
	srvPut       = 42 // main: queue_buf[tail] = req
	srvBroadcast = 44 // main: broadcast(notempty)
	srvUnlockQ   = 45
	srvBarrierL  = 48 // main: barrier_wait(epoch_bar)
	srvJoin      = 50
	srvReport    = 52 // main: print(requests, bytes)
	wrkLockQ     = 60 // worker: lock(qlock)
	wrkCheck     = 61 // worker: while (count == 0)
	wrkWait      = 62 // worker:     wait(notempty, qlock)
	wrkTake      = 63 // worker: count--
	wrkGet       = 64 // worker: req = queue_buf[head]
	wrkUnlockQ   = 65
	wrkLockS     = 70 // worker: lock(stats_lock)
	wrkRequests  = 71 // worker: requests++
	wrkBytes     = 72 // worker: bytes += req.len
	wrkUnlockS   = 73
	wrkBarrierL  = 90 // worker: barrier_wait(epoch_bar)
	// Seeded bug i has its code at lines bugBase + bugStride*i and after.
	bugBase   = 100
	bugStride = 10
)

// Objects of the server workload.
const (
	srvQLock   = "qlock"
	srvCond    = "notempty"
	srvBarrier = "epoch_bar"
	srvSLock   = "stats_lock"
	srvCount   = "count"
	srvBuf     = "queue_buf"
	srvReqs    = "requests"
	srvBytes   = "bytes"
)

// Lock ids of the scheduler: the queue lock, the stats lock, then one per
// seeded bug that needs its own.
const (
	lockQ = iota
	lockS
	numFixedLocks
)

// Gate tags of server ops.
const (
	tagNone    uint8 = iota
	tagProduce       // main's lock(qlock): waits for the early worker to block
	tagBcast         // main's broadcast
	tagPut           // main's unlock(qlock): the requests are in the queue
	tagEarly         // the early worker's check, after which it blocks
	tagWake          // the early worker's Wait: needs the broadcast
	tagTake          // a worker's lock(qlock) after the requests are in
)

// numBugKinds is the number of seeded bug templates, used in turn.
const numBugKinds = 4

// bugKindName says what the code of a seeded bug template does wrong.
func bugKindName(kind int) string {
	switch kind {
	case 0:
		return "split critical section (read and write under separate lock acquisitions)"
	case 1:
		return "unlocked check-then-use"
	case 2:
		return "unlocked flag written twice"
	}
	return "unlocked write then read back"
}

// serverBug is the code of one seeded bug.
type serverBug struct {
	kind   int
	base   int
	v      string // the variable
	lock   string // its lock (kind 0)
	lockID int
}

// workerOps appends the worker's code of the bug.
func (b *serverBug) workerOps(ops []op) []op {
	L := b.base
	switch b.kind {
	case 0: // lock; t = hits; unlock; ...; lock; hits = t + 1; unlock
		return append(ops,
			op{act: "Lock", obj: b.lock, line: L, kind: opLock, lock: b.lockID},
			op{act: "Read", obj: b.v, line: L + 1},
			op{act: "Unlock", obj: b.lock, line: L + 2, kind: opUnlock, lock: b.lockID},
			op{act: "Lock", obj: b.lock, line: L + 4, kind: opLock, lock: b.lockID},
			op{act: "Write", obj: b.v, line: L + 5},
			op{act: "Unlock", obj: b.lock, line: L + 6, kind: opUnlock, lock: b.lockID})
	case 1: // if (config) use(config)
		return append(ops, op{act: "Read", obj: b.v, line: L + 1}, op{act: "Read", obj: b.v, line: L + 3})
	case 2: // busy = 1; ...; busy = 0
		return append(ops, op{act: "Write", obj: b.v, line: L + 1}, op{act: "Write", obj: b.v, line: L + 4})
	default: // last_client = id; log(last_client)
		return append(ops, op{act: "Write", obj: b.v, line: L + 1}, op{act: "Read", obj: b.v, line: L + 3})
	}
}

// mainOps appends main's part of the bug, if any.
func (b *serverBug) mainOps(ops []op) []op {
	switch b.kind {
	case 1: // reload_config(): config = new
		return append(ops, op{act: "Write", obj: b.v, line: b.base + 8})
	case 2: // monitor: if (busy) ...
		return append(ops, op{act: "Read", obj: b.v, line: b.base + 8})
	}
	return ops
}

// seeded lists what the bug must produce.
func (b *serverBug) seeded() []SeededBug {
	L := b.base
	mk := func(pat string, lines ...int) SeededBug {
		return SeededBug{Pattern: pat, Kind: bugKindName(b.kind), Var: b.v, File: srvFile, Lines: lines}
	}
	switch b.kind {
	case 0:
		return []SeededBug{mk("P3", L+1, L+5)}
	case 1:
		return []SeededBug{mk("P1", L+1, L+3, L+8)}
	case 2:
		return []SeededBug{mk("P4", L+1, L+4, L+8), mk("P5", L+1, L+4)}
	default:
		return []SeededBug{mk("P2", L+1, L+3)}
	}
}

// writeServer writes the server workload: see the package comment.
//
// Every thread passes the epoch barrier between two epochs, and in an epoch
// a worker takes one request, so the queue and statistics code has no
// region that another thread can split: the queue counter is only accessed
// in one continuous critical section per thread and epoch (or, for the
// worker that finds the queue empty, around its wait, which is a region
// boundary). The seeded bugs are the only atomicity violations.
//
// The trace records a cond Wait when it returns, so main may lock the queue
// while one worker is blocked in its wait; at most one worker per epoch
// does that (the "early" worker), which is what the format can express.
func writeServer(e *emitter, r *rng, c Config) (Stats, error) {
	nw := c.Threads
	if nw == 0 {
		nw = 4
	}
	if nw < 2 {
		return Stats{}, &ConfigError{Msg: "server needs at least 2 worker threads"}
	}
	bugs := make([]serverBug, c.Bugs)
	var st Stats
	for i := range bugs {
		b := &bugs[i]
		b.kind = i % numBugKinds
		b.base = bugBase + bugStride*i
		n := strconv.Itoa(i + 1)
		switch b.kind {
		case 0:
			b.v, b.lock, b.lockID = "hits_"+n, "hits_lock_"+n, numFixedLocks+i
		case 1:
			b.v = "config_" + n
		case 2:
			b.v = "busy_" + n
		default:
			b.v = "last_client_" + n
		}
		st.Bugs = append(st.Bugs, b.seeded()...)
	}
	sort.SliceStable(st.Bugs, func(i, j int) bool { return st.Bugs[i].Lines[0] < st.Bugs[j].Lines[0] })
	st.Threads = nw + 1

	mainOpsN := 3 + 3*nw + 1
	workerOpsN := 6 + 6 + 1
	for i := range bugs {
		mainOpsN += len(bugs[i].mainOps(nil))
		workerOpsN += len(bugs[i].workerOps(nil))
	}
	epochs := c.Phases
	if epochs == 0 {
		epochs = 4
	}
	if c.Events > 0 {
		fixed := int64(2*nw + 2)
		per := int64(mainOpsN + nw*workerOpsN + 2)
		epochs = int(max(1, (c.Events-fixed+per-1)/per))
	}

	const mainThread = "main"
	handles := make([]string, nw)
	for i := range handles {
		handles[i] = "w" + strconv.Itoa(i+1)
	}
	s := &sched{e: e, r: r, file: srvFile, th: make([]sthread, nw+1), holder: make([]int, numFixedLocks+len(bugs))}
	s.th[0].handle = mainThread
	for i := range handles {
		s.th[i+1].handle = handles[i]
	}
	// Epoch state for the gates.
	var (
		early              int // thread index of the early worker, 0 if none
		blocked, broadcast bool
		queued, woken      bool
	)
	s.gate = func(t int, o *op) bool {
		switch o.tag {
		case tagProduce:
			return early == 0 || blocked
		case tagWake:
			return broadcast
		case tagTake:
			return queued && (early == 0 || woken)
		}
		return true
	}
	s.done = func(t int, o *op) {
		switch o.tag {
		case tagEarly:
			blocked = true
		case tagBcast:
			broadcast = true
		case tagPut:
			queued = true
		case tagWake:
			woken = true
		}
	}

	err := func() error {
		if err := e.comment("mcpredict gen --kind server --seed %d --threads %d --phases %d --bugs %d", c.Seed, nw, epochs, c.Bugs); err != nil {
			return err
		}
		for _, h := range handles {
			if err := e.event(mainThread, srvFile, srvCreate, "Create", h, ""); err != nil {
				return err
			}
		}
		for ep := 0; ep < epochs; ep++ {
			early, blocked, broadcast, queued, woken = 0, false, false, false, false
			if r.intn(3) > 0 {
				early = 1 + r.intn(nw)
			}
			ops := append(s.th[0].ops[:0], op{act: "Lock", obj: srvQLock, line: srvLockQ, kind: opLock, lock: lockQ, tag: tagProduce})
			for i := 0; i < nw; i++ {
				ops = append(ops,
					op{act: "Read", obj: srvCount, line: srvProduce},
					op{act: "Write", obj: srvCount, line: srvProduce},
					op{act: "Write", obj: srvBuf, line: srvPut})
			}
			ops = append(ops,
				op{act: "Broadcast", obj: srvCond, line: srvBroadcast, tag: tagBcast},
				op{act: "Unlock", obj: srvQLock, line: srvUnlockQ, kind: opUnlock, lock: lockQ, tag: tagPut})
			for i := range bugs {
				ops = bugs[i].mainOps(ops)
			}
			s.th[0].ops = append(ops, op{act: "BarrierWait", obj: srvBarrier, line: srvBarrierL})

			for w := 1; w <= nw; w++ {
				ops := s.th[w].ops[:0]
				if w == early {
					ops = append(ops,
						op{act: "Lock", obj: srvQLock, line: wrkLockQ, kind: opLock, lock: lockQ},
						op{act: "Read", obj: srvCount, line: wrkCheck, tag: tagEarly},
						op{act: "Wait", obj: srvCond, obj2: srvQLock, line: wrkWait, kind: opWait, lock: lockQ, tag: tagWake},
						op{act: "Read", obj: srvCount, line: wrkCheck})
				} else {
					ops = append(ops,
						op{act: "Lock", obj: srvQLock, line: wrkLockQ, kind: opLock, lock: lockQ, tag: tagTake},
						op{act: "Read", obj: srvCount, line: wrkCheck})
				}
				ops = append(ops,
					op{act: "Read", obj: srvCount, line: wrkTake},
					op{act: "Write", obj: srvCount, line: wrkTake},
					op{act: "Read", obj: srvBuf, line: wrkGet},
					op{act: "Unlock", obj: srvQLock, line: wrkUnlockQ, kind: opUnlock, lock: lockQ},
					op{act: "Lock", obj: srvSLock, line: wrkLockS, kind: opLock, lock: lockS},
					op{act: "Read", obj: srvReqs, line: wrkRequests},
					op{act: "Write", obj: srvReqs, line: wrkRequests},
					op{act: "Read", obj: srvBytes, line: wrkBytes},
					op{act: "Write", obj: srvBytes, line: wrkBytes},
					op{act: "Unlock", obj: srvSLock, line: wrkUnlockS, kind: opUnlock, lock: lockS})
				for i := range bugs {
					ops = bugs[i].workerOps(ops)
				}
				s.th[w].ops = append(ops, op{act: "BarrierWait", obj: srvBarrier, line: wrkBarrierL})
			}
			if err := s.run(); err != nil {
				return err
			}
		}
		for _, h := range handles {
			if err := e.event(mainThread, srvFile, srvJoin, "Join", h, ""); err != nil {
				return err
			}
		}
		if err := e.event(mainThread, srvFile, srvReport, "Read", srvReqs, ""); err != nil {
			return err
		}
		return e.event(mainThread, srvFile, srvReport, "Read", srvBytes, "")
	}()
	return st, e.stopErr(err)
}
