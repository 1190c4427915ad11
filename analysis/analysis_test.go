package analysis_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/analysis/txn"
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
		{"all", "mcpatom,atomicset,deadlock,sidetrack,block,lockset,reduction,commitnode", ""},
		{"block,sidetrack", "sidetrack,block", ""},
		{"deadlock,mcpatom,deadlock", "mcpatom,deadlock", ""},
		{" Deadlock ", "deadlock", ""},
		{"foo", "", `unknown analysis "foo": want a comma-separated list of mcpatom, atomicset, deadlock, sidetrack, block`},
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
		// McPatom with deadlock, which finds nothing in these traces (the
		// transaction analyses do, and would add bugs).
		as, err := all.Select(all.Options{}, "mcpatom,deadlock")
		if err != nil {
			t.Fatal(err)
		}
		direct := opts
		direct.Models = analysis.ModelsOf(as)
		want, err := predict.Run(context.Background(), open(t, trace), direct)
		if err != nil {
			t.Fatal(err)
		}
		got, err := analysis.Run(context.Background(), open(t, trace), as, analysis.Options{Version: "test", CheckModels: predict.ModelChecker(opts)})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Analyses) != 2 || got.Analyses[0].Name != "mcpatom" || got.Analyses[0].Bugs != len(want.Bugs) ||
			!got.Analyses[0].ModelChecked || got.Analyses[1].ModelChecked {
			t.Errorf("%s: analyses %+v", trace, got.Analyses)
		}
		for _, b := range got.Bugs {
			if b.Analysis != "mcpatom" || !strings.HasPrefix(b.ID, "AV-") {
				t.Errorf("%s: bug %s of analysis %q", trace, b.ID, b.Analysis)
			}
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

// TestAtomicSet: the analysis of atomic sets through the framework finds
// the torn read of predict/testdata/range.csv as M1 on both variables,
// alone or with McPatom, which finds nothing there by itself.
func TestAtomicSet(t *testing.T) {
	opts := predict.Options{Engine: predict.EngineNative, Jobs: 2, Version: "test"}
	for _, tc := range []struct {
		list     string
		sets     bool
		want     string // pattern and vars of the bugs
		analyses string
	}{
		{"atomicset", false, "M1 lo,hi", "atomicset"},
		{"mcpatom", true, "M1 lo,hi", "mcpatom,atomicset"},
		{"mcpatom", false, "", "mcpatom"},
	} {
		as, err := all.Select(all.Options{AtomicSets: tc.sets}, tc.list)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := analysis.Run(context.Background(), open(t, "../predict/testdata/range.csv"), as, analysis.Options{CheckModels: predict.ModelChecker(opts)})
		if err != nil {
			t.Fatal(err)
		}
		var got, names []string
		for _, b := range rep.Bugs {
			got = append(got, b.Pattern+" "+strings.Join(b.Vars, ","))
			if b.Analysis != "atomicset" {
				t.Errorf("%s: bug %s of analysis %q", tc.list, b.ID, b.Analysis)
			}
		}
		for _, a := range rep.Analyses {
			names = append(names, a.Name)
			if !a.ModelChecked || !strings.HasSuffix(a.Summary, "claims") {
				t.Errorf("%s: analysis %+v", tc.list, a)
			}
		}
		if strings.Join(got, ";") != tc.want || strings.Join(names, ",") != tc.analyses {
			t.Errorf("%s (sets %v): bugs %q, analyses %v; want %q, %s", tc.list, tc.sets, got, names, tc.want, tc.analyses)
		}
		if a := rep.AnalysisOf("atomicset"); a != nil && a.Bugs != 1 {
			t.Errorf("%s: atomicset counts %d bugs", tc.list, a.Bugs)
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
		txs     *txn.Set
	}
	tx := txn.New(txn.Options{})
	a := &analysis.Analyzer{Name: "probe", Doc: "probe", Requires: []analysis.Requirement{analysis.LockSets, analysis.ThreadPeriods, tx},
		Run: func(_ context.Context, p *analysis.Pass) (any, error) {
			got.held = p.LockSets().Before(4) // the Write x: a (re-entrant, once) and r
			got.end = p.LockSets().AtEnd(1)
			per := p.Periods()
			got.conc = per.Concurrent(per.Of(8), per.Of(11)) // thread 2's Read x and main's Write after the Join
			got.ordered = per.Before(per.Of(0), per.Of(8))   // main before the Create, thread 2
			got.txs = txn.Of(p, tx)
			return nil, nil
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
	if got.txs == nil || len(got.txs.Txns) != 1 || got.txs.Name(0) != "tx" {
		t.Errorf("transactions: %+v", got.txs)
	}
}

// TestUndeclared: an analyzer gets only what it requires. A fact it does
// not require is nil and fails the run; the result of an analyzer it does
// not require is not in ResultOf; a required analyzer runs once however
// many require it, without being listed in the report.
func TestUndeclared(t *testing.T) {
	m := open(t, "../examples/bank.csv")
	probe := func(req []analysis.Requirement, use func(*analysis.Pass) any) *analysis.Analyzer {
		return &analysis.Analyzer{Name: "probe", Doc: "probe", Requires: req,
			Run: func(_ context.Context, p *analysis.Pass) (any, error) { return use(p), nil }}
	}
	var sets *analysis.LockSetIndex
	_, err := analysis.Run(context.Background(), m, []*analysis.Analyzer{probe(nil, func(p *analysis.Pass) any {
		sets = p.LockSets()
		return nil
	})}, analysis.Options{})
	if err == nil || !strings.Contains(err.Error(), "probe: uses the fact lock-sets without requiring it") || sets != nil {
		t.Errorf("undeclared lock sets: %v, %v", err, sets)
	}
	runs := 0
	dep := &analysis.Analyzer{Name: "dep", Doc: "dep", Run: func(context.Context, *analysis.Pass) (any, error) {
		runs++
		return 42, nil
	}}
	var gotA, gotB any
	a := probe([]analysis.Requirement{dep}, func(p *analysis.Pass) any { gotA = p.ResultOf[dep]; return nil })
	b := probe([]analysis.Requirement{dep}, func(p *analysis.Pass) any { gotB = p.ResultOf[dep]; return nil })
	b.Name = "probe2"
	gotOther := any("unset")
	other := probe(nil, func(p *analysis.Pass) any { gotOther = p.ResultOf[dep]; return nil })
	other.Name = "other"
	rep, err := analysis.Run(context.Background(), m, []*analysis.Analyzer{a, b, other}, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if gotA != 42 || gotB != 42 || runs != 1 {
		t.Errorf("results %v, %v after %d runs; want 42 twice after one", gotA, gotB, runs)
	}
	if gotOther != nil {
		t.Errorf("an analyzer that does not require dep gets its result %v", gotOther)
	}
	if len(rep.Analyses) != 3 {
		t.Errorf("analyses %+v: want the three of the list", rep.Analyses)
	}
	if _, err := analysis.Run(context.Background(), m, []*analysis.Analyzer{{Name: "x", Doc: "x", Models: &analysis.ModelSpec{Kind: predict.VariableModels}}}, analysis.Options{}); err == nil {
		t.Error("a model-checked analyzer ran without CheckModels")
	}
}
