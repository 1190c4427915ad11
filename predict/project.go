package predict

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// partAccesses is the size of the parts (tracemodel.Projection.Parts).
	partAccesses int
	// scratch is the memory of the prefilter's native searches.
	scratch scratchPool
}

// setPrefilterStates bounds the search of a set model under the
// synchronization order, per claim.
const setPrefilterStates = 2_000

// varOrder is what the models of one variable (or set) share: its
// data-flow order and each thread's region breaks.
type varOrder struct {
	once  sync.Once
	order *tracemodel.Order
	steps *tracemodel.StepCache
	left  int // tasks of the variable not yet projected
}

func newProjector(m *tracemodel.Model, opts Options, tasks []Task) *projector {
	p := &projector{m: m, opts: opts.Project, orders: map[[2]int]*varOrder{}, partAccesses: opts.PartAccesses,
		pats: map[TaskKind][]ltl.Pattern{VariableModels: opts.patterns(VariableModels), SetModels: opts.patterns(SetModels)}}
	for _, t := range tasks {
		vo := p.orders[orderKey(t)]
		if vo == nil {
			vo = &varOrder{steps: tracemodel.NewStepCache()}
			p.orders[orderKey(t)] = vo
		}
		vo.left++
	}
	return p
}

// orderKey is what the data-flow order of a task's model depends on.
func orderKey(t Task) [2]int { return [2]int{t.Var, t.Var2} }

