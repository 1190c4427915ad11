package precision

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Program is an annotated C source file.
type Program struct {
	Path string   // the source file
	Name string   // its base name, as the recorder writes it in locations
	Args []string // mcpredict:args
	// Expect holds the bugs that must be predicted; empty for a correct
	// program (mcpredict:expect none).
	Expect []Expectation
	// Allow holds true bugs that may be reported but need not be (a
	// report matching one is not unexpected): mcpredict:allow.
	Allow []Expectation
	// NotExhibited is the variable whose accesses the recorded run must
	// not interleave ("" if none).
	NotExhibited string
	// Reports are what an opt-in analysis reports on the program
	// (mcpredict:reports): the program of a bug it finds, or the correct
	// twin it is silent on.
	Reports []AnalysisReport
	// Stdin is the file the program reads as its standard input when it
	// is recorded and reproduced (mcpredict:stdin, a file beside the
	// program; "" for none).
	Stdin string
	// Reproduce is what mcpredict reproduce must show (mcpredict:reproduce):
	// "failed" (a directed run fails), "clean" (none fails), "missed" (a
	// bug it does not expose yet, the reason given: a run that fails is
	// then news to act on) or "" (the default: clean for a correct
	// program, every expected bug reproduced for a buggy one).
	Reproduce string
}

// ReproduceWant is what mcpredict reproduce must show on the program:
// "failed", "clean" or "reproduced" (every expected bug reproduced).
func (p *Program) ReproduceWant() string {
	switch {
	case p.Reproduce != "":
		return p.Reproduce
	case len(p.Expect) > 0:
		return "reproduced"
	}
	return "clean"
}

// AnalysisReport is one mcpredict:reports line: with --analysis Analysis,
// at least one bug of that analysis of the kind Kind, or none of that
// analysis when Kind is "none".
type AnalysisReport struct {
	Line     int
	Analysis string
	Kind     string
}

// Kind is "bug" for a program with expected bugs, "idiom" for a correct one.
func (p *Program) Kind() string {
	if len(p.Expect) > 0 || p.Reproduce == "failed" || p.Reproduce == "missed" {
		return "bug"
	}
	return "idiom"
}

// Expectation is one mcpredict:expect line.
type Expectation struct {
	Line     int      // its line in the source
	Patterns []string // any of these patterns
	Var      string   // one of the bug's variables; "a+b": all of these
	Accesses []Access // all among the bug's locations
}

func (e Expectation) String() string {
	parts := []string{strings.Join(e.Patterns, "|"), e.Var}
	for _, a := range e.Accesses {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, " ")
}

// Access is one role:Action@marker of an expectation.
type Access struct {
	Role   string // local or remote; held or acquire (deadlocks)
	Action string // Read or Write; Lock, RdLock or WrLock (deadlocks)
	Marker string // "" for any line
	Line   int    // the marker's line; 0 for any line
}

func (a Access) String() string {
	s := a.Role + ":" + a.Action
	if a.Marker != "" {
		s += fmt.Sprintf("@%s(line %d)", a.Marker, a.Line)
	}
	return s
}

const directive = "mcpredict:"

var (
	// markerRE finds "@name" markers; the '@' must not follow a word
	// character (an e-mail address is not a marker).
	markerRE  = regexp.MustCompile(`(?:^|[^\w.])@([a-z][a-z0-9-]*)`)
	patternRE = regexp.MustCompile(`^([A-Z][A-Za-z]*[0-9]+|DL)$`) // DL: a deadlock
	// Roles: local and remote for atomicity violations, held and acquire
	// for deadlocks (the acquisition of a lock held, and the acquisition
	// that blocks).
	accessRE = regexp.MustCompile(`^(local|remote|held|acquire):(Read|Write|Lock|RdLock|WrLock)(?:@([a-z][a-z0-9-]*))?$`)
)

// Load parses every *.c and *.cpp file of dir, in name order.
func Load(dir string) ([]*Program, error) {
	var files []string
	for _, pat := range []string{"*.c", "*.cpp"} {
		fs, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .c or .cpp files", dir)
	}
	slices.Sort(files)
	var progs []*Program
	var errs []error
	for _, f := range files {
		p, err := ParseFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		progs = append(progs, p)
	}
	return progs, errors.Join(errs...)
}

