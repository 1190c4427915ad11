package bugs

import (
	"reflect"
	"slices"
	"testing"
)

func TestPatternIDFromSource(t *testing.T) {
	acc := func(line int, fn, src, file string) []Access {
		return []Access{
			{Role: "local", Action: "Read", File: file, Line: line, Func: fn, Source: src},
			{Role: "remote", Action: "Write", File: file, Line: line + 4, Func: fn, Source: "count = c + 1;"},
			{Role: "local", Action: "Write", File: file, Line: line + 4, Func: fn, Source: "count = c + 1;"},
		}
	}
	base := PatternID("P3", acc(23, "work", "long c = count; /* the read */", "prog.c"))
	tests := []struct {
		name string
		as   []Access
		same bool
	}{
		{"lines moved", acc(26, "work", "long c = count; /* the read */", "prog.c"), true},
		{"comment and spacing changed", acc(23, "work", "long  c = count;   // read it", "prog.c"), true},
		{"full path", acc(23, "work", "long c = count; /* the read */", "/src/app/prog.c"), true},
		{"code changed", acc(23, "work", "long c = count + 0;", "prog.c"), false},
		{"another function", acc(23, "work2", "long c = count; /* the read */", "prog.c"), false},
		{"no source: the line decides", acc(23, "work", "", "prog.c"), false},
	}
	for _, tt := range tests {
		if got := PatternID("P3", tt.as); (got == base) != tt.same {
			t.Errorf("%s: id %s, base %s, want same %v", tt.name, got, base, tt.same)
		}
	}
	// Without source text, a moved line is another bug (a Pin trace).
	if PatternID("P3", acc(23, "work", "", "prog.c")) == PatternID("P3", acc(26, "work", "", "prog.c")) {
		t.Error("without source text, ids of different lines are equal")
	}
}

func TestNormalizeSource(t *testing.T) {
	for in, want := range map[string]string{
		"long b = balance; /* @read: BUG */": "long b = balance;",
		"x++;   // count it":                 "x++;",
		"a /* 1 */ = /* 2 */ b;":             "a = b;",
		"/* unterminated":                    "",
		"  if (p)\t{":                        "if (p) {",
	} {
		if got := normalizeSource(in); got != want {
			t.Errorf("normalizeSource(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAddLocations checks that addLocations gives what locations gives on
// the locations added to a bug's: the same when every one is there already
// (other text or function included: the first stays), sorted and without
// repeats otherwise.
func TestAddLocations(t *testing.T) {
	loc := func(role, action, file string, line int, fn string) Location {
		return Location{Role: role, Action: action, File: file, Line: line, Func: fn}
	}
	have := locations([]Location{loc("remote", "Write", "b.c", 3, "g"), loc("local", "Read", "a.c", 9, "f"), loc("local", "Write", "a.c", 9, "f")})
	for _, more := range [][]Location{
		nil,
		{loc("local", "Read", "a.c", 9, "other")},
		{loc("remote", "Write", "b.c", 3, "g"), loc("local", "Write", "a.c", 9, "f")},
		{loc("remote", "Read", "b.c", 3, "g")},
		{loc("local", "Read", "a.c", 2, "f"), loc("local", "Read", "a.c", 9, "f")},
	} {
		want := locations(append(slices.Clone(have), more...))
		if got := addLocations(slices.Clone(have), more); !reflect.DeepEqual(got, want) {
			t.Errorf("adding %v to %v:\n got %v\nwant %v", more, have, got, want)
		}
	}
}
