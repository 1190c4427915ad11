package predict

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
)

// TestListedClaimsSkipped checks that a model's later parts leaving
// undecided the claims whose instances the earlier parts listed enough of
// (the default) changes no report: on generated server and barrier traces
// cut into small parts, with few instances per claim, the report is the
// one of deciding every claim of every part.
func TestListedClaimsSkipped(t *testing.T) {
	var configs []gen.Config
	for seed := int64(0); seed < 12; seed++ {
		configs = append(configs,
			gen.Config{Kind: gen.KindServer, Seed: seed, Threads: 2 + int(seed%3), Phases: 3, Bugs: 4},
			gen.Config{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed%3), Vars: 4, Phases: 4, Bugs: 1})
	}
	models := []Models{
		{Kind: VariableModels, Patterns: VariableModels.Builtin()},
		{Kind: SetModels, Patterns: SetModels.Builtin()},
	}
	cut, listed := 0, 0
	for _, c := range configs {
		m, name := generated(t, c)
		for _, maxInst := range []int{1, 3} {
			var reports [2][]byte
			for i, decide := range []bool{false, true} {
				opts := Options{Engine: EngineNative, Models: models, MaxModels: -1, Jobs: 1, MaxInstances: maxInst, PartAccesses: 8, decideListed: decide}
				rep, err := Run(context.Background(), m, opts)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if i == 0 {
					cut += rep.Stats.Parts - rep.Stats.Models
					listed += len(rep.Violations)
				}
				reports[i], _ = json.Marshal(struct{ Stats, Bugs, Violations, Undecided any }{rep.Stats.Claims, rep.Bugs, rep.Violations, rep.Undecided})
			}
			if !bytes.Equal(reports[0], reports[1]) {
				t.Fatalf("%s, %d instances a claim: leaving listed claims undecided changes the report:\n skipped: %s\n decided: %s", name, maxInst, reports[0], reports[1])
			}
		}
	}
	t.Logf("%d traces: %d parts beyond the first of their model, %d violations listed", len(configs), cut, listed)
	if cut == 0 || listed == 0 {
		t.Error("no model was cut, or no violation listed: the test does not exercise the rule")
	}
}
