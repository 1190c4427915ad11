package recorder

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCallbackFromUninstrumentedLoop records a worker whose callback is
// run by an event loop compiled with plain gcc (no instrumentation, no line
// table): each callback is entered from an unknown location and is one
// operation, so reading the clock in one turn and again in the next is no
// unrepeatable read; without the region-scope rule it is one.
func TestCallbackFromUninstrumentedLoop(t *testing.T) {
	requireTool(t, "gcc")
	bin := mcpredict(t)
	lib := filepath.Join(t.TempDir(), "dispatch.o")
	if out, err := exec.Command("gcc", "-O1", "-c", "-o", lib, "testdata/callback/dispatch.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc dispatch.c: %v\n%s", err, out)
	}
	prog := build(t, "testdata/callback/ticks.c", lib)
	trace, _ := record(t, prog)
	evs := parseTrace(t, trace)
	enters := 0
	for _, e := range evs {
		if e.action == "Enter" && len(e.objs) > 0 && e.objs[0] == "on_tick" {
			enters++
			if e.file != "" || e.line != 0 {
				t.Errorf("callback entered at %s:%d, want an unknown location", e.file, e.line)
			}
		}
	}
	if enters < 2 {
		t.Fatalf("%d Enter events of on_tick, want one per turn", enters)
	}
	path := filepath.Join(t.TempDir(), "ticks.csv")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	if bugs, _ := predict(t, bin, path, "--engine", "native"); len(bugs) != 0 {
		t.Errorf("each callback is one operation, but got:\n%s", bugList(bugs))
	}
	bugs, _ := predict(t, bin, path, "--engine", "native", "--no-scope")
	if len(bugs) == 0 || bugs[0].Pattern != "P1" {
		t.Errorf("--no-scope: want the unrepeatable read across two callbacks, got:\n%s", bugList(bugs))
	}
}
