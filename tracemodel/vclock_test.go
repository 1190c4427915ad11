package tracemodel

import (
	"math/rand/v2"
	"testing"
)

// TestVclockMatchesDense compares the persistent clock with dense vectors
// under random sets and joins, across trie depths, and checks that clocks
// handed out earlier never change.
func TestVclockMatchesDense(t *testing.T) {
	for _, n := range []int{3, 32, 33, 1100, 40000} {
		r := rand.New(rand.NewPCG(uint64(n), 7))
		const clocks = 8
		vc := make([]vclock, clocks)
		dense := make([][]int32, clocks)
		for i := range dense {
			dense[i] = make([]int32, n)
		}
		type saved struct {
			c     vclock
			dense []int32
		}
		var snaps []saved
		for step := 0; step < 3000; step++ {
			a := r.IntN(clocks)
			if r.IntN(3) == 0 {
				b := r.IntN(clocks)
				got, changed := vc[a].join(vc[b])
				want := false
				for i := range dense[a] {
					if dense[b][i] > dense[a][i] {
						dense[a][i] = dense[b][i]
						want = true
					}
				}
				if changed != want {
					t.Fatalf("n=%d step %d: join changed=%v, want %v", n, step, changed, want)
				}
				vc[a] = got
			} else {
				i, x := r.IntN(n), int32(r.IntN(100))
				got, changed := vc[a].set(i, x)
				want := x > dense[a][i]
				if want {
					dense[a][i] = x
				}
				if changed != want {
					t.Fatalf("n=%d step %d: set(%d,%d) changed=%v, want %v", n, step, i, x, changed, want)
				}
				vc[a] = got
			}
			if step%100 == 0 {
				snaps = append(snaps, saved{vc[a], append([]int32(nil), dense[a]...)})
			}
		}
		for k, s := range snaps {
			for i, want := range s.dense {
				if got := s.c.get(i); got != want {
					t.Fatalf("n=%d snapshot %d: component %d = %d, want %d (a persistent clock changed)", n, k, i, got, want)
				}
			}
		}
		if got := vc[0].get(n + 5000); got != 0 {
			t.Fatalf("component beyond the clock = %d, want 0", got)
		}
	}
}
