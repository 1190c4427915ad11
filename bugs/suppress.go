package bugs

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// A SuppressionRule silences the bugs it matches: they stay in the report,
// marked Suppressed, and are counted in the summary instead of reported.
//
// A rules file has one rule per line, four fields separated by blanks:
//
//	PATTERN  VARIABLE  LOCATION  FUNCTION
//	P3       balance   bank.c:*  deposit   # reviewed: the lock is enough here
//
// Each field is a glob in which * matches any run of characters (including
// "/") and ? any one character; every other character matches itself. A
// rule matches a bug when PATTERN matches its pattern id, VARIABLE one of
// its variables, LOCATION one of its source locations and FUNCTION the
// function of one of its locations (an unknown function is the empty
// string, which * matches). A LOCATION with a ":" is matched against
// "file:line", one without against the file name alone. A "#" that starts a
// field starts a comment to the end of the line; blank lines are ignored.
type SuppressionRule struct {
	Pattern, Var, Location, Func string
	// Where the rule was written, for messages.
	File string
	Line int
}

func (s SuppressionRule) String() string {
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// SuppressionError is a malformed rule.
type SuppressionError struct {
	File string
	Line int
	Msg  string
}

func (e *SuppressionError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// ParseSuppressions reads a rules file; name is used in messages. A
// malformed rule is a *SuppressionError naming its line.
func ParseSuppressions(rd io.Reader, name string) ([]SuppressionRule, error) {
	var rules []SuppressionRule
	sc := bufio.NewScanner(rd)
	n := 0
	for sc.Scan() {
		n++
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if strings.HasPrefix(f, "#") {
				fields = fields[:i]
				break
			}
		}
		if len(fields) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return &SuppressionError{File: name, Line: n, Msg: fmt.Sprintf(format, args...)}
		}
		if len(fields) != 4 {
			return nil, bad("want 4 fields (PATTERN VARIABLE LOCATION FUNCTION; * for any), got %d", len(fields))
		}
		r := SuppressionRule{Pattern: fields[0], Var: fields[1], Location: fields[2], Func: fields[3], File: name, Line: n}
		if !validIDGlob(r.Pattern) {
			return nil, bad("pattern %q is not a pattern id such as P3 or U1 (or a glob of one, or *)", r.Pattern)
		}
		if i := strings.LastIndexByte(r.Location, ':'); i >= 0 {
			line := r.Location[i+1:]
			if line == "" || strings.Trim(line, "0123456789*?") != "" {
				return nil, bad("location %q: the part after the last ':' must be a line number or a glob of one", r.Location)
			}
		}
		rules = append(rules, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rules, nil
}

// validIDGlob reports whether s can match a pattern id: letters, digits,
// "_" and glob characters only.
func validIDGlob(s string) bool {
	for _, c := range s {
		ok := c == '_' || c == '*' || c == '?' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return s != ""
}

// Match reports whether the rule matches the bug.
func (s SuppressionRule) Match(b Bug) bool {
	if !glob(s.Pattern, b.Pattern) {
		return false
	}
	varOK := false
	for _, v := range b.Vars {
		if glob(s.Var, v) {
			varOK = true
			break
		}
	}
	if !varOK {
		return false
	}
	locOK, funcOK := false, false
	withLine := strings.Contains(s.Location, ":")
	for _, l := range b.Locations {
		subject := l.File
		if withLine {
			subject = fmt.Sprintf("%s:%d", l.File, l.Line)
		}
		locOK = locOK || glob(s.Location, subject)
		funcOK = funcOK || glob(s.Func, l.Func)
	}
	return locOK && funcOK
}

// Suppress marks the bugs of r that a rule matches and counts them in
// r.Stats.Suppressed. It returns, for each rule, the number of bugs it
// matched, so that callers can point out rules that no longer match.
func Suppress(r *Report, rules []SuppressionRule) []int {
	hits := make([]int, len(rules))
	for i := range r.Bugs {
		b := &r.Bugs[i]
		for j, rule := range rules {
			if rule.Match(*b) {
				hits[j]++
				if !b.Suppressed {
					b.Suppressed = true
					r.Stats.Suppressed++
				}
			}
		}
	}
	return hits
}

// glob matches s against pattern, in which * is any run of characters and ?
// any one character.
func glob(pattern, s string) bool {
	// Iterative matching with one backtrack point: the last *, which is
	// enough because a later * can always absorb what an earlier one would.
	p, i := []rune(pattern), []rune(s)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(i) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == i[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			mark++
			pi, si = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
