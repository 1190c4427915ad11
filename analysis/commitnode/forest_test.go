package commitnode

import (
	"context"
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/units"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// forestOf builds the forest of a trace file and the inter-edges of one
// variant.
func forestOf(t *testing.T, path string, view bool) (*forest, *edges) {
	t.Helper()
	m, err := tracemodel.Open(context.Background(), path, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tx, esc := txn.New(txn.Options{}), escape.New()
	var f *forest
	var es *edges
	probe := &analysis.Analyzer{
		Name: "probe", Doc: "test", Requires: []analysis.Requirement{analysis.ThreadPeriods, tx, esc},
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			us, err := units.Split(ctx, m, txn.Of(pass, tx), pass.Periods())
			if err != nil {
				return nil, err
			}
			f, err = build(ctx, m, us, escape.Of(pass, esc), units.NewConc(m, pass.Periods()))
			if err != nil {
				return nil, err
			}
			k := &linker{f: f, es: newEdges(len(f.nodes)), maxPairs: DefaultMaxPairs}
			if view {
				err = k.viewForest(ctx)
			} else {
				err = k.conflictForest(ctx)
			}
			es = k.es
			return nil, err
		},
	}
	if _, err := analysis.Run(context.Background(), m, []*analysis.Analyzer{probe}, analysis.Options{}); err != nil {
		t.Fatal(err)
	}
	return f, es
}

// treeOf returns the tree of the unit whose thread has the handle.
func treeOf(t *testing.T, f *forest, handle string) int32 {
	for i, tr := range f.trees {
		if f.m.Threads[tr.thread-1].Handle == handle {
			return int32(i)
		}
	}
	t.Fatalf("no tree of %s", handle)
	return -1
}

// TestFigure6_3 checks the text's statements on Figures 6.3 and 6.5 (the
// reconstruction of testdata/fig6_3.csv).
func TestFigure6_3(t *testing.T) {
	// "The inter-edge between t1 and t3 in Figure 6.3 denotes two
	// relationships": one edge, between the acq(l) nodes.
	f, es := forestOf(t, "testdata/fig6_3.csv", false)
	t1, t3 := treeOf(t, f, "thr1"), treeOf(t, f, "thr3")
	var between []edge
	for _, e := range es.list {
		ux, uy := f.nodes[e.x].unit, f.nodes[e.y].unit
		if (ux == t1 && uy == t3) || (ux == t3 && uy == t1) {
			between = append(between, e)
		}
	}
	if len(between) != 1 || f.nodes[between[0].x].kind != kSync || f.nodes[between[0].y].kind != kSync {
		t.Errorf("t1-t3 inter-edges %+v, want one between the acq(l) nodes", between)
	}
	// "In Figure 6.5, the communication node Acq(l)Rel(l) in t1 contains
	// the communication node W(x) (i.e., the second write) which is a
	// commit node."
	f, es = forestOf(t, "testdata/fig6_3.csv", true)
	t1 = treeOf(t, f, "thr1")
	c := newChecker(f, es, DefaultMaxWork)
	comm, commits := c.commitNodes(t1)
	var sync, second int32 = -1, -1
	for _, n := range comm {
		switch {
		case f.nodes[n].kind == kSync:
			sync = n
		case f.nodes[n].kind == kLeaf && f.m.Locs[f.m.Events[f.nodes[n].ev].Loc].Line == 13:
			second = n
		}
	}
	isCommit := false
	for _, n := range commits {
		isCommit = isCommit || n == second
	}
	if sync < 0 || second < 0 || !c.contains(sync, second) || !isCommit {
		t.Errorf("t1: communication nodes %v, commit nodes %v: want acq(l) containing the second write, a commit node", comm, commits)
	}
}

// TestFigure6_7: t1 has two commit nodes, yet the set is atomic (no cycle).
func TestFigure6_7(t *testing.T) {
	for _, view := range []bool{false, true} {
		f, es := forestOf(t, "testdata/fig6_7.csv", view)
		c := newChecker(f, es, DefaultMaxWork)
		t1 := treeOf(t, f, "thr1")
		if _, commits := c.commitNodes(t1); len(commits) != 2 {
			t.Errorf("view %v: t1 has %d commit nodes, want 2", view, len(commits))
		}
		if _, ok, _ := c.check(t1); !ok {
			t.Errorf("view %v: t1 reported", view)
		}
	}
}

// TestTrimming: §6.5.1, per parent node only the first two reads and the
// first two writes of a variable are kept; the unit-final write is the
// last kept one under the parent of the real final write.
func TestTrimming(t *testing.T) {
	f, _ := forestOf(t, "testdata/trim.csv", true)
	tr := f.trees[treeOf(t, f, "thr1")]
	var reads, writes, finals int
	for _, l := range f.leaves {
		if f.nodes[l.node].unit != int32(treeOf(t, f, "thr1")) {
			continue
		}
		if l.write {
			writes++
		} else {
			reads++
		}
		if l.final {
			finals++
			if ln := f.m.Locs[f.m.Events[f.nodes[l.node].ev].Loc].Line; ln != 14 {
				t.Errorf("final write at tr.c:%d, want tr.c:14", ln)
			}
		}
	}
	if reads != 2 || writes != 2 || finals != 1 || tr.hi-tr.lo != 5 {
		t.Errorf("reads %d writes %d finals %d nodes %d", reads, writes, finals, tr.hi-tr.lo)
	}
}
