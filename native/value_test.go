package native

import (
	"testing"

	"github.com/mcpredict/mcpredict/ltl"
)

// TestValueIndex: every value of the variable a search can meet packs into
// an index of its own, in vBits bits, and back.
func TestValueIndex(t *testing.T) {
	seen := map[uint64]int16{}
	for _, w := range []int16{0, 64} {
		for tid := range int16(3) {
			for _, y := range []int16{0, ltl.VarBit} {
				for _, a := range []int16{0, ltl.AtomicBit} {
					v := w + tid + y
					if tid == 0 && v != 0 || a != 0 && w == 0 {
						continue // no access but the initial state; atomic writes only
					}
					v |= a
					i := valueIndex(v)
					if i >= 1<<vBits || valueAt(i) != v {
						t.Errorf("value %d: index %d, back %d", v, i, valueAt(i))
					}
					if u, dup := seen[i]; dup && u != v {
						t.Errorf("values %d and %d share index %d", u, v, i)
					}
					seen[i] = v
				}
			}
		}
	}
	if len(seen) != len(values) {
		t.Errorf("%d values met, %d in the table", len(seen), len(values))
	}
}
