package ltl

import (
	"errors"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseGood(t *testing.T) {
	r1 := Term{Read, Local, One, VarAny}
	w2 := Term{Write, Remote, One, VarAny}
	tests := []struct {
		src  string
		want []Term
	}{
		{"R1 W2 R1", []Term{r1, w2, r1}},
		{"R1 A2* W2 A2* R1", []Term{r1, {Any, Remote, Star, VarAny}, w2, {Any, Remote, Star, VarAny}, r1}},
		{"W1 R1* R2+ R1* W1", []Term{{Write, Local, One, VarAny}, {Read, Local, Star, VarAny}, {Read, Remote, Plus, VarAny}, {Read, Local, Star, VarAny}, {Write, Local, One, VarAny}}},
		{"  A1+\tW2\n", []Term{{Any, Local, Plus, VarAny}, w2}},
		{"R2 W1+", []Term{{Read, Remote, One, VarAny}, {Write, Local, Plus, VarAny}}},
		{strings.TrimSpace(strings.Repeat("R1 W2 ", 12)), repeatTerms([]Term{r1, w2}, 12)},
		{"R1(x) A2* W2(x) W2(y)+ R1(y)", []Term{{Read, Local, One, VarX}, {Any, Remote, Star, VarAny},
			{Write, Remote, One, VarX}, {Write, Remote, Plus, VarY}, {Read, Local, One, VarY}}},
		{"W1(y) R2(x)* R2 W1(x)", []Term{{Write, Local, One, VarY}, {Read, Remote, Star, VarX}, {Read, Remote, One, VarAny}, {Write, Local, One, VarX}}},
	}
	for _, tc := range tests {
		got, err := Parse(tc.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %v, want %v", tc.src, got, tc.want)
		}
		// String round-trips through the parser.
		again, err := Parse(FormatTerms(got))
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("round trip of %q via %q: %v, %v", tc.src, FormatTerms(got), again, err)
		}
	}
}

func repeatTerms(ts []Term, n int) []Term {
	var out []Term
	for range n {
		out = append(out, ts...)
	}
	return out
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src    string
		column int
		msg    string // the whole message after "column N: "
	}{
		{"", 1, "empty pattern, expected a term R1 W1 A1 R2 W2 A2"},
		{"   ", 1, "empty pattern, expected a term R1 W1 A1 R2 W2 A2"},
		{"R1 W2 X", 7, "unexpected 'X', expected a term R1 W1 A1 R2 W2 A2"},
		{"R1(x) W2(x) R1", 1, "the pattern names x but not y: a two-variable pattern is about both variables of an atomic set (or name neither for a single-variable pattern)"},
		{"R1 W2(y) R1", 4, "the pattern names y but not x: a two-variable pattern is about both variables of an atomic set (or name neither for a single-variable pattern)"},
		{"R1(z) W2 R1", 1, "unexpected 'R1(z)', expected a term R1 W1 A1 R2 W2 A2 (a variable is written right after the thread digit, (x) or (y), as in R1(x)*)"},
		{"R1*(x) W2 R1", 1, "unexpected 'R1*(x)', expected a term R1 W1 A1 R2 W2 A2 (a variable is written right after the thread digit, (x) or (y), as in R1(x)*)"},
		{"R1(x)W2(y) R1", 1, "unexpected 'R1(x)W2(y)', expected a term R1 W1 A1 R2 W2 A2 (separate terms with spaces)"},
		{"R1 W2 R3", 7, "unexpected 'R3', expected a term R1 W1 A1 R2 W2 A2"},
		{"R1 W2 R1X", 7, "unexpected 'R1X', expected a term R1 W1 A1 R2 W2 A2"},
		{"R1R2 W2", 1, "unexpected 'R1R2', expected a term R1 W1 A1 R2 W2 A2 (separate terms with spaces)"},
		{"R1 W2 *", 7, "unexpected '*', expected a term R1 W1 A1 R2 W2 A2 (a quantifier follows its term without a space: R1*)"},
		{"r1 W2", 1, "unexpected 'r1', expected a term R1 W1 A1 R2 W2 A2 (terms are upper case)"},
		{"R1 (W2) R1", 4, "unexpected '(W2)', expected a term R1 W1 A1 R2 W2 A2 (a variable is written right after the thread digit, (x) or (y), as in R1(x)*)"},
		{"R1 W2** R1", 4, "unexpected 'W2**', expected a term R1 W1 A1 R2 W2 A2 (a term takes at most one quantifier)"},
		{"R1 W2 ∀", 7, "unexpected '∀', expected a term R1 W1 A1 R2 W2 A2"}, // columns count characters, not bytes
		{"∀ R1", 1, "unexpected '∀', expected a term R1 W1 A1 R2 W2 A2"},
		{"R1 W2 \x01", 7, `unexpected "\x01", expected a term R1 W1 A1 R2 W2 A2`},
		{"A2* W2 R1", 1, "first term 'A2*' is optional; a pattern must start with a term that occurs (drop the * or use +)"},
		{"R1 W2 R1*", 7, "last term 'R1*' is optional; a pattern must end with a term that occurs (drop the * or use +)"},
		{"R1*", 1, "first term 'R1*' is optional; a pattern must start with a term that occurs (drop the * or use +)"},
		{"R1 W1 R1", 1, "no remote term (R2 W2 A2): an atomicity violation needs an access of the remote thread"},
		{" R2 W2+", 2, "no local term (R1 W1 A1): an atomicity violation needs accesses of the local thread"},
		{strings.Repeat("R1 W2 ", 13), 73, "too many terms (26), at most 24"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q): error %v (%T), want *SyntaxError", tc.src, err, err)
			continue
		}
		if se.Column != tc.column || se.Msg != tc.msg {
			t.Errorf("Parse(%q):\n got column %d: %s\nwant column %d: %s", tc.src, se.Column, se.Msg, tc.column, tc.msg)
		}
		if want := "column " + strconv.Itoa(tc.column) + ": " + tc.msg; err.Error() != want {
			t.Errorf("Parse(%q).Error() = %q, want %q", tc.src, err.Error(), want)
		}
	}
}

