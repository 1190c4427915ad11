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

// TestKeyMap puts and gets random keys, with repeats, overwrites and the
// extreme values, in a keyMap and a map, through many resizes.
func TestKeyMap(t *testing.T) {
	for _, hint := range []int{0, 1, 1000} {
		r := rand.New(rand.NewSource(int64(hint) + 7))
		km, m := newKeyMap(hint), map[uint64]uint64{}
		keys := []uint64{0, math.MaxUint64, math.MaxUint64 - 1, 1}
		for range 50000 {
			keys = append(keys, uint64(r.Intn(20000))<<uint(r.Intn(40)))
		}
		for i, k := range append(keys, keys...) {
			got, ok := km.get(k)
			want, wantOK := m[k]
			if ok != wantOK || got != want {
				t.Fatalf("hint %d: get(%#x) = %d, %v, want %d, %v", hint, k, got, ok, want, wantOK)
			}
			if i%3 != 0 {
				v := r.Uint64()
				km.put(k, v)
				m[k] = v
			}
		}
	}
}

// TestKeySetReset empties a keySet between rounds of random adds, sparse
// and dense, and requires the answers of a fresh map each round.
func TestKeySetReset(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	s := newKeySet(0)
	for round, n := range []int{10, 5000, 3, 0, 20000, 1, 700} {
		m := map[uint64]bool{}
		for range 2 * n {
			k := uint64(r.Intn(n+1)) << uint(r.Intn(30))
			if round%2 == 0 && r.Intn(50) == 0 {
				k = math.MaxUint64
			}
			if got, want := s.add(k), !m[k]; got != want {
				t.Fatalf("round %d: add(%#x) = %v, want %v", round, k, got, want)
			}
			m[k] = true
		}
		s.reset()
	}
}
