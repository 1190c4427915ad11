package predict

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sourcegraph/conc/pool"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/cache"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// PairResult is the outcome of checking one PairModel.
type PairResult struct {
	Violations []bugs.Violation
	Undecided  *bugs.Undecided // the model could not be decided within its limits
	Claims     int             // claims decided
	Spin       bool            // Spin was run on the model
	Cached     bool            // the verdicts came from the cache
	// Confirmed lists the bugs Spin confirmed on this model as the
	// representative of its bugs (ConfirmBugs); Warnings say why it could
	// not.
	Confirmed []string `json:",omitempty"`
	Warnings  []string `json:",omitempty"`
	// Parts lists the parts of the model (tracemodel.Projection.Parts)
	// that have violations, with their size and bugs: ConfirmBugs sends
	// the smallest part with an instance of a bug to Spin.
	Parts []PartBugs `json:",omitempty"`
	// Cut is the number of parts the model was cut into; 0: it was
	// checked whole.
	Cut int `json:",omitempty"`
}

// PartBugs is one part of a model with violations.
type PartBugs struct {
	Part  int      // PairModel.Part
	Steps int      // statements of both threads
	Bugs  []string // the bugs of its violations, in order of first violation
}

// partsResult merges the results of the parts of one model, checked in
// part order, into the result of the model: the violations of each claim
// are the first Options.MaxInstances of its parts together, as the search
// of the whole model lists them (breadth first, so part by part: every run
// of the whole model passes the cuts in order).
type partsResult struct {
	max      int
	res      PairResult
	perClaim map[string]int
	checked  int
}

func newPartsResult(maxInstances int) *partsResult {
	return &partsResult{max: maxInstances, perClaim: map[string]int{}}
}

// holds records a part that the projector found to hold: claims claims,
// none violated.
func (a *partsResult) holds(claims int) { a.res.Claims = max(a.res.Claims, claims) }

// add records the result of the next checked part.
func (a *partsResult) add(r PairResult) {
	if a.checked == 0 {
		a.res.Cached = r.Cached
	} else {
		a.res.Cached = a.res.Cached && r.Cached
	}
	a.checked++
	a.res.Spin = a.res.Spin || r.Spin
	a.res.Claims = max(a.res.Claims, r.Claims)
	a.res.Confirmed = append(a.res.Confirmed, r.Confirmed...)
	a.res.Warnings = append(a.res.Warnings, r.Warnings...)
	var bugs []string
	for _, v := range r.Violations {
		if a.perClaim[v.Claim] >= a.max {
			continue
		}
		a.perClaim[v.Claim]++
		a.res.Violations = append(a.res.Violations, v)
		if !slices.Contains(bugs, v.BugID) {
			bugs = append(bugs, v.BugID)
		}
	}
	if len(bugs) > 0 {
		for _, p := range r.Parts {
			a.res.Parts = append(a.res.Parts, PartBugs{Part: p.Part, Steps: p.Steps, Bugs: bugs})
		}
	}
}

// cutInto records that the model has n parts.
func (a *partsResult) cutInto(n int) {
	if n > 1 {
		a.res.Cut = n
	}
}

// left is how many instances of a claim later parts may still list.
func (a *partsResult) left(claim string) int { return a.max - a.perClaim[claim] }

// result is the merged result.
func (a *partsResult) result() PairResult {
	trimInterleavings(a.res.Violations)
	return a.res
}

// CheckParts checks the parts of one model, in part order (those the
// projector left out hold), and merges their results as Run does.
func (c *Checker) CheckParts(ctx context.Context, parts []*tracemodel.PairModel) (PairResult, error) {
	acc := newPartsResult(c.opts.MaxInstances)
	for _, pm := range parts {
		acc.cutInto(pm.Parts)
		r, err := c.check(ctx, pm, acc.left)
		if err != nil {
			return PairResult{}, err
		}
		acc.add(r)
	}
	return acc.result(), nil
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
	// The patterns and claims of each kind of models.
	pats   map[TaskKind][]ltl.Pattern
	claims map[TaskKind][]promela.Claim
	// scratch is the memory of the native searches of one model for
	// the next.
	scratch scratchPool
}

