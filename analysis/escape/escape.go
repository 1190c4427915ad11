// Package escape is the dynamic escape analysis of Wang's dissertation
// (seeds/004, §3.1; implementation notes ../shared/specs/wang-dissertation.md
// S0.4), shared by the analyses of that dissertation (lockset, reduction,
// commitnode): an access made before its variable escapes its first thread
// is not shared, and every one of them ignores it.
//
// # What it decides
//
// The dissertation marks a Java object escaped when a reference to it is
// stored where another thread can reach it; the accesses before that point
// are the thread's own (initialisation). A trace of a C program has no
// references, so the point where another thread can reach a variable is
// read from the schedule instead: an access of variable x by the thread t0
// that accessed x first is unescaped when it happens before (in the causal
// order of the trace: create, join, barriers, condition variables,
// semaphores) the first access of x by every other thread. In every
// feasible schedule, then, no other thread has accessed x yet when it runs:
// the variable has been "accessed by one thread only so far", whatever the
// schedule. Every other access is escaped, and once a variable has escaped
// it stays escaped (no ownership transfer, as in §3.1). A variable that
// one thread only accesses never escapes: all its accesses are unescaped
// (it is thread-local).
//
// This is deliberately not Eraser's heuristic, which the dissertation
// criticises (§4.5): "the initialisation ends when a second thread accesses
// the variable" in the recorded order drops every access of a thread that
// happened to run first, so a run in which the threads did not overlap
// would show no sharing at all. Here an access is dropped only if no
// feasible schedule lets another thread's access come before it: from a
// run whose threads did not overlap, every access that could have been
// interleaved is kept, which is what a predictive analysis needs.
//
// # What it does not decide
//
//   - Publication through a lock (an object initialised by one thread and
//     handed to another through a locked queue) is not seen: locks are not
//     causal, so the initialising accesses are escaped, where the
//     dissertation's reference tracking would drop them. Analyses that use
//     this package are therefore more conservative than the dissertation
//     on such objects.
//   - The causal order includes condition variables and semaphores, which
//     the dissertation's happens-before analysis ignores (§3.2): an access
//     handed over with a signal is dropped here and kept there.
//   - Accesses to synchronization objects are never analysed (they are not
//     variables of the model).
package escape

import (
	"context"
	"math"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Name is the analyzer's name. It is not selectable: it has no findings,
// and the analyses that need it require it.
const Name = "escape"

// New returns the analyzer whose result is the escape information of the
// trace (an *Info): the analyses of Wang's dissertation require it, so
// that it is computed once per run.
func New() *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "the dynamic escape analysis: which accesses happen before their variable is reachable by a second thread (no findings; a result for lockset, reduction and commitnode)",
		Paper:    "L. Wang, Analysis of Synchronization Errors for Multithreaded Programs (dissertation, Stony Brook, 2006) §3.1, dynamic escape analysis",
		Requires: []analysis.Requirement{analysis.CausalOrder},
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			return Compute(ctx, pass.Model) // Model.Clock: the causal order

		},
	}
}

// Of returns the escape information that the analyzer esc (built by New)
// computed, as the pass of an analyzer requiring it holds it.
func Of(pass *analysis.Pass, esc *analysis.Analyzer) *Info {
	i, _ := pass.ResultOf[esc].(*Info)
	return i
}

// Info is the escape information of a trace.
type Info struct {
	m *tracemodel.Model
	// first and from, by variable: the thread that accessed it first and
	// the position in that thread from which its accesses are escaped
	// (math.MaxInt32: never).
	first []int32
	from  []int32
}

// Compute computes the escape information of m. It fails only when ctx is
// done.
func Compute(ctx context.Context, m *tracemodel.Model) (*Info, error) {
	in := &Info{m: m, first: make([]int32, len(m.Vars)), from: make([]int32, len(m.Vars))}
	var firstOf map[int32]int32 // other thread -> position of its first access
	pc := m.Pacer()
	for v := 1; v < len(m.Vars); v++ {
		if v&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		in.from[v] = math.MaxInt32
		// The accesses' copies, in the order they are stored: a
		// spilled trace reads them in order, not the events they stand
		// for, a page apart.
		acc := m.AccessesOf(v)
		if len(acc) == 0 {
			continue
		}
		t0 := acc[0].Thread
		in.first[v] = t0
		if firstOf == nil {
			firstOf = map[int32]int32{}
		}
		clear(firstOf)
		for i := range acc {
			pc.Step()
			e := &acc[i]
			if e.Thread == t0 {
				continue
			}
			if _, ok := firstOf[e.Thread]; !ok {
				firstOf[e.Thread] = e.Pos
			}
		}
		if len(firstOf) == 0 {
			continue // thread-local
		}
		// The accesses of t0 up to the last one that happens before every
		// other thread's first access are unescaped.
		limit := int32(math.MaxInt32)
		for u, pos := range firstOf {
			limit = min(limit, m.Clock(int(u), pos, int(t0)))
		}
		in.from[v] = limit + 1
	}
	return in, nil
}

// Escaped reports whether the access event ev (an index into Model.Events
// of a Read or Write) is made after its variable escaped.
func (in *Info) Escaped(ev int32) bool {
	e := &in.m.Events[ev]
	v := e.Obj
	return e.Thread != in.first[v] || e.Pos >= in.from[v]
}

// ThreadLocal reports whether variable v never escapes: one thread only
// accesses it.
func (in *Info) ThreadLocal(v int32) bool { return in.from[v] == math.MaxInt32 }
