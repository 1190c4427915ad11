package gt

import (
	"bytes"
	"context"
	"testing"
	"fmt"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/ltl"
)

func TestStats(t *testing.T) {
	ctx := context.Background()
	models, warn, viol, steps := 0, 0, 0, 0
	hist := map[int]int{}
	for seed := int64(0); seed < 1000; seed++ {
		var b bytes.Buffer
		gen.Write(ctx, &b, gen.Config{Kind: "random", Seed: seed})
		if seed < 2 { fmt.Println(b.String()) }
		m, _ := tracemodel.Parse(ctx, &b, "x", tracemodel.Options{})
		warn += len(m.Warnings)
		n := 0
		for _, sv := range m.SharedVars() {
			for _, p := range sv.Pairs {
				pm, _ := m.Project(sv.Var, p[0], p[1], tracemodel.ProjectOptions{})
				n++
				steps += len(pm.Steps[0]) + len(pm.Steps[1])
				vs, _ := native.New(pm).CheckAll(ctx, ltl.Builtin())
				for _, v := range vs { if v.Violated { viol++ } }
			}
		}
		hist[n]++
		models += n
	}
	fmt.Println("models", models, "warnings", warn, "violated claims", viol, "avg steps", float64(steps)/float64(models), hist)
}
