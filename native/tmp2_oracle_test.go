package native_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func TestTmpOracleHunt(t *testing.T) {
	ctx := context.Background()
	pats := append(ltl.Builtin(), userPatterns(t)...)
	found := 0
	for seed := int64(0); seed < 3000 && found < 3; seed++ {
		var buf bytes.Buffer
		gen.Write(ctx, &buf, gen.Config{Kind: gen.KindRandom, Seed: seed, Threads: 2 + int(seed%3), Vars: 1 + int(seed%2), Events: 30 + seed%60})
		tr := oracleParse(buf.Bytes())
		m, _ := tracemodel.Parse(ctx, bytes.NewReader(buf.Bytes()), "r", tracemodel.Options{})
		tasks, _ := predict.Plan(m, predict.Options{})
		for _, task := range tasks {
			for _, nb := range []bool{false, true} {
			pm, _ := m.Project(task.Var, task.T1, task.T2, tracemodel.ProjectOptions{NoBoundaries: nb})
			o := tr.oracleVerdicts(task.VarName, [2]int{task.T1 - 1, task.T2 - 1}, pats, !nb)
			vs, _ := native.New(pm).CheckAll(ctx, pats)
			for i, v := range vs {
				if o[i] != v.Violated {
					found++
					fmt.Printf("seed %d var %s %d,%d nb=%v claim %s native=%v oracle=%v len=%d\n", seed, task.VarName, task.T1, task.T2, nb, v.Claim(), v.Violated, o[i], len(buf.Bytes()))
					break
				}
			}
			}
		}
	}
}
