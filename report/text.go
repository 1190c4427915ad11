package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TextOptions change how WriteTextOptions renders.
type TextOptions struct {
	// Color marks up the text with ANSI escape sequences, for a terminal.
	Color bool
	// Expand shows every bug of a group, not only the first FirstShown.
	Expand bool
}

// FirstShown is the number of bugs of a group that the text and HTML
// reports show in full unless expanded; they say how many more there are.
const FirstShown = 3

// WriteText writes the human-readable report without color.
func WriteText(w io.Writer, r *bugs.Report) error {
	return WriteTextOptions(w, r, TextOptions{})
}

// WriteTextOptions writes the human-readable report: the groups of the
// active bugs (bugs.Groups) under the source file of their first bug's
// first location; a group of several bugs has a heading (its id, variables,
// functions and the number of bugs of each pattern), then its first
// FirstShown bugs (all with o.Expand) and the number of the others. Each
// bug has the interleaving of one instance in two columns (local thread
// left, remote thread right). A summary ends the report. Warnings are not
// part of it: they are diagnostics, which the caller shows where it shows
// diagnostics.
//
// In a report of mcpredict reproduce, bugs whose directed run failed come
// first, then those reproduced, then the others: within a group, the
// groups of a file, and the files (each ranked by its best bug), so that
// the bugs proven to matter are read first. Each bug with a reproduction
// says what its directed runs found under its heading.
func WriteTextOptions(w io.Writer, r *bugs.Report, o TextOptions) error {
	ew := &errWriter{w: w}
	st := styler(o.Color)
	active := r.Active()
	groups := bugs.Groups(active)
	rankGroups(groups)
	byFile := map[string][]bugs.Group{}
	var files []string
	for _, g := range groups {
		f := "?"
		if b := g.Members[0]; len(b.Locations) > 0 && b.Locations[0].File != "" {
			f = b.Locations[0].File
		}
		if _, ok := byFile[f]; !ok {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], g)
	}
	sort.Strings(files)
	// The groups of a file are ranked already; a file's rank is its first.
	sort.SliceStable(files, func(i, j int) bool { return groupRank(byFile[files[i]][0]) < groupRank(byFile[files[j]][0]) })
	writeTextFailures(ew, st, r.Failures)
	for _, f := range files {
		ew.printf("%s\n", st(styleFile, f))
		for _, g := range byFile[f] {
			writeTextGroup(ew, st, r, g, o.Expand)
		}
		ew.printf("\n")
	}
	writeTextSummary(ew, r, len(active), len(groups))
	if s := ReproduceSummary(active); s != "" {
		ew.printf("reproduce: %s\n", s)
	}
	if r.Reproduce != nil {
		ew.printf("reproduce: %s\n", RunSummary(*r.Reproduce))
	}
	return ew.err
}

// Shown reports whether the i-th bug of a group is in view: one of the
// first FirstShown, every bug with expand, and every bug whose directed
// run failed (a failure is never behind "more bugs").
func Shown(b bugs.Bug, i int, expand bool) bool {
	return i < FirstShown || expand || (b.Reproduction != nil && b.Reproduction.Failed)
}

// writeTextGroup writes a group: a bug alone, or the group's heading and
// its first bugs, indented under it.
func writeTextGroup(ew *errWriter, st func(style, string) string, r *bugs.Report, g bugs.Group, expand bool) {
	if len(g.Members) == 1 {
		writeTextBug(ew, st, r, g.Members[0], "  ")
		return
	}
	ew.printf("  %s  %s\n", st(styleID, g.ID), GroupHeading(g))
	ew.printf("    %s", st(stylePattern, GroupPatterns(g)))
	if len(g.RemoteFuncs) > 0 {
		ew.printf("; remote accesses in %s", funcList(g.RemoteFuncs))
	}
	ew.printf("\n")
	n := len(g.Members)
	for i, b := range g.Members {
		if Shown(b, i, expand) {
			writeTextBug(ew, st, r, b, "    ")
			n--
		}
	}
	if n > 0 {
		ew.printf("    … and %d more %s in this group (--expand to list them)\n", n, plural(n, "bug", "bugs"))
	}
}

