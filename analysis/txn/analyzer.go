package txn

import (
	"context"

	"github.com/mcpredict/mcpredict/analysis"
)

// New returns the analyzer whose result is the transactions of the trace
// selected by opts (a *Set, from Extract): the analyses of transactions
// (sidetrack, block) require it, so that the transactions are extracted
// once per run. It reports no findings and is not selectable by itself.
func New(opts Options) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:  "transactions",
		Doc:   "the transactions of the trace: Begin/End labels or Enter/Exit invocations, selected by --atomic and --not-atomic (no findings; a result for the analyses of transactions)",
		Paper: "SideTrack (Yi, Sadowski and Flanagan, PADTAD 2009) §2 and L. Wang, Analysis of Synchronization Errors for Multithreaded Programs (dissertation, Stony Brook, 2006) §2, §7.2: every method is atomic unless said otherwise",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			return Extract(ctx, pass.Model, opts)
		},
	}
}

// Of returns the transactions that the analyzer tx (built by New) found,
// as the pass of an analyzer requiring it holds them.
func Of(pass *analysis.Pass, tx *analysis.Analyzer) *Set {
	s, _ := pass.ResultOf[tx].(*Set)
	return s
}
