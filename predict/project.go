package predict

import (
	"context"
	"errors"
	"sync"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// projector builds the PairModels of a run. Under the data-flow semantics
// (ProjectOptions.Dataflow) the order of a model depends on its variable and
// costs a pass over the trace, so it is computed only for models that have a
// violation under the synchronization order — adding order only removes
// interleavings, so the others have none either — once per variable, and
// dropped when the last model of the variable is done.
type projector struct {
	m      *tracemodel.Model
	opts   tracemodel.ProjectOptions
	pats   map[TaskKind][]ltl.Pattern // the patterns of each kind of models
	mu     sync.Mutex
	orders map[[2]int]*varOrder // by variable, or set: (Var, Var2)
}

// setPrefilterStates bounds the search of a set model under the
// synchronization order, per claim.
const setPrefilterStates = 2_000

type varOrder struct {
	once  sync.Once
	order *tracemodel.Order
	left  int // tasks of the variable not yet projected
}

func newProjector(m *tracemodel.Model, opts Options, tasks []Task) *projector {
	p := &projector{m: m, opts: opts.Project, orders: map[[2]int]*varOrder{},
		pats: map[TaskKind][]ltl.Pattern{VariableModels: opts.patterns(VariableModels), SetModels: opts.patterns(SetModels)}}
	for _, t := range tasks {
		vo := p.orders[orderKey(t)]
		if vo == nil {
			vo = &varOrder{}
			p.orders[orderKey(t)] = vo
		}
		vo.left++
	}
	return p
}

// orderKey is what the data-flow order of a task's model depends on.
func orderKey(t Task) [2]int { return [2]int{t.Var, t.Var2} }

// project returns the PairModel of task t. holds reports that the native
// search already decided every claim of it as holding (the prefilter of the
// data-flow semantics), so that the model need not be searched again.
func (p *projector) project(ctx context.Context, t Task) (pm *tracemodel.PairModel, holds bool, err error) {
	if !p.opts.Dataflow || p.opts.Order != nil {
		pm, err = t.Project(p.m, p.opts)
		return pm, false, err
	}
	p.mu.Lock()
	vo := p.orders[orderKey(t)]
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if vo.left--; vo.left == 0 {
			delete(p.orders, orderKey(t))
		}
		p.mu.Unlock()
	}()
	base := p.opts
	base.Dataflow = false
	pm, err = t.Project(p.m, base)
	if err != nil {
		return nil, false, err
	}
	pre := native.New(pm)
	pre.AnyViolation = true // only "every claim holds" skips the data-flow order
	if t.Var2 != 0 {
		// A set model under the synchronization order interleaves the
		// accesses of two variables that locks order only loosely; past a
		// budget the data-flow order (one replay) is the cheaper way.
		pre.MaxStates = setPrefilterStates
	}
	vs, err := pre.CheckAll(ctx, reportable(pm, p.pats[t.Kind()]))
	var tooLarge *native.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		// Undecided: project under the data-flow order anyway.
	case err != nil:
		return nil, false, err
	default:
		violated := false
		for _, v := range vs {
			violated = violated || v.Violated
		}
		if !violated {
			return pm, true, nil
		}
	}
	vo.once.Do(func() {
		if t.Var2 != 0 {
			vo.order = p.m.DataflowOrderSet(t.Var, t.Var2)
		} else {
			vo.order = p.m.DataflowOrder(t.Var)
		}
	})
	df := p.opts
	df.Order = vo.order
	pm, err = t.Project(p.m, df)
	return pm, false, err
}

// Projector builds the models of a plan's tasks as Run does, for a caller
// that checks them elsewhere (the service's workers): the data-flow order
// is computed once per variable and only for the models with a violation
// under the synchronization order. It is safe for concurrent use; each task
// must be projected once.
type Projector struct {
	p    *projector
	opts Options
}

// NewProjector returns the projector of tasks, the tasks of Plan(m, opts)
// that are to be projected.
func NewProjector(m *tracemodel.Model, opts Options, tasks []Task) *Projector {
	opts.defaults()
	return &Projector{p: newProjector(m, opts, tasks), opts: opts}
}

// Project returns the model of t; or, when the native search under the
// synchronization order alone found that every claim of t holds (and the
// engine is not Spin, which checks every model), no model and the result
// Run records for it.
func (p *Projector) Project(ctx context.Context, t Task) (*tracemodel.PairModel, *PairResult, error) {
	pm, holds, err := p.p.project(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	if holds && p.opts.Engine != EngineSpin {
		return nil, &PairResult{Claims: p.opts.claimCount(t)}, nil
	}
	return pm, nil, nil
}
