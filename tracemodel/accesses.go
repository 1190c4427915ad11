package tracemodel

import (
	"slices"
	"sync"
)

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
// every thread of its variables (none when they are over
// maxSharedAccesses).
type sharedAccesses struct {
	once    sync.Once
	threads map[int32]*threadAccesses
}

// threadAccessesOf returns the accesses of vars of threads t1 and t2: from
// the cache c, which gathers every thread's at once when it may keep them,
// or gathered for the two.
func (m *Model) threadAccessesOf(c *StepCache, vars []int32, t1, t2 int, opts ProjectOptions) [2]*threadAccesses {
	n := 0
	for _, v := range vars {
		n += len(m.Vars[v].access)
	}
	var got map[int32]*threadAccesses
	if c != nil && n <= maxSharedAccesses {
		c.accesses.once.Do(func() {
			c.accesses.threads = m.gatherAccesses(vars, nil, opts)
		})
		got = c.accesses.threads
	} else {
		got = m.gatherAccesses(vars, []int32{int32(t1), int32(t2)}, opts)
	}
	out := [2]*threadAccesses{got[int32(t1)], got[int32(t2)]}
	for x := range out {
		if out[x] == nil {
			out[x] = &threadAccesses{}
		}
	}
	return out
}

// threadSlots numbers the threads whose accesses are gathered: those of
// want, in its order, or (want nil) every thread, in the order met. A pair
// compares, not hashes: a variable of a spilled trace has tens of millions
// of accesses.
type threadSlots struct {
	want  []int32
	found map[int32]int
}

// of returns t's number, -1 for a thread not wanted.
func (s *threadSlots) of(t int32) int {
	if s.want != nil {
		return slices.Index(s.want, t)
	}
	k, ok := s.found[t]
	if !ok {
		k = len(s.found)
		s.found[t] = k
	}
	return k
}

// byThread returns the lists by thread id.
func (s *threadSlots) byThread(list []*threadAccesses) map[int32]*threadAccesses {
	out := make(map[int32]*threadAccesses, len(list))
	for k, t := range s.want {
		out[t] = list[k]
	}
	for t, k := range s.found { // when want is nil
		out[t] = list[k]
	}
	return out
}

// gatherAccesses returns, by thread id, the accesses of vars of the
// threads want (nil: every thread that accesses them), in one pass over
// the variables' accesses in trace order (Model.Vars' copies, half the
// size of the events). Its memory grows with the accesses, not with the
// trace's threads (a million of them, in hostile traces).
func (m *Model) gatherAccesses(vars []int32, want []int32, opts ProjectOptions) map[int32]*threadAccesses {
	slots := &threadSlots{want: want, found: map[int32]int{}}
	list := m.sizedAccesses(vars, slots, opts)
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
		k := slots.of(e.Thread)
		if k < 0 {
			continue
		}
		ta := list[k]
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
	out := slots.byThread(list)
	if len(vars) == 2 {
		for t, ta := range out {
			ta.rmw = make([]bool, len(ta.pos))
			for i := range ta.pos {
				m.Pace(i)
				ta.rmw[i] = m.readModifyWrite(int(t), ta.write, ta.pos, ta.varOf, i)
			}
		}
	}
	return out
}

// sizedAccesses returns the empty lists of the threads of slots, by
// number, each made at the size of the thread's accesses of vars: counted
// first, not grown by doubling, since a server's statistics are tens of
// millions of accesses.
func (m *Model) sizedAccesses(vars []int32, slots *threadSlots, opts ProjectOptions) []*threadAccesses {
	count := make([]int, len(slots.want))
	for _, v := range vars {
		for i := range m.Vars[v].access {
			m.Pace(i)
			if k := slots.of(m.Vars[v].access[i].Thread); k >= len(count) {
				count = append(count, 1)
			} else if k >= 0 {
				count[k]++
			}
		}
	}
	list := make([]*threadAccesses, len(count))
	for k, n := range count {
		ta := &threadAccesses{pos: make([]int32, 0, n), ev: make([]int32, 0, n), varOf: make([]int8, 0, n), write: make([]bool, 0, n)}
		if opts.ObservedReads {
			ta.srcThread, ta.srcPos = make([]int32, 0, n), make([]int32, 0, n)
		}
		list[k] = ta
	}
	return list
}

// pinsOf returns, for each read of mine, the position of the last write of
// its variable by the other thread before it (0: none); 0 for a write and
// for a CopyRead, whose value no comparison had: its thread goes on the
// same way whatever it reads (set_range_bounds.c's checker reads lo, then
// hi, and compares only their difference).
func (m *Model) pinsOf(mine, other *threadAccesses) []int32 {
	pins := make([]int32, len(mine.pos))
	var last [2]int32
	j := 0
	for i := range mine.pos {
		for ; j < len(other.ev) && other.ev[j] < mine.ev[i]; j++ {
			if other.write[j] {
				last[other.varOf[j]] = other.pos[j]
			}
		}
		if !mine.write[i] && !m.Events[mine.ev[i]].Copy {
			pins[i] = last[mine.varOf[i]]
		}
	}
	return pins
}
