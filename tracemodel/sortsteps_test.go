package tracemodel

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortSteps checks the in-place permutation of sortSteps against a
// stable sort, on sorted runs interleaved as Projection.Model makes them,
// on random steps, and with a reused key buffer.
func TestSortSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	runs := func(n, k int) []rawStep { // k sorted runs of positions
		var out []rawStep
		for range k {
			p := int32(0)
			for range n / k {
				p += 1 + r.Int32N(5)
				out = append(out, rawStep{pos: p, order: int8(r.IntN(5) - 2)})
			}
		}
		return out
	}
	random := func(n int) []rawStep {
		out := make([]rawStep, n)
		for i := range out {
			out[i] = rawStep{pos: 1 + r.Int32N(int32(n)), order: int8(r.IntN(5) - 2)}
		}
		return out
	}
	tests := []struct {
		name  string
		steps []rawStep
	}{
		{"empty", nil},
		{"one", []rawStep{{pos: 3}}},
		{"sorted", []rawStep{{pos: 1}, {pos: 2, order: -1}, {pos: 2, order: 1}}},
		{"reversed", []rawStep{{pos: 9}, {pos: 5}, {pos: 5, order: -2}, {pos: 1}}},
		{"runs", runs(300, 3)},
		{"random", random(1000)},
	}
	var keys []uint64
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.steps {
				tt.steps[i].ev = int32(i) // tells equal keys apart
			}
			want := slices.Clone(tt.steps)
			slices.SortStableFunc(want, func(a, b rawStep) int {
				if a.pos != b.pos {
					return cmp.Compare(a.pos, b.pos)
				}
				return cmp.Compare(a.order, b.order)
			})
			keys = sortSteps(tt.steps, keys)
			for i := range want {
				if tt.steps[i].pos != want[i].pos || tt.steps[i].order != want[i].order || tt.steps[i].ev != want[i].ev {
					t.Fatalf("step %d: got (pos %d, order %d, ev %d), want (%d, %d, %d)", i,
						tt.steps[i].pos, tt.steps[i].order, tt.steps[i].ev, want[i].pos, want[i].order, want[i].ev)
				}
			}
		})
	}
}

// TestMergeSteps checks mergeSteps against a stable sort: sorted runs, an
// unsorted last run (region breaks), one run, and more runs than it merges.
func TestMergeSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	run := func(n int, sorted bool) []rawStep {
		out := make([]rawStep, n)
		p := int32(0)
		for i := range out {
			p += 1 + r.Int32N(4)
			out[i] = rawStep{pos: p}
		}
		if !sorted {
			r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		}
		return out
	}
	tests := []struct {
		name string
		runs [][]rawStep
	}{
		{"one run", [][]rawStep{run(50, true)}},
		{"accesses, two locks, breaks", [][]rawStep{run(40, true), run(20, true), nil, run(30, true), run(25, false)}},
		{"already in order", [][]rawStep{{{pos: 1}, {pos: 2}}, {{pos: 3}}, {{pos: 4}}}},
		{"ten runs", [][]rawStep{run(5, true), run(5, true), run(5, true), run(5, true), run(5, true),
			run(5, true), run(5, true), run(5, true), run(5, true), run(5, false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var steps []rawStep
			var starts []int
			for _, r := range tt.runs {
				starts = append(starts, len(steps))
				steps = append(steps, r...)
			}
			for i := range steps {
				steps[i].ev = int32(i)
			}
			want := slices.Clone(steps)
			slices.SortStableFunc(want, func(a, b rawStep) int { return cmp.Compare(a.pos, b.pos) })
			out, merged, _ := mergeSteps(steps, starts, nil, nil)
			got := steps
			if merged {
				got = out
			}
			if len(got) != len(want) {
				t.Fatalf("got %d steps, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].pos != want[i].pos {
					t.Fatalf("step %d: pos %d, want %d", i, got[i].pos, want[i].pos)
				}
			}
		})
	}
}
