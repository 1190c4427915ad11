package tracemodel

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// randomFlowTrace writes a random trace of 3 or 4 threads over a few
// variables, locks, conds and a barrier, with DataReads inside critical
// sections (commutative updates), for the checkpoint equivalence test.
func randomFlowTrace(seed int64) string {
	r := rand.New(rand.NewSource(seed))
	nt := 3 + r.Intn(2)
	var sb strings.Builder
	line := 0
	emit := func(t int, action, obj string) {
		line++
		fmt.Fprintf(&sb, "%d, %d, f.c-%d, %s, %s\n", t, line, 1+r.Intn(9), action, obj)
	}
	for t := 2; t <= nt; t++ {
		emit(1, "Create", fmt.Sprint(t))
	}
	held := make([]string, nt+1)
	n := 30 + r.Intn(120)
	for i := 0; i < n; i++ {
		t := 1 + r.Intn(nt)
		v := fmt.Sprintf("v%d", r.Intn(4))
		switch k := r.Intn(14); {
		case k < 3:
			emit(t, "Read", v)
		case k < 5:
			emit(t, "DataRead", v)
		case k < 8:
			emit(t, "Write", v)
		case k < 10:
			if held[t] == "" {
				held[t] = fmt.Sprintf("m%d", r.Intn(2))
				for u := range held {
					if u != t && held[u] == held[t] {
						held[t] = ""
					}
				}
				if held[t] != "" {
					emit(t, "Lock", held[t])
					if r.Intn(2) == 0 { // an update
						emit(t, "DataRead", v)
						emit(t, "Write", v)
					}
				}
			} else {
				emit(t, "Unlock", held[t])
				held[t] = ""
			}
		case k < 11:
			emit(t, "Signal", "c")
		case k < 12:
			if held[t] == "" {
				emit(t, "Wait", "c")
			}
		case k < 13:
			emit(t, "SemPost", "s")
		default:
			emit(t, "Barrier", "b")
		}
	}
	for t := 1; t <= nt; t++ {
		if held[t] != "" {
			emit(t, "Unlock", held[t])
		}
	}
	for t := 2; t <= nt; t++ {
		emit(1, "Join", fmt.Sprint(t))
	}
	return sb.String()
}

// TestCheckpointedDataflowOrder checks that the data-flow order of every
// variable replayed from a checkpoint, or taken from the replay of every
// variable's data flow (allFlowOrder), is the one of a replay from the
// start: every clock of every thread at every position.
func TestCheckpointedDataflowOrder(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	restored, shared := 0, 0
	for seed := int64(0); seed < int64(n); seed++ {
		text := randomFlowTrace(seed)
		m := parse(t, text)
		every := 1 + int(seed%7)
		for v := 1; v < len(m.Vars); v++ {
			m.flowCk = nil
			want := m.order(int32(v))
			m.flowCk = &flowCheckpoints{every: every}
			got := m.order(int32(v))
			switch {
			case got == m.flowCk.all:
				shared++
			case len(m.flowCk.at) > 0 && len(m.Vars[v].Accesses) > 0 && int(m.Vars[v].Accesses[0]) >= every:
				restored++
			}
			for tid := 1; tid <= len(m.Threads); tid++ {
				for pos := int32(1); pos <= int32(len(m.Threads[tid-1].Events)); pos++ {
					for other := 1; other <= len(m.Threads); other++ {
						if w, g := want.Clock(tid, pos, other), got.Clock(tid, pos, other); w != g {
							t.Fatalf("seed %d, every %d, variable %s: thread %d at %d knows %d events of thread %d, want %d\n%s",
								seed, every, m.Vars[v].Name, tid, pos, g, other, w, text)
						}
					}
				}
			}
		}
	}
	if restored == 0 || shared == 0 {
		t.Fatalf("%d orders replayed from a checkpoint, %d the order of every variable's data flow: the test misses a case", restored, shared)
	}
	t.Logf("%d orders replayed from a checkpoint, %d the order of every variable's data flow", restored, shared)
}

// TestFlowTable checks both forms of a data-flow order's variable table:
// what is put is got back, and a variable never put is nil.
func TestFlowTable(t *testing.T) {
	for _, vars := range []int{10, maxDenseFlows, maxDenseFlows + 1} {
		tab := newFlowTable(vars)
		if (tab.dense != nil) != (vars <= maxDenseFlows) {
			t.Errorf("%d variables: dense %v", vars, tab.dense != nil)
		}
		f1, f2 := &varFlow{}, &varFlow{}
		tab.put(1, f1)
		tab.put(int32(vars-1), f2)
		if tab.get(1) != f1 || tab.get(int32(vars-1)) != f2 || tab.get(2) != nil {
			t.Errorf("%d variables: get gives %p %p %p, want %p %p nil", vars, tab.get(1), tab.get(int32(vars-1)), tab.get(2), f1, f2)
		}
	}
}

// TestOrderSkipsKnownEvents checks that an order's replay, which skips
// the edges from events a thread knows already (orderBuilder.joinEvent),
// makes the order of the replay that joins every edge: the
// synchronization order and every variable's data-flow order, every clock
// of every thread at every position.
func TestOrderSkipsKnownEvents(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 100
	}
	replay := func(m *Model, ex [2]int32, joinAll bool) *Order {
		b := m.newOrderBuilder(ex)
		if ex[0] >= 0 {
			b.withFlow, b.flows = true, newFlowTable(len(m.Vars))
		}
		b.joinAll = joinAll
		for i := range m.Events {
			b.event(&m.Events[i], int32(i))
		}
		o := &Order{clocks: b.clocks}
		o.replayed.Store(true)
		return o
	}
	known := 0
	for seed := int64(0); seed < int64(n); seed++ {
		text := randomFlowTrace(seed)
		m := parse(t, text)
		for v := -1; v < len(m.Vars); v++ {
			if v == 0 {
				continue
			}
			ex := [2]int32{int32(v), int32(v)}
			want, got := replay(m, ex, true), replay(m, ex, false)
			for tid := 1; tid <= len(m.Threads); tid++ {
				for pos := int32(1); pos <= int32(len(m.Threads[tid-1].Events)); pos++ {
					for other := 1; other <= len(m.Threads); other++ {
						w, g := want.Clock(tid, pos, other), got.Clock(tid, pos, other)
						if w != g {
							t.Fatalf("seed %d, order of %d: thread %d at %d knows %d events of thread %d, want %d\n%s",
								seed, v, tid, pos, g, other, w, text)
						}
						if other != tid && w > 0 {
							known++
						}
					}
				}
			}
		}
	}
	if known == 0 {
		t.Fatal("no thread knows another's event: the test checks nothing")
	}
}
