package commitnode_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/commitnode"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/atest"
	"github.com/mcpredict/mcpredict/analysis/lockset"
	"github.com/mcpredict/mcpredict/analysis/reduction"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// wang returns the three analyses of the dissertation with what they
// require.
func wang() []*analysis.Analyzer {
	tx, esc := txn.New(txn.Options{}), escape.New()
	ls := lockset.New(lockset.Options{}, esc)
	return []*analysis.Analyzer{ls, reduction.New(tx, ls, esc), commitnode.New(commitnode.Options{}, tx, esc)}
}

func report(t *testing.T, m *tracemodel.Model) string {
	t.Helper()
	rep, err := analysis.Run(context.Background(), m, wang(), analysis.Options{})
	if err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	var b bytes.Buffer
	for _, v := range rep.Violations {
		fmt.Fprintf(&b, "%s %s %s\n", v.BugID, v.Analysis, v.Message)
	}
	for _, a := range rep.Analyses {
		fmt.Fprintf(&b, "%s: %s\n", a.Name, a.Summary)
	}
	return b.String()
}

// TestRobust runs lockset, reduction and commitnode on the shipped traces
// and on random traces (plain, and with Enter/Exit or Begin/End regions
// around runs of events): no error, and the same report twice.
func TestRobust(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.csv")
	more, _ := filepath.Glob("../../examples/semantics/*.csv")
	for _, f := range append(files, more...) {
		m, err := tracemodel.Open(context.Background(), f, tracemodel.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := report(t, m), report(t, m); a != b {
			t.Errorf("%s: nondeterministic report", f)
		}
	}
	seeds := 300
	if testing.Short() {
		seeds = 100
	}
	for seed := 0; seed < seeds; seed++ {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindRandom, Seed: int64(seed)}); err != nil {
			t.Fatal(err)
		}
		m, err := tracemodel.Parse(context.Background(), &buf, "random.csv", tracemodel.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		report(t, m)
		for _, labels := range []bool{false, true} {
			data, err := atest.RandomWithRegions(int64(seed), labels)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), "regions.csv", tracemodel.Options{})
			if err != nil {
				continue // some rewritten traces are not valid
			}
			if a, b := report(t, m), report(t, m); a != b {
				t.Errorf("seed %d labels %v: nondeterministic report", seed, labels)
			}
		}
	}
}

// TestCanceled: a cancelled run stops with the context's error.
func TestCanceled(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 200, Events: 200_000}); err != nil {
		t.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), &buf, "fft.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := analysis.Run(ctx, m, wang(), analysis.Options{}); err == nil {
		t.Error("no error from a cancelled run")
	}
}
