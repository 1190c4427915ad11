package conflict

import (
	"bytes"
	"context"
	"testing"

	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestStateBounded: the pass keeps state for the open transactions only —
// a transaction's writes, reads and the objects whose clocks know it are
// dropped at its end — so what it holds does not grow with the trace: the
// same fft shape with every barrier phase a transaction, 4 times longer,
// peaks at about the same live state (phases differ by their
// interleaving), within what the open transactions can hold.
func TestStateBounded(t *testing.T) {
	peak := map[int]int{}
	for _, tc := range []struct {
		events, threads int
	}{{50_000, 8}, {200_000, 8}} {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindFFT, Threads: tc.threads, Vars: 512, Events: int64(tc.events)}); err != nil {
			t.Fatal(err)
		}
		m, err := tracemodel.Parse(context.Background(), bytes.NewReader(phases(buf.Bytes())), "fft.csv", tracemodel.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := txn.Extract(context.Background(), m, txn.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ts.Txns) < 50 {
			t.Fatalf("%d events: %d transactions", tc.events, len(ts.Txns))
		}
		c := newChecker(m, ts)
		var acc []access
		live := 0
		for i := range m.Events {
			ev := int32(i)
			acc = c.event(ev, acc[:0])
			th := &c.th[m.Events[ev].Thread]
			if x := ts.TxnOf(ev); x >= 0 && ts.Txns[x].Last == ev && len(th.writes)+len(th.reads)+len(th.upd) > 0 {
				t.Fatalf("%d events: transaction %d ended with %d writes, %d reads, %d objects kept", tc.events, x, len(th.writes), len(th.reads), len(th.upd))
			}
			n := len(c.open)
			for u := range c.th {
				n += len(c.th[u].writes) + len(c.th[u].reads) + len(c.th[u].upd)
			}
			for _, ss := range [][]objState{c.vars, c.syncs, c.thrs} {
				for o := range ss {
					n += len(ss[o].staleR)
				}
			}
			live = max(live, n)
		}
		if len(c.out) != 0 {
			t.Fatalf("%d events: %d violations on a serializable trace", tc.events, len(c.out))
		}
		if len(c.open) > tc.threads {
			t.Errorf("%d events: %d open transactions at the end", tc.events, len(c.open))
		}
		objs := len(c.vars) + len(c.syncs) + len(c.thrs)
		if bound := tc.threads * objs; live > bound {
			t.Errorf("%d events: %d live entries, over %d threads x %d objects", tc.events, live, tc.threads, objs)
		}
		peak[tc.events] = live
	}
	if peak[200_000] > peak[50_000]*5/4 {
		t.Errorf("live state grew with the trace: %d entries at 50,000 events, %d at 200,000", peak[50_000], peak[200_000])
	}
}