// ANTLR's default listener prints to stderr; Parse must not.
func TestParseQuietOnStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	for _, src := range []string{"R1 X", "R1 W2 *", "(", "R1R2R3"} {
		if _, err := Parse(src); err == nil {
			t.Errorf("Parse(%q) succeeded", src)
		}
	}
	os.Stderr = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) != 0 {
		t.Errorf("Parse wrote to stderr: %q", out)
	}
}

func TestTermString(t *testing.T) {
	tests := map[Term]string{
		{Read, Local, One, VarAny}:   "R1",
		{Write, Remote, One, VarAny}: "W2",
		{Any, Remote, Star, VarAny}:  "A2*",
		{Read, Remote, Plus, VarAny}: "R2+",
		{Any, Local, Plus, VarAny}:   "A1+",
	}
	for term, want := range tests {
		if got := term.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", term, got, want)
		}
	}
}

func TestBuiltin(t *testing.T) {
	ps := Builtin()
	wantIDs := []string{"P1", "P2", "P3", "P4", "P5"}
	if len(ps) != len(wantIDs) {
		t.Fatalf("Builtin() has %d patterns, want %d", len(ps), len(wantIDs))
	}
	for i, p := range ps {
		if p.ID != wantIDs[i] {
			t.Errorf("pattern %d: ID %q, want %q", i, p.ID, wantIDs[i])
		}
		if p.Name == "" || len(p.Help) < 100 {
			t.Errorf("%s: missing name or help", p.ID)
		}
		if FormatTerms(p.Terms) != p.Source {
			t.Errorf("%s: terms %q do not print as source %q", p.ID, FormatTerms(p.Terms), p.Source)
		}
		if p.ClaimName(1) != p.ID+"_1" || p.ClaimName(2) != p.ID+"_2" {
			t.Errorf("%s: claim names %q %q", p.ID, p.ClaimName(1), p.ClaimName(2))
		}
	}
	// Callers may modify what they get; each call returns fresh values.
	ps[0].Terms[0] = Term{Any, Remote, Star, VarAny}
	if Builtin()[0].Terms[0] != (Term{Read, Local, One, VarAny}) {
		t.Error("Builtin() shares its term slices between calls")
	}
}

func TestUser(t *testing.T) {
	p, err := User("lost_update2", "R1 W2+ W1")
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "lost_update2" || p.Name != "user pattern" || p.Source != "R1 W2+ W1" || len(p.Terms) != 3 {
		t.Errorf("User: %+v", p)
	}
	if got := p.ClaimName(2); got != "lost_update2_2" {
		t.Errorf("ClaimName(2) = %q", got)
	}
	for _, id := range []string{"", "1x", "a-b", "a b", "é"} {
		if _, err := User(id, "R1 W2 R1"); err == nil {
			t.Errorf("User(%q, ...) accepted a bad id", id)
		}
	}
	_, err = User("U1", "R1 W2 X")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Column != 7 {
		t.Errorf("User with bad source: %v, want a SyntaxError at column 7", err)
	}
}

// TestOnlyWrites checks which built-in patterns only order two threads'
// writes of a variable (M3 and M4, on both variables).
func TestOnlyWrites(t *testing.T) {
	want := map[string][2]bool{"M1": {}, "M2": {}, "M3": {true, true}, "M4": {true, true}, "M5": {}, "M6": {}}
	for _, p := range BuiltinSets() {
		got := [2]bool{p.OnlyWrites(VarX), p.OnlyWrites(VarY)}
		if got != want[p.ID] {
			t.Errorf("%s (%s): OnlyWrites x, y = %v, want %v", p.ID, FormatTerms(p.Terms), got, want[p.ID])
		}
	}
	for _, src := range []string{"W1(x) W2(x) R1(y) W2(y)", "W1(x) A2* W2(x) W1(y) W2(y)"} {
		p, err := User("U", src)
		if err != nil {
			t.Fatal(err)
		}
		if p.OnlyWrites(VarX) != true || p.OnlyWrites(VarY) != (src != "W1(x) W2(x) R1(y) W2(y)") {
			t.Errorf("%s: OnlyWrites x, y = %v, %v", src, p.OnlyWrites(VarX), p.OnlyWrites(VarY))
		}
	}
}

// TestInterleaved checks which patterns need a remote access between two
// local ones.
func TestInterleaved(t *testing.T) {
	for _, p := range AllBuiltin() {
		if !p.Interleaved() {
			t.Errorf("%s (%s) is not interleaved", p.ID, FormatTerms(p.Terms))
		}
	}
	for src, want := range map[string]bool{"R1 A2* R1": false, "R2 W1 R1": false, "R1 W2+ R1": true, "R1(x) W2(y) R1(y) W2(x)": true, "R1 R2 R1": false, "W1 R2 R1": false, "W1 R2 W1": true} {
		p, err := User("U", src)
		if err != nil {
			t.Fatal(err)
		}
		if p.Interleaved() != want {
			t.Errorf("%s: Interleaved = %v, want %v", src, !want, want)
		}
	}
}
