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
// (Options.KeepOrderedPairs false, the default), and those whose locks keep
// each thread out of the other's stretches (Options.KeepLockedPairs false),
// each rule alone or both, changes nothing that is reported: on random traces of every synchronization action and on
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
	// models[keepOrdered][keepLocked]: the models planned in all.
	var planned [2][2]int
	withBugs := 0
	for _, c := range configs {
		m, name := generated(t, c)
		var all []byte // the report of every pair
		for _, k := range [][2]bool{{true, true}, {false, false}, {true, false}, {false, true}} {
			opts := Options{Engine: EngineNative, Models: models, MaxModels: -1, KeepOrderedPairs: k[0], KeepLockedPairs: k[1], Jobs: 1}
			rep, err := Run(context.Background(), m, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			planned[b2i(k[0])][b2i(k[1])] += rep.Stats.Models
			report, _ := json.Marshal(struct{ Bugs, Violations, Undecided any }{rep.Bugs, rep.Violations, rep.Undecided})
			if all == nil {
				all = report
				if len(rep.Bugs) > 0 {
					withBugs++
				}
				continue
			}
			if !bytes.Equal(report, all) {
				t.Fatalf("%s (%+v): the pairs left out (keep ordered %v, keep locked %v) change the report:\n left out: %s\n all:      %s", name, c, k[0], k[1], report, all)
			}
		}
	}
	t.Logf("%d traces (%d with bugs): models planned %d with both rules, %d without the locked one, %d without the ordered one, %d of all pairs",
		len(configs), withBugs, planned[0][0], planned[0][1], planned[1][0], planned[1][1])
	if planned[0][0] >= planned[0][1] || planned[1][0] >= planned[1][1] || planned[0][1] >= planned[1][1] || withBugs == 0 {
		t.Errorf("models planned %v, %d traces with bugs: the test does not exercise each rule", planned, withBugs)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// generated returns the model of the trace gen writes for c, and its name.
func generated(t *testing.T, c gen.Config) (*tracemodel.Model, string) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, c); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s-%d.csv", c.Kind, c.Seed)
	m, err := tracemodel.Parse(context.Background(), &buf, name, tracemodel.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m, name
}
