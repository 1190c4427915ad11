package predict

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestEmptyHoldsLeftOut checks that leaving out of a model the locks whose
// holds are all empty of its steps (tracemodel's instant locks, the
// default) changes nothing that is reported but the shown interleavings:
// on random traces of every synchronization action and on generated
// barrier and server traces, under both semantics, with the one- and
// two-variable models, the bugs and the violation instances are those of
// the models that keep every lock.
func TestEmptyHoldsLeftOut(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 400 // make test runs it at full size without -race
	}
	var configs []gen.Config
	for seed := int64(0); seed < int64(n); seed++ {
		configs = append(configs, gen.Config{Kind: gen.KindRandom, Seed: seed, Events: 8 + seed%48 + (seed%5)*30})
	}
	for seed := int64(0); seed < 20; seed++ {
		configs = append(configs,
			gen.Config{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed%3), Vars: 4, Phases: 3, Bugs: int(seed % 2)},
			gen.Config{Kind: gen.KindServer, Seed: seed, Threads: 2 + int(seed%3), Phases: 2, Bugs: 4})
	}
	models := []Models{
		{Kind: VariableModels, Patterns: VariableModels.Builtin()},
		{Kind: SetModels, Patterns: SetModels.Builtin()},
	}
	// steps[keep]: the statements of every violating model checked, with
	// and without the rule (the witnesses' lengths tell them apart).
	var elided [2]int
	withBugs := 0
	for _, c := range configs {
		m, name := generated(t, c)
		for _, sem := range []string{tracemodel.SemanticsPrecise, tracemodel.SemanticsPaper} {
			po, err := tracemodel.SemanticsOptions(sem)
			if err != nil {
				t.Fatal(err)
			}
			var reports [2][]byte
			for keep := range 2 {
				po.KeepEmptyHolds = keep == 1
				rep, err := Run(context.Background(), m, Options{Engine: EngineNative, Models: models, MaxModels: -1, Jobs: 1, Project: po})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				vs := make([]bugs.Violation, len(rep.Violations))
				for i, v := range rep.Violations {
					elided[keep] += len(v.Interleaving) + v.Elided
					v.Interleaving, v.Elided = nil, 0
					vs[i] = v
				}
				reports[keep], _ = json.Marshal(struct{ Bugs, Violations, Undecided any }{rep.Bugs, vs, rep.Undecided})
				if keep == 0 && sem == tracemodel.SemanticsPrecise && len(rep.Bugs) > 0 {
					withBugs++
				}
			}
			if !bytes.Equal(reports[0], reports[1]) {
				t.Fatalf("%s (%+v), %s semantics: leaving out the locks of empty holds changes the report:\n left out: %s\n kept:     %s", name, c, sem, reports[0], reports[1])
			}
		}
	}
	t.Logf("%d traces (%d with bugs): witnesses of %d steps with every lock, %d without the empty ones", len(configs), withBugs, elided[1], elided[0])
	if elided[0] >= elided[1] || withBugs == 0 {
		t.Errorf("witness steps %v, %d traces with bugs: the test does not exercise the rule", elided, withBugs)
	}
}
