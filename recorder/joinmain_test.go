package recorder

import (
	"strings"
	"testing"
)

// TestJoinMain records a thread that joins the main thread, after main
// ended with pthread_exit or after the joiner cancelled it (aget's signal
// thread cancels main and joins it before save_log). The Join must name
// thread 1, not an unknown pthread handle the predictor drops, so that
// the joiner's read is ordered after main's two writes: no dirty read.
func TestJoinMain(t *testing.T) {
	const src = "testdata/joinmain/joinmain.c"
	bin := mcpredict(t)
	mk := markers(t, src)
	prog := build(t, src)
	for _, tc := range []struct {
		mode string
	}{
		{mode: "exit"},
		{mode: "cancel"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			trace, _ := record(t, prog, tc.mode)
			evs := parseTrace(t, trace)
			joins := mustFind(t, evs, "Join", "", mk["join"])
			if got := joins[0].objs[0]; got != "1" {
				t.Errorf("the join of the main thread is Join %s, want Join 1", got)
			}
			if strings.Contains(trace, "pthread:0x") {
				t.Errorf("the trace names a thread by its handle")
			}
			mustFind(t, evs, "Write", "total", mk["second"])
			if ids := bugIDs(t, bin, trace); len(ids) > 0 {
				t.Errorf("bugs %v: the read after the join cannot fall between main's writes", ids)
			}
		})
	}
}
