package predict

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/cache"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestCacheTellsSetModelsApart: set models that differ only in what the
// verdict cache's key once left out share no entry. Two sets {x, y} and
// {x, z} whose models have the same steps, locks, guards and progress
// marks, but other verdicts, because the accesses of the second variable
// are other steps (set_order.csv: an Apache 2.0.46 recording's
// {first_avail, free_index} and {first_avail, ref} of one memory node; the
// instances of one were listed on the other, and the run failed with "the
// witness of claim M3_1_yx does not contain pattern M3"), or because the
// writes of one of the variables commute (set_updates.csv: the cached
// verdicts of {x, y} left out the torn update of {x, z}). A run with a
// fresh cache, one model at a time, and a run with every model cached
// must report what a run without the cache reports.
func TestCacheTellsSetModelsApart(t *testing.T) {
	proj, err := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
	if err != nil {
		t.Fatal(err)
	}
	proj.Dataflow = false // as the Apache run (--no-dataflow); the traces need no data flow
	tests := []struct {
		file string
		// sets: the bugs of the set models without the cache, "pattern
		// on vars", sorted.
		sets []string
	}{
		{"testdata/set_order.csv", []string{"M3 on x,z", "M3 on y,x"}},
		{"testdata/set_updates.csv", []string{"M2 on x,y", "M2 on x,z", "M3 on z,x", "M6 on y,x", "M6 on z,x"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			m, err := tracemodel.Open(context.Background(), tc.file, tracemodel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Engine: EngineNative, Jobs: 1, Models: withSets, Project: proj,
				Sets: tracemodel.SetOptions{MaxPartners: -1, Declared: [][]string{{"x", "y"}, {"x", "z"}}}}
			run := func(what string) string {
				t.Helper()
				rep, err := Run(context.Background(), m, opts)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				return bugLines(rep)
			}
			want := run("without the cache")
			var sets []string
			for _, l := range strings.Split(want, "\n") {
				if f := strings.Fields(l); len(f) == 4 && strings.HasPrefix(f[1], "M") {
					sets = append(sets, f[1]+" on "+f[3])
				}
			}
			slices.Sort(sets)
			if !slices.Equal(sets, tc.sets) {
				t.Fatalf("set bugs without the cache: %q, want %q", sets, tc.sets)
			}
			dir, err := cache.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			opts.Cache = dir
			for _, what := range []string{"a fresh cache", "every model cached"} {
				if got := run(what); got != want {
					t.Errorf("with %s:\n%s\nwithout the cache:\n%s", what, got, want)
				}
			}
		})
	}
}

// bugLines lists the bugs of a report: id, pattern, instances, variables.
func bugLines(rep *bugs.Report) string {
	var lines []string
	for _, b := range rep.Bugs {
		lines = append(lines, fmt.Sprintf("%s %s %d %s", b.ID, b.Pattern, b.Count, strings.Join(b.Vars, ",")))
	}
	return strings.Join(lines, "\n")
}
