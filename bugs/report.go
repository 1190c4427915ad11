package bugs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
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
	// report of package predict run alone lists only the model-checked
	// analyses its models were named for (predict.Models.Analysis).
	Analyses []AnalysisRun `json:"analyses,omitempty"`
	// Reached holds, for the variables of the bugs that the recorder
	// named by type and allocation site, the pointer path the program
	// first reached them through (tracemodel.Model.Reached).
	Reached map[string]string `json:"reached,omitempty"`
	// Containers names, for the variables of the bugs that are a C++
	// library's internals, the user's variable they are in
	// (tracemodel.Model.Containers): "svc::g_cache.map_ (std::unordered_map
	// internals)".
	Containers map[string]string `json:"containers,omitempty"`
	// Failures are the directed runs of mcpredict reproduce that ended
	// differently from the recorded run and are not any bug's failure:
	// runs of the exploration, and failures that came outside the window
	// of the bug the run was directed at.
	Failures []Failure `json:"failures,omitempty"`
	// Reproduce counts what mcpredict reproduce did; nil in a report of
	// mcpredict run.
	Reproduce *ReproduceSummary `json:"reproduce,omitempty"`
}

// SetReached fills r.Reached from a trace's paths (by object name) for the
// variables of r's bugs; a variable of a later generation ("name#2")
// takes its object's path.
func (r *Report) SetReached(paths map[string]string) { r.Reached = r.ofBugVars(r.Reached, paths) }

// SetContainers fills r.Containers from a trace's containers (by variable
// name) for the variables of r's bugs.
func (r *Report) SetContainers(names map[string]string) {
	r.Containers = r.ofBugVars(r.Containers, names)
}

// ofBugVars adds to dst what byName says of the variables of r's bugs; a
// variable of a later generation ("name#2") takes its object's.
func (r *Report) ofBugVars(dst, byName map[string]string) map[string]string {
	paths := byName
	if len(paths) == 0 {
		return dst
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
			if dst == nil {
				dst = map[string]string{}
			}
			dst[v] = p
		}
	}
	return dst
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
	// ModelChecked is set for an analysis whose bugs are instances of
	// patterns found by model checking (package predict): two threads, a
	// pattern of the pattern language, Stats counting its models and
	// claims. The others report findings of any number of threads.
	ModelChecked bool `json:"model_checked,omitempty"`
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
	Parts      int           `json:"parts,omitempty"`     // their parts (a model cut at barriers has several; README "Traces bigger than memory")
	Claims     int           `json:"claims"`              // claims decided
	SpinModels int           `json:"spin_models"`         // models sent to Spin
	CacheHits  int           `json:"cache_hits"`          // models answered from the verdict cache
	Suppressed int           `json:"suppressed"`          // bugs matched by a suppression rule
	Baseline   int           `json:"baseline"`            // bugs left out because the baseline has them
	Confirmed  int           `json:"confirmed,omitempty"` // bugs Spin confirmed
	Elapsed    time.Duration `json:"elapsed_ns"`          // wall time
	// SpillBytes is the temporary disk the trace was spilled to (README
	// "Traces bigger than memory"); 0: kept in memory.
	SpillBytes int64    `json:"spill_bytes,omitempty"`
	Patterns   []string `json:"patterns"` // pattern ids checked
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

// WriteJSON writes the report as indented JSON, with its groups
// (Groups of all its bugs, suppressed ones included) after its fields.
func WriteJSON(w io.Writer, r *Report) error {
	groups := Groups(r.Bugs)
	if groups == nil {
		groups = []Group{}
	}
	// What an Encoder with SetIndent("", "  ") writes, made in pieces: the
	// report without its violations, then the violations, encoded and
	// indented in chunks on the cores, put where the first has null. A
	// server's report has tens of thousands of violations (27 MB), and
	// its encoding, serial, was a tenth of the run.
	rest := *r
	rest.Violations = nil
	head, err := indentedJSON(struct {
		*Report
		Groups []Group `json:"groups"`
	}{&rest, groups}, "")
	if err != nil {
		return err
	}
	if r.Violations == nil {
		_, err = w.Write(append(head, '\n'))
		return err
	}
	const key = "\n  \"violations\": null"
	at := bytes.Index(head, []byte(key))
	if at < 0 {
		return errors.New("bugs: the report's JSON has no violations field")
	}
	at += len(key) - len("null")
	vs, err := violationsJSON(r.Violations)
	if err != nil {
		return err
	}
	out := make([]byte, 0, len(head)+len(vs)+1)
	out = append(append(append(out, head[:at]...), vs...), head[at+len("null"):]...)
	_, err = w.Write(append(out, '\n'))
	return err
}

