package native_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestImpossibleLockExclusion checks the mutual-exclusion part of the
// necessary condition (and that a match needs its local accesses in one
// region): a remote access inside a critical section of a lock
// that the local thread holds across its two accesses cannot fall between
// them. Whenever Impossible says so, the search must agree (the
// differential tests check the same against Spin on random traces).
func TestImpossibleLockExclusion(t *testing.T) {
	// Thread 1 updates x in one critical section and reads it in the
	// next; thread 2 writes it under the same lock.
	const updateThenRead = `
1, 1, a.c-1, Lock, m
1, 2, a.c-2, Read, x
1, 3, a.c-3, Write, x
1, 4, a.c-4, Unlock, m
1, 5, a.c-5, Lock, m
1, 6, a.c-6, Read, x
1, 7, a.c-7, Unlock, m
2, 8, a.c-9, Lock, m
2, 9, a.c-10, Write, x
2, 10, a.c-11, Unlock, m
`
	tests := []impossibleCase{
		{"one critical section", `
1, 1, a.c-1, Lock, m
1, 2, a.c-2, Read, x
1, 3, a.c-3, Write, x
1, 4, a.c-4, Unlock, m
2, 5, a.c-9, Lock, m
2, 6, a.c-10, Write, x
2, 7, a.c-11, Unlock, m
`, "P3", true, false},
		{"split critical sections", `
1, 1, a.c-1, Lock, m
1, 2, a.c-2, Read, x
1, 3, a.c-3, Unlock, m
1, 4, a.c-4, Lock, m
1, 5, a.c-5, Write, x
1, 6, a.c-6, Unlock, m
2, 7, a.c-9, Lock, m
2, 8, a.c-10, Write, x
2, 9, a.c-11, Unlock, m
`, "P3", false, true},
		{"different locks", `
1, 1, a.c-1, Lock, m
1, 2, a.c-2, Read, x
1, 3, a.c-3, Write, x
1, 4, a.c-4, Unlock, m
2, 5, a.c-9, Lock, n
2, 6, a.c-10, Write, x
2, 7, a.c-11, Unlock, n
`, "P3", false, true},
		{"remote unlocked", `
1, 1, a.c-1, Lock, m
1, 2, a.c-2, Read, x
1, 3, a.c-3, Write, x
1, 4, a.c-4, Unlock, m
2, 5, a.c-10, Write, x
`, "P3", false, true},
		{"reader lock against writer lock", `
1, 1, a.c-1, RdLock, rw
1, 2, a.c-2, Read, x
1, 3, a.c-3, Read, x
1, 4, a.c-4, RwUnlock, rw
2, 5, a.c-9, WrLock, rw
2, 6, a.c-10, Write, x
2, 7, a.c-11, RwUnlock, rw
`, "P1", true, false},
		{"writer between two locked reads of one critical section, another outside", `
1, 1, a.c-1, Lock, m
1, 2, a.c-2, Read, x
1, 3, a.c-3, Read, x
1, 4, a.c-4, Unlock, m
2, 5, a.c-9, Lock, m
2, 6, a.c-10, Write, x
2, 7, a.c-11, Unlock, m
2, 8, a.c-12, Write, x
`, "P1", false, true},
		{"unrepeatable read needs two reads around the write", updateThenRead, "P1", true, false},
		{"a write published by its unlock ends P2's region", updateThenRead, "P2", true, false},
		{"two writes in two regions", `
2, 1, a.c-9, Signal, c
1, 2, a.c-1, Write, x
1, 3, a.c-2, Wait, c
1, 4, a.c-3, Read, x
1, 5, a.c-4, Write, x
2, 6, a.c-10, Read, x
`, "P4", true, false},
		{"two writes in one region", `
1, 1, a.c-1, Write, x
1, 2, a.c-3, Write, x
2, 3, a.c-10, Read, x
`, "P4", false, true},
		// Remote runs bordered by starred local terms: the starred terms may
		// match nothing, so the runs join, or no local access bounds them.
		{"remote run after a starred local term", `
1, 1, a.c-1, Write, x
2, 2, a.c-2, Read, x
2, 3, a.c-3, Write, x
`, "W1 A2+ R1* W2", false, true},
		{"remote runs around a starred local term", `
1, 1, a.c-1, Write, x
2, 2, a.c-2, Read, x
1, 3, a.c-3, Write, x
`, "W1 R2 R1* A2 W1", false, true},
	}
	pats := map[string]ltl.Pattern{}
	for _, p := range ltl.Builtin() {
		pats[p.ID] = p
	}
	checkImpossible(t, tests, pats, func(m *tracemodel.Model) (*tracemodel.PairModel, error) {
		return m.Project(m.VarByName("x"), m.ThreadByHandle("1"), m.ThreadByHandle("2"), tracemodel.ProjectOptions{})
	}, func(t *testing.T, pm *tracemodel.PairModel) {
		// The checker keeps what the claims share (access counts,
		// interleaving answers): asked in turn on one checker, every
		// claim gets the answer of a fresh one.
		shared := native.New(pm)
		for _, q := range ltl.Builtin() {
			for local := 1; local <= 2; local++ {
				if got, want := shared.Impossible(q, local), native.New(pm).Impossible(q, local); got != want {
					t.Errorf("Impossible(%s, %d) after other claims = %v, fresh %v", q.ID, local, got, want)
				}
			}
		}
	})
}

