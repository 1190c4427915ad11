package bugs

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Report is the result of one prediction run over one trace.
type Report struct {
	Schema string `json:"schema"` // SchemaVersion
	Tool   Tool   `json:"tool"`
	Trace  string `json:"trace"`
	Stats  Stats  `json:"stats"`
	// Skipped lines (lenient mode) and their first messages.
	Skipped  int      `json:"skipped_lines,omitempty"`
	Problems []string `json:"problems,omitempty"`
	Warnings []string `json:"warnings,omitempty"`

	Bugs       []Bug       `json:"bugs"`
	Violations []Violation `json:"violations"`
}

// Tool identifies the producer of a report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Engine  string `json:"engine"`
}

// Stats are the sizes and costs of a run.
type Stats struct {
	Events     int           `json:"events"`
	Threads    int           `json:"threads"`
	SharedVars int           `json:"shared_vars"`
	Models     int           `json:"models"`       // (variable, thread pair) models checked
	Claims     int           `json:"claims"`       // claims decided
	SpinModels int           `json:"spin_models"`  // models sent to Spin
	CacheHits  int           `json:"cache_hits"`   // models answered from the verdict cache
	Suppressed int           `json:"suppressed"`   // bugs matched by a suppression rule
	Elapsed    time.Duration `json:"elapsed_ns"`   // wall time
	Patterns   []string      `json:"patterns"`     // pattern ids checked
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

// ReadJSON reads a report written by WriteJSON, checking its schema.
func ReadJSON(rd io.Reader, name string) (*Report, error) {
	var r Report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a mcpredict JSON report: %v", name, err)
	}
	if r.Schema != SchemaVersion {
		return nil, fmt.Errorf("%s: report schema %q, want %q", name, r.Schema, SchemaVersion)
	}
	return &r, nil
}

// WriteText writes the human-readable report: bugs grouped by source file,
// each with its locations and one interleaving, then a summary line.
func WriteText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	active := r.Active()
	byFile := map[string][]Bug{}
	var files []string
	for _, b := range active {
		f := b.Locations[0].File
		if f == "" {
			f = "?"
		}
		if _, ok := byFile[f]; !ok {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], b)
	}
	sort.Strings(files)
	for _, f := range files {
		ew.printf("%s\n", f)
		for _, b := range byFile[f] {
			v := r.Violations[b.Instances[0]]
			ew.printf("  %s %s (%s) on %s", b.ID, b.Pattern, b.PatternName, strings.Join(b.Vars, ", "))
			if b.Count > 1 {
				ew.printf(" — %d instances", b.Count)
			}
			ew.printf("\n")
			ew.printf("    local thread %s, remote thread %s:\n", v.Local.Handle, v.Remote.Handle)
			for _, a := range v.Accesses {
				fn := ""
				if a.Func != "" {
					fn = " in " + a.Func
				}
				ew.printf("      %-6s %-5s %s%s (trace line %d)\n", a.Role, a.Action, a.Location(), fn, a.TraceLine)
			}
			ew.printf("    interleaving: %s\n", compact(v))
		}
		ew.printf("\n")
	}
	s := r.Stats
	ew.printf("%s: %d events, %d threads, %d shared variables, %d models, %d claims",
		r.Trace, s.Events, s.Threads, s.SharedVars, s.Models, s.Claims)
	if s.CacheHits > 0 {
		ew.printf(" (%d models from cache)", s.CacheHits)
	}
	ew.printf(", %s\n", s.Elapsed.Round(time.Millisecond))
	if r.Skipped > 0 {
		ew.printf("skipped %d malformed lines (--lenient); first: %s\n", r.Skipped, r.Problems[0])
	}
	for _, wn := range r.Warnings {
		ew.printf("warning: %s\n", wn)
	}
	switch n := len(active); {
	case n == 0:
		ew.printf("no atomicity violation predicted")
	default:
		ew.printf("%d bug(s) predicted from %d violation instance(s)", n, len(r.Violations))
	}
	if s.Suppressed > 0 {
		ew.printf(", %d suppressed", s.Suppressed)
	}
	ew.printf("\n")
	return ew.err
}

// compact renders the instance part of an interleaving on one line, e.g.
// "t1 R:bank.c:10 → t2 W:bank.c:20 → t1 W:bank.c:12".
func compact(v Violation) string {
	var parts []string
	for _, a := range v.Interleaving {
		if !a.Instance {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s:%s", a.Handle, a.Action[:1], a.Location()))
	}
	return strings.Join(parts, " → ")
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
