// Package predict runs the whole McPatom pipeline on a parsed trace: it plans
// the (shared variable, thread pair) models, projects each one, decides every
// claim (natively, with Spin, or both), and collects the violations into a
// report.
//
// It is the library behind `mcpredict run`, the batch command and the
// service; it does not parse command lines or render output.
package predict

import (
	"context"
	"errors"
	"fmt"
	"path"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/cache"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Engine selects how claims are decided.
type Engine string

// The engines.
const (
	// EngineAuto decides every claim with the native search and sends only
	// models with a violation to Spin, which confirms it and gives the trail.
	EngineAuto Engine = "auto"
	// EngineSpin sends every model to Spin, as the paper does.
	EngineSpin Engine = "spin"
	// EngineNative never runs Spin.
	EngineNative Engine = "native"
)

// ParseEngine checks an engine name.
func ParseEngine(s string) (Engine, error) {
	switch e := Engine(s); e {
	case EngineAuto, EngineSpin, EngineNative:
		return e, nil
	}
	return "", fmt.Errorf("unknown engine %q: want auto, spin or native", s)
}

// Options configure a run.
type Options struct {
	Vars     []string      // variable names or path.Match globs; empty = all shared variables
	Threads  []string      // thread handles: one = pairs with it, several = pairs within them; empty = all
	Patterns []ltl.Pattern // default: ltl.Builtin()
	Project  tracemodel.ProjectOptions
	Engine   Engine // default EngineAuto
	Jobs     int    // models checked at once; default number of CPUs
	Spin     spinrunner.Options
	Tools    spinrunner.Tools // needed unless Engine is native
	Cache    *cache.Dir       // optional verdict cache
	// MaxInstances bounds the instances listed per claim of a model
	// (native.Checker.Instances); 0 means native.DefaultMaxInstances.
	MaxInstances int
	Version      string // tool version written into the report
	// Progress, if set, is called (serially) after each model.
	Progress func(Progress)
}

// Progress is the state of a run.
type Progress struct {
	Done, Total int
	Violations  int
	Started     time.Time
}

// Task is one (variable, thread pair) model to check.
type Task struct {
	Var     int    // variable id in the trace model
	VarName string // its name
	T1, T2  int    // model thread ids, T1 < T2
}

// UsageError is an option that does not fit the trace (an unknown variable
// or thread): the user's mistake, exit status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Plan lists the models of a trace that the options select.
func Plan(m *tracemodel.Model, opts Options) ([]Task, error) {
	shared := m.SharedVars()
	for _, pat := range opts.Vars {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("--vars: bad pattern %q: %v", pat, err)}
		}
		found := false
		for _, sv := range shared {
			if ok, _ := path.Match(pat, sv.Name); ok {
				found = true
				break
			}
		}
		if !found {
			msg := fmt.Sprintf("--vars: no shared variable matches %q in %s", pat, m.Name)
			if v := m.VarByName(pat); v != 0 {
				msg += " (it is accessed, but not by two threads with a write, or it is a synchronization object)"
			}
			return nil, &UsageError{Msg: msg}
		}
	}
	want := map[int]bool{}
	for _, h := range opts.Threads {
		id := m.ThreadByHandle(h)
		if id == 0 {
			return nil, &UsageError{Msg: fmt.Sprintf("--threads: no thread %q in %s", h, m.Name)}
		}
		want[id] = true
	}
	var tasks []Task
	for _, sv := range shared {
		if len(opts.Vars) > 0 {
			ok := false
			for _, pat := range opts.Vars {
				if match, _ := path.Match(pat, sv.Name); match {
					ok = true
				}
			}
			if !ok {
				continue
			}
		}
		for _, p := range sv.Pairs {
			switch {
			case len(want) == 1 && !want[p[0]] && !want[p[1]]:
				continue
			case len(want) > 1 && !(want[p[0]] && want[p[1]]):
				continue
			}
			tasks = append(tasks, Task{Var: sv.Var, VarName: sv.Name, T1: p[0], T2: p[1]})
		}
	}
	return tasks, nil
}

// Claims returns the claims of a model for the patterns: each pattern in
// both views, local thread 1 then 2.
func Claims(pats []ltl.Pattern) []promela.Claim {
	var cs []promela.Claim
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			cs = append(cs, promela.Claim{
				Name:    p.ClaimName(local),
				Formula: p.Formula(local),
				Comment: fmt.Sprintf("%s %s, local thread t%d: %s", p.ID, p.Name, local, p.Source),
			})
		}
	}
	return cs
}

// claimOf finds the pattern and view of a claim name.
func claimOf(pats []ltl.Pattern, name string) (ltl.Pattern, int, bool) {
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			if p.ClaimName(local) == name {
				return p, local, true
			}
		}
	}
	return ltl.Pattern{}, 0, false
}

