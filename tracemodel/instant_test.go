package tracemodel

import (
	"context"
	"math/bits"
	"slices"
	"strings"
	"testing"
)

// TestKeptLocks checks which common locks a model keeps: a lock with an
// access or a region break in one of its holds, or around a kept lock's
// operation, stays; a lock whose holds are all empty goes, in both
// threads, nested or not.
func TestKeptLocks(t *testing.T) {
	// A Signal (a hand-off: a region break with ProjectOptions.Handoffs)
	// inside thread 1's hold.
	const signalInHold = `
1, 1, k.c-1, Read, x
1, 2, k.c-2, Lock, a
1, 3, k.c-8, Signal, c
1, 4, k.c-3, Unlock, a
1, 5, k.c-4, Write, x
2, 6, k.c-2, Lock, a
2, 7, k.c-3, Unlock, a
2, 8, k.c-5, Write, x
`
	tests := []struct {
		name  string
		trace string
		opts  ProjectOptions
		want  []string // the locks of the model
	}{
		{"empty holds between accesses", `
1, 1, k.c-1, Read, x
1, 2, k.c-2, Lock, a
1, 3, k.c-3, Unlock, a
1, 4, k.c-2, Lock, a
1, 5, k.c-3, Unlock, a
1, 6, k.c-4, Write, x
2, 7, k.c-2, Lock, a
2, 8, k.c-3, Unlock, a
2, 9, k.c-5, Write, x
`, ProjectOptions{}, nil},
		{"an access in one thread's hold", `
1, 1, k.c-1, Read, x
1, 2, k.c-2, Lock, a
1, 3, k.c-3, Unlock, a
1, 4, k.c-4, Write, x
2, 5, k.c-2, Lock, a
2, 6, k.c-5, Write, x
2, 7, k.c-3, Unlock, a
`, ProjectOptions{}, []string{"a"}},
		{"empty inner hold, outer around an access", `
1, 1, k.c-2, Lock, a
1, 2, k.c-6, Lock, b
1, 3, k.c-7, Unlock, b
1, 4, k.c-1, Read, x
1, 5, k.c-3, Unlock, a
1, 6, k.c-4, Write, x
2, 7, k.c-2, Lock, a
2, 8, k.c-6, Lock, b
2, 9, k.c-7, Unlock, b
2, 10, k.c-3, Unlock, a
2, 11, k.c-5, Write, x
`, ProjectOptions{}, []string{"a"}},
		{"outer empty hold around a kept lock", `
1, 1, k.c-1, Read, x
1, 2, k.c-2, Lock, a
1, 3, k.c-6, Lock, b
1, 4, k.c-7, Unlock, b
1, 5, k.c-3, Unlock, a
1, 6, k.c-4, Write, x
2, 7, k.c-6, Lock, b
2, 8, k.c-5, Write, x
2, 9, k.c-7, Unlock, b
2, 10, k.c-2, Lock, a
2, 11, k.c-3, Unlock, a
`, ProjectOptions{}, []string{"a", "b"}},
		{"nested empty holds", `
1, 1, k.c-1, Read, x
1, 2, k.c-2, Lock, a
1, 3, k.c-6, Lock, b
1, 4, k.c-7, Unlock, b
1, 5, k.c-3, Unlock, a
1, 6, k.c-4, Write, x
2, 7, k.c-6, Lock, b
2, 8, k.c-2, Lock, a
2, 9, k.c-3, Unlock, a
2, 10, k.c-7, Unlock, b
2, 11, k.c-5, Write, x
`, ProjectOptions{}, nil},
		{"a region break in a hold", signalInHold, ProjectOptions{Handoffs: true}, []string{"a"}},
		{"the same break without its rule", signalInHold, ProjectOptions{}, nil},
		{"kept on request", `
1, 1, k.c-1, Read, x
1, 2, k.c-2, Lock, a
1, 3, k.c-3, Unlock, a
1, 4, k.c-4, Write, x
2, 5, k.c-2, Lock, a
2, 6, k.c-3, Unlock, a
2, 7, k.c-5, Write, x
`, ProjectOptions{KeepEmptyHolds: true}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse(context.Background(), strings.NewReader(strings.TrimSpace(tt.trace)+"\n"), "k.csv", Options{})
			if err != nil {
				t.Fatal(err)
			}
			pm, err := m.Project(m.VarByName("x"), 1, 2, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range pm.Locks {
				got = append(got, l.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("locks %v, want %v", got, tt.want)
			}
			for x := range 2 {
				for _, s := range pm.Steps[x] {
					if (s.Kind.IsAcquire() || s.Kind.IsRelease()) && !slices.Contains(tt.want, pm.Locks[s.Lock].Name) {
						t.Errorf("thread %d: a step of a lock left out: %+v", x+1, s)
					}
				}
			}
		})
	}
}

// TestSearchFrom checks searchFrom against sort.Search for every length,
// answer and starting point at or below the answer, near and far.
func TestSearchFrom(t *testing.T) {
	for n := 0; n <= 70; n++ {
		for want := 0; want <= n; want++ {
			for from := 0; from <= want; from++ {
				reads := 0
				got := searchFrom(n, from, func(i int) bool {
					if i < from || i >= n {
						t.Fatalf("n %d from %d: read index %d", n, from, i)
					}
					reads++
					return i >= want
				})
				if got != want {
					t.Fatalf("n %d from %d: got %d, want %d", n, from, got, want)
				}
				if d := want - from + 1; reads > 2*bits.Len(uint(d))+1 {
					t.Errorf("n %d from %d want %d: %d reads", n, from, want, reads)
				}
			}
		}
	}
}
