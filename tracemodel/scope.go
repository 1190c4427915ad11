package tracemodel

import "math"

// Region scope (the precise semantics, ProjectOptions.Scope).
//
// A thread's accesses to a variable form one atomic region only while they
// belong to one operation. The trace shows where an operation ends: the
// thread comes back to code it already ran in a function invocation that
// was active at the earlier access — the next iteration of a loop around
// it, in that function or in a caller up to the innermost function that
// contains both accesses. "Code it already ran" is an event with the same
// action, source location and object (variable, lock, or called function
// for Enter) as an earlier event of the same invocation. Events with an
// unknown location never count.
//
// Between two accesses a < b of a thread there is a scope break iff some
// event q in (a, b] repeats code that its invocation first ran no later
// than the code it was running at a: q's first occurrence in the
// invocation is at or before the first occurrence of c, where c is a itself
// when q is in a's invocation, else the call (Enter) in q's invocation that
// leads to a. In the loop "lock; x = v; v = x + 1; unlock" the write of
// iteration k repeats the write of iteration 1, but that write first ran
// after the read did, so the read and the write of one iteration stay one
// region; the lock of iteration k+1 first ran before the read, so it
// breaks the read of iteration k from anything after it. (Comparing with
// a itself — "q repeats an event at a position ≤ a" — would break every
// read-modify-write after a loop's first iteration.) An invocation that
// starts after a cannot repeat anything at or before a, so only frames
// active at a count, and a loop that runs entirely between the two
// accesses (check; loop; act) is no break: its code first ran after the
// check's. Without Enter/Exit events the whole thread is one invocation.
//
// An update that returned also ends the operation: there is a break at the
// return (Exit) of the innermost function invocation that contains a and
// wrote the variable at or before a, when that return comes before b. A
// function that updates a variable and returns has done its update; what
// its caller or the next function does with the variable is another
// operation (racy_counter.c: three handlers, each counting its request with
// served++, are three operations, not one). Reads do not end an operation
// this way: a caller that reads a value through two calls (length() then
// getChars(), stringbuffer.c) still does one.
//
// A callback from code the recorder does not see ends the operation too:
// an invocation entered from an unknown location (an Enter at "?": an
// event loop or thread pool of an uninstrumented library calling the
// program back) is one operation, and there is a break at its return when
// it contains a and returns before b. The loop that calls it again is not
// in the trace, so the repeat rule above cannot see the next turn.

// scopeIndex answers scope-break queries for one thread: back[p-1] is the
// position of the first occurrence, in its invocation, of the event at
// position p when that is an earlier event (math.MaxInt32 otherwise), and
// tree is a segment tree of minima over back.
type scopeIndex struct {
	size int // leaves, a power of two
	tree []int32

	// Function invocations, for the update-return rule; nil when the
	// thread has no Enter events (one invocation that never returns).
	inv    []int32      // per position - 1: the innermost invocation
	frames []invocation // invocation 0 is the thread's own
}

// invocation is one function invocation of a thread: positions in
// (start, exit) are its events and its callees'. exit is MaxInt32 while it
// has not returned.
type invocation struct {
	start, exit, parent int32
	foreign             bool // entered from an unknown location
}

type scopeKey struct {
	kind Kind
	loc  int32
	obj  int32
}

// buildScopes computes the scope index of every thread; entered[t] says
// whether thread t+1 has Enter events. It reads the events in trace order,
// each thread's state beside, so that the scan touches every event once
// (the threads' events interleave).
func (m *Model) buildScopes(entered []bool) ([]*scopeIndex, error) {
	out := make([]*scopeIndex, len(m.Threads))
	type state struct {
		frames []map[scopeKey]int32 // per active invocation: the first position of each event key
		stack  []int32              // invocation indexes, parallel to frames
	}
	for t := range m.Threads {
		n := len(m.Threads[t].Events)
		size := 1
		for size < n {
			size <<= 1
		}
		tree, err := m.int32s(2 * size)
		if err != nil {
			return nil, err
		}
		ix := &scopeIndex{size: size, tree: tree}
		if entered[t] {
			if ix.inv, err = m.int32s(n); err != nil {
				return nil, err
			}
			ix.frames = []invocation{{start: 0, exit: math.MaxInt32, parent: -1}}
		}
		out[t] = ix
	}
	// Each share of the threads (shares.go) fills its threads' indexes.
	share, n := m.threadShares()
	eachShare(n, func(sh int) {
		w := int32(sh)
		for t, ix := range out {
			if share[t] == w {
				for i := range ix.tree {
					ix.tree[i] = math.MaxInt32
				}
			}
		}
		reset := func(st *state) {
			if st.frames == nil {
				*st = state{frames: []map[scopeKey]int32{{}}, stack: []int32{0}}
				return
			}
			clear(st.frames[0])
			st.frames, st.stack = st.frames[:1], st.stack[:1]
		}
		for idx, st := range shareEvents(m, share, w, reset) {
			e := &m.Events[idx]
			t, pos := e.Thread-1, e.Pos
			ix := out[t]
			i := pos - 1
			if ix.inv != nil {
				ix.inv[i] = st.stack[len(st.stack)-1]
			}
			if e.Kind == Exit {
				if len(st.frames) > 1 {
					st.frames = st.frames[:len(st.frames)-1]
					ix.frames[st.stack[len(st.stack)-1]].exit = pos
					st.stack = st.stack[:len(st.stack)-1]
				}
				continue
			}
			if e.Loc != 0 {
				k := scopeKey{kind: e.Kind, loc: e.Loc, obj: e.Obj}
				top := st.frames[len(st.frames)-1]
				if first, ok := top[k]; ok {
					ix.tree[ix.size+int(i)] = first
				} else {
					top[k] = pos
				}
			}
			if e.Kind == Enter {
				st.frames = append(st.frames, map[scopeKey]int32{})
				st.stack = append(st.stack, int32(len(ix.frames)))
				ix.frames = append(ix.frames, invocation{start: pos, exit: math.MaxInt32, parent: st.stack[len(st.stack)-2], foreign: e.Loc == 0})
			}
		}
		for t, ix := range out {
			if share[t] != w {
				continue
			}
			for i := ix.size - 1; i >= 1; i-- {
				ix.tree[i] = min(ix.tree[2*i], ix.tree[2*i+1])
			}
		}
	})
	return out, nil
}

