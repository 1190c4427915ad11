package tracemodel

import (
	"math/rand/v2"
	"testing"
)

// TestHoldScan checks that holdScan answers as closeAfter does when asked
// of increasing positions, on random nested holds of a few locks.
// randomHolds returns the operations of up to four locks by one thread:
// holds of random lengths, the last one sometimes never released.
func randomHolds(r *rand.Rand) [][]lockOp {
	ops := make([][]lockOp, 1+r.IntN(4))
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
	return ops
}

func TestHoldScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		ops := randomHolds(r)
		nlocks := len(ops)
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

// TestHoldCursor checks the cursor against holdAt's search on positions
// that mostly grow, sometimes jump ahead and sometimes go back.
func TestHoldCursor(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 500; trial++ {
		for _, ops := range randomHolds(r) {
			c := holdCursor{ops: ops}
			pos := int32(0)
			for q := 0; q < 60; q++ {
				switch r.IntN(10) {
				case 0:
					pos -= int32(r.IntN(30))
				case 1:
					pos += int32(r.IntN(100))
				default:
					pos += int32(r.IntN(4))
				}
				if later := c; later.at(pos+7) != holdAt(ops, pos+7) {
					t.Fatalf("trial %d: a copy's at(%d) = %d, holdAt %d (ops %v)", trial, pos+7, later.at(pos+7), holdAt(ops, pos+7), ops)
				}
				if got, want := c.at(pos), holdAt(ops, pos); got != want {
					t.Fatalf("trial %d: at(%d) = %d, holdAt %d (ops %v)", trial, pos, got, want, ops)
				}
			}
		}
	}
}
