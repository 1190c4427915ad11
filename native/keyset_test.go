package native

import (
	"math"
	"math/rand"
	"testing"
)

// TestKeySet adds random keys, with repeats and the extreme values, to a
// keySet and a map, and requires the same answers through many resizes.
func TestKeySet(t *testing.T) {
	for _, hint := range []int{0, 1, 1000} {
		r := rand.New(rand.NewSource(int64(hint)))
		s, m := newKeySet(hint), map[uint64]bool{}
		keys := []uint64{0, math.MaxUint64, math.MaxUint64 - 1, 1}
		for range 50000 {
			keys = append(keys, uint64(r.Intn(20000))<<uint(r.Intn(40)))
		}
		for _, k := range append(keys, keys...) {
			if got, want := s.add(k), !m[k]; got != want {
				t.Fatalf("hint %d: add(%#x) = %v, want %v", hint, k, got, want)
			}
			m[k] = true
		}
	}
}
