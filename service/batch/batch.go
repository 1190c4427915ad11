// Package batch checks many traces in one go, as a nightly job does: one
// report per trace and a summary, resumable after an interruption, and a
// comparison of the bugs (by their stable ids) with a previous batch.
//
// An output directory holds:
//
//	reports/<key>.json   the report of each trace (plus one file per extra format)
//	summary.json         per trace: status, events, shared variables, models, bugs, groups, time
//	summary.txt          the same as a table, with the comparison
//
// where <key> is the trace's path relative to the directory argument it was
// found under (or its base name), with separators replaced by "__". A trace
// is finished when summary.json lists it as checked, with the same size,
// modification time and options, and its report exists: a resumed batch
// skips it. Traces that failed are tried again.
//
// The package does not check traces itself: a Checker does, locally
// (Local) or through a prediction server (Remote).
package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/formats"
	"github.com/mcpredict/mcpredict/internal/atomicfile"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/client"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// SummarySchema identifies the summary.json format.
const SummarySchema = "mcpredict.batch/v1"

// Checker checks one trace file and returns its report, whose Trace is path.
type Checker func(ctx context.Context, path string) (*bugs.Report, error)

// Local checks traces in this process with predict.Run.
func Local(opts predict.Options, topts tracemodel.Options) Checker {
	return func(ctx context.Context, path string) (*bugs.Report, error) {
		m, err := tracemodel.Open(ctx, path, topts)
		if err != nil {
			return nil, err
		}
		return predict.Run(ctx, m, opts)
	}
}

// LocalOpen is Local with open reading the traces (trace-format plugins).
func LocalOpen(opts predict.Options, open func(ctx context.Context, path string) (*tracemodel.Model, error)) Checker {
	return func(ctx context.Context, path string) (*bugs.Report, error) {
		m, err := open(ctx, path)
		if err != nil {
			return nil, err
		}
		return predict.Run(ctx, m, opts)
	}
}

// Remote checks traces by uploading them to a prediction server and waiting
// for the report. A job still running when ctx ends is cancelled.
func Remote(c *client.Client, o service.JobOptions, poll time.Duration) Checker {
	return func(ctx context.Context, path string) (*bugs.Report, error) {
		j, err := c.UploadFile(ctx, path, o)
		if err != nil {
			return nil, err
		}
		if _, err := c.Wait(ctx, j.ID, poll); err != nil {
			if ctx.Err() != nil {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				_, _ = c.Cancel(cctx, j.ID)
				cancel()
			}
			return nil, err
		}
		return c.Report(ctx, j.ID)
	}
}

// Renderer writes a report in one format.
type Renderer = service.Renderer

// Config configures Run.
type Config struct {
	Inputs []string // directories (searched recursively), files or globs
	Out    string   // the output directory
	Check  Checker
	// OptionsKey identifies the check options: a trace finished with other
	// options is checked again.
	OptionsKey string
	// Match are the base-name globs of the files taken from directories;
	// default DefaultMatch().
	Match []string
	// Formats are written beside each JSON report, as reports/<key>.<name>.
	Formats map[string]Renderer
	// Previous is the output directory of an earlier batch to compare with.
	Previous string
	// Parallel is the number of traces checked at once (default 1; the
	// models of one trace are already checked in parallel).
	Parallel int
	// Log receives one line per trace; nil: none.
	Log io.Writer
}

// DefaultMatch returns the globs of the trace files taken from a directory.
func DefaultMatch() []string {
	return []string{"*.csv", "*.csv.gz", "*.csv.zst", "*.trace", "*.trace.gz", "*.trace.zst",
		"*.std", "*.std.gz", "*.std.zst", "*.jsonl", "*.jsonl.gz", "*.jsonl.zst"}
}

// Trace statuses.
const (
	StatusOK         = "ok"         // no violation
	StatusViolations = "violations" // bugs predicted
	StatusError      = "error"      // could not be checked

	statusPending = "pending" // not checked yet (interrupted)
)

