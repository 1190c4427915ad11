package native_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
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
	ctx := context.Background()
	m, err := tracemodel.Parse(ctx, bytes.NewReader(trace), name, tracemodel.Options{})
	if err != nil {
		t.Fatalf("%s: the generated trace does not parse: %v\n%s", name, err, trace)
	}
	tasks, err := predict.Plan(m, predict.Options{})
	if err != nil {
		t.Fatalf("%s: Plan: %v", name, err)
	}
	claims := predict.Claims(pats)
	var out []*diffModel
	for _, task := range tasks {
		pm, err := m.Project(task.Var, task.T1, task.T2, opts)
		if err != nil {
			t.Fatalf("%s: Project(%s, %d, %d): %v", name, task.VarName, task.T1, task.T2, err)
		}
		d := &diffModel{
			name:  fmt.Sprintf("%s var %s threads %s,%s no-boundaries=%v", name, task.VarName, pm.Threads[0].Handle, pm.Threads[1].Handle, opts.NoBoundaries),
			trace: trace, opts: opts, pm: pm, pats: pats,
			prog: promela.Emit(pm, claims),
		}
		checker := native.New(pm)
		for _, p := range pats {
			for local := 1; local <= 2; local++ {
				v, err := checker.Check(ctx, p, local)
				if err != nil {
					t.Fatalf("%s: native %s: %v", d.name, p.ClaimName(local), err)
				}
				if v.Violated {
					if _, err := bugs.FromWitness(pm, p, local, v.Witness, "native"); err != nil {
						t.Errorf("%s: native witness of %s: %v\n%s", d.name, v.Claim(), err, d.describe())
					}
				}
				d.native = append(d.native, v)
			}
		}
		out = append(out, d)
	}
	return out
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
	if _, err := bugs.FromWitness(d.pm, nv.Pattern, nv.Local, steps, "spin"); err != nil {
		t.Errorf("%s claim %s: Spin's trail: %v\ntrail %v\n%s", d.name, cr.Claim, err, cr.Trail, d.describe())
	}
}

// TestNativeMatchesSpin is the differential test of DESIGN §6: for every
// model of 1,000 random traces (with region boundaries; every fourth trace
// also without), the native search must decide each of the 10 built-in
// claims, and on every fifth trace two user patterns, exactly as Spin does.
//
// Models that are the same Promela program up to comments (common among
// small traces) go to Spin once; each model's native verdicts are still
// compared with that program's.
func TestNativeMatchesSpin(t *testing.T) {
	tools, fast := spinTools(t)
	traces := 1000
	if testing.Short() {
		traces = 100
	}
	if !fast {
		traces = min(traces, 60)
		t.Logf("tcc not found: pan.c is compiled with gcc (slow), so only %d traces (apt-get install tcc)", traces)
	}
	builtin := ltl.Builtin()
	withUser := append(ltl.Builtin(), userPatterns(t)...)
	start := time.Now()
	var set jobSet
	for seed := int64(0); seed < int64(traces); seed++ {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindRandom, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		pats := builtin
		if seed%5 == 0 {
			pats = withUser
		}
		name := fmt.Sprintf("random seed %d", seed)
		for _, nb := range []bool{false, true} {
			if nb && seed%4 != 0 {
				continue
			}
			for _, d := range modelsOf(t, name, buf.Bytes(), tracemodel.ProjectOptions{NoBoundaries: nb}, pats) {
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
}
