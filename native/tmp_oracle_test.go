package native_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func TestTmpOracleTeeth(t *testing.T) {
	ctx := context.Background()
	pats := ltl.Builtin()
	total, viol, diff := 0, 0, 0
	for seed := int64(0); seed < 1000; seed++ {
		var buf bytes.Buffer
		gen.Write(ctx, &buf, gen.Config{Kind: gen.KindRandom, Seed: seed})
		tr := oracleParse(buf.Bytes())
		m, _ := tracemodel.Parse(ctx, bytes.NewReader(buf.Bytes()), "r", tracemodel.Options{})
		tasks, _ := predict.Plan(m, predict.Options{})
		for _, task := range tasks {
			pm, _ := m.Project(task.Var, task.T1, task.T2, tracemodel.ProjectOptions{NoBoundaries: true})
			o := tr.oracleVerdicts(task.VarName, [2]int{task.T1 - 1, task.T2 - 1}, pats, true)
			vs, _ := native.New(pm).CheckAll(ctx, pats)
			for i, v := range vs {
				total++
				if o[i] { viol++ }
				if o[i] != v.Violated { diff++ }
			}
		}
	}
	t.Logf("claims %d oracle violated %d; differ from no-boundaries native %d", total, viol, diff)
}
