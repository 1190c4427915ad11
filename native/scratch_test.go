package native_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestScratchSameVerdicts checks that a checker on the memory of earlier
// ones (NewWith, Scratch) decides as a checker on new memory: the joint
// verdicts, every claim's one search, and its instances, on the models of
// generated traces of every kind, large and small ones in turn.
func TestScratchSameVerdicts(t *testing.T) {
	ctx := context.Background()
	pats := ltl.Builtin()
	var models []*tracemodel.PairModel
	for seed := range int64(12) {
		for _, c := range []gen.Config{
			{Kind: gen.KindRandom, Seed: seed, Events: 20 + seed*7},
			{Kind: gen.KindServer, Seed: seed, Threads: 3, Phases: 2 + int(seed%3), Bugs: 4},
			{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed%3), Vars: 4, Phases: 3, Bugs: int(seed % 2)},
		} {
			name := fmt.Sprintf("%s-%d", c.Kind, seed)
			for _, d := range modelsOf(t, name, genTrace(t, c), tracemodel.ProjectOptions{}, nil) {
				models = append(models, d.pm)
			}
		}
	}
	type decision struct {
		All       []native.Verdict
		One       []native.Verdict
		Instances [][][]tracemodel.StepRef
	}
	decide := func(c *native.Checker) decision {
		var d decision
		var err error
		if d.All, err = c.CheckAll(ctx, pats); err != nil {
			t.Fatal(err)
		}
		for _, p := range pats {
			for local := 1; local <= 2; local++ {
				v, err := c.Check(ctx, p, local)
				if err != nil {
					t.Fatal(err)
				}
				ws, err := c.Instances(ctx, p, local, 0)
				if err != nil {
					t.Fatal(err)
				}
				d.One, d.Instances = append(d.One, v), append(d.Instances, ws)
			}
		}
		return d
	}
	var s *native.Scratch
	violated := 0
	for i, pm := range models {
		want := decide(native.New(pm))
		c := native.NewWith(pm, s)
		got := decide(c)
		s = c.Scratch()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("model %d (%s threads %s,%s): the checker on reused memory decides otherwise:\n%+v\nwant\n%+v", i, pm.Var, pm.Threads[0].Handle, pm.Threads[1].Handle, got, want)
		}
		for _, v := range want.All {
			if v.Violated {
				violated++
			}
		}
	}
	t.Logf("%d models, %d violated claims", len(models), violated)
	if len(models) < 50 || violated == 0 {
		t.Errorf("the test exercises %d models, %d violated claims", len(models), violated)
	}
}
