package bugs

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// Report is the result of one prediction run over one trace.
type Report struct {
	Schema string `json:"schema"` // SchemaVersion
	Tool   Tool   `json:"tool"`
	Trace  string `json:"trace"`
	// Semantics names the model semantics of the run: "precise" (the
	// default), "paper", or "custom (...)" listing the rules that are on.
	Semantics string `json:"semantics,omitempty"`
	Stats     Stats  `json:"stats"`
	// Skipped lines (lenient mode) and their first messages.
	Skipped  int      `json:"skipped_lines,omitempty"`
	Problems []string `json:"problems,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Baseline names the report whose bugs were left out (--baseline);
	// Stats.Baseline counts them.
	Baseline string `json:"baseline,omitempty"`

	Bugs       []Bug       `json:"bugs"`
	Violations []Violation `json:"violations"`
	// Undecided lists the models that could not be decided within their
	// limits; the run went on without them.
	Undecided []Undecided `json:"undecided,omitempty"`
	// Incomplete is set when the run was interrupted: only some models
	// were checked (Stats.Models counts those).
	Incomplete bool `json:"incomplete,omitempty"`
	// Analyses are the analyses that ran (package analysis), in order; a
	// report made by McPatom alone (predict.Run) has none.
	Analyses []AnalysisRun `json:"analyses,omitempty"`
	// Reached holds, for the variables of the bugs that the recorder
	// named by type and allocation site, the pointer path the program
	// first reached them through (tracemodel.Model.Reached).
	Reached map[string]string `json:"reached,omitempty"`
}

// SetReached fills r.Reached from a trace's paths (by object name) for the
// variables of r's bugs; a variable of a later generation ("name#2")
// takes its object's path.
func (r *Report) SetReached(paths map[string]string) {
	if len(paths) == 0 {
		return
	}
	for _, b := range r.Bugs {
		for _, v := range b.Vars {
			p, ok := paths[v]
			if !ok {
				if i := strings.LastIndexByte(v, '#'); i > 0 && strings.Trim(v[i+1:], "0123456789") == "" {
					p, ok = paths[v[:i]]
				}
			}
			if !ok {
				continue
			}
			if r.Reached == nil {
				r.Reached = map[string]string{}
			}
			r.Reached[v] = p
		}
	}
}

// AnalysisRun describes one analysis of a run and what it found.
type AnalysisRun struct {
	Name  string `json:"name"`
	Doc   string `json:"doc"`             // one line
	Paper string `json:"paper,omitempty"` // where the method comes from
	// Kinds are the kinds of findings it can report (SARIF rules).
	Kinds []FindingKind `json:"kinds,omitempty"`
	// Bugs counts its bugs (before baseline and suppressions).
	Bugs int `json:"bugs"`
	// Summary is a one-line account of its work (sizes, limits reached).
	Summary string `json:"summary,omitempty"`
	// Elapsed is its wall time (not in JSON, which stays the same across
	// runs and drivers but for Stats.Elapsed).
	Elapsed time.Duration `json:"-"`
}

// FindingKind is a kind of finding of an analysis: its id (a bug's
// Pattern), name and explanation.
type FindingKind struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Help string `json:"help"`
}

// AnalysisOf returns the description of the analysis named name, nil if
// the report has none.
func (r *Report) AnalysisOf(name string) *AnalysisRun {
	for i := range r.Analyses {
		if r.Analyses[i].Name == name {
			return &r.Analyses[i]
		}
	}
	return nil
}

// Undecided is a model whose claims could not be decided.
type Undecided struct {
	Var     string    `json:"var"`
	Threads [2]string `json:"threads"` // handles
	Reason  string    `json:"reason"`
	Hint    string    `json:"hint"` // how to raise the limit
}

// Tool identifies the producer of a report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Engine  string `json:"engine"`
	// Confirm is the --confirm mode of the auto engine: which violating
	// models Spin checked ("one", "all" or "none").
	Confirm string `json:"confirm,omitempty"`
}

// Stats are the sizes and costs of a run.
type Stats struct {
	Events     int           `json:"events"`
	Threads    int           `json:"threads"`
	SharedVars int           `json:"shared_vars"`
	Models     int           `json:"models"`              // (variable, thread pair) models checked
	Claims     int           `json:"claims"`              // claims decided
	SpinModels int           `json:"spin_models"`         // models sent to Spin
	CacheHits  int           `json:"cache_hits"`          // models answered from the verdict cache
	Suppressed int           `json:"suppressed"`          // bugs matched by a suppression rule
	Baseline   int           `json:"baseline"`            // bugs left out because the baseline has them
	Confirmed  int           `json:"confirmed,omitempty"` // bugs Spin confirmed
	Elapsed    time.Duration `json:"elapsed_ns"`          // wall time
	Patterns   []string      `json:"patterns"`            // pattern ids checked
}

// Active returns the bugs that are not suppressed.
func (r *Report) Active() []Bug {
	var out []Bug
	for _, b := range r.Bugs {
		if !b.Suppressed {
			out = append(out, b)
		}
	}
	return out
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a report written by WriteJSON, checking its schema and that
// every bug's instances exist, so that renderers and diff can index without
// checks.
func ReadJSON(rd io.Reader, name string) (*Report, error) {
	var r Report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a mcpredict JSON report: %v", name, err)
	}
	if r.Schema != SchemaVersion {
		return nil, fmt.Errorf("%s: report schema %q, want %q", name, r.Schema, SchemaVersion)
	}
	for _, b := range r.Bugs {
		if b.ID == "" || len(b.Instances) == 0 {
			return nil, fmt.Errorf("%s: bug %q has no id or no instances", name, b.ID)
		}
		for _, i := range b.Instances {
			if i < 0 || i >= len(r.Violations) {
				return nil, fmt.Errorf("%s: bug %s: instance %d out of range (%d violations)", name, b.ID, i, len(r.Violations))
			}
		}
	}
	return &r, nil
}

// TextOptions change how WriteTextOptions renders.
type TextOptions struct {
	// Color marks up the text with ANSI escape sequences, for a terminal.
	Color bool
}

// ReadJSONFile reads the JSON report in the named file.
func ReadJSONFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadJSON(f, path)
}

// WriteText writes the human-readable report without color.
func WriteText(w io.Writer, r *Report) error {
	return WriteTextOptions(w, r, TextOptions{})
}

// WriteTextOptions writes the human-readable report: the active bugs grouped
// by the source file of their first location, each with the interleaving of
// one instance in two columns (local thread left, remote thread right), then
// a summary. Warnings are not part of it: they are diagnostics, which the
// caller shows where it shows diagnostics.
func WriteTextOptions(w io.Writer, r *Report, o TextOptions) error {
	ew := &errWriter{w: w}
	st := styler(o.Color)
	active := r.Active()
	byFile := map[string][]Bug{}
	var files []string
	for _, b := range active {
		f := "?"
		if len(b.Locations) > 0 && b.Locations[0].File != "" {
			f = b.Locations[0].File
		}
		if _, ok := byFile[f]; !ok {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], b)
	}
	sort.Strings(files)
	for _, f := range files {
		ew.printf("%s\n", st(styleFile, f))
		for _, b := range byFile[f] {
			writeTextBug(ew, st, r, b)
		}
		ew.printf("\n")
	}
	writeTextSummary(ew, r, len(active))
	return ew.err
}

func writeTextBug(ew *errWriter, st func(style, string) string, r *Report, b Bug) {
	if v := r.Violations[b.Instances[0]]; len(v.Threads) > 0 {
		writeTextFinding(ew, st, b, v)
		return
	}
	ew.printf("  %s  %s on %s", st(styleID, b.ID), st(stylePattern, b.Pattern+" "+b.PatternName), strings.Join(b.Vars, ", "))
	confirmed := ""
	if b.Confirmed {
		confirmed = ", confirmed by Spin"
	}
	if b.Count == 1 {
		ew.printf(" (1 instance%s)\n", confirmed)
	} else {
		ew.printf(" (%d instances%s)\n", b.Count, confirmed)
	}
	for _, name := range b.Vars {
		if p, ok := r.Reached[name]; ok {
			ew.printf("      %s first reached as %s\n", name, p)
		}
	}
	v := r.Violations[b.Instances[0]]
	// Two lanes: the local thread on the left, the remote one on the right.
	// A lane whose accesses are all in one function names it in its header
	// instead of on every line.
	localFn, remoteFn := laneFunc(v.Accesses, "local"), laneFunc(v.Accesses, "remote")
	left := laneHeader(v.Local.Handle, "local", localFn)
	right := laneHeader(v.Remote.Handle, "remote", remoteFn)
	cell := func(a Access) (string, string) {
		fn := a.Func
		if (a.Role == "local" && localFn != "") || (a.Role == "remote" && remoteFn != "") {
			fn = ""
		}
		rest := " " + a.Location()
		if fn != "" {
			rest += " " + fn + "()"
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
	ew.printf("    %s%s%s\n", st(styleThread, left), strings.Repeat(" ", width-len(left)), st(styleThread, right))
	for _, a := range v.Accesses {
		action, rest := cell(a)
		styled := st(actionStyle(a.Action), action) + rest
		if a.Role == "local" {
			ew.printf("    %s\n", styled)
		} else {
			ew.printf("    %s%s\n", strings.Repeat(" ", width), styled)
		}
	}
}

// writeTextFinding writes a bug of an analysis whose findings involve any
// number of threads (a deadlock cycle): its message, then each thread's
// events, in the order of Threads.
func writeTextFinding(ew *errWriter, st func(style, string) string, b Bug, v Violation) {
	ew.printf("  %s  %s on %s", st(styleID, b.ID), st(stylePattern, b.Pattern+" "+b.PatternName), strings.Join(b.Vars, ", "))
	n := fmt.Sprintf("%d instances", b.Count)
	if b.Count == 1 {
		n = "1 instance"
	}
	if b.Occurred {
		n += ", occurred in the recorded run"
	}
	ew.printf(" (%s)\n", n)
	if v.Message != "" {
		ew.printf("    %s\n", v.Message)
	}
	width := 0
	for _, a := range v.Accesses {
		width = max(width, len(a.Role))
	}
	for _, t := range v.Threads {
		ew.printf("    %s\n", st(styleThread, "thread "+t.Handle))
		for _, a := range v.Accesses {
			if a.Thread != t.ID {
				continue
			}
			rest := " " + a.Location()
			if a.Func != "" {
				rest += " " + a.Func + "()"
			}
			ew.printf("      %-*s %s %s%s\n", width, a.Role, st(actionStyle(a.Action), a.Action), a.Object, rest)
		}
	}
}

// laneFunc returns the function of every access of the role, or "" when
// they are in different functions or in none known.
func laneFunc(as []Access, role string) string {
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
		h += " in " + fn + "()"
	}
	return h
}

func writeTextSummary(ew *errWriter, r *Report, active int) {
	s := r.Stats
	ew.printf("%s: %d events, %d threads, %d shared %s, %d %s, %d claims",
		r.Trace, s.Events, s.Threads, s.SharedVars, plural(s.SharedVars, "variable", "variables"),
		s.Models, plural(s.Models, "model", "models"), s.Claims)
	if s.CacheHits > 0 {
		ew.printf(" (%d models from cache)", s.CacheHits)
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
	for _, a := range r.Analyses {
		if a.Name == "mcpatom" {
			continue
		}
		ew.printf("%s: %d %s", a.Name, a.Bugs, plural(a.Bugs, "bug", "bugs"))
		if a.Summary != "" {
			ew.printf(" (%s)", a.Summary)
		}
		ew.printf("\n")
	}
	what := "atomicity violation"
	if len(r.Analyses) > 0 && r.AnalysisOf("mcpatom") == nil {
		what = "bug"
	}
	if active == 0 {
		ew.printf("no %s%s predicted", newWord, what)
	} else {
		instances := 0
		for _, b := range r.Active() {
			instances += b.Count
		}
		ew.printf("%d %s%s predicted from %d violation %s", active, newWord, plural(active, "bug", "bugs"),
			instances, plural(instances, "instance", "instances"))
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
	case styleWrite:
		return "\x1b[1;31m"
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