// GroupHeading describes a group of bugs in one line, e.g. "300 bugs on
// counter, local thread in bump() (mcpatom, 900 instances)".
func GroupHeading(g bugs.Group) string {
	s := fmt.Sprintf("%d %s on %s", len(g.Members), plural(len(g.Members), "bug", "bugs"), strings.Join(g.Vars, ", "))
	if g.LocalFunc != "" {
		s += ", local thread in " + funcList(strings.Split(g.LocalFunc, ", "))
	}
	n := fmt.Sprintf("%d %s", g.Instances, plural(g.Instances, "instance", "instances"))
	if g.Analysis != "" {
		n = g.Analysis + ", " + n
	}
	return s + " (" + n + ")"
}

// GroupPatterns lists the patterns of a group with their numbers of bugs,
// e.g. "P2 stale read after local write: 100, P3 lost update: 100".
func GroupPatterns(g bugs.Group) string {
	parts := make([]string, len(g.Patterns))
	for i, p := range g.Patterns {
		parts[i] = fmt.Sprintf("%s %s: %d", p.Pattern, p.PatternName, p.Bugs)
	}
	return strings.Join(parts, ", ")
}

// shortFuncList is funcList of the functions' short names (ShortName).
func shortFuncList(fs []string) string {
	short := make([]string, len(fs))
	for i, f := range fs {
		short[i] = ShortName(f)
	}
	return funcList(short)
}

// funcList is "f(), g()".
func funcList(fs []string) string {
	return strings.Join(fs, "(), ") + "()"
}

// writeTextBug writes one bug, its first line indented by in.
func writeTextBug(ew *errWriter, st func(style, string) string, r *bugs.Report, b bugs.Bug, in string) {
	if isFinding(r, b) {
		writeTextFinding(ew, st, b, r.Violations[b.Instances[0]], in)
		return
	}
	ew.printf("%s%s  %s on %s", in, st(styleID, b.ID), st(stylePattern, b.Pattern+" "+b.PatternName), bugVars(r, b.Vars))
	confirmed := ""
	if b.Confirmed {
		confirmed = ", confirmed by Spin"
	}
	if b.Count == 1 {
		ew.printf(" (1 instance%s)%s\n", confirmed, relaxedMark(b))
	} else {
		ew.printf(" (%d instances%s)%s\n", b.Count, confirmed, relaxedMark(b))
	}
	writeTextReproduction(ew, st, b, in)
	for _, name := range b.Vars {
		if p, ok := r.Reached[name]; ok {
			ew.printf("%s    %s first reached as %s\n", in, name, p)
		}
	}
	v := r.Violations[b.Instances[0]]
	// Two lanes: the local thread on the left, the remote one on the right.
	// A lane whose accesses are all in one function names it in its header
	// instead of on every line.
	localFn, remoteFn := laneFunc(v.Accesses, "local"), laneFunc(v.Accesses, "remote")
	left := laneHeader(v.Local.Handle, "local", localFn)
	right := laneHeader(v.Remote.Handle, "remote", remoteFn)
	cell := func(a bugs.Access) (string, string) {
		fn := a.Func
		if (a.Role == "local" && localFn != "") || (a.Role == "remote" && remoteFn != "") {
			fn = ""
		}
		rest := " " + a.Location()
		if len(v.Objects) > 1 && a.Object != "" {
			rest = " " + a.Object + rest // a set: which variable
		}
		if fn != "" {
			rest += " " + ShortName(fn) + "()"
		}
		return fmt.Sprintf("%-5s", a.Action), rest
	}
	width := len(left)
	for _, a := range v.Accesses {
		if a.Role == "local" {
			action, rest := cell(a)
			width = max(width, len(action)+len(rest))
		}
	}
	width += 4
	ew.printf("%s  %s%s%s\n", in, st(styleThread, left), strings.Repeat(" ", width-len(left)), st(styleThread, right))
	for _, a := range v.Accesses {
		action, rest := cell(a)
		styled := st(actionStyle(a.Action), action) + rest
		if a.Role == "local" {
			ew.printf("%s  %s\n", in, styled)
		} else {
			ew.printf("%s  %s%s\n", in, strings.Repeat(" ", width), styled)
		}
	}
	writeTextContext(ew, v.Accesses, in)
	writeTextWhy(ew, r, b, in)
}

