package tracemodel

import (
	"cmp"
	"iter"
	"runtime"
	"slices"
	"sync"
)

// Scans with a state per thread (the region scope, the atomic sets'
// inference, the commutative updates) read the events once in trace
// order, each thread's state beside: a scan per thread would read every
// event's cache line once per thread, since the threads' events
// interleave. To use the cores, the threads are dealt into shares of about
// equal events and each share's goroutine reads the whole trace but
// handles only its threads' events; what the shares find is merged after,
// by sums and unions, so the result does not depend on the number of
// shares.

// shareLimit bounds the shares on a machine of many cores: each share reads
// the whole trace and keeps its own tables (the correlation of every pair
// of variables its threads access together) until they are merged.
const shareLimit = 4

// threadShares returns the shares of the threads: share[t] is the share
// of thread t+1, and n the number of shares, at least 1. The parse deals
// them once (dealShares), before its first scan.
func (m *Model) threadShares() (share []int32, n int) { return m.share, m.shares }

// dealShares deals the threads into at most GOMAXPROCS shares (and at
// most shareLimit, or Model.maxShares) of about equal events, the largest
// threads first.
func (m *Model) dealShares() (share []int32, n int) {
	n = min(runtime.GOMAXPROCS(0), shareLimit)
	if m.maxShares > 0 {
		n = m.maxShares
	}
	n = min(n, len(m.Threads))
	share = make([]int32, len(m.Threads))
	if n <= 1 {
		return share, 1
	}
	order := make([]int, len(m.Threads))
	for t := range order {
		order[t] = t
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(len(m.Threads[b].Events), len(m.Threads[a].Events))
	})
	load := make([]int, n)
	for _, t := range order {
		w := slices.Index(load, slices.Min(load)) // the least loaded
		share[t] = int32(w)
		load[w] += len(m.Threads[t].Events)
	}
	return share, n
}

// eachShare runs f(0) .. f(n-1) at once and waits for them.
func eachShare(n int, f func(w int)) {
	if n == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() { f(w) })
	}
	wg.Wait()
}

// threadStates keeps, for a trace-order scan of one share, the state of
// each thread from its first event to its last. The state of a finished
// thread is reused for the next thread that starts, so that a trace of a
// million short threads keeps few states and makes little garbage.
type threadStates[S any] struct {
	m     *Model
	cur   []*S
	free  []*S
	reset func(*S) // makes a reused or new state that of a new thread
}

func newThreadStates[S any](m *Model, reset func(*S)) *threadStates[S] {
	return &threadStates[S]{m: m, cur: make([]*S, len(m.Threads)), reset: reset}
}

// at returns the state of thread tid at its event at position pos. The
// scan calls it for every event of its threads, in order: after the
// thread's last event the state is free again, so the caller must not keep
// it past the event.
func (ts *threadStates[S]) at(tid, pos int32) *S {
	s := ts.cur[tid-1]
	if s == nil {
		if n := len(ts.free); n > 0 {
			s, ts.free = ts.free[n-1], ts.free[:n-1]
		} else {
			s = new(S)
		}
		ts.reset(s)
		ts.cur[tid-1] = s
	}
	if pos == int32(len(ts.m.Threads[tid-1].Events)) {
		ts.cur[tid-1] = nil
		ts.free = append(ts.free, s)
	}
	return s
}

// shareEvents yields, in trace order, the index of each event of the
// threads of share w with its thread's state (threadStates.at); reset
// makes a state new.
func shareEvents[S any](m *Model, share []int32, w int32, reset func(*S)) iter.Seq2[int32, *S] {
	return func(yield func(int32, *S) bool) {
		states := newThreadStates(m, reset)
		for idx := range m.Events {
			m.Pace(idx)
			e := &m.Events[idx]
			if share[e.Thread-1] != w {
				continue
			}
			if !yield(int32(idx), states.at(e.Thread, e.Pos)) {
				return
			}
		}
	}
}
