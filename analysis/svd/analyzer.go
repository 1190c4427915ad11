package svd

import (
	"context"
	"fmt"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/internal/flow"
	"github.com/mcpredict/mcpredict/bugs"
)

// Name is the analysis name (--analysis svd).
const Name = "svd"

// New returns SVD as an analysis of the framework: each Violation is a
// finding of kind "remote-write" or "remote-read" that occurred in the
// recorded run, whose sites are the computational unit's read of its
// input, the other thread's access and the unit's dependent write. The
// result (for analyzers that would require it) is the *Result, with the
// a-posteriori log.
func New(opts Options) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:  Name,
		Doc:   "serializability violations that happened in the recorded run: computational units inferred from dependences (no annotations, locks ignored) whose input another thread accessed before the unit's dependent write (strict two-phase locking)",
		Paper: "SVD: A Serializability Violation Detector for Shared-Memory Server Programs, Xu, Bodík and Hill, PLDI 2005: §3 (CUs, region hypothesis, strict 2PL), §4.2 online algorithm (Fig. 7, 8), §2.3 a-posteriori log",
		Kinds: []bugs.FindingKind{
			{ID: KindRemoteWrite, Name: "computational unit input overwritten", Help: "A computational unit (a computation inferred from the thread's dependences) read a variable; another thread wrote it before the unit wrote a value that depends on that read: the unit did not run serializably in the recorded run (strict two-phase locking violated on its input)."},
			{ID: KindRemoteRead, Name: "computational unit intermediate value read", Help: "A computational unit read and wrote a variable; another thread read it before the unit's later write that depends on its first read: the other thread saw an intermediate value of the unit in the recorded run."},
		},
		IDPrefix: "SV",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			res, err := Check(ctx, pass.Model, opts)
			if err != nil {
				return nil, err
			}
			for _, v := range res.Violations {
				f := analysis.Finding{Kind: v.Kind, Objects: []string{v.Var}, Message: v.Message, Occurred: true}
				if v.Written != v.Var {
					f.Objects = append(f.Objects, v.Written)
				}
				if v.Count > 1 {
					f.Message += fmt.Sprintf(" [%d instances]", v.Count)
				}
				if f.Sites, err = flow.Sites(pass, Name, v.Events, flow.LocalOrRemote); err != nil {
					return nil, err
				}
				pass.Report(f)
			}
			pass.Summarize("%s", res.Summary())
			return res, nil
		},
	}
}
