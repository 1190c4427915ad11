// Package blocks finds the dynamic atomic blocks of a trace for the
// analyses of Pessanha, Dias and Lourenço (seeds/001, trace mapping of the
// spec's B7): the regions of a thread that the program meant to run
// atomically, each dynamic instance a block of its own.
//
// A thread is inside an atomic block while it holds any lock (a mutex, a
// spinlock, a rwlock for reading or writing; re-entrant acquisitions
// nest), or is inside a Begin/End region (the user's own annotation, as
// the paper's @Atomic), or inside an invocation of a function named in
// Options.Atomic. A block is a maximal run of such events: nested regions
// are flattened into the outermost one, and a condition-variable Wait
// ends the block and starts another (the waiter gives the lock up while
// it sleeps; mcpredict record writes the Unlock before the Wait itself).
//
// It is one pass over the events, one int32 per event.
package blocks

import (
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Options select the blocks besides the critical sections.
type Options struct {
	// Atomic names functions whose invocations are atomic blocks.
	Atomic []string
}

// Block is one dynamic atomic block.
type Block struct {
	Thread      int32 // model thread id
	First, Last int32 // indexes in Model.Events of its first and last events
}

// Set is the blocks of a trace.
type Set struct {
	Blocks []Block // in order of First
	of     []int32 // by event: index in Blocks, -1 outside
}

// Of returns the block of event ev, -1 if it is outside every block.
func (s *Set) Of(ev int32) int32 { return s.of[ev] }

// depth is one thread's nesting of the region kinds.
type depth struct {
	locks  map[int32]int32 // held lock → re-entrant depth
	labels map[int32]int32 // open Begin label → depth
	funcs  []bool          // per open invocation: atomic
	atomic int             // open atomic invocations
	cur    int32           // current block, -1
}

func (d *depth) inside() bool { return len(d.locks) > 0 || len(d.labels) > 0 || d.atomic > 0 }

// Find returns the blocks of m.
func Find(m *tracemodel.Model, opts Options) *Set {
	atomic := map[string]bool{}
	for _, f := range opts.Atomic {
		atomic[f] = true
	}
	s := &Set{of: make([]int32, len(m.Events))}
	ds := make([]depth, len(m.Threads))
	for i := range ds {
		ds[i] = depth{locks: map[int32]int32{}, labels: map[int32]int32{}, cur: -1}
	}
	for i := range m.Events {
		m.Pace(i)
		e := &m.Events[i]
		d := &ds[e.Thread-1]
		was := d.inside()
		switch e.Kind {
		case tracemodel.Lock, tracemodel.TryLock, tracemodel.RdLock, tracemodel.WrLock:
			d.locks[e.Obj]++
		case tracemodel.Unlock, tracemodel.RwUnlock:
			if n, ok := d.locks[e.Obj]; ok {
				if n <= 1 {
					delete(d.locks, e.Obj)
				} else {
					d.locks[e.Obj] = n - 1
				}
			}
		case tracemodel.Begin:
			d.labels[e.Obj]++
		case tracemodel.End:
			if n, ok := d.labels[e.Obj]; ok {
				if n <= 1 {
					delete(d.labels, e.Obj)
				} else {
					d.labels[e.Obj] = n - 1
				}
			}
		case tracemodel.Enter:
			a := len(atomic) > 0 && atomic[m.Objects[e.Obj]]
			d.funcs = append(d.funcs, a)
			if a {
				d.atomic++
			}
		case tracemodel.Exit:
			if k := len(d.funcs); k > 0 {
				if d.funcs[k-1] {
					d.atomic--
				}
				d.funcs = d.funcs[:k-1]
			}
		case tracemodel.Wait:
			// The waiter released the lock while it slept: what it
			// does after the Wait is another block.
			if was {
				d.cur = -1
			}
		}
		now := d.inside()
		switch {
		case !was && !now:
			s.of[i] = -1
			continue
		case (now || was) && d.cur < 0:
			d.cur = int32(len(s.Blocks))
			s.Blocks = append(s.Blocks, Block{Thread: e.Thread, First: int32(i), Last: int32(i)})
		}
		s.of[i] = d.cur
		s.Blocks[d.cur].Last = int32(i)
		if !now {
			d.cur = -1
		}
	}
	return s
}
