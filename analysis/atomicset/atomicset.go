// Package atomicset is the analysis of atomic sets as a model-checked
// analyzer of package analysis: the models of every (atomic set of two
// variables, thread pair), checked with the two-variable patterns (M1..M6
// and the user's). An atomic set is a pair of variables that belong
// together — bounds, a pointer and its length, two balances with a fixed
// sum — as in Vaziri, Tip and Dolby, "Associating synchronization
// constraints with data in an object-oriented language" (POPL 2006), whose
// other five scenarios are McPatom's P1..P5; sets are inferred from the
// accesses one thread makes to both in one region, as in MUVI (Lu et al.,
// SOSP 2007), or declared (predict.Options.Sets).
//
// Like package mcpatom it declares its models and runs nothing itself:
// package analysis has them checked by package predict in the same pass as
// McPatom's. Its bugs are AV-… ids hashed from the pattern family (M1 and
// M2 are one bug), listing both variables, x of the pattern first.
package atomicset

import (
	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
)

// Name is the analyzer's name.
const Name = "atomicset"

// New returns the analyzer of atomic sets. It checks the patterns of pats
// over two variables; nil: the built-in M1..M6.
func New(pats []ltl.Pattern) *analysis.Analyzer {
	spec := analysis.NewModelSpec(predict.SetModels, pats)
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "atomicity violations of atomic sets: the six two-variable unserializable patterns of every (pair of variables that belong together, thread pair), model-checked with Spin or natively",
		Paper:    "Vaziri, Tip and Dolby, POPL 2006 (the six two-variable scenarios); sets inferred by access correlation as in MUVI, Lu et al., SOSP 2007",
		Kinds:    analysis.PatternKinds(spec.Patterns),
		IDPrefix: "AV",
		Models:   spec,
	}
}
