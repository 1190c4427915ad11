package escape

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// The trace's lines 1.. are its events; want lists, per line of an
// access, whether it is escaped.
const trace = `main, 1, e.c-1, Write, cfg
main, 2, e.c-2, Write, shared
main, 3, e.c-3, Create, a
main, 4, e.c-4, Create, b
a, 5, e.c-10, Write, local
a, 6, e.c-11, Read, cfg
a, 7, e.c-12, Write, shared
a, 8, e.c-13, Write, data
a, 9, e.c-14, Signal, c
a, 10, e.c-15, Write, shared
b, 11, e.c-20, Wait, c
b, 12, e.c-21, Read, data
b, 13, e.c-22, Read, cfg
b, 14, e.c-23, Write, shared
a, 15, e.c-16, Write, data
main, 16, e.c-5, Join, a
main, 17, e.c-6, Join, b
main, 18, e.c-7, Read, shared
`

// TestEscape: §3.1, accesses before a variable is reachable by a second
// thread are dropped. A thread-local variable never escapes; a variable
// written before Create, or handed over with a signal, is escaped only
// from the other thread's access on; accesses of threads that merely ran
// one after the other in the recording stay escaped (the dissertation's
// criticism of Eraser's "second thread" heuristic, §4.5).
func TestEscape(t *testing.T) {
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "e.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := Compute(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{
		1: false, // cfg: main's write happens before a's and b's reads
		2: false, // shared: likewise
		5: false, // local: thread-local
		6: true, 7: true,
		8:  false, // data: written before the Signal that b waits for
		10: true,
		12: true, 13: true, 14: true,
		15: true, // data after b's read: escaped for good
		18: true,
	}
	for i := range m.Events {
		e := &m.Events[i]
		if !e.Kind.IsAccess() {
			continue
		}
		w, ok := want[int(e.Line)]
		if !ok {
			t.Fatalf("line %d not in want", e.Line)
		}
		if got := in.Escaped(int32(i)); got != w {
			t.Errorf("line %d (%s %s): escaped %v, want %v", e.Line, e.Kind, m.Vars[e.Obj].Name, got, w)
		}
	}
	if !in.ThreadLocal(int32(m.VarByName("local"))) || in.ThreadLocal(int32(m.VarByName("shared"))) {
		t.Error("ThreadLocal")
	}
}