// scratchPool hands the memory of native checkers (native.Scratch) from
// one model to the next.
type scratchPool struct{ pool sync.Pool }

// checker returns the native checker of pm, on the memory of a checker
// done with.
func (p *scratchPool) checker(pm *tracemodel.PairModel) *native.Checker {
	s, _ := p.pool.Get().(*native.Scratch)
	return native.NewWith(pm, s)
}

// done takes back the memory of nc, which must not be used after.
func (p *scratchPool) done(nc *native.Checker) { p.pool.Put(nc.Scratch()) }

// NewChecker returns a Checker for the options (defaults applied).
func NewChecker(opts Options) *Checker {
	opts.defaults()
	// Each Check runs one model; parallelism comes from the caller.
	so := opts.Spin
	so.Jobs = 1
	c := &Checker{opts: opts, runner: spinrunner.New(opts.Tools, so),
		pats: map[TaskKind][]ltl.Pattern{}, claims: map[TaskKind][]promela.Claim{}}
	for _, k := range []TaskKind{VariableModels, SetModels} {
		c.pats[k] = opts.patterns(k)
		c.claims[k] = Claims(c.pats[k])
	}
	return c
}

// kindOf is the kind of a PairModel.
func kindOf(pm *tracemodel.PairModel) TaskKind {
	if pm.Var2 != "" {
		return SetModels
	}
	return VariableModels
}

// patterns returns the patterns and claims of pm's kind of model.
func (c *Checker) patterns(pm *tracemodel.PairModel) ([]ltl.Pattern, []promela.Claim) {
	k := kindOf(pm)
	return c.pats[k], c.claims[k]
}

// ModelName names a PairModel in messages.
func ModelName(pm *tracemodel.PairModel) string {
	v := pm.Var
	if pm.Var2 != "" {
		v = "{" + pm.Var + ", " + pm.Var2 + "}"
	}
	if pm.Part > 0 {
		return fmt.Sprintf("%s threads %s,%s part %d", v, pm.Threads[0].Handle, pm.Threads[1].Handle, pm.Part)
	}
	return fmt.Sprintf("%s threads %s,%s", v, pm.Threads[0].Handle, pm.Threads[1].Handle)
}

// Check decides every claim of pm and returns its violations.
func (c *Checker) Check(ctx context.Context, pm *tracemodel.PairModel) (PairResult, error) {
	return c.check(ctx, pm, nil)
}

// check is Check with, for a part of a model, the instances each claim may
// still list (left; nil: Options.MaxInstances): a part whose claim's
// instances are all listed already lists none, and does not search for
// them.
func (c *Checker) check(ctx context.Context, pm *tracemodel.PairModel, left func(claim string) int) (PairResult, error) {
	pats, claims := c.patterns(pm)
	var key string
	// The parts of a model cut at its barriers are many and small: each is
	// checked faster than its cache entry is keyed and written.
	if c.opts.Cache != nil && pm.Parts <= 1 {
		key = cache.Key(pm, pats, fmt.Sprintf("%s/%d", c.engineKey(), c.opts.MaxInstances))
		if e, ok := c.opts.Cache.Get(key); ok && len(e.Verdicts) == len(claims) {
			res, err := c.result(pm, e)
			res.Cached = true
			return res, err
		}
	}
	e, err := c.decide(ctx, pm, left)
	if err != nil {
		return PairResult{}, err
	}
	if key != "" {
		// A cache that cannot be written only costs time later.
		_ = c.opts.Cache.Put(key, e)
	}
	return c.result(pm, e)
}

// engineKey names what decides the verdicts of a model, for the cache:
// EngineAuto is the native search alone unless every violating model goes
// through Spin.
func (c *Checker) engineKey() string {
	if c.opts.Engine == EngineAuto && c.opts.Confirm != ConfirmAll {
		return "auto-native"
	}
	return string(c.opts.Engine)
}

