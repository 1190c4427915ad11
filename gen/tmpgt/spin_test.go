package gt

import (
	"bytes"
	"context"
	"testing"
	"fmt"
	"time"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/ltl"
)

func TestSpinTime(t *testing.T) {
	ctx := context.Background()
	var ms []spinrunner.Model
	for seed := int64(0); seed < 30 ; seed++ {
		var b bytes.Buffer
		gen.Write(ctx, &b, gen.Config{Kind: "random", Seed: seed})
		m, _ := tracemodel.Parse(ctx, &b, "x", tracemodel.Options{})
		for _, sv := range m.SharedVars() {
			for _, p := range sv.Pairs {
				pm, _ := m.Project(sv.Var, p[0], p[1], tracemodel.ProjectOptions{})
				prog := promela.Emit(pm, predict.Claims(ltl.Builtin()))
				ms = append(ms, spinrunner.Model{Name: fmt.Sprint(len(ms)), Source: prog.Source, Claims: prog.Claims, Steps: prog.Statements})
			}
		}
	}
	r := spinrunner.New(spinrunner.Tools{Spin: "/usr/bin/spin", CC: "/usr/bin/tcc"}, spinrunner.Options{Jobs: 2})
	start := time.Now()
	viol := 0
	r.CheckAll(ctx, ms, func(i int, res spinrunner.Result, err error) {
		if err != nil { t.Fatal(err) }
		for _, c := range res.Claims { if c.Violated { viol++ } }
	})
	fmt.Println(len(ms), "models", time.Since(start), "violated", viol)
}
