package tracemodel

import (
	"maps"
	"slices"
)

// Thread pairs that their locks keep apart.
//
// A pattern that needs a remote access between two local ones (P1–P5,
// M1–M6: ltl.Pattern.Interleaved) cannot match when the local thread holds
// a lock across its two accesses, in one hold, that the remote thread holds
// at every access of the variables: the model's lock statements keep the
// remote access out of that stretch in every interleaving. native.Impossible
// decides such claims one model at a time, after the model is built; a
// server's statistics under one lock are most of its accesses, and their
// models most of the time. Locked decides it from the accesses alone, so
// that the planner leaves those pairs out.

// lockGuard is what one thread's accesses of the indexed variables tell
// about the locks that keep another thread out (see AccessIndex.Locked).
// Locks are bits over the index's candidate locks (the first 64 held at
// every access of some thread): a lock left out only keeps a pair in.
type lockGuard struct {
	// held: the candidate locks the thread holds, exclusively, at every
	// access.
	held uint64
	// across: for each pair of consecutive accesses, the candidate locks
	// it holds across both in one hold (distinct values).
	across []uint64
	// open: some consecutive pair is in no common hold of a candidate.
	open bool
}

// Locked reports whether every pattern that needs an access of t2 between
// two accesses of t1 of one region, or of t1 between two of t2, is
// excluded by the locks: every two consecutive accesses of each thread are
// in one exclusive hold of a lock that the other thread holds at each of
// its accesses — or, with regions (region boundaries on), a blocking event
// of the thread lies between them. Such a pair's model has no instance of
// those patterns.
func (x *AccessIndex) Locked(t1, t2 int, regions bool) bool {
	x.guardsOnce()
	if x.candidates == nil {
		return false
	}
	g1, g2 := x.guard(t1, regions), x.guard(t2, regions)
	return g1.excludes(g2) && g2.excludes(g1)
}

// guardKey is a thread and whether blocking events end its regions.
type guardKey struct {
	thread  int
	regions bool
}

// excludes reports whether the locks keep r's accesses out of every stretch
// between two consecutive accesses of g's thread.
func (g *lockGuard) excludes(r *lockGuard) bool {
	if g.open {
		return false
	}
	for _, a := range g.across {
		if a&r.held == 0 {
			return false
		}
	}
	return true
}

// guardsOnce finds the candidate locks: those some thread holds at every
// one of its accesses. With none (most variables of a program without
// locks), Locked is false at once.
func (x *AccessIndex) guardsOnce() {
	if x.guards != nil {
		return
	}
	x.guards = map[guardKey]*lockGuard{}
	m := x.c.m
	seen := map[int32]bool{}
	// By thread, in order: which 64 locks are the candidates must not
	// depend on a map's order.
	for _, t := range slices.Sorted(maps.Keys(x.all)) {
		for _, l := range m.alwaysHeld(t, x.all[t]) {
			if !seen[l] && len(x.candidates) < 64 {
				seen[l] = true
				x.candidates = append(x.candidates, l)
			}
		}
	}
}

// guard returns thread t's lockGuard, computed on first use.
func (x *AccessIndex) guard(t int, regions bool) *lockGuard {
	key := guardKey{t, regions}
	if g, ok := x.guards[key]; ok {
		return g
	}
	m := x.c.m
	ps := x.all[t]
	g := &lockGuard{}
	x.guards[key] = g
	var blocking []int32 // the thread's blocking events, with regions
	if regions && t > 0 && t <= len(m.blocking) {
		blocking = m.blocking[t-1]
	}
	b := 0 // blocking[:b] are before the previous access
	// The candidate locks the thread uses, with their operations.
	type lockOps struct {
		bit uint64
		ops []lockOp
	}
	var mine []lockOps
	for i, l := range x.candidates {
		if ops := m.lockOps[lockThread{lock: l, thread: int32(t)}]; len(ops) > 0 {
			mine = append(mine, lockOps{bit: 1 << i, ops: ops})
		}
	}
	holds := make([]int, len(mine)) // per lock: the hold at the previous access
	g.held = ^uint64(0)
	for k, p := range ps {
		m.Pace(k)
		var held, across uint64
		for i := range mine {
			h := holdAt(mine[i].ops, p)
			if h >= 0 {
				held |= mine[i].bit
				if k > 0 && h == holds[i] {
					across |= mine[i].bit
				}
			}
			holds[i] = h
		}
		g.held &= held
		if k == 0 {
			continue
		}
		for b < len(blocking) && blocking[b] < ps[k-1] {
			b++
		}
		if b < len(blocking) && blocking[b] < p {
			continue // another region: nothing to keep out
		}
		if across == 0 {
			g.open = true
			break
		}
		if len(g.across) == 0 || g.across[len(g.across)-1] != across {
			g.across = addMask(g.across, across)
		}
	}
	if g.open {
		// The thread cannot be the local one; as the remote one, only its
		// locks held at every access count.
		g.held = 0
		for i := range mine {
			if allHeld(m, mine[i].ops, ps) {
				g.held |= mine[i].bit
			}
		}
		g.across = nil
	}
	return g
}

// addMask adds mask to the distinct masks of list.
func addMask(list []uint64, mask uint64) []uint64 {
	for _, a := range list {
		if a == mask {
			return list
		}
	}
	return append(list, mask)
}

// allHeld reports whether the thread of ops holds its lock, exclusively, at
// every position of ps.
func allHeld(m *Model, ops []lockOp, ps []int32) bool {
	for k, p := range ps {
		m.Pace(k)
		if holdAt(ops, p) < 0 {
			return false
		}
	}
	return true
}

// alwaysHeld returns the locks thread t holds, exclusively, at every
// position of ps (in the order of Model.threadLocks).
func (m *Model) alwaysHeld(t int, ps []int32) []int32 {
	if len(ps) == 0 || t <= 0 || t > len(m.threadLocks) {
		return nil
	}
	var out []int32
	for _, l := range m.threadLocks[t-1] {
		if ops := m.lockOps[lockThread{lock: l, thread: int32(t)}]; allHeld(m, ops, ps) {
			out = append(out, l)
		}
	}
	return out
}