// loopBack returns the first position q in (a, b] whose event repeats code
// that its invocation, active at a, first ran no later than the code it
// was running at a (see the rule above), 0 if none.
func (ix *scopeIndex) loopBack(a, b int32) int32 {
	if a >= b {
		return 0
	}
	// first is the first occurrence in its invocation of the event at p.
	first := func(p int32) int32 { return min(ix.tree[ix.size+int(p)-1], p) }
	// firstIn returns the first q in (a, end] repeating code first run at
	// or before limit.
	firstIn := func(end, limit int32) int32 {
		return ix.firstAtMost(a, end, limit)
	}
	if ix.inv == nil {
		return firstIn(b, first(a)) // one invocation, that never returns
	}
	// Walk out from a's invocation. Events of invocations that start after
	// a never repeat anything at or before first(c) ≤ a, nor do those of
	// the invocations below j active at a (their first occurrences are
	// after their calls): each range may run over them.
	best := int32(0)
	for c, j := a, ix.inv[a-1]; ; c, j = ix.frames[j].start, ix.frames[j].parent {
		if q := firstIn(min(b, ix.frames[j].exit-1), first(c)); q > 0 && (best == 0 || q < best) {
			best = q
		}
		if j == 0 {
			return best
		}
	}
}

// firstAtMost returns the first position in (a, end] whose back is at
// most limit, 0 if none.
func (ix *scopeIndex) firstAtMost(a, end, limit int32) int32 {
	if end <= a {
		return 0
	}
	if end-a <= shortRange {
		// Adjacent leaves: a cache line or two, where the descent from
		// the root reads one per level.
		for i := a; i < end; i++ {
			if ix.tree[ix.size+int(i)] <= limit {
				return i + 1
			}
		}
		return 0
	}
	return ix.search(1, 0, ix.size-1, int(a), int(end)-1, limit)
}

// shortRange is the longest range of positions that loopBack reads leaf
// by leaf rather than through the tree.
const shortRange = 32

// search returns the first position in leaves lo..hi whose value is at most
// limit, 0 if none.
func (ix *scopeIndex) search(node, nlo, nhi, lo, hi int, limit int32) int32 {
	if nhi < lo || nlo > hi || ix.tree[node] > limit {
		return 0
	}
	if nlo == nhi {
		return int32(nlo + 1)
	}
	mid := (nlo + nhi) / 2
	if q := ix.search(2*node, nlo, mid, lo, hi, limit); q > 0 {
		return q
	}
	return ix.search(2*node+1, mid+1, nhi, lo, hi, limit)
}

// updateReturn returns the position of the return, before b, of the
// innermost invocation that contains both the write at position w and the
// access at position a (w ≤ a < b), 0 if there is none.
func (ix *scopeIndex) updateReturn(w, a, b int32) int32 {
	if ix.inv == nil || w <= 0 {
		return 0
	}
	j := ix.inv[a-1]
	for j > 0 && ix.frames[j].start >= w {
		j = ix.frames[j].parent
	}
	if x := ix.frames[j].exit; x < b {
		return x
	}
	return 0
}

// callbackReturn returns the return, before b, of the innermost invocation
// entered from an unknown location that contains position a, 0 if none.
// Inner invocations return first, so the innermost is the earliest.
func (ix *scopeIndex) callbackReturn(a, b int32) int32 {
	if ix.inv == nil {
		return 0
	}
	for j := ix.inv[a-1]; j > 0; j = ix.frames[j].parent {
		if f := ix.frames[j]; f.foreign {
			if f.exit < b {
				return f.exit
			}
			return 0
		}
	}
	return 0
}

// scopeBreak returns the position of the first scope break between the
// accesses at positions a < b of thread tid, 0 if none; w is the position
// of the thread's last write of the variable at or before a (0 if none).
func (m *Model) scopeBreak(tid int, w, a, b int32) int32 {
	return m.scopeBreakBefore(tid, w, a, b, b+1)
}

// scopeBreakBefore is scopeBreak when only a break before position bound
// matters (the caller has another break there): 0 if there is none
// before it. The loop search then reads only up to bound.
func (m *Model) scopeBreakBefore(tid int, w, a, b, bound int32) int32 {
	ix := m.scope[tid-1]
	p := ix.loopBack(a, min(b, bound-1))
	for _, q := range [...]int32{ix.updateReturn(w, a, b), ix.callbackReturn(a, b)} {
		if q > 0 && (p == 0 || q < p) {
			p = q
		}
	}
	if p >= bound {
		return 0
	}
	return p
}
