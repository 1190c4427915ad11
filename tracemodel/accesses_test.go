package tracemodel_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestSharedAccessesSameModels checks that the projections of a variable
// (or a pair of variables) that share one StepCache — every thread's
// accesses gathered once — build the same models as projections that
// gather their own two threads', for every thread pair, under both
// semantics, on random, barrier- and server-like traces.
func TestSharedAccessesSameModels(t *testing.T) {
	var configs []gen.Config
	for seed := int64(0); seed < 150; seed++ {
		configs = append(configs, gen.Config{Kind: gen.KindRandom, Seed: seed, Events: 20 + seed%60})
	}
	for seed := int64(0); seed < 6; seed++ {
		configs = append(configs,
			gen.Config{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed%3), Vars: 4, Phases: 3, Bugs: int(seed % 2)},
			gen.Config{Kind: gen.KindServer, Seed: seed, Threads: 3, Phases: 3, Bugs: 4})
	}
	models, withReads := 0, 0
	for _, c := range configs {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, c); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s-%d", c.Kind, c.Seed)
		m, err := tracemodel.Parse(context.Background(), &buf, name, tracemodel.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		shared := m.SharedVars()
		var sets [][2]int // one-variable models as {v, 0}, and pairs of variables
		for i, a := range shared {
			sets = append(sets, [2]int{a.Var, 0})
			for _, b := range shared[i+1:] {
				sets = append(sets, [2]int{a.Var, b.Var})
			}
		}
		for _, sem := range []string{tracemodel.SemanticsPrecise, tracemodel.SemanticsPaper} {
			opts, err := tracemodel.SemanticsOptions(sem)
			if err != nil {
				t.Fatal(err)
			}
			for _, vw := range sets {
				cached := opts
				cached.Steps = tracemodel.NewStepCache()
				project := func(o tracemodel.ProjectOptions, t1, t2 int) (*tracemodel.PairModel, error) {
					if vw[1] == 0 {
						return m.Project(vw[0], t1, t2, o)
					}
					return m.ProjectSet(vw[0], vw[1], t1, t2, o)
				}
				for t1 := 1; t1 <= len(m.Threads); t1++ {
					for t2 := 1; t2 <= len(m.Threads); t2++ {
						if t1 == t2 {
							continue
						}
						got, gerr := project(cached, t1, t2)
						want, werr := project(opts, t1, t2)
						if (gerr == nil) != (werr == nil) {
							t.Fatalf("%s %s %v threads %d,%d: shared error %v, own error %v", name, sem, vw, t1, t2, gerr, werr)
						}
						if werr != nil {
							continue
						}
						models++
						for _, st := range want.Steps {
							for _, s := range st {
								if s.Source > 0 {
									withReads++
								}
							}
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("%s %s %v threads %d,%d: the model with shared accesses differs:\n%+v\nwant\n%+v", name, sem, vw, t1, t2, got.Steps, want.Steps)
						}
					}
				}
			}
		}
	}
	t.Logf("%d models, %d steps with an observed write", models, withReads)
	if models == 0 || withReads == 0 {
		t.Error("the test exercises no model or no observed read")
	}
}