// startOrder returns the order in which Run starts the tasks on jobs
// workers: the tasks of jobs variables (or sets) at a time, taken in turn.
// The first model of a variable computes its data-flow order, which the
// variable's other models wait for; workers that all started on one
// variable left all cores but one idle at each new variable (a fifth of the
// first second of a server's run). No more variables' orders are alive at
// once than before: a variable's is dropped when its last task is done.
func startOrder(tasks []Task, jobs int) []int {
	var groups [][]int
	group := map[[2]int]int{}
	for i, t := range tasks {
		g, ok := group[orderKey(t)]
		if !ok {
			g = len(groups)
			group[orderKey(t)] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	out := make([]int, 0, len(tasks))
	var active [][]int // the remaining tasks of the variables being started
	for next := 0; len(out) < len(tasks); {
		for len(active) < max(jobs, 1) && next < len(groups) {
			active = append(active, groups[next])
			next++
		}
		for a := 0; a < len(active); {
			out = append(out, active[a][0])
			if active[a] = active[a][1:]; len(active[a]) == 0 {
				active = append(active[:a], active[a+1:]...)
				continue
			}
			a++
		}
	}
	return out
}

// taskModels builds the models of the parts of one task, one at a time.
type taskModels struct {
	p  *projector
	t  Task
	vo *varOrder // nil once done
	// dataflow: the data-flow order is computed for the parts that have
	// a violation under the synchronization order.
	dataflow bool
	sync     *tracemodel.Projection // under the synchronization order (or the options' own)
	df       *tracemodel.Projection // under the data-flow order, once a part needs it
	parts    []tracemodel.Part
}

// models returns the builder of task t's models. Each task's models are
// built once; done must be called after the last.
func (p *projector) models(t Task) (*taskModels, error) {
	tm := &taskModels{p: p, t: t}
	p.mu.Lock()
	tm.vo = p.orders[orderKey(t)]
	p.mu.Unlock()
	base := p.opts
	if tm.vo == nil { // not a task of the plan: its own, shared with none
		tm.vo = &varOrder{steps: tracemodel.NewStepCache(), left: 1}
	}
	base.Steps, base.LazyEvents = tm.vo.steps, true
	if base.Dataflow && base.Order == nil {
		tm.dataflow = true
		base.Dataflow = false
	}
	var err error
	tm.sync, err = p.m.NewProjection(t.Var, t.Var2, t.T1, t.T2, base)
	if err != nil {
		tm.done()
		return nil, err
	}
	tm.parts = tm.sync.Parts(p.partAccesses)
	return tm, nil
}

// done releases what the task's models shared: the data-flow order of its
// variable once the last task of the variable is done.
func (tm *taskModels) done() {
	if tm.vo == nil {
		return
	}
	p := tm.p
	p.mu.Lock()
	last := false
	if tm.vo.left--; tm.vo.left == 0 && p.orders[orderKey(tm.t)] == tm.vo {
		delete(p.orders, orderKey(tm.t))
		last = true
	}
	p.mu.Unlock()
	if last && tm.vo.order != nil {
		// Its temporary file (a spilled trace's) goes now, not when
		// the garbage collector finds it unreachable.
		tm.vo.order.Release()
	}
	tm.vo = nil
}

// model returns the PairModel of part k. holds reports that the native
// search already decided every claim of it as holding (the prefilter of the
// data-flow semantics), so that the model need not be searched again.
func (tm *taskModels) model(ctx context.Context, k int) (pm *tracemodel.PairModel, holds bool, err error) {
	return tm.modelOf(ctx, tm.parts[k])
}

// modelOf is model of any part of the task's projection.
func (tm *taskModels) modelOf(ctx context.Context, part tracemodel.Part) (pm *tracemodel.PairModel, holds bool, err error) {
	p, t := tm.p, tm.t
	if tm.df != nil {
		// An earlier part of the pair had a violation under the
		// synchronization order: a server's racy pair has one in every
		// part, and the check of this one under it would only cost a
		// second model. Skipping the check changes nothing but the time:
		// a part it would have passed has no violation under the
		// data-flow order either.
		pm, err = tm.df.Model(part)
		return pm, false, err
	}
	pm, err = tm.sync.Model(part)
	if err != nil || !tm.dataflow {
		return pm, false, err
	}
	pre := p.scratch.checker(pm)
	defer p.scratch.done(pre)
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
	p.m.Release(pm) // replaced by its model under the data-flow order
	if tm.df == nil {
		vo := tm.vo
		vo.once.Do(func() {
			if t.Var2 != 0 {
				vo.order = p.m.DataflowOrderSet(t.Var, t.Var2)
			} else {
				vo.order = p.m.DataflowOrder(t.Var)
			}
		})
		tm.df = tm.sync.WithOrder(vo.order)
	}
	pm, err = tm.df.Model(part)
	return pm, false, err
}

// each builds the models of task t's parts in order and calls fn with each
// (holds as model returns it).
func (p *projector) each(ctx context.Context, t Task, fn func(pm *tracemodel.PairModel, holds bool) error) error {
	tm, err := p.models(t)
	if err != nil {
		return err
	}
	defer tm.done()
	for k := range tm.parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		pm, holds, err := tm.model(ctx, k)
		if err != nil {
			return err
		}
		if err := fn(pm, holds); err != nil {
			return err
		}
	}
	return nil
}

// smallPart builds, of part k of task t, the model that Spin confirms
// its bugs on (ConfirmBugs): the first part of a finer cut, of about
// confirmPartAccesses accesses, within part k, whose violations (decided
// by check) include every bug of want; part k itself when none does or it
// is small already. A server's part has thousands of statements, which
// Spin takes seconds to compile; the pattern spans a few.
func (p *projector) smallPart(ctx context.Context, t Task, k int, want []string, check func(*tracemodel.PairModel) ([]string, error)) (*tracemodel.PairModel, error) {
	tm, err := p.models(t)
	if err != nil {
		return nil, err
	}
	defer tm.done()
	if k < 0 || k >= len(tm.parts) {
		return nil, fmt.Errorf("model of %s threads %d,%d: no part %d of %d", t.Name(), t.T1, t.T2, k, len(tm.parts))
	}
	coarse := tm.parts[k]
	if coarse.To[0]-coarse.From[0]+coarse.To[1]-coarse.From[1] > 2*confirmPartAccesses {
		for _, f := range tm.sync.Parts(confirmPartAccesses) {
			if f.From[0] < coarse.From[0] || f.From[1] < coarse.From[1] || f.To[0] > coarse.To[0] || f.To[1] > coarse.To[1] {
				continue
			}
			pm, _, err := tm.modelOf(ctx, f)
			if err != nil {
				return nil, err
			}
			got, err := check(pm)
			if err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(want, func(id string) bool { return !slices.Contains(got, id) }) {
				return pm, nil
			}
		}
	}
	pm, _, err := tm.modelOf(ctx, coarse)
	return pm, err
}

// confirmPartAccesses is the size of the finer parts of smallPart.
const confirmPartAccesses = 16

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

// Project returns the models of t's parts that are to be checked, in part
// order (CheckParts checks and merges them as Run does); or, when the native
// search under the synchronization order alone found that every claim of
// every part holds (and the engine is not Spin, which checks every model),
// no model and the result Run records for it.
func (p *Projector) Project(ctx context.Context, t Task) ([]*tracemodel.PairModel, *PairResult, error) {
	var out []*tracemodel.PairModel
	parts := 0
	err := p.p.each(ctx, t, func(pm *tracemodel.PairModel, holds bool) error {
		parts = pm.Parts
		if !holds || p.opts.Engine == EngineSpin {
			pm.ResolveEvents() // for the worker's reports
			out = append(out, pm)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(out) == 0 {
		res := &PairResult{Claims: p.opts.claimCount(t)}
		if parts > 1 {
			res.Cut = parts
		}
		return nil, res, nil
	}
	return out, nil, nil
}
