// Package all is the registry of mcpredict's analyses: every analysis that
// drivers (`mcpredict run`, batch, serve, worker) select by name, with its
// options. It is the only package besides each analysis's own that names
// them.
package all

import (
	"slices"
	"strings"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/atomicset"
	"github.com/mcpredict/mcpredict/analysis/block"
	"github.com/mcpredict/mcpredict/analysis/commitnode"
	"github.com/mcpredict/mcpredict/analysis/conflict"
	"github.com/mcpredict/mcpredict/analysis/deadlock"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/hldr"
	"github.com/mcpredict/mcpredict/analysis/lockset"
	"github.com/mcpredict/mcpredict/analysis/mcpatom"
	"github.com/mcpredict/mcpredict/analysis/reduction"
	"github.com/mcpredict/mcpredict/analysis/sidetrack"
	"github.com/mcpredict/mcpredict/analysis/stale"
	"github.com/mcpredict/mcpredict/analysis/svd"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/ltl"
)

// Default is the analyses run when none are named.
const Default = "mcpatom,atomicset,deadlock"

// Options are the options of every analysis.
type Options struct {
	// Patterns are the patterns of the model-checked analyses (--patterns,
	// --pattern): each checks those of its kind of models; nil: each its
	// built-in ones.
	Patterns []ltl.Pattern
	// AtomicSets selects the analysis of atomic sets besides the list (the
	// shorthands --atomic-sets, --atomic-set and --set-partners); a
	// two-variable pattern among Patterns selects it too.
	AtomicSets bool
	Deadlock   deadlock.Options
	// Transactions select the transactions of sidetrack and block.
	Transactions txn.Options
	// Block's Atomic and NotAtomic are not used (Transactions are).
	Block block.Options
	// ValueFlow is the value-flow mode of svd, hldr and stale
	// (--value-flow: statement, update or invocation; "": update).
	ValueFlow string
	// Lockset is the race detector of lockset and reduction.
	Lockset    lockset.Options
	CommitNode commitnode.Options
	Conflict   conflict.Options
}

// Analyzers returns every analysis, in report order, configured with o.
func Analyzers(o Options) []*analysis.Analyzer {
	tx := txn.New(o.Transactions)
	st := sidetrack.New(tx)
	esc := escape.New()
	ls := lockset.New(o.Lockset, esc)
	return []*analysis.Analyzer{
		mcpatom.New(o.Patterns),
		atomicset.New(o.Patterns),
		deadlock.New(o.Deadlock),
		st,
		block.New(o.Block, tx),
		conflict.NewWith(o.Conflict, tx, st), // composed with SideTrack: same transactions, cross-referenced findings
		svd.New(svd.Options{ValueFlow: o.ValueFlow}),
		hldr.New(hldr.Options{Atomic: o.Transactions.Atomic, ValueFlow: o.ValueFlow}),
		stale.New(stale.Options{Atomic: o.Transactions.Atomic, ValueFlow: o.ValueFlow}),
		ls,
		reduction.New(tx, ls, esc),
		commitnode.New(o.CommitNode, tx, esc),
	}
}

// Select returns the analyzers named by list (comma-separated names, "all",
// or "" for Default), with atomicset added when the options ask for atomic
// sets; an unknown name is an error listing the known ones.
func Select(o Options, list string) ([]*analysis.Analyzer, error) {
	as := Analyzers(o)
	if o.AtomicSets || slices.ContainsFunc(o.Patterns, ltl.Pattern.TwoVariable) {
		if strings.TrimSpace(list) == "" {
			list = Default
		}
		list += "," + atomicset.Name
	}
	return analysis.Select(as, list, Default)
}