// Confirm runs Spin on a model the native search found violations in and
// requires the same verdict on every claim (else a *DisagreementError) and
// trails that show the patterns. A confirmation is cached.
func (c *Checker) Confirm(ctx context.Context, pm *tracemodel.PairModel) error {
	pats, claims := c.patterns(pm)
	var key string
	if c.opts.Cache != nil {
		key = cache.Key(pm, pats, "confirm")
		if e, ok := c.opts.Cache.Get(key); ok && len(e.Verdicts) == len(claims) {
			return nil
		}
	}
	nativeV, err := c.native(ctx, native.New(pm), nil)
	if err != nil {
		return err
	}
	spinV, err := c.spin(ctx, pm)
	if err != nil {
		return err
	}
	for i, v := range nativeV {
		if v.Violated != spinV[i].Violated {
			return &DisagreementError{Model: ModelName(pm), Claim: v.Claim, Native: v.Violated, Spin: spinV[i].Violated}
		}
		if !v.Violated {
			continue
		}
		pat, local, ok := claimOf(pats, v.Claim)
		if !ok {
			return fmt.Errorf("model %s: unknown claim %q", ModelName(pm), v.Claim)
		}
		if _, err := FromWitness(pm, pat, local, spinV[i].Witness, "spin"); err != nil {
			return err
		}
	}
	if c.opts.Cache != nil {
		_ = c.opts.Cache.Put(key, cache.Entry{Engine: "spin", Spin: true, Verdicts: spinV})
	}
	return nil
}

// result turns verdicts into violations of pm: one per listed instance.
func (c *Checker) result(pm *tracemodel.PairModel, e cache.Entry) (PairResult, error) {
	res := PairResult{Claims: len(e.Verdicts), Spin: e.Spin}
	pats, _ := c.patterns(pm)
	// witnessOf is what a violation of res was built from.
	type witnessOf struct {
		pat   ltl.Pattern
		local int
		steps []tracemodel.StepRef
	}
	var witnesses []witnessOf
	for _, v := range e.Verdicts {
		if !v.Violated {
			continue
		}
		pat, local, ok := claimOf(pats, v.Claim)
		if !ok {
			return res, fmt.Errorf("model %s: unknown claim %q", ModelName(pm), v.Claim)
		}
		ws := v.Instances
		switch {
		case len(ws) == 0 && v.Witness == nil:
			continue // a part whose instances earlier parts listed (check)
		case len(ws) == 0:
			ws = [][]tracemodel.StepRef{v.Witness} // Spin alone could decide the model
		}
		for _, w := range ws {
			viol, err := fromWitness(pm, pat, local, w, e.Engine, false)
			if err != nil {
				return res, err
			}
			res.Violations = append(res.Violations, viol)
			witnesses = append(witnesses, witnessOf{pat, local, w})
		}
	}
	// The interleavings the report keeps, built now.
	for i, keep := range keptInterleavings(res.Violations) {
		if !keep {
			continue
		}
		w := witnesses[i]
		viol, err := fromWitness(pm, w.pat, w.local, w.steps, e.Engine, true)
		if err != nil {
			return res, err
		}
		res.Violations[i] = viol
	}
	if len(res.Violations) > 0 {
		var ids []string
		for _, v := range res.Violations {
			if !slices.Contains(ids, v.BugID) {
				ids = append(ids, v.BugID)
			}
		}
		res.Parts = []PartBugs{{Part: pm.Part, Steps: len(pm.Steps[0]) + len(pm.Steps[1]), Bugs: ids}}
	}
	return res, nil
}

// trimInterleavings leaves out the interleavings that the report will not
// keep (bugs.Report.TrimInterleavings) as soon as a model's violations
// are known, so that thousands of instances do not hold their witnesses
// until the report is assembled: in the report's order of violations
// (sortViolations, stable), an instance among the first
// bugs.InterleavingsKept of its bug in the report is among the first of
// its bug in its model.
func trimInterleavings(vs []bugs.Violation) {
	for i, keep := range keptInterleavings(vs) {
		if !keep {
			vs[i].OmitInterleaving()
		}
	}
}