// writeTextContext writes, for each essential access that has them, its
// source line, call chain, the locks its thread held and where the thread
// was created: what tells a split critical section (the lock held at both
// accesses, released between) from a missing lock.
func writeTextContext(ew *errWriter, as []bugs.Access, in string) {
	for _, a := range as {
		if !a.Essential || a.Source == "" && a.Stack == nil && a.Locks == nil {
			continue
		}
		ew.printf("%s    %s %s %s", in, a.Role, a.Action, a.Location())
		if a.Source != "" {
			ew.printf(": %s", a.Source)
		}
		ew.printf("\n")
		if l := a.Library; l != nil {
			lib := []string{"in library code at " + l.Loc().String()}
			if l.Func != "" {
				lib = append(lib, "in "+ShortName(l.Func)+"()")
			}
			if l.Calls != "" {
				lib = append(lib, "called as "+ShortName(l.Calls)+"()")
			}
			writeWrapped(ew, in+"      ", lib, ",")
		}
		var ctx []string
		if len(a.Stack) > 0 {
			ctx = append(ctx, "in "+callChain(a))
		}
		if len(a.Locks) > 0 {
			ctx = append(ctx, "holding "+plainNames(a.Locks))
		} else if a.Stack != nil {
			ctx = append(ctx, "holding no lock")
		}
		if a.Created != "" {
			ctx = append(ctx, "thread created at "+a.Created)
		}
		if a.Allocated != "" {
			ctx = append(ctx, "block allocated at "+a.Allocated)
		}
		if len(ctx) > 0 {
			writeWrapped(ew, in+"      ", ctx, ";")
		}
	}
}

// textWidth is where the text report wraps a long line of context.
const textWidth = 120

// writeWrapped writes parts joined by sep, each line starting with
// indent, wrapped before textWidth at the parts' " <- " and sep
// boundaries (a part longer than a line is cut nowhere else); the
// continuation lines are indented two more.
func writeWrapped(ew *errWriter, indent string, parts []string, sep string) {
	var words []string
	for i, p := range parts {
		ws := strings.SplitAfter(p, " <- ")
		if i < len(parts)-1 {
			ws[len(ws)-1] += sep + " "
		}
		words = append(words, ws...)
	}
	line := indent
	for _, w := range words {
		if len(line) > len(indent)+2 && len(line)+len(strings.TrimRight(w, " ")) > textWidth {
			ew.printf("%s\n", strings.TrimRight(line, " "))
			line = indent + "  "
		}
		line += w
	}
	ew.printf("%s\n", strings.TrimRight(line, " "))
}

// callChain is an access's call chain, innermost function first, with the
// frames of library code folded: those inside the user's call that an
// access attributed to it went through (the "in library code" line names
// them), and each run of others ("[3 library frames]", a std::thread's
// start routine).
func callChain(a bugs.Access) string {
	lib := a.StackLibrary
	if len(lib) != len(a.Stack) {
		lib = nil
	}
	i := 0
	if a.Library != nil && lib != nil {
		for i < len(lib) && lib[i] {
			i++
		}
	}
	var parts []string
	for i < len(a.Stack) {
		if lib == nil || !lib[i] {
			parts = append(parts, ShortName(a.Stack[i])+"()")
			i++
			continue
		}
		j := i
		for j < len(lib) && lib[j] {
			j++
		}
		parts = append(parts, fmt.Sprintf("[%d library %s]", j-i, plural(j-i, "frame", "frames")))
		i = j
	}
	return strings.Join(parts, " <- ")
}

// bugVars names a bug's variables as written, each that is a C++
// library's internals after the user's variable it is in:
// "svc::g_cache.map_ (std::unordered_map internals: _Hash_node…)".
func bugVars(r *bugs.Report, vars []string) string {
	out := make([]string, len(vars))
	for i, v := range vars {
		out[i] = tracemodel.PlainName(v)
		if c, ok := r.Containers[v]; ok {
			out[i] = strings.TrimSuffix(tracemodel.PlainName(c), ")") + ": " + out[i] + ")"
		}
	}
	return strings.Join(out, ", ")
}

// plainNames joins names, each as written (tracemodel.PlainName).
func plainNames(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = tracemodel.PlainName(n)
	}
	return strings.Join(out, ", ")
}

