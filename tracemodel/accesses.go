package tracemodel

import "sync"

// threadAccesses are one thread's accesses of a projection's variables (one,
// or the two of an atomic set), in trace order: what every pair of the
// thread projects alike. A StepCache keeps them for all the pairs of the
// variables, which a server projects once per pair of its threads.
type threadAccesses struct {
	pos, ev []int32 // position in the thread, index into Model.Events
	varOf   []int8  // index into the projection's variables
	write   []bool
	rmw     []bool // set models: the read of a read-modify-write (readModifyWrite)
	// A read's observed write (ProjectOptions.ObservedReads): the last
	// write of its variable before it, at position srcPos of thread
	// srcThread, when that thread is another one and the write before
	// was the reader's own or none; srcThread is 0 otherwise. A pair takes
	// it when srcThread is its other thread.
	srcThread, srcPos []int32
}

// maxSharedAccesses bounds the accesses of the variables of a StepCache
// that it keeps for all their threads (19 bytes each: about 80 MB); past
// it, each projection gathers its own two threads', so that the memory of
// a spilled trace grows with its largest model, not with a variable's
// history.
const maxSharedAccesses = 1 << 22

// sharedAccesses is the part of a StepCache that holds the accesses of
// every thread (nil: over maxSharedAccesses).
type sharedAccesses struct {
	once    sync.Once
	threads []*threadAccesses // by thread id - 1
}

// threadAccessesOf returns the accesses of vars of threads t1 and t2: from
// the cache c, which gathers every thread's at once when it may keep them,
// or gathered for the two.
func (m *Model) threadAccessesOf(c *StepCache, vars []int32, t1, t2 int, opts ProjectOptions) [2]*threadAccesses {
	n := 0
	for _, v := range vars {
		n += len(m.Vars[v].access)
	}
	if c != nil && n <= maxSharedAccesses {
		c.accesses.once.Do(func() {
			all := make([]bool, len(m.Threads)+1)
			for t := range all {
				all[t] = t > 0
			}
			c.accesses.threads = m.gatherAccesses(vars, all, opts)
		})
		return [2]*threadAccesses{c.accesses.threads[t1-1], c.accesses.threads[t2-1]}
	}
	want := make([]bool, len(m.Threads)+1)
	want[t1], want[t2] = true, true
	got := m.gatherAccesses(vars, want, opts)
	return [2]*threadAccesses{got[t1-1], got[t2-1]}
}

// gatherAccesses returns, by thread id - 1, the accesses of vars of the
// threads marked in want (by thread id; nil for the others), in one pass
// over the variables' accesses in trace order (Model.Vars' copies, half the
// size of the events). Each thread's accesses are counted first and the
// slices made at their size, not grown by doubling: a server's statistics
// are tens of millions of accesses.
func (m *Model) gatherAccesses(vars []int32, want []bool, opts ProjectOptions) []*threadAccesses {
	out := make([]*threadAccesses, len(m.Threads))
	count := make([]int, len(m.Threads)+1)
	for _, v := range vars {
		for i := range m.Vars[v].access {
			m.Pace(i)
			count[m.Vars[v].access[i].Thread]++
		}
	}
	for t := 1; t < len(want); t++ {
		if !want[t] {
			continue
		}
		n := count[t]
		ta := &threadAccesses{pos: make([]int32, 0, n), ev: make([]int32, 0, n), varOf: make([]int8, 0, n), write: make([]bool, 0, n)}
		if opts.ObservedReads {
			ta.srcThread, ta.srcPos = make([]int32, 0, n), make([]int32, 0, n)
		}
		out[t-1] = ta
	}
	// Per variable, the thread and position of its last two writes so far
	// (thread 0: none).
	type write struct{ thread, pos int32 }
	var lastWrite, prevWrite [2]write
	var a [2][]Access
	for i, v := range vars {
		a[i] = m.Vars[v].access
	}
	for k, i, j := 0, 0, 0; i < len(a[0]) || j < len(a[1]); k++ {
		m.Pace(k)
		var e *Access
		vi := int8(0)
		if j == len(a[1]) || i < len(a[0]) && a[0][i].Ev < a[1][j].Ev {
			e = &a[0][i]
			i++
		} else {
			e, vi = &a[1][j], 1
			j++
		}
		lw, pw := lastWrite[vi], prevWrite[vi]
		if e.Kind == Write {
			lastWrite[vi], prevWrite[vi] = write{e.Thread, e.Pos}, lw
		}
		if !want[e.Thread] {
			continue
		}
		ta := out[e.Thread-1]
		ta.pos = append(ta.pos, e.Pos)
		ta.ev = append(ta.ev, e.Ev)
		ta.varOf = append(ta.varOf, vi)
		ta.write = append(ta.write, e.Kind == Write)
		if opts.ObservedReads {
			st, sp := int32(0), int32(0)
			if e.Kind == Read && lw.thread != 0 && lw.thread != e.Thread && (pw.thread == 0 || pw.thread == e.Thread) {
				st, sp = lw.thread, lw.pos
			}
			ta.srcThread = append(ta.srcThread, st)
			ta.srcPos = append(ta.srcPos, sp)
		}
	}
	if len(vars) == 2 {
		for t, ta := range out {
			if ta == nil {
				continue
			}
			ta.rmw = make([]bool, len(ta.pos))
			for i := range ta.pos {
				m.Pace(i)
				ta.rmw[i] = m.readModifyWrite(t+1, ta.write, ta.pos, ta.varOf, i)
			}
		}
	}
	return out
}

// pinsOf returns, for each read of mine, the position of the last write of
// its variable by the other thread before it (0: none); 0 for a write.
func pinsOf(mine, other *threadAccesses) []int32 {
	pins := make([]int32, len(mine.pos))
	var last [2]int32
	j := 0
	for i := range mine.pos {
		for ; j < len(other.ev) && other.ev[j] < mine.ev[i]; j++ {
			if other.write[j] {
				last[other.varOf[j]] = other.pos[j]
			}
		}
		if !mine.write[i] {
			pins[i] = last[mine.varOf[i]]
		}
	}
	return pins
}