// impossibleCase is a trace and a pattern (an id of the table's patterns,
// else a user pattern's text) with what Impossible and the search say of
// the claim whose local thread is thread 1.
type impossibleCase struct {
	name       string
	trace      string
	pattern    string
	impossible bool // for local thread 1
	violated   bool
}

// checkImpossible runs the cases on the models project makes of their
// traces; more, if not nil, checks each model further.
func checkImpossible(t *testing.T, tests []impossibleCase, pats map[string]ltl.Pattern, project func(*tracemodel.Model) (*tracemodel.PairModel, error), more func(*testing.T, *tracemodel.PairModel)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := tracemodel.Parse(context.Background(), strings.NewReader(tt.trace), "a.csv", tracemodel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pm, err := project(m)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := pats[tt.pattern]
			if !ok {
				if p, err = ltl.User("U", tt.pattern); err != nil {
					t.Fatal(err)
				}
			}
			if got := native.New(pm).Impossible(p, 1); got != tt.impossible {
				t.Errorf("Impossible(%s, 1) = %v, want %v", p.ID, got, tt.impossible)
			}
			v, err := native.New(pm).Check(context.Background(), p, 1)
			if err != nil {
				t.Fatal(err)
			}
			if v.Violated != tt.violated {
				t.Errorf("Check(%s, 1): violated %v, want %v", p.ID, v.Violated, tt.violated)
			}
			if more != nil {
				more(t, pm)
			}
		})
	}
}

// TestImpossibleSetGaps checks the parts of the necessary condition that
// set models need: the variables of the local accesses around a gap, and
// the order of a gap's remote terms (M3's W2(x) then W2(y)), of which one
// access may match two in a row (stuttering). Whenever Impossible says so,
// the search must agree.
func TestImpossibleSetGaps(t *testing.T) {
	u3, err := ltl.User("U3", "W1(x) R1* A2(y)+ W2 R1(x)")
	if err != nil {
		t.Fatal(err)
	}
	pats := map[string]ltl.Pattern{u3.ID: u3}
	for _, p := range ltl.BuiltinSets() {
		pats[p.ID] = p
	}
	tests := []impossibleCase{
		{"local writes x then y", `
1, 1, a.c-1, Write, x
1, 2, a.c-2, Write, y
2, 3, a.c-3, Write, x
2, 4, a.c-4, Write, y
`, "M3", false, true},
		{"local writes y then x", `
1, 1, a.c-1, Write, y
1, 2, a.c-2, Write, x
2, 3, a.c-3, Write, x
2, 4, a.c-4, Write, y
`, "M3", true, false},
		{"remote writes y then x", `
1, 1, a.c-1, Write, x
1, 2, a.c-2, Write, y
2, 3, a.c-3, Write, y
2, 4, a.c-4, Write, x
`, "M4", false, true},
		{"remote's write of x waits for the local update", `
1, 1, a.c-1, Write, x
1, 2, a.c-2, Write, y
1, 3, a.c-3, SemPost, s
2, 4, a.c-4, Write, y
2, 5, a.c-5, SemWait, s
2, 6, a.c-6, Write, x
`, "M4", true, false},
		{"remote's writes in the wrong order", `
1, 1, a.c-1, Write, x
1, 2, a.c-2, Write, y
2, 3, a.c-3, Write, y
2, 4, a.c-4, Write, x
`, "M3", true, false},
		{"one remote write matches two terms", `
1, 1, a.c-1, Write, x
2, 2, a.c-2, Write, y
1, 3, a.c-3, Read, x
`, "U3", false, true},
	}
	checkImpossible(t, tests, pats, func(m *tracemodel.Model) (*tracemodel.PairModel, error) {
		return m.ProjectSet(m.VarByName("x"), m.VarByName("y"), m.ThreadByHandle("1"), m.ThreadByHandle("2"), tracemodel.ProjectOptions{})
	}, nil)
}