// indentedJSON is v as an Encoder with SetIndent(prefix, "  ") writes it, but
// without the newline at its end; indented into a buffer made at its size,
// where the Encoder grew its own by doubling.
func indentedJSON(v any, prefix string) ([]byte, error) {
	compact, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(len(compact) + len(compact)/2)
	if err := json.Indent(&out, compact, prefix, "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// violationsJSON is the indented JSON array of vs, the value of a field of
// the report's top-level object: its chunks are encoded concurrently.
func violationsJSON(vs []Violation) ([]byte, error) {
	if len(vs) == 0 {
		return []byte("[]"), nil
	}
	const chunk = 256
	parts := make([][]byte, (len(vs)+chunk-1)/chunk)
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	next := make(chan int, len(parts))
	for i := range parts {
		next <- i
	}
	close(next)
	for range min(runtime.GOMAXPROCS(0), len(parts)) {
		wg.Go(func() {
			for i := range next {
				// "[\n    {...},\n    {...}\n  ]": its elements,
				// without the brackets, are the chunk's part.
				b, err := indentedJSON(vs[i*chunk:min(len(vs), (i+1)*chunk)], "  ")
				if err == nil {
					b = b[len("[\n") : len(b)-len("\n  ]")]
				}
				parts[i], errs[i] = b, err
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	n := len("[\n\n  ]")
	for _, p := range parts {
		n += len(p) + len(",\n")
	}
	out := make([]byte, 0, n)
	out = append(out, "[\n"...)
	for i, p := range parts {
		if i > 0 {
			out = append(out, ",\n"...)
		}
		out = append(out, p...)
	}
	return append(out, "\n  ]"...), nil
}

// InterleavingsKept is how many instances of a bug keep their witness
// interleaving in a report (TrimInterleavings): every renderer draws its
// first instance's, and a racy counter's thousands of instances, each with
// a witness of hundreds of steps, made JSON reports of a gigabyte.
const InterleavingsKept = 3

// TrimInterleavings leaves out the interleavings of the instances of each
// bug beyond its first InterleavingsKept (Violation.InterleavingOmitted);
// their accesses stay. A violation of several bugs keeps its
// interleaving if it is among the first of any.
func (r *Report) TrimInterleavings() {
	keep := make([]bool, len(r.Violations))
	for _, b := range r.Bugs {
		for k, i := range b.Instances {
			if k < InterleavingsKept && i >= 0 && i < len(keep) {
				keep[i] = true
			}
		}
	}
	for i := range r.Violations {
		if !keep[i] {
			r.Violations[i].OmitInterleaving()
		}
	}
}

// OmitInterleaving leaves out the violation's witness interleaving
// (InterleavingOmitted); its accesses stay.
func (v *Violation) OmitInterleaving() {
	if len(v.Interleaving) > 0 {
		v.MarkInterleavingOmitted()
	}
}

// MarkInterleavingOmitted records that the violation's interleaving is
// left out (InterleavingOmitted), for one built without it.
func (v *Violation) MarkInterleavingOmitted() {
	v.Interleaving, v.Elided, v.InterleavingOmitted = []Access{}, 0, true
}

// ReadJSON reads a report written by WriteJSON, checking its schema and that
// every bug's instances exist, so that renderers and diff can index without
// checks. Its groups are not read: they follow from the bugs (Groups), and
// a report written before groups existed has none.
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

// ReadJSONFile reads the JSON report in the named file.
func ReadJSONFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadJSON(f, path)
}