// ParseFile reads and parses one annotated source file.
func ParseFile(path string) (*Program, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse parses the annotations of the source src of the file path.
// Errors name the file and line.
func Parse(path string, src []byte) (*Program, error) {
	p := &Program{Path: path, Name: filepath.Base(path)}
	markers := map[string][]int{}
	type pending struct {
		line   int
		fields []string
		allow  bool
	}
	var expects []pending
	nexpect := 0
	var none, haveArgs bool
	noneLine, notLine, stdinLine := 0, 0, 0
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...)))
	}

	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text, ok := directiveText(sc.Text())
		if !ok {
			for _, m := range markerRE.FindAllStringSubmatch(sc.Text(), -1) {
				markers[m[1]] = append(markers[m[1]], n)
			}
			continue
		}
		keyword, rest, _ := strings.Cut(text, " ")
		fields := strings.Fields(rest)
		switch keyword {
		case "args":
			if haveArgs {
				fail(n, "second mcpredict:args line")
			}
			haveArgs = true
			p.Args = fields
		case "expect":
			switch {
			case len(fields) == 1 && fields[0] == "none":
				if none {
					fail(n, "second mcpredict:expect none")
				}
				none, noneLine = true, n
			case len(fields) < 2:
				fail(n, "mcpredict:expect wants none, or a pattern, a variable and accesses role:Action@marker")
			default:
				expects = append(expects, pending{n, fields, false})
				nexpect++
			}
		case "allow":
			if len(fields) < 2 {
				fail(n, "mcpredict:allow wants a pattern, a variable and accesses role:Action@marker")
				break
			}
			expects = append(expects, pending{n, fields, true})
		case "notexhibited":
			if len(fields) != 1 {
				fail(n, "mcpredict:notexhibited wants one variable, got %d words", len(fields))
				break
			}
			if notLine != 0 {
				fail(n, "second mcpredict:notexhibited line (first at line %d)", notLine)
			}
			p.NotExhibited, notLine = fields[0], n
		case "reports":
			if len(fields) != 2 {
				fail(n, "mcpredict:reports wants an analysis and a kind of finding (or none), got %d words", len(fields))
				break
			}
			p.Reports = append(p.Reports, AnalysisReport{Line: n, Analysis: fields[0], Kind: fields[1]})
		case "reproduce":
			word := ""
			if len(fields) > 0 {
				word = strings.TrimSuffix(fields[0], ":")
			}
			if word != "failed" && word != "clean" && word != "missed" || word != "missed" && len(fields) > 1 {
				fail(n, "mcpredict:reproduce wants failed, clean or missed (a known miss, with the reason after it)")
				break
			}
			p.Reproduce = word
		case "stdin":
			if len(fields) != 1 || !filepath.IsLocal(fields[0]) {
				fail(n, "mcpredict:stdin wants one file, a path relative to the program's directory")
				break
			}
			if stdinLine != 0 {
				fail(n, "second mcpredict:stdin line (first at line %d)", stdinLine)
			}
			p.Stdin, stdinLine = filepath.Join(filepath.Dir(path), fields[0]), n
		case "window":
			// The two sites of the local thread's window, for the reader.
		default:
			fail(n, "unknown annotation mcpredict:%s (want args, stdin, expect, allow, notexhibited, reports, reproduce or window)", keyword)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}

	for _, e := range expects {
		exp := Expectation{Line: e.line, Var: e.fields[1]}
		for _, pat := range strings.Split(e.fields[0], "|") {
			if !patternRE.MatchString(pat) {
				fail(e.line, "bad pattern %q in %q (want e.g. P3, P3|P5 or DL)", pat, e.fields[0])
			}
			exp.Patterns = append(exp.Patterns, pat)
		}
		for _, f := range e.fields[2:] {
			m := accessRE.FindStringSubmatch(f)
			if m == nil {
				fail(e.line, "bad access %q (want local|remote|held|acquire:Read|Write|Lock|RdLock|WrLock[@marker])", f)
				continue
			}
			a := Access{Role: m[1], Action: m[2], Marker: m[3]}
			if a.Marker != "" {
				switch lines := markers[a.Marker]; len(lines) {
				case 0:
					fail(e.line, "no @%s marker in the source", a.Marker)
				case 1:
					a.Line = lines[0]
				default:
					fail(e.line, "marker @%s is on several lines %v", a.Marker, lines)
				}
			}
			exp.Accesses = append(exp.Accesses, a)
		}
		if e.allow {
			p.Allow = append(p.Allow, exp)
		} else {
			p.Expect = append(p.Expect, exp)
		}
	}
	switch {
	case none && nexpect > 0:
		fail(noneLine, "mcpredict:expect none with expected bugs (line %d)", p.Expect[0].Line)
	case none && len(p.Allow) > 0:
		fail(noneLine, "mcpredict:expect none with allowed bugs (line %d): a correct program has none", p.Allow[0].Line)
	case !none && nexpect == 0 && p.Reproduce == "":
		errs = append(errs, fmt.Errorf("%s: no mcpredict:expect line (a correct program says mcpredict:expect none)", path))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// directiveText returns the text after "mcpredict:" if line is an
// annotation: only comment punctuation and spaces before it.
func directiveText(line string) (string, bool) {
	s := strings.TrimSpace(line)
	for {
		t := strings.TrimLeft(s, " \t")
		t = strings.TrimPrefix(t, "/*")
		t = strings.TrimPrefix(t, "//")
		t = strings.TrimPrefix(t, "*")
		if t == s {
			break
		}
		s = t
	}
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, directive)
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "*/"))
	return rest, true
}
