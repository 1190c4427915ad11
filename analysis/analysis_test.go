package analysis_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func TestSelect(t *testing.T) {
	as := all.Analyzers(all.Options{})
	names := func(xs []*analysis.Analyzer) string {
		var n []string
		for _, a := range xs {
			n = append(n, a.Name)
		}
		return strings.Join(n, ",")
	}
	for _, tc := range []struct{ list, want, err string }{
		{"", all.Default, ""},
		{"all", "mcpatom,deadlock,sidetrack,block", ""},
		{"block,sidetrack", "sidetrack,block", ""},
		{"deadlock,mcpatom,deadlock", "mcpatom,deadlock", ""},
		{" Deadlock ", "deadlock", ""},
		{"foo", "", `unknown analysis "foo": want a comma-separated list of mcpatom, deadlock, sidetrack, block`},
	} {
		got, err := analysis.Select(as, tc.list, all.Default)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Select(%q): error %v, want %q", tc.list, err, tc.err)
		case tc.err == "" && (err != nil || names(got) != tc.want):
			t.Errorf("Select(%q) = %s, %v; want %s", tc.list, names(got), err, tc.want)
		}
	}
	for _, a := range as {
		if err := a.Validate(); err != nil {
			t.Error(err)
		}
	}
}

func open(t *testing.T, path string) *tracemodel.Model {
	t.Helper()
	m, err := tracemodel.Open(context.Background(), path, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMCPatomUnchanged: McPatom through the framework gives the report of
// predict.Run: the same bugs, ids and violations, byte for byte in JSON.
func TestMCPatomUnchanged(t *testing.T) {
	for _, trace := range []string{"../examples/bank.csv", "../examples/logbuf.csv", "../examples/fig5.csv"} {
		opts := predict.Options{Engine: predict.EngineNative, Jobs: 2, Version: "test"}
		want, err := predict.Run(context.Background(), open(t, trace), opts)
		if err != nil {
			t.Fatal(err)
		}
		// The default list: deadlock finds nothing in these traces (the
		// transaction analyses do, and would add bugs).
		as, err := all.Select(all.Options{MCPatom: opts}, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := analysis.Run(context.Background(), open(t, trace), as, analysis.Options{Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Analyses) != 2 || got.Analyses[0].Name != "mcpatom" || got.Analyses[0].Bugs != len(want.Bugs) {
			t.Errorf("%s: analyses %+v", trace, got.Analyses)
		}
		strip := func(r *bugs.Report) string {
			c := *r
			c.Stats.Elapsed, c.Analyses = 0, nil
			var b bytes.Buffer
			if err := bugs.WriteJSON(&b, &c); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		if strip(got) != strip(want) {
			t.Errorf("%s: the framework's McPatom report differs from predict.Run's", trace)
		}
	}
}

// TestFacts checks the shared facts on a small trace.
func TestFacts(t *testing.T) {
	src := `1, 1, f.c-1, Enter, main
1, 2, f.c-2, Lock, a
1, 3, f.c-3, RdLock, r
1, 4, f.c-4, Lock, a
1, 5, f.c-5, Write, x
1, 6, f.c-6, Unlock, a
1, 7, f.c-7, Create, 2
2, 8, f.c-20, Begin, tx
2, 9, f.c-21, Read, x
2, 10, f.c-22, End, tx
1, 11, f.c-8, Join, 2
1, 12, f.c-9, Write, x
1, 13, f.c-10, Exit, main
`
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(src), "f.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		held    []analysis.HeldLock
		end     []analysis.HeldLock
		conc    bool
		ordered bool
		txs     []analysis.Transaction
	}
	a := &analysis.Analyzer{Name: "probe", Doc: "probe", Requires: analysis.AllFacts(), Run: func(_ context.Context, p *analysis.Pass) error {
		got.held = p.LockSets().Before(4) // the Write x: a (re-entrant, once) and r
		got.end = p.LockSets().AtEnd(1)
		per := p.Periods()
		got.conc = per.Concurrent(per.Of(8), per.Of(11)) // thread 2's Read x and main's Write after the Join
		got.ordered = per.Before(per.Of(0), per.Of(8))   // main before the Create, thread 2
		got.txs = p.Transactions()
		return nil
	}}
	if _, err := analysis.Run(context.Background(), m, []*analysis.Analyzer{a}, analysis.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(got.held) != 2 || got.held[0].Lock != m.Events[1].Obj || got.held[0].Acquired != 1 || !got.held[1].Shared {
		t.Errorf("held before the write: %+v", got.held)
	}
	if len(got.end) != 2 { // a (depth 1 left) and r: never released
		t.Errorf("held at the end: %+v", got.end)
	}
	if got.conc || !got.ordered {
		t.Errorf("periods: concurrent %v ordered %v", got.conc, got.ordered)
	}
	if len(got.txs) != 2 || got.txs[0].Name != "main" || got.txs[0].End != 12 || got.txs[1].Name != "tx" || got.txs[1].Begin != 7 || got.txs[1].End != 9 {
		t.Errorf("transactions: %+v", got.txs)
	}
}
