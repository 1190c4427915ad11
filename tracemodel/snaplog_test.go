package tracemodel

import "testing"

// replayOrder replays the whole trace into an order, its snapshots kept as
// rows (dense) or as persistent clocks: the synchronization order (v < 0)
// or the data-flow order of variable v.
func replayOrder(m *Model, v int32, dense bool) *Order {
	b := m.newOrderBuilder([2]int32{v, v})
	if !dense {
		for i := range b.clocks {
			b.clocks[i].width = 0
		}
	}
	if v >= 0 {
		b.flow = make([]varFlow, len(m.Vars))
	}
	for i := range m.Events {
		b.event(&m.Events[i], int32(i))
	}
	return &Order{clocks: b.clocks}
}

// TestDenseSnapshots checks that an order whose snapshots are rows is the
// order whose snapshots are persistent clocks: every clock of every thread
// at every position, and every first dependence, for the synchronization
// order and the data-flow order of every variable.
func TestDenseSnapshots(t *testing.T) {
	n := 500
	if testing.Short() {
		n = 100
	}
	for seed := int64(0); seed < int64(n); seed++ {
		text := randomFlowTrace(seed)
		m := parse(t, text)
		if len(m.Threads) > denseThreads {
			t.Fatalf("seed %d: %d threads, too many for rows", seed, len(m.Threads))
		}
		for v := int32(-1); v < int32(len(m.Vars)); v++ {
			if v == 0 {
				continue
			}
			want, got := replayOrder(m, v, false), replayOrder(m, v, true)
			if got.clocks[0].width == 0 {
				t.Fatal("the dense replay keeps persistent clocks")
			}
			for tid := 1; tid <= len(m.Threads); tid++ {
				for other := 1; other <= len(m.Threads); other++ {
					if w, g := want.firstDependence(tid, other), got.firstDependence(tid, other); w != g {
						t.Fatalf("seed %d, variable %d: thread %d first depends on thread %d at %d, want %d\n%s", seed, v, tid, other, g, w, text)
					}
					for pos := int32(0); pos <= int32(len(m.Threads[tid-1].Events))+1; pos++ {
						if w, g := want.Clock(tid, pos, other), got.Clock(tid, pos, other); w != g {
							t.Fatalf("seed %d, variable %d: thread %d at %d knows %d events of thread %d, want %d\n%s",
								seed, v, tid, pos, g, other, w, text)
						}
					}
				}
			}
		}
	}
}
