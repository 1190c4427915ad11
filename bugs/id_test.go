package bugs

import "testing"

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
