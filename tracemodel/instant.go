package tracemodel

import "sort"

// Instant locks.
//
// A server's worker takes its allocator's and its queue's mutexes
// thousands of times between two accesses of one request's object, and
// each hold is empty: nothing the model shows (an access, a region break)
// lies between its acquire and its release. Such holds were most of the
// steps of a server's models (an Apache recording: 61%), and they exclude
// nothing a pattern can see.
//
// keptLocks leaves out of a model every common lock whose every hold, in
// both threads' windows, contains none of the model's steps but the
// operations of locks also left out. Leaving them out neither adds nor
// removes an order of the remaining steps:
//   - every run of the model with the locks maps to one without them (drop
//     their steps);
//   - every run without them maps to one with them that orders the kept
//     steps alike: a thread's left-out operations between two kept steps
//     run at once, just before the next kept step (whose causal
//     requirement is at least theirs: clocks grow with the position), or
//     just before the other thread's step that waits for one of them (that
//     step is causally after them, hence after what they wait for).
//     Inserted at once, a left-out hold is never open while another one
//     wants its lock, and it contains no step that could see the
//     difference.
//
// A hold that is not whole in the window (it opens before the window or
// closes after it), or an acquire not followed by its release, keeps the
// lock: a conservative choice, since keeping a lock is always exact.

// holds are the consecutive (acquire, release) pairs ops[lo], ops[lo+1],
// ops[lo+2], ... before ops[hi] of one thread's operations of one lock.
type holds struct {
	ops    []lockOp
	lo, hi int
}

// holdsOf returns thread x's holds of common lock j that lie in the window
// [start, end]; ok is false when one of them is not whole in the window.
func (p *Projection) holdsOf(x, j int, start, end int32) (hs holds, ok bool) {
	ops := p.commonOps[x][j]
	i := sort.Search(len(ops), func(i int) bool { return ops[i].Pos >= start })
	hs = holds{ops: ops, lo: i}
	for ; i < len(ops) && ops[i].Pos <= end; i += 2 {
		if !ops[i].Kind.IsAcquire() || i+1 >= len(ops) || !ops[i+1].Kind.IsRelease() || ops[i+1].Pos > end {
			return holds{}, false
		}
	}
	hs.hi = i
	return hs, true
}

// keptLocks returns the common locks that the model of part keeps (see
// above), as indexes into p.common; acc are the part's accesses of each
// thread, start and end its windows.
func (p *Projection) keptLocks(part Part, acc [2][]int32, start, end [2]int32) []int {
	n := len(p.common)
	kept := make([]bool, n)
	if p.opts.KeepEmptyHolds {
		for j := range kept {
			kept[j] = true
		}
	}
	held := make([][2]holds, n) // by lock, thread
	for j := range kept {
		for x := 0; x < 2 && !kept[j]; x++ {
			hs, ok := p.holdsOf(x, j, start[x], end[x])
			if !ok || p.anyStepIn(x, hs, part, acc[x]) {
				kept[j] = true
			}
			held[j][x] = hs
		}
	}
	// A left-out lock's holds may contain only left-out locks' operations:
	// keep, until nothing changes, every lock with a hold around an
	// operation of a kept one.
	for changed := true; changed; {
		changed = false
		for j := range kept {
			for k := range kept {
				if !kept[j] && k != j && kept[k] && (p.holdsAround(0, held[j][0], k) || p.holdsAround(1, held[j][1], k)) {
					kept[j], changed = true, true
				}
			}
		}
	}
	out := make([]int, 0, n)
	for j := range kept {
		if kept[j] {
			out = append(out, j)
		}
	}
	return out
}

// holdsAround reports whether one of thread x's holds hs contains an
// operation of common lock k.
func (p *Projection) holdsAround(x int, hs holds, k int) bool {
	ops := p.commonOps[x][k]
	q := 0 // the holds come in position order: each search goes on from the last
	for h := hs.lo; h < hs.hi; h += 2 {
		acquire, release := hs.ops[h].Pos, hs.ops[h+1].Pos
		q = searchFrom(len(ops), q, func(q int) bool { return ops[q].Pos > acquire })
		if q < len(ops) && ops[q].Pos < release {
			return true
		}
	}
	return false
}

// anyStepIn reports whether one of thread x's holds hs contains, between
// its acquire and its release (both included, to be safe with the steps
// that share a position with them), an access of the part (acc) or a
// region break of the part.
func (p *Projection) anyStepIn(x int, hs holds, part Part, acc []int32) bool {
	var breaks []regionBreak
	if !p.opts.NoBoundaries {
		breaks = p.breaksOf(x)
	}
	i, b := 0, 0 // the holds come in position order: each search goes on from the last
	for k := hs.lo; k < hs.hi; k += 2 {
		h := [2]int32{hs.ops[k].Pos, hs.ops[k+1].Pos}
		i = searchFrom(len(acc), i, func(i int) bool { return acc[i] >= h[0] })
		if i < len(acc) && acc[i] <= h[1] {
			return true
		}
		if i == 0 || i == len(acc) {
			continue // before the part's first access or after its last: no breaks there
		}
		gap := int32(part.From[x] + i - 1) // between accesses i-1 and i of the part
		b = searchFrom(len(breaks), b, func(b int) bool { return breaks[b].gap >= gap })
		for b := b; b < len(breaks) && breaks[b].gap == gap; b++ {
			if breaks[b].pos >= h[0] && breaks[b].pos <= h[1] {
				return true
			}
		}
	}
	return false
}

// searchFrom is sort.Search(n, f) for a caller that knows f false below
// from: it reads indexes 1, 2, 4, ... past from until f holds, then bisects
// the last stride, so that an answer d indexes away costs about 2 log d
// reads, however large n.
func searchFrom(n, from int, f func(int) bool) int {
	for lo, step := from, 1; lo < n; step *= 2 {
		hi := min(n, lo+step) // f is false below lo; read hi-1
		if f(hi - 1) {
			return lo + sort.Search(hi-1-lo, func(i int) bool { return f(lo + i) })
		}
		lo = hi
	}
	return n
}