func (o *Options) defaults() {
	if len(o.Patterns) == 0 {
		o.Patterns = ltl.Builtin()
	}
	if o.Engine == "" {
		o.Engine = EngineAuto
	}
	if o.Jobs <= 0 {
		o.Jobs = o.Spin.Jobs
	}
	if o.MaxInstances <= 0 {
		o.MaxInstances = native.DefaultMaxInstances
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	o.Spin.Jobs = o.Jobs
}

// Run checks every selected model of the trace and returns the report. A
// tool failure (Spin, gcc, a disagreement between the native search and
// Spin) is an error; violations are not.
func Run(ctx context.Context, m *tracemodel.Model, opts Options) (*bugs.Report, error) {
	start := time.Now()
	opts.defaults()
	tasks, err := Plan(m, opts)
	if err != nil {
		return nil, err
	}
	checker := NewChecker(opts)
	proj := newProjector(m, opts.Project, opts.Patterns, tasks)
	results := make([]PairResult, len(tasks))
	var (
		mu   sync.Mutex
		prog = Progress{Total: len(tasks), Started: start}
	)
	done := make([]bool, len(tasks))
	err = forEach(ctx, len(tasks), opts.Jobs, func(ctx context.Context, i int) error {
		t := tasks[i]
		pm, holds, err := proj.project(ctx, t)
		var res PairResult
		switch {
		case err != nil:
		case holds && opts.Engine != EngineSpin:
			// Decided by the projector's native search: no claim is
			// violated, and the native verdict is the engine's.
			res = PairResult{Claims: 2 * len(opts.Patterns)}
		default:
			res, err = checker.Check(ctx, pm)
		}
		if err != nil {
			u, ok := undecided(ctx, m, t, err)
			if !ok {
				return err
			}
			res = PairResult{Undecided: u}
		}
		mu.Lock()
		defer mu.Unlock()
		results[i] = res
		done[i] = true
		prog.Done++
		prog.Violations += len(res.Violations)
		if opts.Progress != nil {
			opts.Progress(prog)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			return nil, err
		}
		// Interrupted: the report of the models checked so far.
		var got []PairResult
		for i, d := range done {
			if d {
				got = append(got, results[i])
			}
		}
		rep := Assemble(m, opts, got)
		rep.Incomplete = true
		rep.Stats.Elapsed = time.Since(start)
		return rep, fmt.Errorf("interrupted after %d of %d models: %w", len(got), len(tasks), ctx.Err())
	}
	rep := Assemble(m, opts, results)
	rep.Stats.Elapsed = time.Since(start)
	return rep, nil
}

// undecided turns a model's failure into an undecided entry when it is a
// limit of the model (states, time, memory), not of the run or the tools.
func undecided(ctx context.Context, m *tracemodel.Model, t Task, err error) (*bugs.Undecided, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	u := &bugs.Undecided{Var: t.VarName, Threads: [2]string{m.Threads[t.T1-1].Handle, m.Threads[t.T2-1].Handle}, Reason: err.Error()}
	var tooLarge *native.TooLargeError
	var timeout *spinrunner.TimeoutError
	switch {
	case errors.As(err, &tooLarge):
		u.Hint = "use --engine auto or spin, or leave the variable out with --vars"
	case errors.As(err, &timeout):
		u.Hint = "raise --timeout"
	case errors.Is(err, spinrunner.ErrMemoryLimit):
		u.Hint = "raise --memory"
	default:
		return nil, false
	}
	return u, true
}

// Assemble builds the report of a trace from the results of its tasks (in
// any order; violations are sorted). Elapsed is left to the caller.
func Assemble(m *tracemodel.Model, opts Options, results []PairResult) *bugs.Report {
	opts.defaults()
	rep := &bugs.Report{
		Schema:    bugs.SchemaVersion,
		Tool:      bugs.Tool{Name: "mcpredict", Version: opts.Version, Engine: string(opts.Engine)},
		Semantics: opts.Project.String(),
		Trace:     m.Name,
		Skipped:   m.Skipped,
		Problems:  m.Problems,
		Warnings:  m.Warnings,
	}
	rep.Stats.Events = m.EventCount()
	rep.Stats.Threads = len(m.Threads)
	rep.Stats.SharedVars = len(m.SharedVars())
	for _, p := range opts.Patterns {
		rep.Stats.Patterns = append(rep.Stats.Patterns, p.ID)
	}
	for _, r := range results {
		if r.Undecided != nil {
			rep.Undecided = append(rep.Undecided, *r.Undecided)
		}
		rep.Violations = append(rep.Violations, r.Violations...)
		rep.Stats.Claims += r.Claims
		if r.Spin {
			rep.Stats.SpinModels++
		}
		if r.Cached {
			rep.Stats.CacheHits++
		}
	}
	rep.Stats.Models = len(results)
	sortViolations(rep.Violations)
	rep.Bugs = bugs.Dedupe(rep.Violations)
	if rep.Violations == nil {
		rep.Violations = []bugs.Violation{}
	}
	if rep.Bugs == nil {
		rep.Bugs = []bugs.Bug{}
	}
	return rep
}

// sortViolations orders violations deterministically whatever the order in
// which workers finished.
func sortViolations(vs []bugs.Violation) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Var != b.Var {
			return a.Var < b.Var
		}
		if a.Local.ID != b.Local.ID {
			return a.Local.ID < b.Local.ID
		}
		if a.Remote.ID != b.Remote.ID {
			return a.Remote.ID < b.Remote.ID
		}
		return a.Claim < b.Claim
	})
}
