package units

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

const trace = `main, 1, u.c-1, Write, x
main, 2, u.c-2, Create, t
t, 3, u.c-10, Enter, f
t, 4, u.c-11, Write, x
t, 5, u.c-12, Join, main
t, 6, u.c-13, Write, x
t, 7, u.c-14, Exit, f
t, 8, u.c-20, Lock, m
t, 9, u.c-21, Enter, g
t, 10, u.c-22, Write, x
t, 11, u.c-23, Exit, g
t, 12, u.c-24, Unlock, m
t, 13, u.c-30, Read, x
t, 14, u.c-31, Enter, h
t, 15, u.c-32, Lock, m
t, 16, u.c-33, Exit, h
t, 17, u.c-34, Write, x
t, 18, u.c-35, Unlock, m
t, 19, u.c-36, Lock, m
t, 20, u.c-37, Wait, c, m
t, 21, u.c-38, Unlock, m
`

// TestSplit: boundaries (Join, Wait) end units and belong to none; a
// boundary splits a transaction into fragments; a critical section outside
// transactions is a unit that a transaction inside it belongs to; a
// transaction left holding a lock is followed by a critical section
// holding it; a Wait splits a critical section, the second part holding
// the lock from its start.
func TestSplit(t *testing.T) {
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "u.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := txn.Extract(context.Background(), m, txn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var us []Unit
	probe := &analysis.Analyzer{Name: "probe", Doc: "test", Requires: []analysis.Requirement{analysis.ThreadPeriods},
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			us, err = Split(ctx, m, ts, pass.Periods())
			return nil, err
		}}
	if _, err := analysis.Run(context.Background(), m, []*analysis.Analyzer{probe}, analysis.Options{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range us {
		first := m.Events[u.Events(m)[0]].Line
		last := m.Events[u.Events(m)[len(u.Events(m))-1]].Line
		got = append(got, fmt.Sprintf("%s %d-%d held=%d", []string{"", "txn", "cs", "plain"}[u.Kind], first, last, len(u.Held)))
	}
	want := []string{
		"plain 1-1 held=0", // main's write; the Create is a boundary
		"txn 3-4 held=0",   // f, split by the Join
		"txn 6-7 held=0",
		"cs 8-12 held=0", // the critical section, g inside it
		"plain 13-13 held=0",
		"txn 14-16 held=0", // h returns holding m
		"cs 17-18 held=1",  // ... so the rest is a critical section
		"cs 19-19 held=0",  // split by the Wait
		"cs 21-21 held=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("units\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
