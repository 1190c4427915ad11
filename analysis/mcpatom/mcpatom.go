// Package mcpatom is the McPatom analysis (Zeng et al. 2012) as a
// model-checked analyzer of package analysis: the models of every (shared
// variable, thread pair), checked with the single-variable patterns
// (P1..P5 and the user's). It declares its models and runs nothing itself:
// package analysis has them checked by package predict together with the
// models of the other model-checked analyzers, so that McPatom's results,
// bug ids (AV-…) and report are those of predict.
package mcpatom

import (
	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
)

// Name is the analyzer's name.
const Name = "mcpatom"

// New returns the McPatom analyzer. It checks the patterns of pats that
// apply to one variable; nil: the built-in P1..P5.
func New(pats []ltl.Pattern) *analysis.Analyzer {
	spec := analysis.NewModelSpec(predict.VariableModels, pats)
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "atomicity violations: the five unserializable patterns of every (shared variable, thread pair), model-checked with Spin or natively",
		Paper:    "McPatom: A Predictive Analysis Tool for Atomicity Violation using Model Checking, Zeng, Sun, Liu and He, SPIN 2012: §2-4",
		Kinds:    analysis.PatternKinds(spec.Patterns),
		IDPrefix: "AV",
		Models:   spec,
	}
}
