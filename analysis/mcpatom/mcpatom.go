// Package mcpatom is the McPatom analysis (Zeng et al. 2012) as an
// analysis of package analysis: it runs the whole model-checking pipeline
// of package predict on the trace and hands its report over unchanged, so
// that McPatom's results, bug ids and report are those of predict.Run.
package mcpatom

import (
	"context"
	"fmt"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
)

// Name is the analyzer's name.
const Name = "mcpatom"

// New returns the McPatom analyzer with the options of predict.Run.
func New(opts predict.Options) *analysis.Analyzer {
	pats := opts.Patterns
	if len(pats) == 0 {
		pats = ltl.Builtin()
		if opts.AtomicSets {
			pats = ltl.AllBuiltin()
		}
	}
	kinds := make([]bugs.FindingKind, 0, len(pats))
	for _, p := range pats {
		kinds = append(kinds, bugs.FindingKind{ID: p.ID, Name: p.Name, Help: p.Help})
	}
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "atomicity violations: the five unserializable patterns of every (shared variable, thread pair), model-checked with Spin or natively",
		Paper:    "McPatom, Zeng et al. 2012 (seeds/002): §2-4",
		Requires: []analysis.Fact{analysis.CausalOrder},
		Kinds:    kinds,
		IDPrefix: "AV",
		Run: func(ctx context.Context, pass *analysis.Pass) error {
			rep, err := predict.Run(ctx, pass.Model, opts)
			if rep != nil {
				pass.SetReport(rep)
				pass.Summarize("%d models, %d claims", rep.Stats.Models, rep.Stats.Claims)
			}
			if err != nil {
				return fmt.Errorf("%w", err)
			}
			return nil
		},
	}
}

// FromReport returns the McPatom analyzer whose report was already made
// (by the service, which checks McPatom's models as separate work items
// and assembles them with predict.Assemble): Run hands rep over as is.
func FromReport(rep *bugs.Report) *analysis.Analyzer {
	a := New(predict.Options{})
	a.Run = func(_ context.Context, pass *analysis.Pass) error {
		pass.SetReport(rep)
		pass.Summarize("%d models, %d claims", rep.Stats.Models, rep.Stats.Claims)
		return nil
	}
	return a
}
