package tracemodel_test

import (
	"reflect"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestSharedAccessesSameModels checks that the projections of a variable
// (or a pair of variables) that share one StepCache — every thread's
// accesses gathered once — build the same models as projections that
// gather their own two threads', for every thread pair, under both
// semantics, on random, barrier- and server-like traces.
func TestSharedAccessesSameModels(t *testing.T) {
	models, withReads := 0, 0
	for _, c := range mixedConfigs(150, 60, 6, 3) {
		m, name := genModel(t, c)
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
