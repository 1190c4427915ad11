package tracemodel_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestReleasedListsSameModels checks that models built on the lists of
// released models (Model.Release) are those built on new lists: every
// model of the generated traces, its events resolved at once or lazily, is
// built twice, and the second build, made after many releases, must
// encode as the first did before any.
func TestReleasedListsSameModels(t *testing.T) {
	models := 0
	for _, c := range mixedConfigs(40, 60, 3, 3) {
		m, name := genModel(t, c)
		type task struct{ v, t1, t2 int }
		var tasks []task
		for _, sv := range m.SharedVars() {
			for t1 := 1; t1 <= len(m.Threads); t1++ {
				for t2 := t1 + 1; t2 <= len(m.Threads); t2++ {
					tasks = append(tasks, task{sv.Var, t1, t2})
				}
			}
		}
		for _, lazy := range []bool{false, true} {
			opts, err := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
			if err != nil {
				t.Fatal(err)
			}
			opts.LazyEvents = lazy
			build := func(k task) ([]byte, *tracemodel.PairModel, bool) {
				pm, err := m.Project(k.v, k.t1, k.t2, opts)
				if err != nil {
					return nil, nil, false
				}
				pm.ResolveEvents()
				b, err := json.Marshal(pm)
				if err != nil {
					t.Fatal(err)
				}
				return b, pm, true
			}
			want := make([][]byte, len(tasks))
			for i, k := range tasks {
				want[i], _, _ = build(k)
			}
			for i, k := range tasks {
				got, pm, ok := build(k)
				if !ok {
					continue
				}
				models++
				if !bytes.Equal(got, want[i]) {
					t.Fatalf("%s var %d threads %d,%d (lazy %v): the model on released lists differs:\n%s\nwant\n%s", name, k.v, k.t1, k.t2, lazy, got, want[i])
				}
				m.Release(pm)
				if pm.Steps[0] != nil || pm.Steps[1] != nil {
					t.Fatalf("%s: a released model keeps its steps", name)
				}
			}
		}
	}
	if models < 100 {
		t.Errorf("only %d models", models)
	}
}
