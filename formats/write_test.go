package formats

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestWriteRAPID: --rapid writes numbered locations with their table,
// transactions as begin/end (replacing the Begin/End or Enter/Exit events
// that bound them, following any other last event), and drops the rest.
func TestWriteRAPID(t *testing.T) {
	const trace = `T1, 1, a.c:10, Enter, f
T1, 2, a.c:11, Lock, m
T1, 3, a.c:12, Write, x
T1, 4, a.c:13, Unlock, m
T1, 5, a.c:14, Enter, g
T1, 6, a.c:15, Exit, g
T1, 7, a.c:16, Exit, f
T2, 8, b.c:3, Begin, L
T2, 9, a.c:12, Read, x
T2, 10, ?, Signal, c
`
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "t.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Transactions: f (events 0-6), and L, never closed (7-9).
	bounds := func(ev int) (bool, bool) { return ev == 0 || ev == 7, ev == 6 || ev == 9 }
	var out, locs bytes.Buffer
	st, err := Write(&out, m, "std", WriteOptions{RAPID: true, Boundaries: bounds, Locs: &locs})
	if err != nil {
		t.Fatal(err)
	}
	want := `T1|begin|1
T1|acq(m)|2
T1|w(x)|3
T1|rel(m)|4
T1|end|5
T2|begin|6
T2|r(x)|3
T2|end|0
`
	if out.String() != want {
		t.Errorf("trace\n%s\nwant\n%s", out.String(), want)
	}
	wantLocs := "1 a.c:10\n2 a.c:11\n3 a.c:12\n4 a.c:13\n5 a.c:16\n6 b.c:3\n" // written locations only
	if locs.String() != wantLocs {
		t.Errorf("locations\n%s\nwant\n%s", locs.String(), wantLocs)
	}
	if st.Dropped != 2 { // Enter g, Exit g (the Signal ends L: end is written)
		t.Errorf("dropped %d, want 2", st.Dropped)
	}
}

// TestWriteRAPIDWait: a cond Wait's release goes where the waiting thread
// blocked (after its previous event), not where the wait returned, after
// the waker took and released the mutex: RAPID's happens-before then sees
// the waker's acquire after the waiter's release.
func TestWriteRAPIDWait(t *testing.T) {
	const trace = `1, 1, a.c-1, Create, 2
1, 2, a.c-2, Lock, m
1, 3, a.c-3, Read, x
2, 4, a.c-10, Lock, m
2, 5, a.c-11, Write, x
2, 6, a.c-12, Signal, c
2, 7, a.c-13, Unlock, m
1, 8, a.c-4, Wait, c, m
1, 9, a.c-5, Unlock, m
`
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "t.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Write(&out, m, "std", WriteOptions{RAPID: true}); err != nil {
		t.Fatal(err)
	}
	want := "1|fork(2)|1\n1|acq(m)|2\n1|r(x)|3\n1|rel(m)|4\n2|acq(m)|5\n2|w(x)|6\n2|rel(m)|7\n1|acq(m)|4\n1|rel(m)|8\n"
	if out.String() != want {
		t.Errorf("trace\n%s\nwant\n%s", out.String(), want)
	}
}
