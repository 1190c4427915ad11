package ltl

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestFormulaGolden pins the exact claims that go into every Promela model:
// a change here changes every model's text and every cached verdict key, so
// it must be deliberate (go test ./ltl -run TestFormulaGolden -update).
func TestFormulaGolden(t *testing.T) {
	pats := Builtin()
	for _, p := range Builtin() {
		if q := p.Precise(); q.Source != p.Source {
			pats = append(pats, q)
		}
	}
	for _, p := range pats {
		for _, local := range []int{1, 2} {
			name := p.ClaimName(local)
			file := name + ".golden"
			if p.PlainLast {
				file = name + ".precise.golden"
			}
			got := p.LTL(local) + "\n"
			path := filepath.Join("testdata", file)
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s:\n got %s\nwant %s", file, got, want)
			}
		}
	}
}

func TestFormulaShape(t *testing.T) {
	p, err := User("U", "R1 A2* W2+ R1")
	if err != nil {
		t.Fatal(err)
	}
	// View local = 2: mask = value bits | brk2 (256).
	r1 := "((v & 383) == 2)"
	a2 := "(((v & 383) == 1) || ((v & 383) == 65))"
	w2 := "((v & 383) == 65)"
	// The last term also needs thread 2's early bit (4096) clear.
	last := "(" + r1 + " && ((v & 4096) == 0))"
	want := "!<> (" + r1 + " && (" + r1 + " U (" + a2 + " U (" + w2 + " && (" + w2 + " U " + last + ")))))"
	if got := p.Formula(2); got != want {
		t.Errorf("Formula(2):\n got %s\nwant %s", got, want)
	}
	if got := p.LTL(2); got != "ltl U_2 { "+want+" }" {
		t.Errorf("LTL(2) = %s", got)
	}
	// Spin's Debian build has no X; a formula must never contain it.
	for _, b := range Builtin() {
		for _, local := range []int{1, 2} {
			f := b.Formula(local)
			if strings.ContainsAny(f, "X[]") || strings.Count(f, "(") != strings.Count(f, ")") {
				t.Errorf("%s: bad formula %s", b.ClaimName(local), f)
			}
		}
	}
}

func TestBadViewPanics(t *testing.T) {
	p := Builtin()[0]
	for _, f := range []func(){
		func() { p.ClaimName(0) },
		func() { p.Formula(3) },
		func() { p.Automaton(-1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic for a view other than 1 or 2")
				}
			}()
			f()
		}()
	}
}

func TestPrecise(t *testing.T) {
	user, err := User("P3", "R1 A2* W2 A2* R1* W1 R1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p         Pattern
		src       string
		plainLast bool
	}{
		{builtinByID(t, "P1"), "R1 A2* W2 A2* R1", false},
		{builtinByID(t, "P2"), "W1 R1* A2* W2 A2* R1", false},
		{builtinByID(t, "P3"), "R1 A2* W2 A2* W1", true},
		{builtinByID(t, "P3").Precise(), "R1 A2* W2 A2* W1", true},
		{builtinByID(t, "P4"), "W1 R1* R2+ R1* W1", false},
		{builtinByID(t, "P5"), "W1 R1* A2* W2 A2* R1* W1", false},
		{BuiltinSets()[2], "W1(x) R1(x)* A2* W2(x) A2* W2(y) A2* W1(y)", false},
		{user, "R1 A2* W2 A2* R1* W1 R1", false}, // not the built-in P3
	}
	for _, tc := range tests {
		q := tc.p.Precise()
		if q.Source != tc.src || FormatTerms(q.Terms) != tc.src || q.PlainLast != tc.plainLast {
			t.Errorf("%s (%s).Precise() = %q, PlainLast %v; want %q, %v", tc.p.ID, tc.p.Source, q.Source, q.PlainLast, tc.src, tc.plainLast)
		}
		if q.ID != tc.p.ID || q.Name != tc.p.Name || q.ClaimName(1) != tc.p.ClaimName(1) {
			t.Errorf("%s.Precise() is %s %q, claim %s: the bug ids and claims must stay those of %s", tc.p.ID, q.ID, q.Name, q.ClaimName(1), tc.p.ID)
		}
	}
}