// shortNameLen is the length past which ShortName elides template
// arguments.
const shortNameLen = 80

// ShortName is a C++ name as written (tracemodel.PlainName), its template
// arguments elided ("std::_Hashtable<…>::end") when it is longer than
// shortNameLen: a report names the function, the JSON keeps it whole.
func ShortName(s string) string {
	s = tracemodel.PlainName(s)
	if len(s) <= shortNameLen || !strings.Contains(s, "<") {
		return s
	}
	return tracemodel.ElideTemplateArgs(s, "<…>")
}

// writeTextWhy writes why the bug's pattern is a bug and its typical fix,
// from the analysis's description of the pattern (the same text SARIF
// gives as the rule's help), in two lines.
func writeTextWhy(ew *errWriter, r *bugs.Report, b bugs.Bug, in string) {
	a := r.AnalysisOf(b.Analysis)
	if a == nil {
		return
	}
	for _, k := range a.Kinds {
		if k.ID != b.Pattern || k.Help == "" {
			continue
		}
		why, fix, _ := strings.Cut(k.Help, "Typical fix: ")
		if why = firstSentences(why, 2); why != "" {
			ew.printf("%s    why: %s\n", in, why)
		}
		if fix = firstSentences(fix, 1); fix != "" {
			ew.printf("%s    fix: %s\n", in, fix)
		}
		return
	}
}

// firstSentences returns the first n sentences of s.
func firstSentences(s string, n int) string {
	s = strings.TrimSpace(s)
	end := 0
	for i := 0; i < n; i++ {
		j := strings.Index(s[end:], ". ")
		if j < 0 {
			return s
		}
		end += j + 1
	}
	return s[:end]
}

// writeTextFinding writes a bug of an analysis whose findings involve any
// number of threads (a deadlock cycle): its message, then each thread's
// events, in the order of Threads; its first line indented by in.
func writeTextFinding(ew *errWriter, st func(style, string) string, b bugs.Bug, v bugs.Violation, in string) {
	ew.printf("%s%s  %s on %s", in, st(styleID, b.ID), st(stylePattern, b.Pattern+" "+b.PatternName), strings.Join(b.Vars, ", "))
	n := fmt.Sprintf("%d instances", b.Count)
	if b.Count == 1 {
		n = "1 instance"
	}
	if b.Occurred {
		n += ", occurred in the recorded run"
	}
	ew.printf(" (%s)%s\n", n, relaxedMark(b))
	writeTextReproduction(ew, st, b, in)
	if v.Message != "" {
		ew.printf("%s  %s\n", in, v.Message)
	}
	width := 0
	for _, a := range v.Accesses {
		width = max(width, len(a.Role))
	}
	for _, t := range v.Threads {
		ew.printf("%s  %s\n", in, st(styleThread, "thread "+t.Handle))
		for _, a := range v.Accesses {
			if a.Thread != t.ID {
				continue
			}
			rest := " " + a.Location()
			if a.Func != "" {
				rest += " " + a.Func + "()"
			}
			ew.printf("%s    %-*s %s %s%s\n", in, width, a.Role, st(actionStyle(a.Action), a.Action), a.Object, rest)
		}
	}
}

// laneFunc returns the function of every access of the role, or "" when
// they are in different functions or in none known.
func laneFunc(as []bugs.Access, role string) string {
	fn, first := "", true
	for _, a := range as {
		if a.Role != role {
			continue
		}
		if first {
			fn, first = a.Func, false
		} else if a.Func != fn {
			return ""
		}
	}
	return fn
}

func laneHeader(handle, role, fn string) string {
	h := fmt.Sprintf("thread %s (%s)", handle, role)
	if fn != "" {
		h += " in " + ShortName(fn) + "()"
	}
	return h
}

