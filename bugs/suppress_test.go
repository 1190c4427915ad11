package bugs

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"bank.c", "bank.c", true},
		{"bank.c", "src/bank.c", false},
		{"*bank.c", "src/bank.c", true},
		{"*/bank.c:1?", "a/b/bank.c:15", true},
		{"*/bank.c:1?", "a/b/bank.c:150", false},
		{"P?", "P3", true},
		{"P?", "P", false},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"buf->*", "buf->outcnt", true},
		{"a#2", "a#2", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestParseSuppressions(t *testing.T) {
	const file = `# mcpredict suppressions

P3   balance   bank.c:*    deposit   # reviewed: single teller in production
*    buf->*    *           *
P?   a#2       src/*.c     *
`
	rules, err := ParseSuppressions(strings.NewReader(file), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []SuppressionRule{
		{Pattern: "P3", Var: "balance", Location: "bank.c:*", Func: "deposit", File: "s.txt", Line: 3},
		{Pattern: "*", Var: "buf->*", Location: "*", Func: "*", File: "s.txt", Line: 4},
		{Pattern: "P?", Var: "a#2", Location: "src/*.c", Func: "*", File: "s.txt", Line: 5},
	}
	if len(rules) != len(want) {
		t.Fatalf("got %d rules %+v, want %d", len(rules), rules, len(want))
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, rules[i], want[i])
		}
	}
}

func TestParseSuppressionsErrors(t *testing.T) {
	tests := []struct {
		name, file string
		line       int
		msg        string
	}{
		{"too few fields", "P3 balance bank.c:11\n", 1, "want 4 fields"},
		{"too many fields", "# ok\n\nP3 balance bank.c:11 deposit extra\n", 3, "got 5"},
		{"bad pattern", "P3 x y z\nP-3 balance * *\n", 2, "pattern \"P-3\""},
		{"bad line", "P3 balance bank.c:eleven *\n", 1, "line number"},
		{"empty line part", "P3 balance bank.c: *\n", 1, "line number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSuppressions(strings.NewReader(tt.file), "rules")
			var se *SuppressionError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *SuppressionError", err)
			}
			if se.Line != tt.line || se.File != "rules" || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("error %q, want line %d and %q", err, tt.line, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "rules:"+strconv.Itoa(tt.line)+": ") {
				t.Errorf("error %q does not start with FILE:LINE", err)
			}
		})
	}
}

// bankBug is a lost update with the locations of examples/bank.csv.
func bankBug(id string) Bug {
	return Bug{
		ID: id, Pattern: "P3", PatternName: "lost update", Vars: []string{"balance"}, Count: 1, Instances: []int{0},
		Locations: []Location{
			{Role: "local", Action: "Read", File: "src/bank.c", Line: 11, Func: "deposit"},
			{Role: "local", Action: "Write", File: "src/bank.c", Line: 15, Func: "deposit"},
			{Role: "remote", Action: "Write", File: "src/bank.c", Line: 15},
		},
	}
}

func TestSuppressionMatch(t *testing.T) {
	b := bankBug("AV-1")
	tests := []struct {
		rule string
		want bool
	}{
		{"* * * *", true},
		{"P3 balance * *", true},
		{"P1 balance * *", false},
		{"P? bal* * *", true},
		{"P3 other * *", false},
		{"P3 * src/bank.c *", true},     // file only
		{"P3 * bank.c *", false},        // the whole file name must match
		{"P3 * *bank.c *", true},        // * crosses directories
		{"P3 * src/bank.c:15 *", true},  // one of the locations
		{"P3 * src/bank.c:12 *", false}, // none at that line
		{"P3 * src/bank.c:1? deposit", true},
		{"P3 * * withdraw", false},
	}
	for _, tt := range tests {
		rules, err := ParseSuppressions(strings.NewReader(tt.rule), "r")
		if err != nil {
			t.Fatalf("%q: %v", tt.rule, err)
		}
		if got := rules[0].Match(b); got != tt.want {
			t.Errorf("%q matches = %v, want %v", tt.rule, got, tt.want)
		}
	}
}

func TestSuppress(t *testing.T) {
	r := &Report{Bugs: []Bug{bankBug("AV-1"), bankBug("AV-2")}, Violations: []Violation{{}}}
	r.Bugs[1].Pattern = "P1"
	rules := []SuppressionRule{
		{Pattern: "P3", Var: "*", Location: "*", Func: "*"},
		{Pattern: "P3", Var: "balance", Location: "*:11", Func: "*"},
		{Pattern: "P5", Var: "*", Location: "*", Func: "*"},
	}
	hits := Suppress(r, rules)
	if want := []int{1, 1, 0}; !slices.Equal(hits, want) {
		t.Errorf("hits %v, want %v", hits, want)
	}
	if !r.Bugs[0].Suppressed || r.Bugs[1].Suppressed {
		t.Errorf("suppressed flags %v %v, want true false", r.Bugs[0].Suppressed, r.Bugs[1].Suppressed)
	}
	if r.Stats.Suppressed != 1 {
		t.Errorf("Stats.Suppressed = %d, want 1 (a bug matched twice counts once)", r.Stats.Suppressed)
	}
	if a := r.Active(); len(a) != 1 || a[0].ID != "AV-2" {
		t.Errorf("active bugs %+v, want AV-2 only", a)
	}
}
