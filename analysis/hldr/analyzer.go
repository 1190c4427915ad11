package hldr

import (
	"context"
	"fmt"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/internal/flow"
	"github.com/mcpredict/mcpredict/bugs"
)

// Name is the analysis name (--analysis hldr).
const Name = "hldr"

// New returns the check of high-level data races as an analysis of the
// framework: each Race is a finding of kind "read" or "write" whose sites
// are the split thread's accesses in its two blocks and the other
// thread's in its one.
func New(opts Options) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "high-level data races: variables one thread accesses in one atomic block (critical section, Begin/End, --atomic function) that another thread reads, and combines, or writes in separate blocks (view consistency with read/write kinds and causal correlation)",
		Paper:    "Pessanha, Dias and Lourenço, Precise Detection of Atomicity Violations (HVC 2012): §5.1, Definitions 5-9; view consistency of Artho, Havelund and Biere",
		Requires: []analysis.Requirement{analysis.CausalOrder},
		Kinds: []bugs.FindingKind{
			{ID: KindRead, Name: "split read of an atomic update", Help: "A thread writes some variables in one atomic block; another thread reads them in separate atomic blocks and combines the values (a common write, branch or returned value): between its blocks the writer's block can run, and it sees values of two different updates."},
			{ID: KindWrite, Name: "split update of an atomic read", Help: "A thread reads some variables in one atomic block; another thread writes them in separate atomic blocks: the reader's block can run between them and see the update half done."},
		},
		IDPrefix: "HL",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			res, err := Check(ctx, pass.Model, pass.Order(), opts)
			if err != nil {
				return nil, err
			}
			for _, r := range res.Races {
				f := analysis.Finding{Kind: r.Kind, Objects: r.Vars, Message: r.Message}
				if r.Count > 1 {
					f.Message += fmt.Sprintf(" [%d instances]", r.Count)
				}
				same := func(role string) string { return role }
				if f.Sites, err = flow.Sites(pass, Name, r.Events, same); err != nil {
					return nil, err
				}
				if f.Schedule, err = flow.Sites(pass, Name, r.Schedule, same); err != nil {
					return nil, err
				}
				pass.Report(f)
			}
			pass.Summarize("%s", res.Summary())
			return nil, nil
		},
	}
}