func writeTextSummary(ew *errWriter, r *bugs.Report, active, groups int) {
	s := r.Stats
	ew.printf("%s: %d events, %d threads, %d shared %s, %d %s, %d claims",
		r.Trace, s.Events, s.Threads, s.SharedVars, plural(s.SharedVars, "variable", "variables"),
		s.Models, plural(s.Models, "model", "models"), s.Claims)
	if s.Parts > s.Models {
		ew.printf(" (models cut into %d parts)", s.Parts)
	}
	if s.CacheHits > 0 {
		ew.printf(" (%d %s from cache)", s.CacheHits, plural(s.CacheHits, "model", "models"))
	}
	if s.Elapsed > 0 {
		ew.printf(", %s", s.Elapsed.Round(time.Millisecond))
	}
	if r.Semantics != "" {
		ew.printf(", %s semantics", r.Semantics)
	}
	ew.printf("\n")
	for i, u := range r.Undecided {
		if i == 5 {
			ew.printf("... and %d more undecided models (see the JSON report)\n", len(r.Undecided)-5)
			break
		}
		ew.printf("undecided: %s threads %s,%s: %s (%s)\n", u.Var, u.Threads[0], u.Threads[1], u.Reason, u.Hint)
	}
	if r.Incomplete {
		ew.printf("INCOMPLETE: the run was interrupted; only the models above were checked\n")
	}
	if r.Skipped > 0 {
		ew.printf("skipped %d malformed lines (--lenient)", r.Skipped)
		if len(r.Problems) > 0 {
			ew.printf("; first: %s", r.Problems[0])
		}
		ew.printf("\n")
	}
	newWord := ""
	if r.Baseline != "" {
		newWord = "new "
	}
	// One line per analysis, but a model-checked analysis that ran alone
	// among them: its models and claims are the line above.
	checked := 0
	for _, a := range r.Analyses {
		if a.ModelChecked {
			checked++
		}
	}
	for _, a := range r.Analyses {
		if a.ModelChecked && checked == 1 {
			continue
		}
		ew.printf("%s: %d %s", a.Name, a.Bugs, plural(a.Bugs, "bug", "bugs"))
		if a.Summary != "" {
			ew.printf(" (%s)", a.Summary)
		}
		ew.printf("\n")
	}
	// Model-checked analyses predict atomicity violations; the others
	// bugs of other kinds.
	what := "atomicity violation"
	if len(r.Analyses) > 0 && checked == 0 {
		what = "bug"
	}
	if active == 0 {
		ew.printf("no %s%s predicted", newWord, what)
	} else {
		instances := 0
		for _, b := range r.Active() {
			instances += b.Count
		}
		ew.printf("%d %s%s in %d %s predicted from %d violation %s", active, newWord, plural(active, "bug", "bugs"),
			groups, plural(groups, "group", "groups"), instances, plural(instances, "instance", "instances"))
	}
	if active > 0 && s.Confirmed > 0 {
		ew.printf(", %d confirmed by Spin", min(s.Confirmed, active))
	}
	if s.Suppressed > 0 {
		ew.printf(", %d suppressed", s.Suppressed)
	}
	if r.Baseline != "" {
		ew.printf(", %d known from baseline %s", s.Baseline, r.Baseline)
	}
	if len(r.Undecided) > 0 {
		ew.printf(", %d %s undecided", len(r.Undecided), plural(len(r.Undecided), "model", "models"))
	}
	ew.printf("\n")
}

// style is a kind of text that color marks up.
type style int

const (
	styleFile style = iota
	styleID
	stylePattern
	styleThread
	styleRead
	styleWrite
	styleOther
	styleFailed     // the label of a bug whose directed run failed
	styleReproduced // the label of a reproduced bug
)

// ansiCode is the SGR sequence of a style: only bold, dim, underline and
// the basic eight colors, which every terminal and both light and dark
// themes render.
func ansiCode(k style) string {
	switch k {
	case styleFile:
		return "\x1b[1;4m"
	case styleID, styleOther:
		return "\x1b[2m"
	case stylePattern:
		return "\x1b[1;33m"
	case styleThread:
		return "\x1b[1m"
	case styleRead:
		return "\x1b[36m"
	case styleWrite, styleFailed:
		return "\x1b[1;31m"
	case styleReproduced:
		return "\x1b[1;35m"
	}
	return ""
}

func actionStyle(action string) style {
	switch action {
	case "Read":
		return styleRead
	case "Write":
		return styleWrite
	}
	return styleOther
}

// styler returns a function that marks up text, or leaves it as is.
func styler(color bool) func(style, string) string {
	if !color {
		return func(_ style, s string) string { return s }
	}
	return func(k style, s string) string { return ansiCode(k) + s + "\x1b[0m" }
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
