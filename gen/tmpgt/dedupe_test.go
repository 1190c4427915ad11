package gt

import (
	"bytes"
	"context"
	"testing"
	"fmt"
	"regexp"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/ltl"
)

func TestDedupe(t *testing.T) {
	ctx := context.Background()
	re := regexp.MustCompile(`(?s)/\*.*?\*/`)
	for _, every := range []int64{4, 10} {
	seen := map[string]bool{}
	seenSw := map[string]bool{}
	models := 0
	for seed := int64(0); seed < 1000; seed++ {
		var b bytes.Buffer
		gen.Write(ctx, &b, gen.Config{Kind: "random", Seed: seed})
		m, _ := tracemodel.Parse(ctx, &b, "x", tracemodel.Options{})
		pats := ltl.Builtin()
		for _, sv := range m.SharedVars() {
			for _, p := range sv.Pairs {
				for _, nb := range []bool{false, true} {
				if nb && seed%every != 0 { continue }
				pm, _ := m.Project(sv.Var, p[0], p[1], tracemodel.ProjectOptions{NoBoundaries: nb})
				prog := promela.Emit(pm, predict.Claims(pats))
				k := re.ReplaceAllString(string(prog.Source), "")
				seen[k] = true
				sw := *pm
				sw.Steps[0], sw.Steps[1] = pm.Steps[1], pm.Steps[0]
				sw.Threads[0], sw.Threads[1] = pm.Threads[1], pm.Threads[0]
				k2 := re.ReplaceAllString(string(promela.Emit(&sw, predict.Claims(pats)).Source), "")
				if k2 < k { k = k2 }
				seenSw[k] = true
				models++
				}
			}
		}
	}
	fmt.Println("every", every, "models", models, "distinct", len(seen), "with swap", len(seenSw))
	}
}
