package analysis

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Run runs the analyzers on the parsed trace m, in order, and merges their
// findings into one report: the report an analyzer handed over with
// Pass.SetReport (McPatom's) is the base, with its bugs first and
// unchanged; the findings of each other analyzer become violations with
// stable ids (Analyzer.IDPrefix and a hash of the kind and the essential
// sites' locations), grouped into bugs by bugs.Dedupe, appended in analyzer
// order. Report.Analyses lists every analyzer with its bug count and
// summary.
//
// When the context is cancelled, Run returns the report so far, marked
// Incomplete, with the error. Any other error of an analyzer ends the run
// with that error (wrapped with the analyzer's name) and no report.
func Run(ctx context.Context, m *tracemodel.Model, analyzers []*Analyzer, opts Options) (*bugs.Report, error) {
	start := time.Now()
	fs := &facts{m: m}
	var base *bugs.Report
	type done struct {
		a        *Analyzer
		findings []Finding
		summary  string
		elapsed  time.Duration
	}
	var runs []done
	var runErr error
	for _, a := range analyzers {
		if err := a.Validate(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		for _, f := range a.Requires {
			fs.get(f)
		}
		pass := &Pass{Analyzer: a, Model: m, facts: fs}
		err := a.Run(ctx, pass)
		if pass.report != nil {
			if base != nil {
				return nil, fmt.Errorf("analysis %s: a second analysis handed over a whole report", a.Name)
			}
			base = pass.report
		}
		runs = append(runs, done{a: a, findings: pass.findings, summary: pass.summary, elapsed: time.Since(t0)})
		if err != nil {
			if ctx.Err() == nil {
				return nil, fmt.Errorf("analysis %s: %w", a.Name, err)
			}
			runErr = err
			break
		}
	}
	rep := base
	if rep == nil {
		rep = baseReport(m, opts)
	}
	for _, r := range runs {
		ar := bugs.AnalysisRun{Name: r.a.Name, Doc: r.a.Doc, Paper: r.a.Paper, Kinds: r.a.Kinds,
			Summary: r.summary, Elapsed: r.elapsed}
		if rep == base && r.findings == nil && base != nil && r.a.Name == "mcpatom" {
			ar.Bugs = len(base.Bugs)
		}
		if len(r.findings) > 0 {
			pass := &Pass{Analyzer: r.a, Model: m, facts: fs}
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
		rep.Analyses = append(rep.Analyses, ar)
	}
	rep.SetReached(m.Reached)
	if base == nil {
		rep.Stats.Elapsed = time.Since(start)
	} else {
		rep.Stats.Elapsed = max(rep.Stats.Elapsed, time.Since(start))
	}
	if runErr != nil {
		rep.Incomplete = true
		return rep, runErr
	}
	return rep, nil
}

// baseReport is the report of a run without McPatom.
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
	rep.Stats.Threads = len(m.Threads)
	rep.Stats.SharedVars = len(m.SharedVars())
	return rep
}
