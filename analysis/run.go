package analysis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Run runs the analyzers on the parsed trace m and merges what they found
// into one report. The models of the model-checked analyzers are checked
// first, all in one pass of opts.CheckModels, whose report is the base:
// its bugs come first and unchanged. Then every other analyzer runs, in
// order, after the analyzers it requires (each of which runs once, even
// when not in the list, without being reported); the findings of each
// become violations with stable ids (Analyzer.IDPrefix and a hash of the
// kind and the essential sites' locations), grouped into bugs by
// bugs.Dedupe and appended in analyzer order. Report.Analyses lists every
// analyzer of the list with its bug count and summary.
//
// When the context is cancelled, Run returns the report so far, marked
// Incomplete, with the error. Any other error ends the run with that error
// (wrapped with the analyzer's name) and no report; so does an analyzer
// that asked for a fact it does not require.
func Run(ctx context.Context, m *tracemodel.Model, analyzers []*Analyzer, opts Options) (*bugs.Report, error) {
	start := time.Now()
	order, err := plan(analyzers)
	if err != nil {
		return nil, err
	}
	var (
		rep    *bugs.Report
		runErr error
	)
	if models := ModelsOf(analyzers); len(models) > 0 {
		if opts.CheckModels == nil {
			return nil, errors.New("analysis: model-checked analyzers selected without Options.CheckModels")
		}
		rep, runErr = opts.CheckModels(ctx, m, models)
		switch {
		case runErr != nil && (ctx.Err() == nil || rep == nil):
			return nil, runErr
		case rep == nil:
			return nil, errors.New("analysis: CheckModels returned no report")
		}
	} else {
		rep = baseReport(m, opts)
	}
	checked := map[string]bugs.AnalysisRun{}
	for _, ar := range rep.Analyses {
		checked[ar.Name] = ar
	}
	selected := map[*Analyzer]bool{}
	for _, a := range analyzers {
		selected[a] = true
	}
	type done struct {
		findings []Finding
		summary  string
		elapsed  time.Duration
	}
	runs := map[*Analyzer]done{}
	results := map[*Analyzer]any{}
	fs := &facts{m: m}
	for _, a := range order {
		if runErr != nil {
			break
		}
		t0 := time.Now()
		pass := &Pass{Analyzer: a, Model: m, facts: fs, ResultOf: map[*Analyzer]any{}}
		for _, r := range a.Requires {
			switch r := r.(type) {
			case Fact:
				fs.get(r)
			case *Analyzer:
				pass.ResultOf[r] = results[r]
			}
		}
		res, err := a.Run(ctx, pass)
		if len(pass.undeclared) > 0 {
			return nil, fmt.Errorf("analysis %s: uses the fact %s without requiring it", a.Name, pass.undeclared[0])
		}
		results[a] = res
		if selected[a] {
			runs[a] = done{findings: pass.findings, summary: pass.summary, elapsed: time.Since(t0)}
		}
		if err != nil {
			if ctx.Err() == nil {
				return nil, fmt.Errorf("analysis %s: %w", a.Name, err)
			}
			runErr = err
		}
	}
	var analyses []bugs.AnalysisRun
	for _, a := range analyzers {
		ar := bugs.AnalysisRun{Name: a.Name, Doc: a.Doc, Paper: a.Paper, Kinds: a.Kinds}
		if a.Models != nil {
			c := checked[a.Name]
			ar.Bugs, ar.Summary, ar.ModelChecked = c.Bugs, c.Summary, true
			analyses = append(analyses, ar)
			continue
		}
		r, ok := runs[a]
		if !ok {
			continue // not run: interrupted before
		}
		ar.Summary, ar.Elapsed = r.summary, r.elapsed
		if len(r.findings) > 0 {
			pass := &Pass{Analyzer: a, Model: m, facts: fs}
			vs := make([]bugs.Violation, len(r.findings))
			for i, f := range r.findings {
				vs[i] = pass.violation(f)
			}
			bs := bugs.Dedupe(vs)
			off := len(rep.Violations)
			for i := range bs {
				for k := range bs[i].Instances {
					bs[i].Instances[k] += off
				}
			}
			rep.Violations = append(rep.Violations, vs...)
			rep.Bugs = append(rep.Bugs, bs...)
			ar.Bugs = len(bs)
		}
		analyses = append(analyses, ar)
	}
	rep.Analyses = analyses
	rep.SetReached(m.Reached)
	rep.SetContainers(m.Containers)
	predict.Annotate(m, rep)
	rep.Stats.Elapsed = max(rep.Stats.Elapsed, time.Since(start))
	if runErr != nil {
		rep.Incomplete = true
		return rep, runErr
	}
	return rep, nil
}

// plan validates the analyzers and orders those that run (not the
// model-checked ones): each after the analyzers it requires, each once.
func plan(analyzers []*Analyzer) ([]*Analyzer, error) {
	var order []*Analyzer
	state := map[*Analyzer]int{} // 1: visiting, 2: done
	var visit func(a *Analyzer) error
	visit = func(a *Analyzer) error {
		switch state[a] {
		case 1:
			return fmt.Errorf("analyzer %s: its requirements form a cycle", a.Name)
		case 2:
			return nil
		}
		if err := a.Validate(); err != nil {
			return err
		}
		state[a] = 1
		for _, r := range a.Requires {
			if r, ok := r.(*Analyzer); ok {
				if err := visit(r); err != nil {
					return err
				}
			}
		}
		state[a] = 2
		if a.Models == nil {
			order = append(order, a)
		}
		return nil
	}
	for _, a := range analyzers {
		if err := visit(a); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// baseReport is the report of a run without model-checked analyzers.
func baseReport(m *tracemodel.Model, opts Options) *bugs.Report {
	rep := &bugs.Report{
		Schema:     bugs.SchemaVersion,
		Tool:       bugs.Tool{Name: "mcpredict", Version: opts.Version},
		Trace:      m.Name,
		Skipped:    m.Skipped,
		Problems:   m.Problems,
		Warnings:   m.Warnings,
		Bugs:       []bugs.Bug{},
		Violations: []bugs.Violation{},
	}
	rep.Stats.Events = m.EventCount()
	rep.Stats.SpillBytes = m.Spill().DiskBytes
	rep.Stats.Threads = len(m.Threads)
	rep.Stats.SharedVars = len(m.SharedVars())
	return rep
}
