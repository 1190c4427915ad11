package native_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// spinTools finds spin and the fastest C compiler for pan.c: tcc compiles a
// verifier in ~0.05 s where gcc takes over a second, which decides whether
// a differential test of thousands of models is practical. fast is false
// when only gcc was found.
func spinTools(t testing.TB) (tools spinrunner.Tools, fast bool) {
	t.Helper()
	abs := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			return ""
		}
		if p, err = filepath.Abs(p); err != nil {
			return ""
		}
		return p
	}
	tools.Spin = abs("spin")
	if tools.Spin == "" {
		t.Skip("spin is not on PATH (Debian/Ubuntu: apt-get install spin tcc, or make setup); skipping native-vs-Spin test")
	}
	if tools.CC = abs("tcc"); tools.CC != "" {
		return tools, true
	}
	if tools.CC = abs("gcc"); tools.CC == "" {
		t.Skip("neither tcc nor gcc is on PATH (apt-get install tcc); skipping native-vs-Spin test")
	}
	return tools, false
}

// envCount is the number of traces a test checks: $name if set, else def,
// or short with -short.
func envCount(t testing.TB, name string, def, short int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		if testing.Short() {
			return short
		}
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// userPatterns are added to some traces' claims, so that the differential
// test also covers patterns outside the built-ins: one without quantifiers
// and one with + and * terms on both sides.
func userPatterns(t testing.TB) []ltl.Pattern {
	t.Helper()
	var out []ltl.Pattern
	for i, src := range []string{"W1 A2 R1", "R1 R2+ W1* A2 W1"} {
		p, err := ltl.User(fmt.Sprintf("U%d", i+1), src)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// preciseP3 is the lost update of the precise semantics (ltl.Pattern.Precise)
// under an id of its own, so that a model can have its claims beside
// those of McPatom's P3.
func preciseP3() ltl.Pattern {
	p := ltl.Builtin()[2].Precise()
	p.ID = "P3precise"
	return p
}

// remoteFirst is a user pattern whose first term is the remote thread's:
// it tells a model that starts Broken from one that does not.
func remoteFirst(t testing.TB) ltl.Pattern {
	t.Helper()
	p, err := ltl.User("U9", "W2 R1 W2")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// genTrace writes the trace of a generator configuration.
func genTrace(t testing.TB, c gen.Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// userSetPattern is a two-variable user pattern with a starred local term
// and a term without a variable.
func userSetPattern(t testing.TB) ltl.Pattern {
	t.Helper()
	p, err := ltl.User("U3", "W1(x) R1* A2(y)+ W2 R1(x)")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// diffModel is one (variable, thread pair) model of a trace with its native
// verdicts, in predict.Claims order.
type diffModel struct {
	name   string // trace and task, for messages
	trace  []byte
	opts   tracemodel.ProjectOptions
	pm     *tracemodel.PairModel
	pats   []ltl.Pattern
	prog   *promela.Program
	native []native.Verdict
}

// modelsOf parses a trace and returns every model that predict.Plan selects
// with default options, projected with opts, with its native verdicts and
// Promela program. A native witness that does not contain its pattern is a
// test failure.
func modelsOf(t testing.TB, name string, trace []byte, opts tracemodel.ProjectOptions, pats []ltl.Pattern) []*diffModel {
	t.Helper()
	m, tasks := planOf(t, name, trace)
	var out []*diffModel
	for _, task := range tasks {
		pm, err := m.Project(task.Var, task.T1, task.T2, opts)
		if err != nil {
			t.Fatalf("%s: Project(%s, %d, %d): %v", name, task.VarName, task.T1, task.T2, err)
		}
		out = append(out, newDiffModel(t, fmt.Sprintf("%s var %s threads %s,%s semantics %s", name, task.VarName, pm.Threads[0].Handle, pm.Threads[1].Handle, opts), trace, opts, pm, pats))
	}
	return out
}

// planOf parses a generated trace and plans its models with default
// options, ordered pairs kept.
func planOf(t testing.TB, name string, trace []byte) (*tracemodel.Model, []predict.Task) {
	t.Helper()
	m, err := tracemodel.Parse(context.Background(), bytes.NewReader(trace), name, tracemodel.Options{})
	if err != nil {
		t.Fatalf("%s: the generated trace does not parse: %v\n%s", name, err, trace)
	}
	tasks, err := predict.Plan(context.Background(), m, predict.Options{KeepOrderedPairs: true, KeepLockedPairs: true})
	if err != nil {
		t.Fatalf("%s: Plan: %v", name, err)
	}
	return m, tasks
}

// partModelsOf is modelsOf for the parts after the first of every model
// that Projection.Parts cuts, at every cut.
func partModelsOf(t testing.TB, name string, trace []byte, pats []ltl.Pattern) []*diffModel {
	t.Helper()
	m, tasks := planOf(t, name, trace)
	var out []*diffModel
	for _, task := range tasks {
		p, err := m.NewProjection(task.Var, 0, task.T1, task.T2, tracemodel.ProjectOptions{})
		if err != nil {
			t.Fatalf("%s: NewProjection(%s, %d, %d): %v", name, task.VarName, task.T1, task.T2, err)
		}
		for _, part := range p.Parts(1)[1:] {
			pm, err := p.Model(part)
			if err != nil {
				t.Fatalf("%s: %s part %d: %v", name, task.VarName, part.Index, err)
			}
			out = append(out, newDiffModel(t, fmt.Sprintf("%s var %s threads %s,%s part %d", name, task.VarName, pm.Threads[0].Handle, pm.Threads[1].Handle, part.Index), trace, tracemodel.ProjectOptions{}, pm, pats))
		}
	}
	if len(out) == 0 {
		t.Errorf("%s: no model is cut", name)
	}
	return out
}

// setModelsOf is modelsOf for the models of atomic sets: every pair of
// shared variables, for every pair of threads that each access one of
// them, checked with the two-variable patterns pats (both assignments).
func setModelsOf(t testing.TB, name string, trace []byte, opts tracemodel.ProjectOptions, pats []ltl.Pattern) []*diffModel {
	t.Helper()
	m, err := tracemodel.Parse(context.Background(), bytes.NewReader(trace), name, tracemodel.Options{})
	if err != nil {
		t.Fatalf("%s: the generated trace does not parse: %v\n%s", name, err, trace)
	}
	shared := m.SharedVars()
	var out []*diffModel
	for i, a := range shared {
		for _, b := range shared[i+1:] {
			for t1 := 1; t1 <= len(m.Threads); t1++ {
				for t2 := t1 + 1; t2 <= len(m.Threads); t2++ {
					if !slices.Contains(a.Threads, t1) && !slices.Contains(b.Threads, t1) ||
						!slices.Contains(a.Threads, t2) && !slices.Contains(b.Threads, t2) {
						continue
					}
					pm, err := m.ProjectSet(a.Var, b.Var, t1, t2, opts)
					if err != nil {
						t.Fatalf("%s: ProjectSet(%s, %s, %d, %d): %v", name, a.Name, b.Name, t1, t2, err)
					}
					out = append(out, newDiffModel(t, fmt.Sprintf("%s set {%s, %s} threads %s,%s semantics %s", name, a.Name, b.Name, pm.Threads[0].Handle, pm.Threads[1].Handle, opts), trace, opts, pm, pats))
				}
			}
		}
	}
	return out
}

// newDiffModel decides every claim of pm natively, one by one and jointly,
// and emits its Promela program.
func newDiffModel(t testing.TB, name string, trace []byte, opts tracemodel.ProjectOptions, pm *tracemodel.PairModel, pats []ltl.Pattern) *diffModel {
	t.Helper()
	ctx := context.Background()
	d := &diffModel{
		name:  name,
		trace: trace, opts: opts, pm: pm, pats: pats,
		prog: promela.Emit(pm, predict.Claims(pats)),
	}
	checker := native.New(pm)
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			v, err := checker.Check(ctx, p, local)
			if err != nil {
				t.Fatalf("%s: native %s: %v", d.name, p.ClaimName(local), err)
			}
			if v.Violated {
				if _, err := predict.FromWitness(pm, p, local, v.Witness, "native"); err != nil {
					t.Errorf("%s: native witness of %s: %v\n%s", d.name, v.Claim(), err, d.describe())
				}
			}
			d.native = append(d.native, v)
		}
	}
	// The joint search of all claims (what predict uses) agrees with
	// the one-claim searches, and its witnesses hold their pattern.
	all, err := checker.CheckAll(ctx, pats)
	if err != nil {
		t.Fatalf("%s: CheckAll: %v", d.name, err)
	}
	for i, v := range all {
		if v.Violated != d.native[i].Violated || v.Claim() != d.native[i].Claim() {
			t.Errorf("%s: CheckAll %s violated=%v, Check says %v\n%s", d.name, v.Claim(), v.Violated, d.native[i].Violated, d.describe())
		}
		if v.Violated {
			if _, err := predict.FromWitness(pm, v.Pattern, v.Local, v.Witness, "native"); err != nil {
				t.Errorf("%s: joint witness of %s: %v\n%s", d.name, v.Claim(), err, d.describe())
			}
		}
	}
	return d
}

// describe is what a failure shows: the trace and the Promela model.
func (d *diffModel) describe() string {
	return fmt.Sprintf("--- trace %s\n%s--- Promela model\n%s", d.name, d.trace, d.prog.Source)
}

// semanticKey is the program without its comments, which carry names and
// source locations but no semantics: two models with the same key are the
// same Promela program for Spin, so Spin checks it once.
func semanticKey(src []byte) string {
	var b strings.Builder
	for {
		i := bytes.Index(src, []byte("/*"))
		if i < 0 {
			b.Write(src)
			return b.String()
		}
		b.Write(src[:i])
		j := bytes.Index(src[i+2:], []byte("*/"))
		if j < 0 {
			return b.String()
		}
		src = src[i+2+j+2:]
	}
}

// spinJob is one distinct Promela program and the models that emit it.
type spinJob struct {
	first  *diffModel
	models []*diffModel
}

// jobSet groups models by their program.
type jobSet struct {
	jobs  []*spinJob
	index map[string]*spinJob
	count int // models added
}

func (s *jobSet) add(d *diffModel) {
	if s.index == nil {
		s.index = map[string]*spinJob{}
	}
	s.count++
	k := semanticKey(d.prog.Source)
	j := s.index[k]
	if j == nil {
		j = &spinJob{first: d}
		s.index[k] = j
		s.jobs = append(s.jobs, j)
	}
	j.models = append(j.models, d)
}

func (j *spinJob) spinModel() spinrunner.Model {
	p := j.first.prog
	return spinrunner.Model{Name: j.first.name, Source: p.Source, Claims: p.Claims, Steps: p.Statements}
}

// compare checks Spin's result for a job against the native verdicts of
// every model of the job, and that each Spin trail maps back to model steps
// that contain the pattern. It returns the number of claims compared.
func (j *spinJob) compare(t testing.TB, res spinrunner.Result, err error, mismatches *int) int {
	t.Helper()
	if err != nil {
		t.Errorf("Spin failed on %s: %v\n%s", j.first.name, err, j.first.describe())
		return 0
	}
	if len(res.Claims) != len(j.first.prog.Claims) {
		t.Errorf("%s: Spin decided %d claims, want %d", j.first.name, len(res.Claims), len(j.first.prog.Claims))
		return 0
	}
	compared := 0
	for i, cr := range res.Claims {
		if cr.Violated {
			j.checkTrail(t, i, cr)
		}
		for _, d := range j.models {
			nv := d.native[i]
			compared++
			if nv.Claim() != cr.Claim {
				t.Fatalf("%s: claim %d is %s natively and %s for Spin", d.name, i, nv.Claim(), cr.Claim)
			}
			if nv.Violated == cr.Violated {
				continue
			}
			*mismatches++
			if *mismatches > 5 {
				continue // the first few tell the story
			}
			t.Errorf("MISMATCH %s claim %s: native violated=%v, Spin violated=%v\nnative witness %v (%d states)\nSpin trail %v\n%s",
				d.name, cr.Claim, nv.Violated, cr.Violated, nv.Witness, nv.States, cr.Trail, d.describe())
		}
	}
	return compared
}

// checkTrail maps a Spin counterexample to model steps as predict does and
// checks that it contains the pattern of the claim.
func (j *spinJob) checkTrail(t testing.TB, i int, cr spinrunner.ClaimResult) {
	t.Helper()
	d := j.first
	var steps []tracemodel.StepRef
	for _, ts := range cr.Trail {
		ref, ok := d.prog.Lines[ts.Line]
		if !ok || !strings.HasPrefix(ts.ProcName, "t") {
			t.Errorf("%s claim %s: trail step at .pml line %d (%s) is not a model statement\n%s", d.name, cr.Claim, ts.Line, ts.Stmt, d.describe())
			return
		}
		steps = append(steps, ref)
	}
	nv := d.native[i]
	if _, err := predict.FromWitness(d.pm, nv.Pattern, nv.Local, steps, "spin"); err != nil {
		t.Errorf("%s claim %s: Spin's trail: %v\ntrail %v\n%s", d.name, cr.Claim, err, cr.Trail, d.describe())
	}
}

// TestNativeMatchesSpin is the differential test of DESIGN §6: for every
// model of 1,000 random traces of 6-30 actions (with region boundaries;
// every tenth trace also without), the native search must decide each of
// the 10 built-in claims, and on every tenth trace two user patterns too,
// exactly as Spin does; so must it on four small fft and server traces.
// On every tenth trace, and on those rewritten with loops (and atomic
// writes), it also decides the precise lost update.
// -short checks 100 traces; $MCPREDICT_DIFF_TRACES sets another number (for
// a longer run).
//
// Models that are the same Promela program up to comments (common among
// small traces) go to Spin once; each model's native verdicts are still
// compared with that program's. The Spin time is what bounds the number
// of traces: about 0.25 s of CPU per program, most of it spin's LTL
// translation of the claims and the replay of each counterexample.
func TestNativeMatchesSpin(t *testing.T) {
	tools, fast := spinTools(t)
	traces := envCount(t, "MCPREDICT_DIFF_TRACES", 250, 60)
	if os.Getenv("MCPREDICT_DIFF_TRACES") == "" && !fast {
		traces = min(traces, 60)
		t.Logf("tcc not found: pan.c is compiled with gcc (slow), so only %d traces (apt-get install tcc)", traces)
	}
	builtin := ltl.Builtin()
	withUser := slices.Concat(ltl.Builtin(), userPatterns(t), []ltl.Pattern{preciseP3()})
	withPrecise := append(ltl.Builtin(), preciseP3())
	setPats := ltl.BothAssignments(append(ltl.BuiltinSets(), userSetPattern(t)))
	var setModels, setViolated int
	start := time.Now()
	var set jobSet
	for seed := int64(0); seed < int64(traces); seed++ {
		c := gen.Config{Kind: gen.KindRandom, Seed: seed, Events: 6 + seed%25}
		text := genTrace(t, c)
		pats := builtin
		if seed%10 == 0 {
			pats = withUser
		}
		name := fmt.Sprintf("random seed %d events %d", seed, c.Events)
		opts := []tracemodel.ProjectOptions{{}}
		switch seed % 10 {
		case 5:
			opts = append(opts, tracemodel.ProjectOptions{NoBoundaries: true})
		case 3:
			// The precise semantics (data-flow order, hand-offs, region
			// scope), on traces whose locations repeat.
			text, name = withLoops(text, seed), name+" with loops"
			precise, _ := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
			opts = append(opts, precise)
			pats = withPrecise
		}
		for _, o := range opts {
			for _, d := range modelsOf(t, name, text, o, pats) {
				set.add(d)
			}
		}
		// The models of atomic sets, on a trace of two variables for
		// every other seed.
		if seed%2 == 1 {
			c := gen.Config{Kind: gen.KindRandom, Seed: seed + 1_000_000, Threads: 2 + int(seed/2%2), Vars: 2, Events: 10 + seed%25}
			text := genTrace(t, c)
			name := fmt.Sprintf("random seed %d events %d, two variables", c.Seed, c.Events)
			opts := []tracemodel.ProjectOptions{{}}
			if seed%6 == 1 {
				text, name = withLoops(text, seed), name+" with loops"
				precise, _ := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
				opts = append(opts, precise)
			}
			for _, o := range opts {
				for _, d := range setModelsOf(t, name, text, o, setPats) {
					set.add(d)
					setModels++
					for _, v := range d.native {
						if v.Violated {
							setViolated++
						}
					}
				}
			}
		}
	}
	// A few small structured traces: barrier phases, and cond waits whose
	// mutex main takes while the waiter is blocked.
	for seed := int64(0); seed < 2; seed++ {
		for _, c := range []gen.Config{
			{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed), Vars: 3, Phases: 3},
			{Kind: gen.KindServer, Seed: seed, Threads: 2 + int(seed), Phases: 2, Bugs: 4},
		} {
			var buf bytes.Buffer
			if _, err := gen.Write(context.Background(), &buf, c); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s seed %d", c.Kind, seed)
			for _, nb := range []bool{false, true} {
				for _, d := range modelsOf(t, name, buf.Bytes(), tracemodel.ProjectOptions{NoBoundaries: nb}, builtin) {
					set.add(d)
				}
			}
			// The later parts of the models cut at the barriers: they
			// start Broken.
			for _, d := range partModelsOf(t, name, buf.Bytes(), append(withUser, remoteFirst(t))) {
				set.add(d)
			}
		}
	}
	prepared := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	runner := spinrunner.New(tools, spinrunner.Options{Jobs: 2, Timeout: 2 * time.Minute})
	models := make([]spinrunner.Model, len(set.jobs))
	for i, j := range set.jobs {
		models[i] = j.spinModel()
	}
	var compared, violated, mismatches int
	runner.CheckAll(ctx, models, func(i int, res spinrunner.Result, err error) {
		compared += set.jobs[i].compare(t, res, err, &mismatches)
		for _, cr := range res.Claims {
			if cr.Violated {
				violated += len(set.jobs[i].models)
			}
		}
	})
	if mismatches > 0 {
		t.Errorf("%d native/Spin mismatches in all (the first 5 are shown)", mismatches)
	}
	t.Logf("%d traces, %d models, %d distinct Promela programs, %d claims compared (%d violated); native %v, Spin (%s, 2 workers) %v",
		traces, set.count, len(set.jobs), compared, violated, prepared.Round(time.Millisecond), filepath.Base(tools.CC), (time.Since(start) - prepared).Round(time.Second))
	if compared == 0 || violated == 0 || violated == compared {
		t.Errorf("degenerate test: %d claims compared, %d violated", compared, violated)
	}
	t.Logf("of them, %d models of atomic sets, %d of their claims violated", setModels, setViolated)
	if setModels == 0 || setViolated == 0 {
		t.Errorf("degenerate test: %d models of atomic sets, %d of their claims violated", setModels, setViolated)
	}
}

// The tests above compare two checkers of one PairModel, so they cannot see
// a projection that loses or invents behaviour. The oracle below decides the
// claims from the trace text alone, with its own reading of DESIGN §2-§3:
// vector clocks over the whole trace, every event of the two threads in
// program order (a cond Wait with a mutex split into release, region
// boundary and reacquire), mutual exclusion on the locks both threads use,
// and the region boundaries between a thread's first and last access. It
// shares only the pattern automaton (checked against Spin in package ltl)
// with the code under test. It also implements the publish rule of
// ltl.Pattern.PublishBreaks: between a thread's first and last access, the
// release of a lock whose critical section accessed the variable (not the
// implicit release of a cond wait) sets the thread's pub flag until its next
// access. Its functions take the model's variables (oVars): with two, they
// build the models of atomic sets (oracle_set_test.go).

// oEvent is an event as the oracle reads it.
type oEvent struct {
	act, obj, obj2 string
	data           bool // a DataRead (act is Read)
	rmw            bool // an AtomicWrite (act is Write)
	loc            string
	g              int   // index in the trace order
	vc             []int // events of each thread that happen before it, itself included
	// excl lists the locks the thread holds exclusively at the event, each
	// with the index (in the thread) of the event that ends that hold (-1:
	// never).
	excl map[string]int
}

// oTrace is the oracle's model of a trace.
type oTrace struct {
	handles   []string
	events    [][]oEvent      // per thread (0-based, order of first appearance)
	global    [][2]int        // (thread, index) of every event, in trace order
	syncObj   map[string]bool // objects of synchronization actions
	lockUsers map[string]map[int]bool
}

// oracleParse reads a generated trace.
func oracleParse(text []byte) *oTrace {
	tr := &oTrace{syncObj: map[string]bool{}, lockUsers: map[string]map[int]bool{}}
	type tstate struct {
		vc             []int
		n              int
		started        bool
		pendingCreate  []int
		pendingBarrier string
	}
	var ts []*tstate
	ids := map[string]int{}
	id := func(h string) int {
		if i, ok := ids[h]; ok {
			return i
		}
		ids[h] = len(ts)
		ts = append(ts, &tstate{})
		tr.handles = append(tr.handles, h)
		tr.events = append(tr.events, nil)
		return ids[h]
	}
	join := func(dst []int, src []int) []int {
		for len(dst) < len(src) {
			dst = append(dst, 0)
		}
		for i, x := range src {
			dst[i] = max(dst[i], x)
		}
		return dst
	}
	release := map[string][]int{}
	barrier := map[string][]int{}
	frees := map[string]int{}
	for _, line := range strings.Split(string(text), "\n") {
		if line = strings.TrimSpace(line); line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		t := id(f[0])
		e := oEvent{act: f[3], obj: f[4], loc: f[2]}
		switch e.act {
		case "DataRead":
			e.act, e.data = "Read", true
		case "AtomicWrite":
			e.act, e.rmw = "Write", true
		}
		if len(f) > 5 {
			e.obj2 = f[5]
		}
		s := ts[t]
		s.n++
		vc := append([]int(nil), s.vc...)
		vc = join(vc, make([]int, t+1))
		vc[t] = s.n
		if !s.started {
			s.started = true
			vc = join(vc, s.pendingCreate)
		}
		if s.pendingBarrier != "" {
			vc = join(vc, barrier[s.pendingBarrier])
			s.pendingBarrier = ""
		}
		switch e.act {
		case "Read", "Write":
			if k := frees[e.obj]; k > 0 {
				e.obj = fmt.Sprintf("%s#%d", e.obj, k+1)
			}
		case "Free":
			frees[e.obj]++
		case "Wait", "SemWait":
			vc = join(vc, release[e.obj])
		case "Join":
			vc = join(vc, ts[id(e.obj)].vc)
		}
		switch e.act {
		case "Lock", "TryLock", "Unlock", "RdLock", "WrLock", "RwUnlock":
			if tr.lockUsers[e.obj] == nil {
				tr.lockUsers[e.obj] = map[int]bool{}
			}
			tr.lockUsers[e.obj][t] = true
			tr.syncObj[e.obj] = true
		case "Wait":
			tr.syncObj[e.obj] = true
			if e.obj2 != "" {
				if tr.lockUsers[e.obj2] == nil {
					tr.lockUsers[e.obj2] = map[int]bool{}
				}
				tr.lockUsers[e.obj2][t] = true
				tr.syncObj[e.obj2] = true
			}
		case "Signal", "Broadcast", "SemPost":
			tr.syncObj[e.obj] = true
			release[e.obj] = append([]int(nil), vc...)
		case "SemWait":
			tr.syncObj[e.obj] = true
		case "BarrierWait":
			tr.syncObj[e.obj] = true
			barrier[e.obj] = join(barrier[e.obj], vc)
			s.pendingBarrier = e.obj
		case "Create":
			if c := ts[id(e.obj)]; !c.started {
				c.pendingCreate = append([]int(nil), vc...)
			}
		}
		s.vc = vc
		e.vc = vc
		e.g = len(tr.global)
		tr.global = append(tr.global, [2]int{t, len(tr.events[t])})
		tr.events[t] = append(tr.events[t], e)
	}
	tr.holds()
	return tr
}

// holds fills every event's excl: the outermost exclusive holds (Lock,
// TryLock, WrLock, and the reacquisition of a cond Wait) open at it, and
// where each one ends.
func (tr *oTrace) holds() {
	for t, evs := range tr.events {
		depth := map[string]int{}
		excl := map[string]bool{}
		open := map[string][]int{} // lock -> events in the current exclusive hold
		end := func(l string, at int) {
			for _, i := range open[l] {
				tr.events[t][i].excl[l] = at
			}
			delete(open, l)
		}
		for i := range evs {
			e := &tr.events[t][i]
			e.excl = map[string]int{}
			switch e.act {
			case "Lock", "TryLock", "WrLock":
				if depth[e.obj]++; depth[e.obj] == 1 {
					excl[e.obj] = true
				}
			case "RdLock":
				depth[e.obj]++
			case "Unlock", "RwUnlock":
				if depth[e.obj]--; depth[e.obj] == 0 {
					if excl[e.obj] {
						end(e.obj, i)
					}
					excl[e.obj] = false
				}
			case "Wait":
				if e.obj2 != "" {
					end(e.obj2, i)
					depth[e.obj2], excl[e.obj2] = 1, true
					continue // the new hold starts after the Wait
				}
			}
			if e.act == "Read" || e.act == "Write" {
				for l, x := range excl {
					if x {
						open[l] = append(open[l], i)
						e.excl[l] = -1
					}
				}
			}
		}
	}
}

// dataflowVC returns, per thread and event, the clock of the data-flow
// order of the variables vs (README, "Observed data flow"), computed as the
// closure of explicit edges in trace order: the synchronization
// predecessors that the event's own clock names, program order, and for
// every non-synchronization variable u not in vs the edges write → read of
// what it read, read → the next write of another thread, each moved to the
// release of the earlier critical section when both accesses hold one lock
// exclusively, where two writes are ordered too.
func (tr *oTrace) dataflowVC(vs oVars) [][][]int {
	n := len(tr.events)
	out := make([][][]int, n)
	for t := range tr.events {
		out[t] = make([][]int, len(tr.events[t]))
	}
	preds := map[[2]int][][2]int{} // event -> extra predecessors
	edge := func(src, dst [2]int, plain bool) {
		if src[0] == dst[0] {
			return
		}
		se, de := tr.events[src[0]][src[1]], tr.events[dst[0]][dst[1]]
		rel := -1
		for l, at := range se.excl {
			// A hold that ends after dst in the trace was taken over while
			// its holder was blocked in a cond wait: it orders nothing.
			if _, ok := de.excl[l]; ok && at >= 0 && tr.events[src[0]][at].g < de.g {
				rel = max(rel, at)
			}
		}
		switch {
		case rel >= 0:
			preds[dst] = append(preds[dst], [2]int{src[0], rel})
		case plain:
			preds[dst] = append(preds[dst], src)
		}
	}
	update := tr.updates()
	lastW := map[string][2]int{}
	reads := map[string][][2]int{}
	upds := map[string][][2]int{} // the writes of the updates since lastW
	for _, g := range tr.global {
		e := tr.events[g[0]][g[1]]
		if (e.act != "Read" && e.act != "Write") || vs.has(e.obj) || tr.syncObj[baseObj(e.obj)] {
			continue
		}
		w, hasW := lastW[e.obj]
		switch {
		case update[g] && e.act == "Read":
			// An update comes after the value it builds on and the reads
			// that did not see it, but not after other updates.
			if hasW {
				edge(w, g, true)
			}
			for _, r := range reads[e.obj] {
				edge(r, g, true)
			}
		case update[g]:
			upds[e.obj] = append(upds[e.obj], g)
		case e.act == "Read":
			if hasW {
				edge(w, g, true)
			}
			for _, u := range upds[e.obj] {
				edge(u, g, true)
			}
			reads[e.obj] = append(reads[e.obj], g)
		default:
			for _, r := range reads[e.obj] {
				edge(r, g, true)
			}
			for _, u := range upds[e.obj] {
				edge(u, g, false)
			}
			if hasW {
				edge(w, g, false)
			}
			lastW[e.obj] = g
			reads[e.obj] = nil
			upds[e.obj] = nil
		}
	}
	for _, g := range tr.global {
		t, i := g[0], g[1]
		e := tr.events[t][i]
		vc := make([]int, n)
		if i > 0 {
			copy(vc, out[t][i-1])
		}
		from := func(o, j int) { // event j of thread o is before
			for k, x := range out[o][j] {
				vc[k] = max(vc[k], x)
			}
		}
		for o := range tr.events {
			if o != t && o < len(e.vc) && e.vc[o] > 0 {
				from(o, e.vc[o]-1)
			}
		}
		for _, p := range preds[g] {
			from(p[0], p[1])
		}
		vc[t] = i + 1
		out[t][i] = vc
	}
	return out
}

// updates returns the events of commutative updates (README, "Commutative
// updates"): a DataRead whose thread's next access of its variable is a
// Write, with no synchronization event of the thread in between, while the
// thread holds a lock exclusively.
func (tr *oTrace) updates() map[[2]int]bool {
	out := map[[2]int]bool{}
	for t, evs := range tr.events {
		pending := map[string]int{}
		for i, e := range evs {
			switch e.act {
			case "Read", "Write":
				if r, ok := pending[e.obj]; ok && e.act == "Write" && len(evs[r].excl) > 0 {
					out[[2]int{t, r}], out[[2]int{t, i}] = true, true
				}
				delete(pending, e.obj)
				if e.data {
					pending[e.obj] = i
				}
			case "Alloc", "Free", "Enter", "Exit", "Begin", "End":
			default:
				pending = map[string]int{}
			}
		}
	}
	return out
}

// settled returns the variables written only by one thread and only before
// any other thread accessed them (a read before any write counts as an
// access of the initial value).
func (tr *oTrace) settled() map[string]bool {
	writer := map[string]int{}
	other := map[string]bool{}
	bad := map[string]bool{}
	all := map[string]bool{}
	for _, g := range tr.global {
		e := tr.events[g[0]][g[1]]
		if e.act != "Read" && e.act != "Write" {
			continue
		}
		all[e.obj] = true
		w, ok := writer[e.obj]
		switch {
		case e.act == "Write" && (other[e.obj] || ok && w != g[0]):
			bad[e.obj] = true
		case e.act == "Write":
			writer[e.obj] = g[0]
		case !ok || w != g[0]:
			other[e.obj] = true
		}
	}
	out := map[string]bool{}
	for v := range all {
		if !bad[v] {
			out[v] = true
		}
	}
	return out
}

// atomicLocks returns the mutexes used only as atomics: every hold, in
// every thread, accesses one variable besides settled ones, reading it any
// number of times and writing it at most once, with nothing else but
// Enter, Exit, Alloc and Free inside; never a cond Wait's mutex (with it,
// or as the Unlock right before a Wait without one) and never a rwlock.
func (tr *oTrace) atomicLocks() map[string]bool {
	settled := tr.settled()
	bad := map[string]bool{}
	used := map[string]bool{}
	for _, evs := range tr.events {
		depth := map[string]int{}
		start := map[string]int{}
		for i, e := range evs {
			switch e.act {
			case "RdLock", "WrLock", "RwUnlock":
				bad[e.obj] = true
			case "Wait":
				bad[e.obj2] = true
			case "Lock", "TryLock":
				used[e.obj] = true
				if depth[e.obj]++; depth[e.obj] == 1 {
					start[e.obj] = i
				}
			case "Unlock":
				if depth[e.obj]--; depth[e.obj] > 0 {
					continue
				}
				if i+1 < len(evs) && evs[i+1].act == "Wait" {
					bad[e.obj] = true
				}
				obj, w := "", 0
				for _, x := range evs[start[e.obj]+1 : i] {
					switch x.act {
					case "Read", "Write":
						if settled[x.obj] {
							continue
						}
						if obj != "" && x.obj != obj || x.act == "Write" && w > 0 {
							bad[e.obj] = true
						}
						obj = x.obj
						if x.act == "Write" {
							w++
						}
					case "Enter", "Exit", "Alloc", "Free":
					default:
						bad[e.obj] = true
					}
				}
			}
		}
		for l, d := range depth {
			if d > 0 { // a hold that never ends: check what it holds
				for _, x := range evs[start[l]+1:] {
					if x.act != "Read" && x.act != "Write" && x.act != "Enter" && x.act != "Exit" && x.act != "Alloc" && x.act != "Free" {
						bad[l] = true
					}
				}
			}
		}
	}
	out := map[string]bool{}
	for l := range used {
		if !bad[l] {
			out[l] = true
		}
	}
	return out
}

// baseObj is the object of a variable name ("x#2" -> "x").
func baseObj(v string) string {
	if i := strings.IndexByte(v, '#'); i >= 0 {
		return v[:i]
	}
	return v
}

// candidates are the (variable, thread pair) models of DESIGN §3, as
// "var t1,t2" with 1-based thread ids.
func (tr *oTrace) candidates() map[string]bool {
	type rw struct{ r, w bool }
	acc := map[string]map[int]*rw{}
	for t, evs := range tr.events {
		for _, e := range evs {
			if (e.act != "Read" && e.act != "Write") || tr.syncObj[baseObj(e.obj)] {
				continue
			}
			if acc[e.obj] == nil {
				acc[e.obj] = map[int]*rw{}
			}
			a := acc[e.obj][t]
			if a == nil {
				a = &rw{}
				acc[e.obj][t] = a
			}
			if e.act == "Write" {
				a.w = true
			} else {
				a.r = true
			}
		}
	}
	out := map[string]bool{}
	for v, by := range acc {
		for a := range tr.events {
			for b := a + 1; b < len(tr.events); b++ {
				if by[a] != nil && by[b] != nil && (by[a].w || by[b].w) {
					out[fmt.Sprintf("%s %d,%d", v, a+1, b+1)] = true
				}
			}
		}
	}
	return out
}

// Oracle step kinds.
const (
	oNop = iota
	oRead
	oWrite
	oAcquire
	oAcquireShared
	oRelease
	oBoundary
	oPublish
)

type oStep struct {
	kind, lock int
	need       int // events of the other thread that must have completed
	done       int // events of this thread completed after the step
	// src, on a read with observed reads: events of the other thread that
	// must have completed for it to run as the claim's local thread (its
	// observed write, the last write of v before it in the trace, and
	// everything before that write).
	src int
	// second marks an access of the second variable of a set model.
	second bool
	// atomic marks a write of an atomic read-modify-write.
	atomic bool
}

// oVars are the variables of a model: one, or the two of an atomic set
// (Model.ProjectSet), the model's Var first.
type oVars []string

// has reports whether obj is one of the model's variables.
func (vs oVars) has(obj string) bool { return slices.Contains(vs, obj) }

// isSet reports whether the model is one of an atomic set.
func (vs oVars) isSet() bool { return len(vs) == 2 }

// oSem is the semantics the oracle decides under.
type oSem struct {
	boundaries, handoffs, scope, waitCond, dataflow, reads bool
}

func (s oSem) options() tracemodel.ProjectOptions {
	return tracemodel.ProjectOptions{NoBoundaries: !s.boundaries, Handoffs: s.handoffs, Scope: s.scope, WaitConditions: s.waitCond, Dataflow: s.dataflow, ObservedReads: s.reads}
}

// observedWriter returns, for the read at index i of thread t, 1 + the
// index in thread other of the write of v that precedes it in the trace
// order, when the write before that one is t's or there is none; else 0.
func (tr *oTrace) observedWriter(v string, t, i, other int) int {
	var writes [][2]int // the writes of v before the read, latest first
	for j := tr.events[t][i].g - 1; j >= 0 && len(writes) < 2; j-- {
		w := tr.global[j]
		if e := tr.events[w[0]][w[1]]; e.act == "Write" && e.obj == v {
			writes = append(writes, w)
		}
	}
	if len(writes) == 0 || writes[0][0] != other || (len(writes) == 2 && writes[1][0] != t) {
		return 0
	}
	return writes[0][1] + 1
}

// waitSites are the "var|lock|loc" of accesses (at known locations) in a
// critical section that ends in a cond wait: a Wait with that mutex, or an Unlock directly
// followed by a Wait without a mutex.
func (tr *oTrace) waitSites() map[string]bool {
	sites := map[string]bool{}
	for _, evs := range tr.events {
		depth := map[string]int{}
		start := map[string]int{}
		add := func(l string, from, to int) {
			for j := from + 1; j < to; j++ {
				if a := evs[j]; (a.act == "Read" || a.act == "Write") && a.loc != "?" {
					sites[a.obj+"|"+l+"|"+a.loc] = true
				}
			}
		}
		for i, e := range evs {
			switch e.act {
			case "Lock", "TryLock", "WrLock":
				if depth[e.obj]++; depth[e.obj] == 1 {
					start[e.obj] = i
				}
			case "RdLock":
				if depth[e.obj]++; depth[e.obj] == 1 {
					start[e.obj] = -1 // shared: not a condition's critical section
				}
			case "Unlock", "RwUnlock":
				if depth[e.obj]--; depth[e.obj] == 0 && start[e.obj] >= 0 &&
					i+1 < len(evs) && evs[i+1].act == "Wait" && evs[i+1].obj2 == "" {
					add(e.obj, start[e.obj], i)
				}
			case "Wait":
				if e.obj2 != "" {
					add(e.obj2, start[e.obj2], i)
					start[e.obj2] = i
				}
			}
		}
	}
	return sites
}

// scopeRepeats reports, per event of thread t, whether it repeats code
// of its function invocation (same action, location and object; Exit
// events and unknown locations never count) that the invocation first ran
// no later than the code it was running at the latest access to vs before
// it (that access, or the call in the invocation that leads to it), or is
// the Exit of an invocation that wrote one of vs (an update that returned)
// or that was entered from an unknown location and accessed one (a
// callback from code the recorder does not see).
func (tr *oTrace) scopeRepeats(vs oVars, t int) []bool {
	evs := tr.events[t]
	inv := make([]int, len(evs))
	stack, next := []int{0}, 1
	enters := []int{-1}           // index of the Enter of each open invocation
	enterOf := map[int]int{0: -1} // invocation -> index of its Enter
	lastAcc := -1
	out := make([]bool, len(evs))
	atomic := tr.atomicLocks()
	// atomicGap: the last access to vs before i is a write in a hold of a
	// mutex-based atomic, and the thread's next access is a read of vs
	// after that hold (a helper like apr_atomic_dec, whose caller then
	// checks the count).
	atomicGap := func(i int) bool {
		if lastAcc < 0 {
			return false
		}
		v := evs[lastAcc].obj
		for l, end := range evs[lastAcc].excl {
			if !atomic[l] || end < 0 {
				continue
			}
			// The hold wrote v at or before its last access of v ...
			wrote := false
			for j := lastAcc; j >= 0 && !wrote; j-- {
				if e, in := evs[j].excl[l]; !in || e != end {
					break
				}
				wrote = evs[j].act == "Write" && evs[j].obj == v
			}
			if !wrote {
				continue
			}
			// ... and the first access after the hold is a read of vs.
			for j := end + 1; j < len(evs); j++ {
				if x := evs[j]; x.act == "Read" || x.act == "Write" {
					_, again := x.excl[l] // in another hold of the atomic
					return x.act == "Read" && vs.has(x.obj) && !again
				}
			}
		}
		return false
	}
	same := func(i, j int) bool {
		return inv[i] == inv[j] && evs[i].act == evs[j].act && evs[i].loc == evs[j].loc && evs[i].obj == evs[j].obj
	}
	for i, e := range evs {
		if e.act == "Exit" {
			inv[i] = -1
			if len(stack) > 1 {
				// An update that returned, or a callback from unknown code
				// (entered at "?") that accessed vs, ends the operation.
				callback := evs[enters[len(enters)-1]].loc == "?"
				for j := enters[len(enters)-1] + 1; j < i; j++ {
					if evs[j].act == "Write" && vs.has(evs[j].obj) && !atomicGap(i) || callback && evs[j].act == "Read" && vs.has(evs[j].obj) {
						out[i] = true
					}
				}
				stack = stack[:len(stack)-1]
				enters = enters[:len(enters)-1]
			}
			continue
		}
		inv[i] = stack[len(stack)-1]
		if e.loc != "?" && lastAcc >= 0 {
			// c: what invocation inv[i] was running at lastAcc, if it
			// was active then.
			c := lastAcc
			for c >= 0 && inv[c] != inv[i] {
				c = enterOf[inv[c]]
			}
			if c >= 0 {
				fc := c // the first occurrence of c's code (its own at an unknown location)
				for j := 0; j < c && evs[c].loc != "?"; j++ {
					if same(j, c) {
						fc = j
						break
					}
				}
				for j := 0; j <= fc; j++ {
					if same(j, i) {
						out[i] = true
					}
				}
			}
		}
		if e.act == "Enter" {
			enterOf[next] = i
			stack = append(stack, next)
			enters = append(enters, i)
			next++
		}
		if (e.act == "Read" || e.act == "Write") && vs.has(e.obj) {
			lastAcc = i
		}
	}
	return out
}

// oracleSteps turns thread x of the pair into steps; vcs are the clocks of
// its events in the model's order. In the model of an atomic set (two
// variables in vs) the accesses of both are steps, with the set rules of
// setStepRules.
func (tr *oTrace) oracleSteps(vs oVars, tids [2]int, x int, common map[string]int, sem oSem, vcs [][]int) []oStep {
	t, other := tids[x], tids[1-x]
	evs := tr.events[t]
	boundaries := sem.boundaries
	var sites map[string]bool
	if sem.waitCond {
		sites = tr.waitSites()
	}
	exclSince := map[string]int{} // exclusive holds: where they began; -1 shared
	var repeats []bool
	if sem.scope {
		repeats = tr.scopeRepeats(vs, t)
	}
	isAcc := func(e oEvent) bool { return (e.act == "Read" || e.act == "Write") && vs.has(e.obj) }
	first, last := 0, -1
	for i, e := range evs {
		if isAcc(e) {
			if last < 0 {
				first = i
			}
			last = i
		}
	}
	var set *setRules
	if vs.isSet() {
		set = tr.setStepRules(vs, t, other, vcs, first)
	}
	// lastObj is the variable of the latest access to vs.
	lastObj := ""
	needAt := func(i int) int { // requirement of event i (0-based); -1 is "before the first"
		if i < 0 || other >= len(vcs[i]) {
			return 0
		}
		return vcs[i][other]
	}
	accessIn := func(from, to int) bool { // an access to vs at an index in (from, to)
		for j := from + 1; j < to; j++ {
			if isAcc(evs[j]) {
				return true
			}
		}
		return false
	}
	// A write under a mutex-based atomic, then used outside it, is not
	// published by the atomic's unlock.
	atomic := tr.atomicLocks()
	wroteIn := func(from, to int) bool { // (from, to) has a write of vs
		for j := from + 1; j < to; j++ {
			if e := evs[j]; e.act == "Write" && vs.has(e.obj) {
				return true
			}
		}
		return false
	}
	readNext := func(i int, l string) bool { // the next access after i is a read of vs outside holds of l
		for j := i + 1; j < len(evs); j++ {
			if e := evs[j]; e.act == "Read" || e.act == "Write" {
				_, again := e.excl[l]
				return e.act == "Read" && vs.has(e.obj) && !again
			}
		}
		return false
	}
	depth := map[string]int{} // outermost holds of common locks
	held := map[string]int{}  // any lock: depth
	since := map[string]int{} // any lock: index where the current hold began
	var out []oStep
	for i, e := range evs {
		need, pre := needAt(i), needAt(i-1)
		blockingHere := boundaries && i > first && i < last
		if sem.scope && i > first && i <= last && repeats[i] {
			out = append(out, oStep{kind: oBoundary, need: pre, done: i})
		}
		l, isCommon := common[e.obj]
		// The release of a hold whose critical section accessed vs,
		// between the first and the last access, publishes the access.
		publish := false
		switch e.act {
		case "Lock", "TryLock", "WrLock", "RdLock":
			if held[e.obj]++; held[e.obj] == 1 {
				since[e.obj] = i
				exclSince[e.obj] = i
				if e.act == "RdLock" {
					exclSince[e.obj] = -1
				}
			}
		case "Unlock", "RwUnlock":
			if held[e.obj]--; held[e.obj] == 0 {
				publish = blockingHere && accessIn(since[e.obj], i) && !(atomic[e.obj] && wroteIn(since[e.obj], i) && readNext(i, e.obj))
				if sem.waitCond && blockingHere && exclSince[e.obj] >= 0 {
					// The critical section accesses the variable of the
					// thread's last access at a wait site.
					for j := exclSince[e.obj] + 1; j < i; j++ {
						if a := evs[j]; (a.act == "Read" || a.act == "Write") && a.obj == lastObj && sites[lastObj+"|"+e.obj+"|"+a.loc] {
							out = append(out, oStep{kind: oBoundary, need: pre, done: i})
							break
						}
					}
				}
			}
		case "Wait":
			if e.obj2 != "" {
				since[e.obj2] = i
				exclSince[e.obj2] = i
			}
		}
		switch e.act {
		case "Read", "Write":
			k := oNop
			second := false
			if isAcc(e) {
				k = oRead
				if e.act == "Write" {
					k = oWrite
				}
				second = vs.isSet() && e.obj == vs[1]
				if set != nil && set.mergedRead(i, second, out) {
					k = oNop // the read of a read-modify-write: its write is the step
				}
				lastObj = e.obj
			}
			st := oStep{kind: k, second: second, atomic: k == oWrite && e.rmw, need: need, done: i + 1}
			if k == oRead && sem.reads {
				st.src = tr.observedWriter(e.obj, t, i, other)
			}
			out = append(out, st)
			continue
		case "Lock", "TryLock", "WrLock", "RdLock":
			if isCommon {
				depth[e.obj]++
				if depth[e.obj] == 1 {
					k := oAcquire
					if e.act == "RdLock" {
						k = oAcquireShared
					}
					out = append(out, oStep{kind: k, lock: l, need: need, done: i + 1})
					continue
				}
			}
		case "Unlock", "RwUnlock":
			if isCommon {
				depth[e.obj]--
				if depth[e.obj] == 0 {
					out = append(out, oStep{kind: oRelease, lock: l, need: need, done: i + 1})
					if publish {
						out = append(out, oStep{kind: oPublish, need: need, done: i + 1})
					}
					continue
				}
			}
		case "Wait", "BarrierWait", "Join", "SemWait":
			m, waitsOnCommon := common[e.obj2]
			waitsOnCommon = waitsOnCommon && e.act == "Wait" && e.obj2 != ""
			if waitsOnCommon {
				out = append(out, oStep{kind: oRelease, lock: m, need: pre, done: i})
			}
			if blockingHere {
				out = append(out, oStep{kind: oBoundary, need: pre, done: i})
			}
			if waitsOnCommon {
				out = append(out, oStep{kind: oAcquire, lock: m, need: need, done: i + 1})
				continue
			}
		case "Create", "Signal", "Broadcast", "SemPost":
			if blockingHere && sem.handoffs {
				out = append(out, oStep{kind: oBoundary, need: pre, done: i})
			}
		}
		out = append(out, oStep{kind: oNop, need: need, done: i + 1})
		if publish {
			out = append(out, oStep{kind: oPublish, need: need, done: i + 1})
		}
	}
	if set != nil {
		set.pinReads(tr, t, other, out)
	}
	return out
}

// oracleVerdicts decides every claim of the pair (tids are 0-based, in
// model order) of the variable, or atomic set, vs by a search over the full
// event sequences. Single-variable patterns are matched with their
// ltl.Automaton, two-variable ones with the oracle's own matcher (oMatch).
func (tr *oTrace) oracleVerdicts(vs oVars, tids [2]int, pats []ltl.Pattern, sem oSem) []bool {
	var dvc [][][]int
	if sem.dataflow {
		dvc = tr.dataflowVC(vs)
	}
	common := map[string]int{}
	for l, users := range tr.lockUsers {
		if users[tids[0]] && users[tids[1]] {
			common[l] = len(common)
		}
	}
	var steps [2][]oStep
	// hold[x][pc][l]: 0 free, 1 exclusive, 2 shared, after pc steps.
	var hold [2][][]int
	var brk, pub [2][]bool
	for x := 0; x < 2; x++ {
		vcs := make([][]int, len(tr.events[tids[x]]))
		for i, e := range tr.events[tids[x]] {
			vcs[i] = e.vc
			if dvc != nil {
				vcs[i] = dvc[tids[x]][i]
			}
		}
		steps[x] = tr.oracleSteps(vs, tids, x, common, sem, vcs)
		cur := make([]int, len(common))
		hold[x] = append(hold[x], append([]int(nil), cur...))
		brk[x] = append(brk[x], false)
		pub[x] = append(pub[x], false)
		b, p := false, false
		for _, s := range steps[x] {
			switch s.kind {
			case oAcquire:
				cur[s.lock] = 1
			case oAcquireShared:
				cur[s.lock] = 2
			case oRelease:
				cur[s.lock] = 0
			case oBoundary:
				b = true
			case oPublish:
				p = true
			case oRead, oWrite:
				b, p = false, false
			}
			hold[x] = append(hold[x], append([]int(nil), cur...))
			brk[x] = append(brk[x], b)
			pub[x] = append(pub[x], p)
		}
	}
	doneAt := func(x, pc int) int {
		if pc == 0 {
			return 0
		}
		return steps[x][pc-1].done
	}
	enabled := func(x int, pc [2]int, local int) bool {
		if pc[x] >= len(steps[x]) {
			return false
		}
		s := steps[x][pc[x]]
		if s.need > doneAt(1-x, pc[1-x]) {
			return false
		}
		if x == local-1 && s.src > doneAt(1-x, pc[1-x]) {
			return false
		}
		switch s.kind {
		case oAcquire:
			return hold[1-x][pc[1-x]][s.lock] == 0
		case oAcquireShared:
			return hold[1-x][pc[1-x]][s.lock] != 1
		}
		return true
	}
	type state struct {
		pc [2]int
		v  int16
		a  uint64 // the matcher's state
	}
	var out []bool
	const values = 17 // vIndex's
	seen := make([][]uint64, (len(steps[0])+1)*(len(steps[1])+1)*values)
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			// The oracle's own matcher for the patterns whose last
			// write must be plain (the precise P3), not only the
			// automaton under test.
			var aut oMatcher = automatonMatcher{p.Automaton(local)}
			if p.TwoVariable() || p.PlainLast {
				aut = newOMatch(p, local)
			}
			// v is the last access with ltl.AtomicBit for an atomic
			// write.
			obs := func(s state) ltl.Obs {
				return ltl.Obs{V: s.v &^ ltl.AtomicBit, Atomic: s.v&ltl.AtomicBit != 0, Brk1: brk[0][s.pc[0]], Brk2: brk[1][s.pc[1]], Pub1: pub[0][s.pc[0]], Pub2: pub[1][s.pc[1]]}
			}
			// The visited set is dense in (pcs, v) and lists the few
			// automaton states seen with each: a map of states made
			// this test several times slower.
			vIndex := func(v int16) int {
				a, y := 0, 0
				if v&ltl.AtomicBit != 0 {
					v, a = v&^ltl.AtomicBit, 8
				}
				if v&ltl.VarBit != 0 {
					v, y = v&^ltl.VarBit, 4
				}
				switch v {
				case 0:
					return 0
				case 1, 2:
					return int(v) + y
				}
				return int(v) - 62 + y + a // 65, 66 -> 3, 4; atomic 11, 12
			}
			for i := range seen {
				seen[i] = seen[i][:0]
			}
			visit := func(s state) bool { // reports whether s is new
				k := ((s.pc[0]*(len(steps[1])+1))+s.pc[1])*values + vIndex(s.v)
				for _, a := range seen[k] {
					if a == s.a {
						return false
					}
				}
				seen[k] = append(seen[k], s.a)
				return true
			}
			init := state{}
			init.a = aut.Step(aut.Init(), obs(init))
			visit(init)
			queue := []state{init}
			violated := aut.Accepts(init.a)
			for len(queue) > 0 && !violated {
				cur := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				for x := 0; x < 2; x++ {
					if !enabled(x, cur.pc, local) {
						continue
					}
					nx := cur
					switch s := steps[x][cur.pc[x]]; s.kind {
					case oRead, oWrite:
						nx.v = int16(x + 1)
						if s.kind == oWrite {
							nx.v += 64
						}
						if s.atomic {
							nx.v |= ltl.AtomicBit
						}
						if s.second {
							nx.v += ltl.VarBit
						}
					}
					nx.pc[x]++
					nx.a = aut.Step(cur.a, obs(nx))
					if !visit(nx) {
						continue
					}
					if aut.Accepts(nx.a) {
						violated = true
						break
					}
					queue = append(queue, nx)
				}
			}
			out = append(out, violated)
		}
	}
	return out
}

// TestNativeMatchesTraceOracle checks the whole path from trace to verdict
// (parse, plan, projection, native search) against the oracle above, with
// and without region boundaries: the models predict plans must be the
// oracle's candidates, and every claim's verdict must be the oracle's. The
// traces are random ones of three sizes and small fft and server traces,
// whose barrier phases and hand-offs through a blocked waiter's mutex
// random traces rarely produce. -short checks 1,000 random traces;
// $MCPREDICT_ORACLE_TRACES sets another number.
func TestNativeMatchesTraceOracle(t *testing.T) {
	traces := envCount(t, "MCPREDICT_ORACLE_TRACES", 5000, 1000)
	var configs []gen.Config
	for seed := int64(0); seed < int64(traces); seed++ {
		c := gen.Config{Kind: gen.KindRandom, Seed: seed}
		switch seed % 5 {
		case 0:
			c.Events = 60
		case 1:
			c.Events = 8
		}
		configs = append(configs, c)
	}
	for seed := int64(0); seed < 6; seed++ {
		configs = append(configs,
			gen.Config{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed%2), Vars: 3, Phases: 3},
			gen.Config{Kind: gen.KindServer, Seed: seed, Threads: 2 + int(seed%2), Phases: 2, Bugs: 4})
	}
	pats := slices.Concat(ltl.Builtin(), userPatterns(t), []ltl.Pattern{preciseP3()})
	mismatches, withUpdates := 0, 0
	for _, c := range configs {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, c); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s seed %d events %d", c.Kind, c.Seed, c.Events)
		text := buf.Bytes()
		if c.Kind == gen.KindRandom && c.Seed%2 == 1 {
			text, name = withLoops(text, c.Seed), name+" with loops"
			if len(oracleParse(text).updates()) > 0 {
				withUpdates++
			}
		}
		// Every rule alone on a fifth of the traces; the old default and
		// the precise semantics on all (the whole list costs 4x the time).
		sems := oracleSemantics
		if c.Seed%5 != 0 {
			sems = []oSem{oracleSemantics[1], oracleSemantics[len(oracleSemantics)-1]}
		}
		compareWithOracle(t, name, text, pats, sems, &mismatches)
	}
	if mismatches > 0 {
		t.Errorf("%d mismatches in all (the first 5 are shown)", mismatches)
	}
	if withUpdates == 0 {
		t.Errorf("degenerate test: no trace has a commutative update")
	}
	t.Logf("%d traces, %d with commutative updates", len(configs), withUpdates)
}

