package predict

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestFreeSetReads: the shape of aget-bug2's save_log. A worker adds to
// its offset and then to the total; the saver, after the worker's last
// update, checks the total, then copies the offset and the total. In the
// precise set model the check is a steering read, kept after the worker's
// last write of the total: the copy cannot tear. With FreeSetReads (the
// relaxed models of reproduce) it may see an older total, and the copy can
// fall between the worker's two writes (M5).
func TestFreeSetReads(t *testing.T) {
	const trace = `1, 1, d.c-1, Create, 2
1, 2, d.c-2, Create, 3
2, 3, w.c-10, Read, offset
2, 4, w.c-10, Write, offset
2, 5, w.c-11, Lock, mu
2, 6, w.c-12, Read, total
2, 7, w.c-12, Write, total
2, 8, w.c-13, Unlock, mu
3, 9, s.c-20, Read, total
3, 10, s.c-21, Read, offset
3, 11, s.c-22, Read, total
3, 12, s.c-23, Write, saved
`
	m := parseText(t, "f.csv", trace)
	for _, free := range []bool{false, true} {
		po, _ := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
		po.Dataflow, po.ObservedReads, po.FreeSetReads = false, false, free
		vs := setViolations(t, m, po, "offset", "total")
		torn := slices.ContainsFunc(vs, func(v bugs.Violation) bool { return v.Local.Handle == "3" && v.Remote.Handle == "2" })
		if torn != free {
			t.Errorf("FreeSetReads %v: the saver's copy tears: %v, want %v (violations %+v)", free, torn, free, vs)
		}
	}
}

// TestCopyReadsUnpinned: set_range_bounds.c recorded with the setter run
// before the checker (mcpredict record --serial last). The checker reads lo
// and then hi, each in a critical section of its own, after every write.
// A read the checker steered by (Read, DataRead) stays after the setter's
// last write of its variable: no torn read. A CopyRead (its value compared
// with nothing: the checker only computes hi - lo) may see the setter's
// earlier value: M1, lo of one move and hi of the next.
func TestCopyReadsUnpinned(t *testing.T) {
	const trace = `1, 1, r.c-60, Create, 2
1, 2, r.c-61, Create, 3
3, 3, r.c-21, Lock, m
3, 4, r.c-22, Write, lo
3, 5, r.c-23, Write, hi
3, 6, r.c-24, Unlock, m
3, 7, r.c-21, Lock, m
3, 8, r.c-22, Write, lo
3, 9, r.c-23, Write, hi
3, 10, r.c-24, Unlock, m
2, 11, r.c-29, Lock, m
2, 12, r.c-30, %s, lo
2, 13, r.c-31, Unlock, m
2, 14, r.c-37, Lock, m
2, 15, r.c-38, %s, hi
2, 16, r.c-39, Unlock, m
`
	for _, tt := range []struct {
		read string
		torn bool
	}{
		{"Read", false},
		{"DataRead", false},
		{"CopyRead", true},
	} {
		m := parseText(t, "r.csv", fmt.Sprintf(trace, tt.read, tt.read))
		po, _ := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
		vs := setViolations(t, m, po, "lo", "hi")
		torn := slices.ContainsFunc(vs, func(v bugs.Violation) bool { return v.Local.Handle == "2" && v.Pattern == "M1" })
		if torn != tt.torn {
			t.Errorf("checker reads written %s: torn read M1 %v, want %v (violations %+v)", tt.read, torn, tt.torn, vs)
		}
	}
}

// setViolations checks the model of the declared set {x, y} with the
// built-in two-variable patterns, natively, and returns its violations.
func setViolations(t *testing.T, m *tracemodel.Model, po tracemodel.ProjectOptions, x, y string) []bugs.Violation {
	t.Helper()
	rep, err := Run(context.Background(), m, Options{Engine: EngineNative, Project: po, MaxModels: -1, Jobs: 1,
		Models: []Models{{Kind: SetModels, Patterns: SetModels.Builtin()}},
		Sets:   tracemodel.SetOptions{MaxPartners: -1, Declared: [][]string{{x, y}}}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Violations
}
