package service

import (
	"context"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// resolve turns a job's options into those of its run: the job's list of
// analyses (the server's default, Config.Analysis, when it names none),
// Config.Resolve's options and analyzers, and the models of the
// model-checked analyzers among them (analysis.ModelsOf), which the job
// distributes as work items.
func (s *Server) resolve(jo JobOptions) (predict.Options, []*analysis.Analyzer, error) {
	if jo.Analysis == "" {
		jo.Analysis = s.cfg.Analysis
	}
	opts, as, err := s.cfg.Resolve(jo)
	if err != nil {
		return opts, nil, err
	}
	opts.Models = analysis.ModelsOf(as)
	return opts, as, nil
}

// analyze runs the job's analyzers on its model with analysis.Run, as
// `mcpredict run` does, except for how the models of the model-checked
// ones are checked: they were planned with the same options (resolve) and
// checked by the workers, so the check function of the run lets Spin
// confirm one model per distinct bug (predict.ConfirmBugs, here rather
// than in the workers: only the complete results tell which models
// represent a bug) and assembles the results with predict.Assemble.
func analyze(ctx context.Context, m *tracemodel.Model, as []*analysis.Analyzer, opts predict.Options, tasks []predict.Task, results []predict.PairResult) (*bugs.Report, error) {
	// models are analysis.ModelsOf(as): opts.Models (resolve), which
	// planned the tasks.
	check := func(ctx context.Context, m *tracemodel.Model, _ []predict.Models) (*bugs.Report, error) {
		if err := predict.ConfirmBugs(ctx, m, opts, tasks, results); err != nil {
			return nil, err
		}
		return predict.Assemble(m, opts, tasks, results), nil
	}
	return analysis.Run(ctx, m, as, analysis.Options{Version: opts.Version, CheckModels: check})
}
