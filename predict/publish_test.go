package predict

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestPublication checks double-checked locking with one field end to end:
// the pointer and the field of its target, published before it is filled,
// are a publication set (tracemodel.AtomicSet.Published) whose model has
// the half-done update read M5 — a struct's field, an int, a table slot;
// with one lock more whose counter orders the reader after the fill under
// the precise semantics, only the model without the observed data flow
// has it (mcpredict reproduce's dataflow relaxation). A reader under the
// lock, or an object filled before it is published, has none.
func TestPublication(t *testing.T) {
	precise, err := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
	if err != nil {
		t.Fatal(err)
	}
	noFlow := precise
	noFlow.Dataflow = false
	for _, c := range []struct {
		file string
		proj tracemodel.ProjectOptions
		want []string // the M5 bug's variables; nil: no bug
	}{
		{"dcl_field.csv", precise, []string{"g", "g->value"}},
		{"dcl_int.csv", precise, []string{"g", "g[0]"}},
		{"dcl_slot.csv", precise, []string{"tab[1]", "tab[1]->hits"}},
		{"dcl_nested.csv", precise, nil},
		{"dcl_nested.csv", noFlow, []string{"g", "g->value"}},
		{"dcl_locked_read.csv", precise, nil},
		{"dcl_locked_read.csv", noFlow, nil},
		{"dcl_filled_first.csv", precise, nil},
		{"dcl_filled_first.csv", noFlow, nil},
	} {
		t.Run(c.file+" "+c.proj.String(), func(t *testing.T) {
			m, err := tracemodel.Open(context.Background(), filepath.Join("testdata", c.file), tracemodel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(context.Background(), m, Options{Engine: EngineNative, Models: withSets, Project: c.proj})
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if len(rep.Bugs) != 0 {
					t.Fatalf("bugs %+v, want none", rep.Bugs)
				}
				return
			}
			if len(rep.Bugs) != 1 || rep.Bugs[0].Pattern != "M5" || !slices.Equal(rep.Bugs[0].Vars, c.want) {
				t.Fatalf("bugs %+v, want one M5 on %v", rep.Bugs, c.want)
			}
		})
	}
}
