package predict

import (
	"context"
	"fmt"
	"strings"

	"github.com/sourcegraph/conc/pool"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// PairResult is the outcome of checking one PairModel.
type PairResult struct {
	Violations []bugs.Violation
	Claims     int  // claims decided
	Spin       bool // Spin was run on the model
	Cached     bool // the verdicts came from the cache
}

// DisagreementError is raised when the native search and Spin disagree on a
// claim: an internal error that must never be resolved silently.
type DisagreementError struct {
	Model, Claim string
	Native, Spin bool
}

func (e *DisagreementError) Error() string {
	return fmt.Sprintf("internal error: model %s claim %s: native search says violated=%v, Spin says violated=%v (please report this with the trace and `mcpredict model` output)",
		e.Model, e.Claim, e.Native, e.Spin)
}

// Checker checks PairModels with the configured engine. It is safe for
// concurrent use.
type Checker struct {
	opts   Options
	runner *spinrunner.Runner
	claims []promela.Claim
}

// NewChecker returns a Checker for the options (defaults applied).
func NewChecker(opts Options) *Checker {
	opts.defaults()
	// Each Check runs one model; parallelism comes from the caller.
	so := opts.Spin
	so.Jobs = 1
	return &Checker{opts: opts, runner: spinrunner.New(opts.Tools, so), claims: Claims(opts.Patterns)}
}

// ModelName names a PairModel in messages.
func ModelName(pm *tracemodel.PairModel) string {
	return fmt.Sprintf("%s threads %s,%s", pm.Var, pm.Threads[0].Handle, pm.Threads[1].Handle)
}

// Check decides every claim of pm and returns its violations.
func (c *Checker) Check(ctx context.Context, pm *tracemodel.PairModel) (PairResult, error) {
	res := PairResult{Claims: len(c.claims)}
	var nativeV []native.Verdict
	if c.opts.Engine != EngineSpin {
		var err error
		nativeV, err = c.native(ctx, pm)
		if err != nil {
			return res, err
		}
		any := false
		for _, v := range nativeV {
			any = any || v.Violated
		}
		if c.opts.Engine == EngineNative || !any {
			for _, v := range nativeV {
				if v.Violated {
					viol, err := bugs.FromWitness(pm, v.Pattern, v.Local, v.Witness, "native")
					if err != nil {
						return res, err
					}
					res.Violations = append(res.Violations, viol)
				}
			}
			return res, nil
		}
	}
	res.Spin = true
	viols, verdicts, err := c.spin(ctx, pm)
	if err != nil {
		return res, err
	}
	if nativeV != nil {
		for i, v := range nativeV {
			if v.Violated != verdicts[i] {
				return res, &DisagreementError{Model: ModelName(pm), Claim: v.Claim(), Native: v.Violated, Spin: verdicts[i]}
			}
		}
	}
	res.Violations = viols
	return res, nil
}

// native decides all claims with the native search, skipping those whose
// necessary conditions fail.
func (c *Checker) native(ctx context.Context, pm *tracemodel.PairModel) ([]native.Verdict, error) {
	nc := native.New(pm)
	var out []native.Verdict
	for _, p := range c.opts.Patterns {
		for local := 1; local <= 2; local++ {
			v, err := nc.Check(ctx, p, local)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// spin checks pm with Spin; it returns the violations and the verdict of
// each claim in Claims order.
func (c *Checker) spin(ctx context.Context, pm *tracemodel.PairModel) ([]bugs.Violation, []bool, error) {
	prog := promela.Emit(pm, c.claims)
	name := ModelName(pm)
	r, err := c.runner.Check(ctx, spinrunner.Model{Name: name, Source: prog.Source, Claims: prog.Claims, Steps: prog.Statements})
	if err != nil {
		return nil, nil, err
	}
	verdicts := make([]bool, len(prog.Claims))
	var viols []bugs.Violation
	for i, cr := range r.Claims {
		verdicts[i] = cr.Violated
		if !cr.Violated {
			continue
		}
		pat, local, ok := claimOf(c.opts.Patterns, cr.Claim)
		if !ok {
			return nil, nil, fmt.Errorf("model %s: Spin reported unknown claim %q", name, cr.Claim)
		}
		var steps []tracemodel.StepRef
		for _, ts := range cr.Trail {
			ref, ok := prog.Lines[ts.Line]
			if !ok || !strings.HasPrefix(ts.ProcName, "t") {
				return nil, nil, fmt.Errorf("model %s claim %s: trail step at .pml line %d (%s) is not a model statement", name, cr.Claim, ts.Line, ts.Stmt)
			}
			steps = append(steps, ref)
		}
		v, err := bugs.FromWitness(pm, pat, local, steps, "spin")
		if err != nil {
			return nil, nil, err
		}
		viols = append(viols, v)
	}
	return viols, verdicts, nil
}

// forEach runs fn(i) for i in [0,n) on at most jobs goroutines and returns
// the first error, cancelling the rest.
func forEach(ctx context.Context, n, jobs int, fn func(ctx context.Context, i int) error) error {
	if jobs <= 0 {
		jobs = 1
	}
	p := pool.New().WithContext(ctx).WithMaxGoroutines(jobs).WithCancelOnError().WithFirstError()
	for i := 0; i < n; i++ {
		p.Go(func(ctx context.Context) error { return fn(ctx, i) })
	}
	return p.Wait()
}

// Cache stores verdicts of PairModels (see package cache). A nil Cache
// disables caching.
type Cache interface{}

var _ = ltl.Builtin
