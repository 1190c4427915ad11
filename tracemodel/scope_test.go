package tracemodel

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestScopeBreaks checks where region scope puts boundaries: at the next
// iteration of a loop around the earlier access, not at a loop that runs
// between the two accesses, and never showing the access's own event (a
// report lists each event once, and that must be the access).
func TestScopeBreaks(t *testing.T) {
	tests := []struct {
		name, trace string
		breaks      int // Boundary steps of thread 1
	}{
		{"loop around", `
1, 1, s.c-11, Lock, m
1, 2, s.c-12, Read, top
1, 3, s.c-13, Write, top
1, 4, s.c-14, Unlock, m
1, 5, s.c-11, Lock, m
1, 6, s.c-12, Read, top
1, 7, s.c-14, Unlock, m
2, 8, s.c-32, Write, top
`, 1},
		{"loop between", `
1, 1, s.c-10, Read, top
1, 2, s.c-11, Enter, work
1, 3, s.c-3, Write, other
1, 4, s.c-3, Exit, work
1, 5, s.c-11, Enter, work
1, 6, s.c-3, Write, other
1, 7, s.c-3, Exit, work
1, 8, s.c-12, Write, top
2, 9, s.c-32, Write, top
`, 0},
		{"read-modify-write in a loop: one region per iteration", `
1, 1, s.c-11, Lock, m
1, 2, s.c-12, Read, hits
1, 3, s.c-12, Write, hits
1, 4, s.c-13, Unlock, m
1, 5, s.c-11, Lock, m
1, 6, s.c-12, Read, hits
1, 7, s.c-12, Write, hits
1, 8, s.c-13, Unlock, m
1, 9, s.c-11, Lock, m
1, 10, s.c-12, Read, hits
1, 11, s.c-12, Write, hits
1, 12, s.c-13, Unlock, m
2, 13, s.c-32, Write, hits
`, 2},
		{"read-modify-write in a loop without other events", `
1, 1, s.c-12, Read, hits
1, 2, s.c-13, Write, hits
1, 3, s.c-12, Read, hits
1, 4, s.c-13, Write, hits
1, 5, s.c-12, Read, hits
1, 6, s.c-13, Write, hits
2, 7, s.c-32, Write, hits
`, 2},
		{"check, loop, act in the second iteration of an outer loop", `
1, 1, s.c-9, Lock, m
1, 2, s.c-10, Read, hits
1, 3, s.c-11, Enter, work
1, 4, s.c-3, Write, other
1, 5, s.c-3, Exit, work
1, 6, s.c-11, Enter, work
1, 7, s.c-3, Write, other
1, 8, s.c-3, Exit, work
1, 9, s.c-12, Write, hits
1, 10, s.c-13, Unlock, m
1, 11, s.c-9, Lock, m
1, 12, s.c-10, Read, hits
1, 13, s.c-11, Enter, work
1, 14, s.c-3, Write, other
1, 15, s.c-3, Exit, work
1, 16, s.c-12, Write, hits
1, 17, s.c-13, Unlock, m
2, 18, s.c-32, Write, hits
`, 1},
		{"act and check of the next iteration in a callee", `
1, 1, s.c-20, Enter, step
1, 2, s.c-5, Read, hits
1, 3, s.c-6, Write, hits
1, 4, s.c-7, Exit, step
1, 5, s.c-21, Enter, log
1, 6, s.c-8, Exit, log
1, 7, s.c-20, Enter, step
1, 8, s.c-5, Read, hits
1, 9, s.c-6, Write, hits
1, 10, s.c-7, Exit, step
2, 11, s.c-32, Write, hits
`, 1},
		{"repeat at the access", `
1, 1, s.c-12, Read, top
1, 2, s.c-12, Read, top
2, 3, s.c-32, Write, top
`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse(context.Background(), strings.NewReader(tt.trace), "s.csv", Options{})
			if err != nil {
				t.Fatal(err)
			}
			v := m.VarByName("top")
			if v == 0 {
				v = m.VarByName("hits")
			}
			pm, err := m.Project(v, 1, 2, ProjectOptions{Scope: true})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			steps := pm.Steps[0]
			for i, s := range steps {
				if s.Kind != StepBoundary {
					continue
				}
				n++
				if i+1 < len(steps) && steps[i+1].Kind.IsAccess() && s.Events[0].TraceLine == steps[i+1].Events[0].TraceLine {
					t.Errorf("boundary %d shows the event of the access after it (trace line %d)", i, s.Events[0].TraceLine)
				}
			}
			if n != tt.breaks {
				t.Errorf("%d boundaries, want %d: %+v", n, tt.breaks, steps)
			}
		})
	}
}

// TestScopeFirstAtMost compares the scope index's query, leaf by leaf on
// short ranges and through the tree on long ones, with a plain scan.
func TestScopeFirstAtMost(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 33, 100, 1000} {
		size := 1
		for size < n {
			size <<= 1
		}
		ix := &scopeIndex{size: size, tree: make([]int32, 2*size)}
		for i := range ix.tree {
			ix.tree[i] = math.MaxInt32
		}
		for i := range n {
			if rng.IntN(4) == 0 {
				ix.tree[size+i] = int32(rng.IntN(i + 1))
			}
		}
		for i := size - 1; i >= 1; i-- {
			ix.tree[i] = min(ix.tree[2*i], ix.tree[2*i+1])
		}
		for range 2000 {
			a := int32(rng.IntN(n + 1))
			end := a + int32(rng.IntN(3*shortRange))
			end = min(end, int32(n))
			limit := int32(rng.IntN(n + 1))
			want := int32(0)
			for p := a + 1; p <= end; p++ {
				if ix.tree[size+int(p)-1] <= limit {
					want = p
					break
				}
			}
			if got := ix.firstAtMost(a, end, limit); got != want {
				t.Fatalf("n %d: firstAtMost(%d, %d, %d) = %d, want %d", n, a, end, limit, got, want)
			}
		}
	}
}