// Trace is the summary line of one trace.
type Trace struct {
	Path       string        `json:"path"`   // as found
	Key        string        `json:"key"`    // report file base name
	Report     string        `json:"report"` // relative to the output directory
	Size       int64         `json:"size"`
	ModTime    time.Time     `json:"mtime"`
	Options    string        `json:"options,omitempty"`
	Status     string        `json:"status"`
	Error      string        `json:"error,omitempty"`
	BadInput   bool          `json:"bad_input,omitempty"` // the error is the trace's (exit status 2), not a tool's
	Events     int           `json:"events"`
	SharedVars int           `json:"shared_vars"`
	Models     int           `json:"models"`
	Bugs       int           `json:"bugs"`
	Groups     int           `json:"groups"` // groups of its bugs (bugs.Groups)
	Violations int           `json:"violations"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	BugIDs     []string      `json:"bug_ids,omitempty"`
	GroupIDs   []string      `json:"group_ids,omitempty"`
	// Failed counts, in a report of mcpredict reproduce (batch
	// --reproduce), its failed bugs and its failing runs; Reproduced the
	// bugs reproduced without failing.
	Failed     int `json:"failed,omitempty"`
	Reproduced int `json:"reproduced,omitempty"`
	// Resumed marks a trace finished by an earlier, interrupted run.
	Resumed bool `json:"resumed,omitempty"`
}

func (t *Trace) finished() bool { return t.Status == StatusOK || t.Status == StatusViolations }

// Totals add up the traces.
type Totals struct {
	Traces    int `json:"traces"`
	Checked   int `json:"checked"` // this run
	Resumed   int `json:"resumed"`
	Errors    int `json:"errors"`
	BadInputs int `json:"bad_inputs"`
	// Pending traces were not checked: the run was interrupted first.
	Pending    int           `json:"pending"`
	Events     int           `json:"events"`
	Models     int           `json:"models"`
	Bugs       int           `json:"bugs"`   // distinct bug ids over all traces
	Groups     int           `json:"groups"` // distinct group ids over all traces
	Violations int           `json:"violations"`
	Elapsed    time.Duration `json:"elapsed_ns"` // wall time of this run
}

// BugChange is a bug that appeared or disappeared since the previous batch.
type BugChange struct {
	Trace       string   `json:"trace"` // key
	ID          string   `json:"id"`
	Pattern     string   `json:"pattern"`
	PatternName string   `json:"pattern_name"`
	Vars        []string `json:"vars"`
	Location    string   `json:"location"` // the first location
	// Reproduction is the bug's reproduction state in the report it is
	// listed from (bugs.Bug.ReproductionState: "failed", "reproduced",
	// "not_reproduced", "not_tried"), when that report comes from
	// mcpredict reproduce; a fixed bug's is the previous night's.
	Reproduction string `json:"reproduction,omitempty"`
}

// Comparison is the difference with a previous batch, by stable bug id, for
// the traces checked in both (a trace new in this batch brings only new bugs).
type Comparison struct {
	Previous  string      `json:"previous"`
	New       []BugChange `json:"new"`
	Fixed     []BugChange `json:"fixed"`
	Unchanged int         `json:"unchanged"`
	// NewTraces were not in the previous batch; Missing were, and are not
	// in this one (their bugs are not counted as fixed).
	NewTraces []string `json:"new_traces,omitempty"`
	Missing   []string `json:"missing_traces,omitempty"`
}

// Summary is summary.json.
type Summary struct {
	Schema   string      `json:"schema"`
	Started  time.Time   `json:"started"`
	Finished time.Time   `json:"finished,omitzero"`
	Traces   []Trace     `json:"traces"`
	Totals   Totals      `json:"totals"`
	Compare  *Comparison `json:"compare,omitempty"`
}

// input is a trace file to check.
type input struct {
	path, key string
	info      fs.FileInfo
}

// Run checks the traces and writes the output directory. It returns the
// summary even when ctx was cancelled midway (with ctx's error): what was
// finished is recorded and will not be redone.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if cfg.Check == nil {
		return nil, errors.New("batch: no checker")
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 1
	}
	if len(cfg.Match) == 0 {
		cfg.Match = DefaultMatch()
	}
	inputs, err := discover(cfg.Inputs, cfg.Match)
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, &predict.UsageError{Msg: fmt.Sprintf("batch: no trace files in %s (looked for %s)", strings.Join(cfg.Inputs, ", "), strings.Join(cfg.Match, " "))}
	}
	if err := os.MkdirAll(filepath.Join(cfg.Out, "reports"), 0o755); err != nil {
		return nil, fmt.Errorf("batch: output directory: %w", err)
	}
	earlier := map[string]Trace{}
	if prev, err := ReadSummary(cfg.Out); err == nil {
		for _, t := range prev.Traces {
			earlier[t.Key] = t
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	start := time.Now()
	sum := &Summary{Schema: SummarySchema, Started: start.UTC(), Traces: make([]Trace, len(inputs))}
	var (
		mu      sync.Mutex
		saveErr error
	)
	save := func() {
		if err := writeJSONFile(filepath.Join(cfg.Out, "summary.json"), sum); err != nil && saveErr == nil {
			saveErr = err
		}
	}
	var todo []int
	for i, in := range inputs {
		t := Trace{Path: in.path, Key: in.key, Report: filepath.Join("reports", in.key+".json"),
			Size: in.info.Size(), ModTime: in.info.ModTime().UTC(), Options: cfg.OptionsKey}
		if e, ok := earlier[in.key]; ok && e.finished() && e.Path == t.Path && e.Size == t.Size &&
			e.ModTime.Equal(t.ModTime) && e.Options == t.Options && exists(filepath.Join(cfg.Out, e.Report)) {
			e.Resumed = true
			sum.Traces[i] = e
			logf(cfg.Log, "%s: finished earlier, skipped\n", in.path)
			continue
		}
		t.Status = statusPending
		sum.Traces[i] = t
		todo = append(todo, i)
	}
	save()
	sem := make(chan struct{}, cfg.Parallel)
	var wg sync.WaitGroup
	for _, i := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			mu.Lock()
			t := sum.Traces[i]
			mu.Unlock()
			t = checkOne(ctx, cfg, t)
			if ctx.Err() != nil && t.Status == StatusError {
				return // interrupted, not failed: stays pending
			}
			mu.Lock()
			sum.Traces[i] = t
			save()
			mu.Unlock()
		})
	}
	wg.Wait()
	sum.Totals = totals(sum.Traces)
	sum.Totals.Elapsed = time.Since(start)
	if ctx.Err() == nil {
		sum.Finished = time.Now().UTC()
	}
	if cfg.Previous != "" {
		cmp, err := Compare(cfg.Previous, cfg.Out, sum)
		if err != nil {
			return sum, err
		}
		sum.Compare = cmp
	}
	save()
	if saveErr != nil {
		return sum, saveErr
	}
	if err := writeOutput(filepath.Join(cfg.Out, "summary.txt"), func(w io.Writer) error { return WriteText(w, sum) }); err != nil {
		return sum, err
	}
	return sum, ctx.Err()
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// checkOne checks one trace and writes its reports.
func checkOne(ctx context.Context, cfg Config, t Trace) Trace {
	start := time.Now()
	rep, err := cfg.Check(ctx, t.Path)
	t.Elapsed = time.Since(start)
	if err != nil {
		t.Status = StatusError
		t.Error = err.Error()
		t.BadInput = badInput(err)
		logf(cfg.Log, "%s: error: %v\n", t.Path, err)
		return t
	}
	if err := writeOutput(filepath.Join(cfg.Out, t.Report), func(w io.Writer) error { return bugs.WriteJSON(w, rep) }); err != nil {
		t.Status, t.Error = StatusError, err.Error()
		return t
	}
	for name, render := range cfg.Formats {
		if name == "json" {
			continue
		}
		p := filepath.Join(cfg.Out, "reports", t.Key+"."+name)
		if err := writeOutput(p, func(w io.Writer) error { return render(w, rep) }); err != nil {
			t.Status, t.Error = StatusError, err.Error()
			return t
		}
	}
	active := rep.Active()
	t.Events, t.SharedVars, t.Models = rep.Stats.Events, rep.Stats.SharedVars, rep.Stats.Models
	groups := bugs.Groups(active)
	t.Bugs, t.Groups, t.Violations = len(active), len(groups), len(rep.Violations)
	t.BugIDs, t.GroupIDs = nil, nil
	for _, b := range active {
		t.BugIDs = append(t.BugIDs, b.ID)
	}
	for _, g := range groups {
		t.GroupIDs = append(t.GroupIDs, g.ID)
	}
	t.Failed, t.Reproduced = 0, 0
	for _, b := range active {
		switch b.ReproductionState() {
		case bugs.StateFailed:
			t.Failed++
		case bugs.Reproduced:
			t.Reproduced++
		}
	}
	t.Failed += len(rep.Failures)
	t.Status, t.Error, t.BadInput = StatusOK, "", false
	if len(active) > 0 || len(rep.Failures) > 0 {
		t.Status = StatusViolations
	}
	logf(cfg.Log, "%s: %d events, %d shared variables, %d models, %d bugs in %s, %s\n",
		t.Path, t.Events, t.SharedVars, t.Models, t.Bugs, groupCount(t.Groups), t.Elapsed.Round(time.Millisecond))
	return t
}

// badInput reports whether err is the trace's or the options' fault.
func badInput(err error) bool {
	var (
		pe *tracemodel.ParseError
		ue *predict.UsageError
		ce *client.Error
		ie *formats.InputError
	)
	switch {
	case errors.As(err, &pe), errors.As(err, &ue), errors.As(err, &ie):
		return true
	case errors.As(err, &ce):
		return ce.Status >= 400 && ce.Status < 500
	}
	return false
}

func totals(ts []Trace) Totals {
	var to Totals
	ids, groups := map[string]bool{}, map[string]bool{}
	for _, t := range ts {
		to.Traces++
		switch {
		case t.Resumed:
			to.Resumed++
		case t.Status == statusPending:
			to.Pending++
		default:
			to.Checked++
		}
		if t.Status == StatusError {
			to.Errors++
			if t.BadInput {
				to.BadInputs++
			}
		}
		to.Events += t.Events
		to.Models += t.Models
		to.Violations += t.Violations
		for _, id := range t.BugIDs {
			ids[id] = true
		}
		for _, id := range t.GroupIDs {
			groups[id] = true
		}
	}
	to.Bugs, to.Groups = len(ids), len(groups)
	return to
}

// discover lists the trace files of the inputs, sorted, with unique keys.
func discover(args, match []string) ([]input, error) {
	var out []input
	seen := map[string]bool{}
	add := func(path, key string) error {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		if seen[abs] {
			return nil
		}
		seen[abs] = true
		info, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("batch: %w", err)
		}
		out = append(out, input{path: path, key: key, info: info})
		return nil
	}
	for _, arg := range args {
		info, err := os.Stat(arg)
		switch {
		case err == nil && info.IsDir():
			var found []string
			err := filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					// Hidden folders, and the directed runs that mcpredict
					// reproduce leaves beside a trace (TRACE.reproduce/):
					// their traces are its, not the batch's.
					if p != arg && (strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(d.Name(), ".reproduce")) {
						return filepath.SkipDir
					}
					return nil
				}
				for _, m := range match {
					if ok, _ := filepath.Match(m, d.Name()); ok {
						found = append(found, p)
						break
					}
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("batch: %w", err)
			}
			sort.Strings(found)
			for _, p := range found {
				rel, err := filepath.Rel(arg, p)
				if err != nil {
					return nil, err
				}
				if err := add(p, rel); err != nil {
					return nil, err
				}
			}
		case err == nil:
			if err := add(arg, filepath.Base(arg)); err != nil {
				return nil, err
			}
		default:
			matches, gerr := filepath.Glob(arg)
			if gerr != nil {
				return nil, &predict.UsageError{Msg: fmt.Sprintf("batch: bad pattern %q: %v", arg, gerr)}
			}
			if len(matches) == 0 {
				return nil, &predict.UsageError{Msg: fmt.Sprintf("batch: %s: no such file, directory or matching files", arg)}
			}
			sort.Strings(matches)
			for _, p := range matches {
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
					if err := add(p, filepath.Base(p)); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	keys := map[string]int{}
	for i := range out {
		k := strings.ReplaceAll(filepath.ToSlash(out[i].key), "/", "__")
		keys[k]++
		if n := keys[k]; n > 1 {
			k = fmt.Sprintf("%s~%d", k, n)
		}
		out[i].key = k
	}
	return out, nil
}

// ReadSummary reads summary.json of an output directory.
func ReadSummary(dir string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "summary.json"), err)
	}
	if s.Schema != SummarySchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", filepath.Join(dir, "summary.json"), s.Schema, SummarySchema)
	}
	return &s, nil
}

func readReport(path string) (*bugs.Report, error) { return bugs.ReadJSONFile(path) }

// Compare compares the finished traces of sum (written under dir) with the
// batch in prev.
func Compare(prev, dir string, sum *Summary) (*Comparison, error) {
	ps, err := ReadSummary(prev)
	if err != nil {
		return nil, fmt.Errorf("previous batch: %w", err)
	}
	c := &Comparison{Previous: prev, New: []BugChange{}, Fixed: []BugChange{}}
	before := map[string]Trace{}
	for _, t := range ps.Traces {
		before[t.Key] = t
	}
	now := map[string]bool{}
	for _, t := range sum.Traces {
		now[t.Key] = true
		if !t.finished() {
			continue
		}
		cur, err := readReport(filepath.Join(dir, t.Report))
		if err != nil {
			return nil, err
		}
		old := map[string]bugs.Bug{}
		if p, ok := before[t.Key]; ok && p.finished() {
			pr, err := readReport(filepath.Join(prev, p.Report))
			if err != nil {
				return nil, fmt.Errorf("previous batch: %w", err)
			}
			for _, b := range pr.Active() {
				old[b.ID] = b
			}
		} else if !ok {
			c.NewTraces = append(c.NewTraces, t.Key)
		} else {
			continue // not checked last time: nothing to compare with
		}
		seen := map[string]bool{}
		for _, b := range cur.Active() {
			seen[b.ID] = true
			if _, ok := old[b.ID]; ok {
				c.Unchanged++
			} else {
				c.New = append(c.New, change(t.Key, b))
			}
		}
		for _, b := range old {
			if !seen[b.ID] {
				c.Fixed = append(c.Fixed, change(t.Key, b))
			}
		}
	}
	for _, t := range ps.Traces {
		if !now[t.Key] {
			c.Missing = append(c.Missing, t.Key)
		}
	}
	for _, l := range [][]BugChange{c.New, c.Fixed} {
		sort.Slice(l, func(i, j int) bool {
			// A bug whose directed run failed first: it is the one to
			// look at in the morning. Without reproductions, all rank alike.
			if ri, rj := changeRank(l[i]), changeRank(l[j]); ri != rj {
				return ri < rj
			}
			if l[i].Trace != l[j].Trace {
				return l[i].Trace < l[j].Trace
			}
			return l[i].ID < l[j].ID
		})
	}
	return c, nil
}

// changeRank orders listed bugs as bugs.Bug.ReproductionRank does.
func changeRank(c BugChange) int {
	switch c.Reproduction {
	case bugs.StateFailed:
		return 0
	case bugs.Reproduced:
		return 1
	}
	return 2
}

func change(trace string, b bugs.Bug) BugChange {
	c := BugChange{Trace: trace, ID: b.ID, Pattern: b.Pattern, PatternName: b.PatternName, Vars: b.Vars,
		Reproduction: b.ReproductionState()}
	if len(b.Locations) > 0 {
		c.Location = b.Locations[0].String()
	}
	return c
}

// WriteText writes the summary as a table, then the comparison.
func WriteText(w io.Writer, s *Summary) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TRACE\tEVENTS\tSHARED VARS\tMODELS\tBUGS\tGROUPS\tTIME\tSTATUS\t")
	for _, t := range s.Traces {
		status := t.Status
		if t.Resumed {
			status += " (earlier run)"
		}
		if t.Status == StatusError {
			status += ": " + firstLine(t.Error)
		}
		if t.Failed > 0 || t.Reproduced > 0 {
			status += fmt.Sprintf(" (%d failed, %d reproduced)", t.Failed, t.Reproduced)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", t.Path, t.Events, t.SharedVars, t.Models, t.Bugs, t.Groups,
			t.Elapsed.Round(time.Millisecond), status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	to := s.Totals
	notChecked := ""
	if to.Pending > 0 {
		notChecked = fmt.Sprintf(", %d not checked (interrupted)", to.Pending)
	}
	fmt.Fprintf(&buf, "\n%d traces (%d checked now, %d from an earlier run%s), %d errors; %d events, %d models, %d distinct bugs in %s, %d violation instances; %s\n",
		to.Traces, to.Checked, to.Resumed, notChecked, to.Errors, to.Events, to.Models, to.Bugs, groupCount(to.Groups), to.Violations, to.Elapsed.Round(time.Millisecond))
	if c := s.Compare; c != nil {
		fmt.Fprintf(&buf, "\ncompared with %s: %d new%s, %d fixed, %d unchanged\n", c.Previous, len(c.New), failedCount(c.New), len(c.Fixed), c.Unchanged)
		for _, b := range c.New {
			fmt.Fprintf(&buf, "  new    %s %s (%s) at %s on %s in %s%s\n", b.ID, b.Pattern, b.PatternName, b.Location, strings.Join(b.Vars, ","), b.Trace, changeState(b))
		}
		for _, b := range c.Fixed {
			fmt.Fprintf(&buf, "  fixed  %s %s (%s) at %s on %s in %s%s\n", b.ID, b.Pattern, b.PatternName, b.Location, strings.Join(b.Vars, ","), b.Trace, changeState(b))
		}
		if len(c.Missing) > 0 {
			fmt.Fprintf(&buf, "  not in this batch: %s\n", strings.Join(c.Missing, ", "))
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// changeState is what a listed bug's line ends with: its reproduction
// state, e.g. " [failed]", " [not reproduced]"; "" without one.
func changeState(c BugChange) string {
	if c.Reproduction == "" {
		return ""
	}
	return " [" + strings.ReplaceAll(c.Reproduction, "_", " ") + "]"
}

// failedCount is " (n failed)" for the listed bugs whose directed run
// failed, "" for none.
func failedCount(cs []BugChange) string {
	n := 0
	for _, c := range cs {
		if c.Reproduction == bugs.StateFailed {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d failed)", n)
}

// groupCount is "1 group" or "n groups".
func groupCount(n int) string {
	if n == 1 {
		return "1 group"
	}
	return fmt.Sprintf("%d groups", n)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func writeJSONFile(path string, v any) error {
	return writeOutput(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// writeOutput writes a file atomically: an interrupted batch never leaves a
// half-written report or summary.
func writeOutput(path string, fn func(io.Writer) error) error {
	return atomicfile.Write(path, 0o644, fn)
}