// compareWithOracle checks the plan and every verdict of one trace against
// the oracle's.
func compareWithOracle(t *testing.T, name string, text []byte, pats []ltl.Pattern, sems []oSem, mismatches *int) {
	t.Helper()
	ctx := context.Background()
	tr := oracleParse(text)
	m, err := tracemodel.Parse(ctx, bytes.NewReader(text), name, tracemodel.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tasks, err := predict.Plan(context.Background(), m, predict.Options{KeepOrderedPairs: true, KeepLockedPairs: true})
	if err != nil {
		t.Fatal(err)
	}
	want := tr.candidates()
	got := map[string]bool{}
	for _, task := range tasks {
		got[fmt.Sprintf("%s %d,%d", task.VarName, task.T1, task.T2)] = true
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: planned models %v, oracle's %v\n%s", name, got, want, text)
		return
	}
	for _, task := range tasks {
		for _, sem := range sems {
			pm, err := m.Project(task.Var, task.T1, task.T2, sem.options())
			if err != nil {
				t.Fatal(err)
			}
			oracle := tr.oracleVerdicts(oVars{task.VarName}, [2]int{task.T1 - 1, task.T2 - 1}, pats, sem)
			checker := native.New(pm)
			i := 0
			for _, p := range pats {
				for local := 1; local <= 2; local++ {
					nv, err := checker.Check(ctx, p, local)
					if err != nil {
						t.Fatal(err)
					}
					if nv.Violated != oracle[i] {
						*mismatches++
						if *mismatches <= 5 {
							js, _ := json.MarshalIndent(pm, "", "  ")
							t.Errorf("MISMATCH %s var %s threads %d,%d semantics %+v claim %s: native violated=%v, oracle violated=%v\nnative witness %v\n--- trace\n%s--- PairModel\n%s",
								name, task.VarName, task.T1, task.T2, sem, nv.Claim(), nv.Violated, oracle[i], nv.Witness, text, js)
						}
					}
					i++
				}
			}
		}
	}
}

// oracleSemantics are the semantics the oracle test compares: the paper's,
// blocking boundaries only, each precise rule alone, and all of them (the
// default).
var oracleSemantics = []oSem{
	{},
	{boundaries: true},
	{boundaries: true, handoffs: true},
	{boundaries: true, scope: true},
	{boundaries: true, waitCond: true},
	{boundaries: true, dataflow: true},
	{dataflow: true},
	{boundaries: true, reads: true},
	{boundaries: true, handoffs: true, scope: true, waitCond: true, dataflow: true, reads: true},
}

// withLoops rewrites a generated trace so that the region-scope rule has
// something to decide: locations come from a few lines, so threads "come
// back" to earlier code, and Enter/Exit pairs of two functions are
// inserted around some events, so invocations start and end. Some reads
// become DataRead and some writes AtomicWrite (an atomic
// read-modify-write, which the precise lost update does not end at).
func withLoops(text []byte, seed int64) []byte {
	var out bytes.Buffer
	depth := map[string]int{}
	xorshift := func(r *uint64, n int) int {
		*r ^= *r << 13
		*r ^= *r >> 7
		*r ^= *r << 17
		return int(*r % uint64(n))
	}
	r := uint64(seed)*2654435761 + 1
	rnd := func(n int) int { return xorshift(&r, n) }
	// The atomic writes have a generator of their own, so that the
	// rest of the rewriting is what it was before them.
	ra := uint64(seed)*0x9E3779B97F4A7C15 + 7
	atomic := func() bool { return xorshift(&ra, 4) == 0 }
	for _, line := range strings.Split(string(text), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 5 || strings.HasPrefix(strings.TrimSpace(line), "#") {
			out.WriteString(line + "\n")
			continue
		}
		th := strings.TrimSpace(f[0])
		// A thread blocked in a cond Wait must have the Wait as its next
		// event: nothing is inserted before one.
		wait := strings.TrimSpace(f[3]) == "Wait"
		loc := fmt.Sprintf(" rand.c-%d", 1+rnd(4))
		if rnd(3) == 0 {
			loc = " ?"
		}
		switch {
		case wait:
		case rnd(5) == 0:
			at := fmt.Sprintf("rand.c-%d", 1+rnd(4))
			if rnd(4) == 0 {
				at = "?" // a callback from code the recorder does not see
			}
			fmt.Fprintf(&out, "%s, 0, %s, Enter, f%d\n", th, at, rnd(2))
			depth[th]++
		case depth[th] > 0 && rnd(4) == 0 && !wait:
			fmt.Fprintf(&out, "%s, 0, rand.c-%d, Exit, f\n", th, 1+rnd(4))
			depth[th]--
		}
		f[2] = loc
		if strings.TrimSpace(f[3]) == "Read" && rnd(2) == 0 {
			f[3] = " DataRead" // a read whose value steers nothing
		}
		if strings.TrimSpace(f[3]) == "Write" && atomic() {
			f[3] = " AtomicWrite"
		}
		out.WriteString(strings.Join(f, ",") + "\n")
	}
	return out.Bytes()
}