// keptInterleavings reports, of each violation of vs, whether its
// interleaving is kept (trimInterleavings).
func keptInterleavings(vs []bugs.Violation) []bool {
	keep := make([]bool, len(vs))
	if len(vs) <= bugs.InterleavingsKept {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	order := make([]int, len(vs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return violationLess(&vs[order[i]], &vs[order[j]]) })
	kept := map[string]int{}
	for _, i := range order {
		if kept[vs[i].BugID] < bugs.InterleavingsKept {
			kept[vs[i].BugID]++
			keep[i] = true
		}
	}
	return keep
}

// decide runs the engine on pm, then lists the instances of the violated
// claims with the native enumeration (whatever the engine, so that bug ids
// do not depend on it).
func (c *Checker) decide(ctx context.Context, pm *tracemodel.PairModel, left func(claim string) int) (cache.Entry, error) {
	nc := c.scratch.checker(pm) // the verdicts' search, and the instances'
	defer c.scratch.done(nc)
	e, err := c.verdicts(ctx, nc, left)
	if err != nil {
		return e, err
	}
	pats, _ := c.patterns(pm)
	for i := range e.Verdicts {
		v := &e.Verdicts[i]
		if !v.Violated {
			continue
		}
		pat, local, ok := claimOf(pats, v.Claim)
		if !ok {
			return e, fmt.Errorf("model %s: unknown claim %q", ModelName(pm), v.Claim)
		}
		limit := c.opts.MaxInstances
		if left != nil {
			if limit = min(limit, left(v.Claim)); limit <= 0 {
				// Listed enough in earlier parts: violated, and no
				// instance of its own (result lists none).
				v.Instances, v.Witness = nil, nil
				continue
			}
		}
		ws, err := nc.Instances(ctx, pat, local, limit)
		var tooLarge *native.TooLargeError
		switch {
		case errors.As(err, &tooLarge) && e.Engine == "spin":
			// Beyond the native search's bound: Spin's trail is the one
			// instance.
			continue
		case err != nil:
			return e, err
		case len(ws) == 0 && e.Engine == "spin":
			return e, &DisagreementError{Model: ModelName(pm), Claim: v.Claim, Native: false, Spin: true}
		case len(ws) == 0:
			return e, fmt.Errorf("internal error: model %s claim %s: the native search found a violation but no instance of it", ModelName(pm), v.Claim)
		}
		if e.Engine == "spin" {
			// Spin's trail must show the pattern, even though the report
			// lists the native instances; checked once, not on cache hits.
			if _, err := FromWitness(pm, pat, local, v.Witness, e.Engine); err != nil {
				return e, err
			}
		}
		v.Instances, v.Witness = ws, nil
	}
	return e, nil
}

// verdicts decides every claim of pm with the engine. When the native
// verdicts are the engine's, a claim of which left (nil: none) says no
// instance may be listed is not decided, and holds: nothing would list it.
func (c *Checker) verdicts(ctx context.Context, nc *native.Checker, left func(claim string) int) (cache.Entry, error) {
	pm := nc.Model()
	var nativeV []cache.Verdict
	if c.opts.Engine != EngineSpin {
		var skip func(p ltl.Pattern, local int) bool
		if left != nil && !c.opts.decideListed && (c.opts.Engine == EngineNative || c.opts.Confirm != ConfirmAll) {
			skip = func(p ltl.Pattern, local int) bool { return left(p.ClaimName(local)) <= 0 }
		}
		var err error
		nativeV, err = c.native(ctx, nc, skip)
		var tooLarge *native.TooLargeError
		switch {
		case errors.As(err, &tooLarge) && c.opts.Engine == EngineAuto:
			// Beyond the native search's bound: Spin alone decides.
			nativeV = nil
		case err != nil:
			return cache.Entry{}, err
		}
	}
	if nativeV != nil {
		violated := false
		for _, v := range nativeV {
			violated = violated || v.Violated
		}
		if c.opts.Engine == EngineNative || !violated || c.opts.Confirm != ConfirmAll {
			return cache.Entry{Engine: "native", Verdicts: nativeV}, nil
		}
	}
	spinV, err := c.spin(ctx, pm)
	if err != nil {
		return cache.Entry{}, err
	}
	for i, v := range nativeV {
		if v.Violated != spinV[i].Violated {
			return cache.Entry{}, &DisagreementError{Model: ModelName(pm), Claim: v.Claim, Native: v.Violated, Spin: spinV[i].Violated}
		}
	}
	return cache.Entry{Engine: "spin", Spin: true, Verdicts: spinV}, nil
}

// native decides all claims of nc's model with the native search nc.
func (c *Checker) native(ctx context.Context, nc *native.Checker, skip func(p ltl.Pattern, local int) bool) ([]cache.Verdict, error) {
	pm := nc.Model()
	pats, _ := c.patterns(pm)
	nc.Skip = skip
	vs, err := nc.CheckAll(ctx, reportable(pm, pats))
	if err != nil {
		return nil, err
	}
	out := make([]cache.Verdict, 0, 2*len(pats))
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			v := cache.Verdict{Claim: p.ClaimName(local)}
			if len(vs) > 0 && vs[0].Claim() == v.Claim {
				v.Violated, v.Witness = vs[0].Violated, vs[0].Witness
				vs = vs[1:]
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// commuting reports whether pattern p only orders writes of a variable of
// set model pm that are all commutative updates: its violations are not
// reported (ltl.Pattern.OnlyWrites), so the native engine does not search
// for them.
func commuting(pm *tracemodel.PairModel, p ltl.Pattern) bool {
	return pm.OnlyUpdates[0] && p.OnlyWrites(ltl.VarX) || pm.OnlyUpdates[1] && p.OnlyWrites(ltl.VarY)
}

// reportable returns the patterns of pats that are not commuting on pm.
func reportable(pm *tracemodel.PairModel, pats []ltl.Pattern) []ltl.Pattern {
	if pm.OnlyUpdates == [2]bool{} {
		return pats
	}
	out := make([]ltl.Pattern, 0, len(pats))
	for _, p := range pats {
		if !commuting(pm, p) {
			out = append(out, p)
		}
	}
	return out
}

// spin checks pm with Spin and returns the verdict of each claim in Claims
// order, with the trails mapped to model steps.
func (c *Checker) spin(ctx context.Context, pm *tracemodel.PairModel) ([]cache.Verdict, error) {
	pats, claims := c.patterns(pm)
	pm.ResolveEvents() // the Promela comments name them
	prog := promela.Emit(pm, claims)
	name := ModelName(pm)
	r, err := c.runner.Check(ctx, spinrunner.Model{Name: name, Source: prog.Source, Claims: prog.Claims, Steps: prog.Statements})
	if err != nil {
		return nil, err
	}
	out := make([]cache.Verdict, len(r.Claims))
	for i, cr := range r.Claims {
		out[i] = cache.Verdict{Claim: cr.Claim, Violated: cr.Violated}
		if p, _, ok := claimOf(pats, cr.Claim); ok && commuting(pm, p) {
			out[i].Violated = false // as the native engine: not reported
			continue
		}
		last := [2]int{-1, -1}
		for _, ts := range cr.Trail {
			ref, ok := prog.Lines[ts.Line]
			if !ok || !strings.HasPrefix(ts.ProcName, "t") {
				return nil, fmt.Errorf("model %s claim %s: trail step at .pml line %d (%s) is not a model statement", name, cr.Claim, ts.Line, ts.Stmt)
			}
			// The statements of one atomic step are several trail steps
			// on its line; a step runs once.
			if last[ref.Thread] == ref.Index {
				continue
			}
			last[ref.Thread] = ref.Index
			out[i].Witness = append(out[i].Witness, ref)
		}
	}
	return out, nil
}

// forEach runs fn(i) for i in [0,n) on at most jobs goroutines and returns
// the first error, cancelling the rest.
func forEach(ctx context.Context, n, jobs int, fn func(ctx context.Context, i int) error) error {
	if jobs <= 0 {
		jobs = 1
	}
	p := pool.New().WithContext(ctx).WithMaxGoroutines(jobs).WithCancelOnError().WithFirstError()
	i := 0
	for ; i < n && ctx.Err() == nil; i++ {
		// Go blocks while jobs tasks run: dispatch stops as soon as the
		// run is cancelled instead of queueing the remaining tasks.
		k := i // i outlives the iteration
		p.Go(func(ctx context.Context) error { return fn(ctx, k) })
	}
	err := p.Wait()
	if err == nil && i < n {
		err = ctx.Err()
	}
	return err
}
