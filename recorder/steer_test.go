package recorder

import "testing"

// TestSteeringReads checks which reads the runtime writes as DataRead: a
// read whose value no comparison with equal operands, no switch, no
// address and no array index used; and of those, which as CopyRead: no
// comparison had the value at all. Two workers run one after the other; the first sees the
// reference count and the barrier count miss their targets, the second
// hits them. Built with gcc and with clang (whose comparisons need
// another coverage option).
func TestSteeringReads(t *testing.T) {
	src := "testdata/steer/steer.c"
	mk := markers(t, src)
	for _, compiler := range []string{"gcc", "clang"} {
		t.Run(compiler, func(t *testing.T) {
			trace, _ := record(t, buildWith(t, compiler, src))
			steering(t, parseTrace(t, trace), mk)
		})
	}
}

func steering(t *testing.T, evs []event, mk map[string]int) {
	tests := []struct {
		marker, variable string
		data             [2]bool // first worker, second worker
		copied           [2]bool // CopyRead
	}{
		{"stat", "hits", [2]bool{true, true}, [2]bool{true, true}},         // hits++: only data
		{"ref", "refs", [2]bool{true, false}, [2]bool{false, false}},       // --refs == 0: 1 ≠ 0, then 0 == 0
		{"arrive", "arrived", [2]bool{true, false}, [2]bool{false, false}}, // ++arrived == 2: 1 ≠ 2, then 2 == 2
		{"head", "head", [2]bool{false, false}, [2]bool{false, false}},     // a pointer followed
		{"mode", "mode", [2]bool{false, false}, [2]bool{false, false}},     // switched on
		{"top", "top", [2]bool{false, false}, [2]bool{false, false}},       // stack[top++]: an index
		{"copy", "lo", [2]bool{true, true}, [2]bool{true, true}},           // lo * 3: computed with, never compared
		{"limit", "used", [2]bool{true, true}, [2]bool{false, false}},      // used >= 1000: 40 ≠ 1000, a test all the same
	}
	for _, tt := range tests {
		reads := find(evs, "Read", tt.variable, mk[tt.marker])
		if len(reads) != 2 {
			t.Errorf("%s: %d reads at line %d, want one per worker", tt.variable, len(reads), mk[tt.marker])
			continue
		}
		for i, r := range reads {
			if r.data != tt.data[i] {
				t.Errorf("%s, worker %d: DataRead is %v, want %v (%s)", tt.variable, i+1, r.data, tt.data[i], r)
			}
			if r.copied != tt.copied[i] {
				t.Errorf("%s, worker %d: CopyRead is %v, want %v (%s)", tt.variable, i+1, r.copied, tt.copied[i], r)
			}
		}
	}
}
