package predict

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestOrderedPairsLeftOut checks that leaving out the thread pairs whose
// conflicting accesses the synchronization order orders completely
// (Options.KeepOrderedPairs false, the default) changes nothing that is
// reported: on random traces of every synchronization action and on
// generated barrier and server traces, the bugs and the violation instances
// are those of planning every pair, with the one- and two-variable models.
func TestOrderedPairsLeftOut(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 1500
	}
	var configs []gen.Config
	for seed := int64(0); seed < int64(n); seed++ {
		configs = append(configs, gen.Config{Kind: gen.KindRandom, Seed: seed, Events: 8 + seed%40})
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
	planned, kept, withBugs := 0, 0, 0
	for _, c := range configs {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, c); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s-%d.csv", c.Kind, c.Seed)
		m, err := tracemodel.Parse(context.Background(), &buf, name, tracemodel.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var reports [2][]byte
		for i, keep := range []bool{false, true} {
			opts := Options{Engine: EngineNative, Models: models, MaxModels: -1, KeepOrderedPairs: keep, Jobs: 1}
			rep, err := Run(context.Background(), m, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if keep {
				kept += rep.Stats.Models
				if len(rep.Bugs) > 0 {
					withBugs++
				}
			} else {
				planned += rep.Stats.Models
			}
			reports[i], _ = json.Marshal(struct{ Bugs, Violations, Undecided any }{rep.Bugs, rep.Violations, rep.Undecided})
		}
		if !bytes.Equal(reports[0], reports[1]) {
			t.Fatalf("%s (%+v): the ordered pairs left out change the report:\n left out: %s\n kept:     %s", name, c, reports[0], reports[1])
		}
	}
	t.Logf("%d traces (%d with bugs): %d models planned of %d", len(configs), withBugs, planned, kept)
	if planned >= kept || withBugs == 0 {
		t.Errorf("%d models planned of %d, %d traces with bugs: the test does not exercise the rule", planned, kept, withBugs)
	}
}
