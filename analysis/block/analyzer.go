package block

import (
	"context"
	"fmt"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/bugs"
)

// Name is the analysis name of the block-based checker (--analysis block).
const Name = "block"

// New returns the block-based checker as an analysis of the framework:
// each Violation is a finding of kind "view", "conflict" or "view-2v" whose
// sites are its events (the block's accesses and the other thread's). The
// transactions are the result of tx (txn.New), which it requires:
// opts.Atomic and opts.NotAtomic, which select them for Analyze, are not
// used.
func New(opts Options, tx *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "atomicity of transactions (Enter/Exit, Begin/End, critical sections): pairs of a transaction's accesses that a concurrent access of another thread makes unserializable, on one variable or two",
		Paper:    "L. Wang, Analysis of Synchronization Errors for Multithreaded Programs (dissertation, Stony Brook, 2006): ch. 5, block-based algorithm, Theorems 5.1.1 and 5.2.1",
		Requires: []analysis.Requirement{analysis.CausalOrder, tx},
		Kinds: []bugs.FindingKind{
			{ID: View, Name: "view-unserializable block", Help: "Two accesses of a transaction to one variable and another thread's access between them give a result no serial order gives (the read sees another value, or the final value is not the transaction's)."},
			{ID: Conflict, Name: "conflict-unserializable block", Help: "Two accesses of a transaction to one variable and another thread's conflicting access between them cannot be reordered into a serial execution (view-serializable, but not conflict-serializable)."},
			{ID: View2v, Name: "view-unserializable pair of blocks", Help: "Two transactions touch two variables in orders that no serial execution gives: one runs first on one variable, the other first on the other."},
		},
		IDPrefix: "BA",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			vs, err := Check(ctx, pass.Model, txn.Of(pass, tx), opts)
			if err != nil {
				return nil, err
			}
			for _, v := range vs {
				f := analysis.Finding{Kind: v.Kind, Objects: []string{v.Var}, Message: v.Message}
				if v.Var2 != "" {
					f.Objects = append(f.Objects, v.Var2)
				}
				if v.Count > 1 {
					f.Message += fmt.Sprintf(" [%d instances]", v.Count)
				}
				for _, r := range v.Events {
					ev, ok := pass.EventAtLine(r.Line)
					if !ok {
						return nil, fmt.Errorf("block: no event at trace line %d", r.Line)
					}
					f.Sites = append(f.Sites, analysis.Site{Event: ev, Role: r.Role, Essential: true})
				}
				f.Schedule = f.Sites
				pass.Report(f)
			}
			pass.Summarize("%d unserializable blocks", len(vs))
			return nil, nil
		},
	}
}
