package tracemodel

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
)

// Scans with a state per thread (the region scope, the atomic sets'
// correlation) read the events once in trace order, each thread's state
// beside: a scan per thread would read every event's cache line once per
// thread, since the threads' events interleave. To use the cores, the
// threads are dealt into shares of about equal events and each share's
// goroutine reads the whole trace but handles only its threads' events;
// what the shares find is merged after, by sums and unions, so the result
// does not depend on the number of shares.

// threadShares deals the threads into at most GOMAXPROCS shares of about
// equal events, the largest threads first: share[t] is the share of thread
// t+1. It returns the number of shares, at least 1.
func (m *Model) threadShares() (share []int32, n int) {
	n = min(runtime.GOMAXPROCS(0), len(m.Threads))
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
		w := 0
		for i := range load {
			if load[i] < load[w] {
				w = i
			}
		}
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
