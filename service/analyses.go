package service

import (
	"context"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/analysis/mcpatom"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// jobAnalysis fills in the server's default list of analyses.
func (s *Server) jobAnalysis(jo JobOptions) JobOptions {
	if jo.Analysis == "" {
		jo.Analysis = s.cfg.Analysis
	}
	if jo.Analysis == "" {
		jo.Analysis = mcpatom.Name
	}
	return jo
}

// extraAnalyses returns the analyses of a job besides McPatom (whose models
// the service checks as work items); an unknown name is a
// *predict.UsageError.
func extraAnalyses(jo JobOptions, opts predict.Options) ([]*analysis.Analyzer, error) {
	as, err := all.Select(all.Options{MCPatom: opts}, jo.Analysis)
	if err != nil {
		return nil, &predict.UsageError{Msg: "analysis: " + err.Error()}
	}
	var out []*analysis.Analyzer
	for _, a := range as {
		if a.Name != mcpatom.Name {
			out = append(out, a)
		}
	}
	return out, nil
}

// withAnalyses runs the job's other analyses on the model and merges their
// findings into the assembled McPatom report *rep.
func withAnalyses(ctx context.Context, m *tracemodel.Model, jo JobOptions, opts predict.Options, rep **bugs.Report) error {
	extra, err := extraAnalyses(jo, opts)
	if err != nil || len(extra) == 0 {
		return err
	}
	base := *rep
	as := append([]*analysis.Analyzer{mcpatom.FromReport(base)}, extra...)
	merged, err := analysis.Run(ctx, m, as, analysis.Options{Version: opts.Version})
	if err != nil {
		return err
	}
	merged.Stats.Elapsed = base.Stats.Elapsed
	*rep = merged
	return nil
}
