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
	m    *tracemodel.Model
	opts tracemodel.ProjectOptions
	pats []ltl.Pattern

	mu     sync.Mutex
	orders map[int]*varOrder
}

type varOrder struct {
	once  sync.Once
	order *tracemodel.Order
	left  int // tasks of the variable not yet projected
}

func newProjector(m *tracemodel.Model, opts tracemodel.ProjectOptions, pats []ltl.Pattern, tasks []Task) *projector {
	p := &projector{m: m, opts: opts, pats: pats, orders: map[int]*varOrder{}}
	for _, t := range tasks {
		vo := p.orders[t.Var]
		if vo == nil {
			vo = &varOrder{}
			p.orders[t.Var] = vo
		}
		vo.left++
	}
	return p
}

// project returns the PairModel of task t. holds reports that the native
// search already decided every claim of it as holding (the prefilter of the
// data-flow semantics), so that the model need not be searched again.
func (p *projector) project(ctx context.Context, t Task) (pm *tracemodel.PairModel, holds bool, err error) {
	if !p.opts.Dataflow || p.opts.Order != nil {
		pm, err = p.m.Project(t.Var, t.T1, t.T2, p.opts)
		return pm, false, err
	}
	p.mu.Lock()
	vo := p.orders[t.Var]
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if vo.left--; vo.left == 0 {
			delete(p.orders, t.Var)
		}
		p.mu.Unlock()
	}()
	base := p.opts
	base.Dataflow = false
	pm, err = p.m.Project(t.Var, t.T1, t.T2, base)
	if err != nil {
		return nil, false, err
	}
	pre := native.New(pm)
	pre.AnyViolation = true // only "every claim holds" skips the data-flow order
	vs, err := pre.CheckAll(ctx, p.pats)
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
	vo.once.Do(func() { vo.order = p.m.DataflowOrder(t.Var) })
	df := p.opts
	df.Order = vo.order
	pm, err = p.m.Project(t.Var, t.T1, t.T2, df)
	return pm, false, err
}
