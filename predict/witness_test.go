package predict_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestWitnessWindow: a violation keeps the witness from WitnessContext
// steps before its instance, however long the way there (a long trace made
// every instance as long as the trace), and counts the steps it left out.
func TestWitnessWindow(t *testing.T) {
	var b strings.Builder
	line := 0
	ev := func(th, loc int, act string) {
		line++
		fmt.Fprintf(&b, "%d, %d, w.c-%d, %s, x\n", th, line, loc, act)
	}
	// Thread 1 writes x 1,000 times first, each write its own region (a
	// hand-off ends it), then does the racy read-modify-write.
	for i := 0; i < 1000; i++ {
		ev(1, 10, "Write")
		line++
		fmt.Fprintf(&b, "1, %d, w.c-11, Signal, c\n", line) // a hand-off ends the region
	}
	ev(1, 20, "Read")
	ev(2, 30, "Write")
	ev(1, 21, "Write")
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(b.String()), "w.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
	pm, err := m.Project(m.VarByName("x"), m.ThreadByHandle("1"), m.ThreadByHandle("2"), opts)
	if err != nil {
		t.Fatal(err)
	}
	var p3 ltl.Pattern
	for _, p := range ltl.Builtin() {
		if p.ID == "P3" {
			p3 = p
		}
	}
	verdict, err := native.New(pm).Check(context.Background(), p3, 1)
	if err != nil || !verdict.Violated {
		t.Fatalf("P3 not violated: %v %+v", err, verdict)
	}
	v, err := predict.FromWitness(pm, p3, 1, verdict.Witness, "native")
	if err != nil {
		t.Fatal(err)
	}
	if len(verdict.Witness) < 2000 {
		t.Fatalf("witness of %d steps: the test needs a long one", len(verdict.Witness))
	}
	if n := len(v.Interleaving); n > predict.WitnessContext+3 {
		t.Errorf("interleaving of %d accesses, want at most %d", n, predict.WitnessContext+3)
	}
	if v.Elided == 0 || v.Elided+predict.WitnessContext+3 < len(verdict.Witness) {
		t.Errorf("%d steps elided of a witness of %d", v.Elided, len(verdict.Witness))
	}
	var lines []int
	for _, a := range v.Accesses {
		lines = append(lines, a.Line)
	}
	if fmt.Sprint(lines) != "[20 30 21]" {
		t.Errorf("instance accesses at lines %v, want [20 30 21]", lines)
	}
}
