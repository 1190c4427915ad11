package sidetrack

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/bugs"
)

// Name is the analysis name of SideTrack (--analysis sidetrack).
const Name = "sidetrack"

// Result is the result of the analyzer: its errors, for analyses composed
// with it (the conflict-serializability check cross-references them).
type Result []Error

// TxnReports returns, for each transaction name (the function or label of
// an error's outermost transaction), the errors reported on it.
func (r Result) TxnReports() map[string][]string {
	out := map[string][]string{}
	for _, e := range r {
		out[e.Txn.Name] = append(out[e.Txn.Name], fmt.Sprintf("%s-error on lock %s", e.Kind, e.Var))
	}
	return out
}

// New returns SideTrack as an analysis of the framework: each Error is a
// finding of kind "before", "in" or "after" whose sites are the window's
// two acquires and the culprit's. The transactions are the result of tx
// (txn.New), which it requires. Its result is a Result.
func New(tx *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "atomicity of transactions (Enter/Exit, Begin/End): another thread's acquire that can run inside the window between two acquires of one lock by a transaction, with no false alarm",
		Paper:    "SideTrack: Generalizing Dynamic Atomicity Analysis, Yi, Sadowski and Flanagan, PADTAD 2009: §3 Figure 6, blame §4",
		Requires: []analysis.Requirement{analysis.CausalOrder, tx},
		Kinds: []bugs.FindingKind{
			{ID: Before, Name: "window before-error", Help: "A transaction acquires a lock twice; another thread's acquire of that lock, observed before the window, is concurrent with its first acquire and can run between the two: the transaction is not atomic in a feasible trace."},
			{ID: In, Name: "window in-error", Help: "Another thread acquired the lock between the transaction's two acquires of it in the recorded run: the transaction was not atomic."},
			{ID: After, Name: "window after-error", Help: "A transaction acquires a lock twice; another thread's acquire of that lock, observed after the window, is not ordered after its second acquire and can run between the two: the transaction is not atomic in a feasible trace."},
		},
		IDPrefix: "ST",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			errs, err := Check(ctx, pass.Model, txn.Of(pass, tx))
			if err != nil {
				return nil, err
			}
			for _, e := range errs {
				f := analysis.Finding{Kind: e.Kind, Objects: []string{e.Var}}
				f.Message = e.Message
				if len(e.Blame) > 0 {
					f.Message += fmt.Sprintf(" (blame: %s)", strings.Join(e.Blame, ", "))
				}
				if e.Count > 1 {
					f.Message += fmt.Sprintf(" [%d instances]", e.Count)
				}
				for _, r := range e.Events {
					ev, ok := pass.EventAtLine(r.Line)
					if !ok {
						return nil, fmt.Errorf("sidetrack: no event at trace line %d", r.Line)
					}
					f.Sites = append(f.Sites, analysis.Site{Event: ev, Role: r.Role, Essential: true})
				}
				f.Schedule = f.Sites
				pass.Report(f)
			}
			pass.Summarize("%d transaction errors", len(errs))
			return Result(errs), nil
		},
	}
}
