package stale

import (
	"context"
	"fmt"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/internal/flow"
	"github.com/mcpredict/mcpredict/bugs"
)

// Name is the analysis name (--analysis stale).
const Name = "stale"

// New returns the check of stale-value errors as an analysis of the
// framework: each Error is a finding of kind "update" or "use" whose
// sites are the read, the later block's write and the other thread's
// write.
func New(opts Options) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "stale-value errors: a value read in one atomic block (critical section, Begin/End, --atomic function) and used by a write in a later block of the same thread, while another thread can write the variable in between",
		Paper:    "Pessanha, Dias and Lourenço, Precise Detection of Atomicity Violations (HVC 2012): §5.2, Definitions 10-11",
		Requires: []analysis.Requirement{analysis.CausalOrder},
		Kinds: []bugs.FindingKind{
			{ID: KindUpdate, Name: "stale value written back", Help: "A thread reads a variable in one atomic block and writes a value computed from it back in a later block; another thread's write of the variable can fall in between and is lost."},
			{ID: KindUse, Name: "stale value used", Help: "A thread reads a variable in one atomic block and computes the write of another variable from it in a later block; another thread's write of the first variable can fall in between, and the result is computed from an outdated value."},
		},
		IDPrefix: "SA",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			res, err := Check(ctx, pass.Model, pass.Order(), opts)
			if err != nil {
				return nil, err
			}
			for _, e := range res.Errors {
				f := analysis.Finding{Kind: e.Kind, Objects: []string{e.Var}, Message: e.Message, Occurred: e.Occurred}
				if e.Written != e.Var {
					f.Objects = append(f.Objects, e.Written)
				}
				if e.Count > 1 {
					f.Message += fmt.Sprintf(" [%d instances]", e.Count)
				}
				if f.Sites, err = flow.Sites(pass, Name, e.Events, flow.LocalOrRemote); err != nil {
					return nil, err
				}
				if f.Schedule, err = flow.Sites(pass, Name, e.Schedule, flow.LocalOrRemote); err != nil {
					return nil, err
				}
				pass.Report(f)
			}
			pass.Summarize("%s", res.Summary())
			return nil, nil
		},
	}
}
