package tracemodel

import (
	"context"
	"strings"
	"testing"
)

func TestLivenessWarnings(t *testing.T) {
	trace := `# thread 2 is never joined and its start routine never exits;
# thread 3 ends without a join (detached); thread 4 never runs;
# thread 5 is joined; thread 6 has no function events at all.
1, 1, ?, Enter, main
1, 2, a.c-10, Create, 2
1, 3, a.c-11, Create, 3
1, 4, a.c-12, Create, 4
1, 5, a.c-13, Create, 5
1, 6, a.c-14, Create, 6
2, 7, ?, Enter, worker
2, 8, a.c-3, Enter, step
2, 9, a.c-4, Write, x
2, 10, a.c-3, Exit, step
3, 11, ?, Enter, worker
3, 12, a.c-3, Write, x
3, 13, ?, Exit, worker
5, 14, ?, Enter, worker
6, 15, a.c-3, Write, x
1, 16, a.c-20, Join, 5
1, 17, a.c-21, Read, x
1, 18, a.c-22, Exit, main
`
	m, err := Parse(context.Background(), strings.NewReader(trace), "t.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, w := range m.Warnings {
		if strings.Contains(w, "never ran") || strings.Contains(w, "still running") {
			live = append(live, w)
		}
	}
	want := []string{
		"thread 4 (handle 4, created at a.c:12) never ran: the trace has no event of it",
		"thread 2 (handle 2, in worker) was still running when the trace ended",
	}
	if len(live) != len(want) {
		t.Fatalf("warnings %q, want %d about liveness", m.Warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(live[i], w) {
			t.Errorf("warning %d = %q, want it to start with %q", i, live[i], w)
		}
	}
}
