package native_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// instanceSet is what a claim's instances say of a model: for each claim,
// the trace lines of the accesses that complete an instance.
type instanceSet map[string]map[int]bool

// instancesOf lists every instance of every claim of pm (up to a bound no
// test model reaches) into set.
func instancesOf(t *testing.T, name string, pm *tracemodel.PairModel, pats []ltl.Pattern, set instanceSet) {
	t.Helper()
	c := native.New(pm)
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			ws, err := c.Instances(context.Background(), p, local, 100_000)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, p.ClaimName(local), err)
			}
			claim := p.ClaimName(local)
			if set[claim] == nil {
				set[claim] = map[int]bool{}
			}
			for _, w := range ws {
				if _, err := predict.FromWitness(pm, p, local, w, "native"); err != nil {
					t.Errorf("%s: witness of %s: %v", name, claim, err)
				}
				last := w[len(w)-1]
				set[claim][pm.Steps[last.Thread][last.Index].Events[0].TraceLine] = true
			}
		}
	}
}

// TestPartsMatchWhole cuts every model of the shipped traces and of
// generated barrier-phased ones at every cut (Projection.Parts of size 1)
// and requires the parts together to have the instances of the whole
// model, claim by claim and completing access by completing access, under
// the precise semantics with the synchronization and the data-flow order,
// for the built-in and user patterns of one variable and of atomic sets.
// It also requires that the barrier-phased traces are cut at all.
func TestPartsMatchWhole(t *testing.T) {
	traces := map[string][]byte{}
	files, err := filepath.Glob("../examples/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped traces: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		traces[filepath.Base(f)] = b
	}
	n := int64(envCount(t, "MCPREDICT_PARTS_SEEDS", 8, 3))
	for seed := range n {
		for _, c := range []gen.Config{
			{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed%3), Vars: 4, Phases: 4, Bugs: int(seed % 3)},
			{Kind: gen.KindServer, Seed: seed, Threads: 2 + int(seed%3), Phases: 4, Bugs: 4 + int(seed%5)},
			{Kind: gen.KindRandom, Seed: seed, Events: 20 + seed%30},
		} {
			traces[fmt.Sprintf("%s-%d.csv", c.Kind, seed)] = genTrace(t, c)
		}
	}
	precise, err := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
	if err != nil {
		t.Fatal(err)
	}
	syncOnly := precise
	syncOnly.Dataflow = false
	pats := append(ltl.Builtin(), userPatterns(t)...)
	pats = append(pats, remoteFirst(t))
	setPats := append(ltl.BuiltinSets(), userSetPattern(t))
	cutTraces, models, partCount := 0, 0, 0
	for name, text := range traces {
		m, err := tracemodel.Parse(context.Background(), bytes.NewReader(text), name, tracemodel.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		shared := m.SharedVars()
		cut := false
		for _, opts := range []tracemodel.ProjectOptions{precise, syncOnly} {
			check := func(v, w, t1, t2 int, pats []ltl.Pattern) {
				p, err := m.NewProjection(v, w, t1, t2, opts)
				if err != nil {
					return // a thread accesses neither variable
				}
				label := fmt.Sprintf("%s var %d/%d threads %d,%d semantics %s", name, v, w, t1, t2, opts)
				whole, err := p.Model(p.Whole())
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				want := instanceSet{}
				instancesOf(t, label, whole, pats, want)
				parts := p.Parts(1)
				got := instanceSet{}
				for k, part := range parts {
					if part.Index != k || (k > 0 && part.From != parts[k-1].To) {
						t.Fatalf("%s: parts %v do not follow each other", label, parts)
					}
					pm, err := p.Model(part)
					if err != nil {
						t.Fatalf("%s: part %d: %v", label, k, err)
					}
					instancesOf(t, fmt.Sprintf("%s part %d", label, k), pm, pats, got)
				}
				if last := parts[len(parts)-1]; last.To != p.Whole().To {
					t.Fatalf("%s: the parts %v end before the accesses", label, parts)
				}
				cut = cut || len(parts) > 1
				models++
				partCount += len(parts)
				for claim, lines := range want {
					if !mapsEqual(lines, got[claim]) {
						t.Errorf("%s, %d parts: claim %s completes at trace lines %v whole, %v in parts", label, len(parts), claim, keys(lines), keys(got[claim]))
					}
				}
			}
			for i, a := range shared {
				for _, t1 := range a.Threads {
					for _, t2 := range a.Threads {
						if t1 < t2 {
							check(a.Var, 0, t1, t2, pats)
						}
					}
				}
				if len(shared) > 6 {
					continue
				}
				for _, b := range shared[i+1:] {
					for t1 := 1; t1 <= len(m.Threads); t1++ {
						for t2 := t1 + 1; t2 <= len(m.Threads); t2++ {
							check(a.Var, b.Var, t1, t2, setPats)
						}
					}
				}
			}
		}
		if cut {
			cutTraces++
		}
	}
	t.Logf("%d traces, %d of them cut; %d models in %d parts", len(traces), cutTraces, models, partCount)
	if cutTraces < int(n) {
		t.Errorf("only %d traces have a model with more than one part; the %d generated fft and server traces should", cutTraces, 2*n)
	}
}

func mapsEqual(a, b map[int]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
