package predict

import (
	"context"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestTryLocksFail: SV-COMP's 28-race_reach_40-trylock_racing. A worker
// bumps and restores a counter in two critical sections of g, inside its
// hold of m; main trylocks m (in the recorded run it got it), then reads
// the counter under g and asserts it is 0. With the trylock's hold, m keeps
// main's read out of the worker's: nothing. Where the trylock may fail
// (ProjectOptions.TryLocksFail, with the region boundaries off as in
// reproduce's relaxed model trylocks: the bump and the restore are two
// critical sections of g), main reads between them: the dirty read P4.
func TestTryLocksFail(t *testing.T) {
	const trace = `1, 1, r.c-20, Create, 2
2, 2, r.c-9, Lock, m
2, 3, r.c-10, Lock, g
2, 4, r.c-10, DataRead, global
2, 5, r.c-10, Write, global
2, 6, r.c-10, Unlock, g
2, 7, r.c-10, Lock, g
2, 8, r.c-10, DataRead, global
2, 9, r.c-10, Write, global
2, 10, r.c-10, Unlock, g
2, 11, r.c-11, Unlock, m
1, 12, r.c-23, TryLock, m
1, 13, r.c-24, Lock, g
1, 14, r.c-24, Read, global
1, 15, r.c-24, Unlock, g
1, 16, r.c-25, Unlock, m
1, 17, r.c-26, Join, 2
`
	m := parseText(t, "r.csv", trace)
	if !m.HasTryLock() {
		t.Fatal("HasTryLock: false")
	}
	for _, fail := range []bool{false, true} {
		po, _ := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
		po.NoBoundaries, po.TryLocksFail = true, fail
		rep, err := Run(context.Background(), m, Options{Engine: EngineNative, Project: po, MaxModels: -1, Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		dirty := false
		for _, v := range rep.Violations {
			if v.Pattern == "P4" && v.Local.Handle == "2" {
				dirty = true
			}
		}
		if dirty != fail {
			t.Errorf("TryLocksFail %v: main's read between the bump and the restore (P4) %v, want %v (violations %+v)", fail, dirty, fail, rep.Violations)
		}
	}
}
