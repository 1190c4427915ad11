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
	seen := map[string]bool{}
	models := 0
	for seed := int64(0); seed < 1000; seed++ {
		var b bytes.Buffer
		gen.Write(ctx, &b, gen.Config{Kind: "random", Seed: seed})
		m, _ := tracemodel.Parse(ctx, &b, "x", tracemodel.Options{})
		for _, sv := range m.SharedVars() {
			for _, p := range sv.Pairs {
				for _, nb := range []bool{false, true} {
				if nb && seed%4 != 0 { continue }
				pm, _ := m.Project(sv.Var, p[0], p[1], tracemodel.ProjectOptions{NoBoundaries: nb})
				prog := promela.Emit(pm, predict.Claims(ltl.Builtin()))
				k := re.ReplaceAllString(string(prog.Source), "")
				seen[k] = true
				models++
				}
			}
		}
	}
	fmt.Println("models", models, "distinct", len(seen))
}
