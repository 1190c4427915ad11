package gt

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"github.com/mcpredict/mcpredict/tracemodel"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/ltl"
)

func TestPM(t *testing.T) {
	ctx := context.Background()
	m, err := tracemodel.Open(ctx, os.Getenv("TRACE"), tracemodel.Options{})
	if err != nil { t.Fatal(err) }
	v := m.VarByName(os.Getenv("VAR"))
	var a, b int
	fmt.Sscanf(os.Getenv("PAIR"), "%d,%d", &a, &b)
	pm, err := m.Project(v, a, b, tracemodel.ProjectOptions{})
	if err != nil { t.Fatal(err) }
	for x := 0; x < 2; x++ {
		fmt.Println("thread", pm.Threads[x])
		for i, s := range pm.Steps[x] {
			var lines []int
			for _, e := range s.Events { lines = append(lines, e.TraceLine) }
			fmt.Printf("  %d %v lock=%d guard=%d prog=%d lines=%v\n", i, s.Kind, s.Lock, s.Guard, s.Progress, lines)
		}
	}
	_ = json.Marshal
	vs, _ := native.New(pm).CheckAll(ctx, ltl.Builtin())
	for _, v := range vs { fmt.Println(v.Claim(), v.Violated, v.Witness) }
}
