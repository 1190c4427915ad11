package tracemodel

import (
	"math/rand/v2"
	"testing"
)

// TestHoldScan checks that holdScan answers as closeAfter does when asked
// of increasing positions, on random nested holds of a few locks.
func TestHoldScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		nlocks := 1 + r.IntN(4)
		ops := make([][]lockOp, nlocks)
		for k := range ops {
			pos := int32(0)
			for h := r.IntN(20); h > 0; h-- {
				pos += 1 + int32(r.IntN(6))
				start := pos
				ops[k] = append(ops[k], lockOp{Pos: pos, Start: start, Kind: StepLock})
				pos += 1 + int32(r.IntN(6))
				if r.IntN(10) > 0 { // sometimes a hold never ends
					ops[k] = append(ops[k], lockOp{Pos: pos, Start: start, Kind: StepUnlock})
				} else {
					break
				}
			}
		}
		h := holdScan{ops: ops, from: make([]int, nlocks)}
		e := int32(0)
		for q := 0; q < 40; q++ {
			e += int32(r.IntN(5))
			if got, want := h.closeAfter(e), closeAfter(ops, e); got != want {
				t.Fatalf("trial %d: closeAfter(%d) = %d by the scan, %d by the searches (ops %v)", trial, e, got, want, ops)
			}
		}
	}
}
