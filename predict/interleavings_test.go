package predict

import (
	"context"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/gen"
)

// TestFirstInstancesKeepInterleavings checks that the interleavings a
// model's result builds (only those the report keeps: result,
// keptInterleavings) are those of each bug's first instances in the
// report, and that each is the witness FromWitness maps: it shows the
// instance's accesses.
func TestFirstInstancesKeepInterleavings(t *testing.T) {
	models := []Models{
		{Kind: VariableModels, Patterns: VariableModels.Builtin()},
		{Kind: SetModels, Patterns: SetModels.Builtin()},
	}
	trimmed := 0
	for seed := int64(0); seed < 6; seed++ {
		m, name := generated(t, gen.Config{Kind: gen.KindServer, Seed: seed, Threads: 3 + int(seed%3), Phases: 4, Bugs: 4})
		rep, err := Run(context.Background(), m, Options{Engine: EngineNative, Models: models, MaxModels: -1, Jobs: 2, PartAccesses: 16})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, b := range rep.Bugs {
			for k, i := range b.Instances {
				v := rep.Violations[i]
				if k >= bugs.InterleavingsKept {
					trimmed++
					if !v.InterleavingOmitted || len(v.Interleaving) != 0 {
						t.Errorf("%s: bug %s instance %d keeps its interleaving", name, b.ID, k)
					}
					continue
				}
				if v.InterleavingOmitted {
					t.Fatalf("%s: bug %s instance %d (of the first %d) has no interleaving", name, b.ID, k, bugs.InterleavingsKept)
				}
				shown := 0
				for _, a := range v.Interleaving {
					if a.Instance {
						shown++
					}
				}
				if shown != len(v.Accesses) {
					t.Errorf("%s: bug %s instance %d: the interleaving shows %d of its %d accesses", name, b.ID, k, shown, len(v.Accesses))
				}
			}
		}
	}
	if trimmed == 0 {
		t.Error("no bug had more instances than the report keeps interleavings of: the test does not exercise the rule")
	}
}
