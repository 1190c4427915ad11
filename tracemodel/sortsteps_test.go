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
