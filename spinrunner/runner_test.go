package spinrunner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tools finds spin and gcc or skips: these tests run the real tools.
func tools(t testing.TB) Tools {
	t.Helper()
	tl, err := FindTools()
	if err != nil {
		t.Skipf("spin/gcc not available: %v", err)
	}
	return tl
}

func readModel(t testing.TB, name string, claims ...string) Model {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Model{Name: strings.TrimSuffix(name, ".pml"), Source: src, Claims: claims, Steps: 10}
}

// markerLine returns the line of the source that holds "/* @marker */".
func markerLine(t *testing.T, src []byte, marker string) int {
	t.Helper()
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, "/* @"+marker+" */") {
			return i + 1
		}
	}
	t.Fatalf("marker %s not in model", marker)
	return 0
}

// stageCounter counts the commands a Runner starts, per stage.
type stageCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *stageCounter) hook(_, stage string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[stage]++
}

func (s *stageCounter) get(stage string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[stage]
}

// newTestRunner returns a runner whose temp dirs go under a per-test dir,
// so that tests can check nothing is left behind.
func newTestRunner(t *testing.T, o Options) (*Runner, string) {
	t.Helper()
	r := New(tools(t), o)
	r.tmpParent = t.TempDir()
	return r, r.tmpParent
}

// assertClean checks that no work dir and no process working in one is
// left under parent. Killed grandchildren may need a moment to go away.
func assertClean(t *testing.T, parent string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		procs := processesUnder(parent)
		if len(entries) == 0 && len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left behind: %d entries in %s, processes %v", len(entries), parent, procs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesUnder lists the pids whose working directory is under dir.
func processesUnder(dir string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil // not Linux: nothing to check
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && strings.HasPrefix(cwd, dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestCheckVerdicts(t *testing.T) {
	t.Parallel()
	type want struct {
		violated bool
		trail    []string // "proc@marker" for each step, if checked
	}
	tests := []struct {
		name   string
		file   string
		claims map[string]want
	}{
		{
			name: "lost update",
			file: "lost_update.pml",
			claims: map[string]want{
				"P3_1":   {violated: true, trail: []string{"t1@t1-read", "t2@t2-write", "t1@t1-write"}},
				"P3_2":   {},
				"late2":  {violated: true, trail: []string{"t1@t1-read", "t1@t1-write", "t2@t2-write"}},
				"never3": {},
			},
		},
		{
			name:   "locked",
			file:   "locked.pml",
			claims: map[string]want{"P3_1": {}, "P3_2": {}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, parent := newTestRunner(t, Options{})
			var stages stageCounter
			r.onStage = stages.hook
			var claims []string
			for c := range tc.claims {
				claims = append(claims, c)
			}
			m := readModel(t, tc.file, claims...)
			res, err := r.Check(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Claims) != len(claims) {
				t.Fatalf("got %d claim results, want %d", len(res.Claims), len(claims))
			}
			replays := 0
			for i, cr := range res.Claims {
				w := tc.claims[cr.Claim]
				if cr.Claim != claims[i] {
					t.Errorf("result %d is for %s, want %s (claims order)", i, cr.Claim, claims[i])
				}
				if cr.Violated != w.violated {
					t.Errorf("%s: violated = %v, want %v", cr.Claim, cr.Violated, w.violated)
				}
				if cr.StatesStored <= 0 || cr.Depth <= 0 {
					t.Errorf("%s: states %d depth %d, want > 0", cr.Claim, cr.StatesStored, cr.Depth)
				}
				if cr.Violated {
					replays++
				} else if len(cr.Trail) != 0 {
					t.Errorf("%s: trail for a claim that holds: %v", cr.Claim, cr.Trail)
				}
				if w.trail == nil {
					continue
				}
				if len(cr.Trail) != len(w.trail) {
					t.Fatalf("%s: trail %+v, want steps %v", cr.Claim, cr.Trail, w.trail)
				}
				for j, s := range w.trail {
					proc, marker, _ := strings.Cut(s, "@")
					st := cr.Trail[j]
					if st.ProcName != proc || st.Line != markerLine(t, m.Source, marker) {
						t.Errorf("%s step %d = %+v, want proc %s at line of %s", cr.Claim, j, st, proc, marker)
					}
					// A d_step is one step (pan names it D_STEP<line>).
					if st.Stmt == "" {
						t.Errorf("%s step %d has no statement text", cr.Claim, j)
					}
				}
			}
			// Several claims, one model: exactly one spin -a and one compile.
			if got := stages.get(StageSpin); got != 1 {
				t.Errorf("spin -a ran %d times, want 1", got)
			}
			if got := stages.get(StageCC); got != 1 {
				t.Errorf("gcc ran %d times, want 1", got)
			}
			if got := stages.get(StagePan); got != len(claims) {
				t.Errorf("pan ran %d times, want %d", got, len(claims))
			}
			if got := stages.get(StageReplay); got != replays {
				t.Errorf("replay ran %d times, want %d", got, replays)
			}
			if res.Dir != "" {
				t.Errorf("Dir = %q without KeepDir", res.Dir)
			}
			assertClean(t, parent)
		})
	}
}

func TestCheckErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		model  Model
		depth  int
		stage  string
		is     error  // if set, errors.Is must hold
		output string // substring of ToolError.Output
	}{
		{
			name:   "depth too small",
			model:  readModel(t, "lost_update.pml", "never3"),
			depth:  5,
			stage:  StagePan,
			is:     ErrDepthTooSmall,
			output: "max search depth too small",
		},
		{
			name:   "syntax error",
			model:  readModel(t, "syntax_error.pml", "P1_1"),
			stage:  StageSpin,
			output: "syntax error",
		},
		{
			name:  "unknown claim",
			model: readModel(t, "lost_update.pml", "P3_1", "nosuch"),
			stage: StageSpin,
			is:    ErrUnknownClaim,
		},
		{
			// With a single claim pan ignores -N, so the name is checked
			// against spin's list.
			name:  "unknown claim in single-claim model",
			model: readModel(t, "assert_fails.pml", "P3_1"),
			stage: StageSpin,
			is:    ErrUnknownClaim,
		},
		{
			name:   "model assertion",
			model:  readModel(t, "assert_fails.pml", "never3"),
			stage:  StageReplay,
			is:     ErrModelAssertion,
			output: "assertion violated",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, parent := newTestRunner(t, Options{})
			r.depth = tc.depth
			_, err := r.Check(context.Background(), tc.model)
			var te *ToolError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v (%T), want *ToolError", err, err)
			}
			if te.Stage != tc.stage || te.Model != tc.model.Name {
				t.Errorf("stage %q model %q, want %q %q", te.Stage, te.Model, tc.stage, tc.model.Name)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tc.is)
			}
			if !strings.Contains(te.Output, tc.output) {
				t.Errorf("output %q does not contain %q", te.Output, tc.output)
			}
			msg := err.Error()
			for _, s := range []string{tc.model.Name, tc.stage, tc.output} {
				if !strings.Contains(msg, s) {
					t.Errorf("message does not mention %q:\n%s", s, msg)
				}
			}
			assertClean(t, parent)
		})
	}
}

func TestCheckBadInput(t *testing.T) {
	t.Parallel()
	r, _ := newTestRunner(t, Options{})
	for _, m := range []Model{
		{Name: "no claims", Source: []byte("init { skip }")},
		{Name: "path", File: "../x.pml", Source: []byte("init { skip }"), Claims: []string{"a"}},
		{Name: "flag claim", Source: []byte("init { skip }"), Claims: []string{"-E"}},
	} {
		if _, err := r.Check(context.Background(), m); err == nil || !strings.Contains(err.Error(), m.Name) {
			t.Errorf("%s: err = %v, want an error naming the model", m.Name, err)
		}
	}
}

func TestFindToolsMissing(t *testing.T) {
	for _, tc := range []struct{ env, tool string }{{EnvSpin, "spin"}, {EnvCC, "gcc"}} {
		t.Run(tc.tool, func(t *testing.T) {
			t.Setenv(tc.env, "/nonexistent")
			_, err := FindTools()
			var me *MissingToolError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v (%T), want *MissingToolError", err, err)
			}
			if me.Tool != tc.tool {
				t.Errorf("Tool = %q, want %q", me.Tool, tc.tool)
			}
			msg := err.Error()
			for _, s := range []string{tc.tool, "/nonexistent", "sudo apt-get install spin gcc", "make setup"} {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not mention %q", msg, s)
				}
			}
		})
	}
	t.Run("override", func(t *testing.T) {
		tl := tools(t)
		t.Setenv(EnvSpin, tl.Spin)
		got, err := FindTools()
		if err != nil || got.Spin != tl.Spin || !filepath.IsAbs(got.CC) {
			t.Fatalf("FindTools = %+v, %v", got, err)
		}
	})
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	r, parent := newTestRunner(t, Options{Timeout: time.Second})
	m := readModel(t, "huge.pml", "unreachable")
	start := time.Now()
	_, err := r.Check(context.Background(), m)
	elapsed := time.Since(start)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v (%T), want *TimeoutError", err, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("errors.Is(err, context.DeadlineExceeded) is false")
	}
	if msg := err.Error(); !strings.Contains(msg, "huge") || !strings.Contains(msg, "timed out after 1s") {
		t.Errorf("message %q should name the model and the timeout", msg)
	}
	if elapsed > time.Second+killGrace {
		t.Errorf("Check returned after %v", elapsed)
	}
	t.Logf("timed out during %s after %v", te.Stage, elapsed)
	assertClean(t, parent)
}

// TestCancelDuringPan cancels while pan searches a huge state space: the
// result must be ctx.Err() and pan must be gone.
func TestCancelDuringPan(t *testing.T) {
	t.Parallel()
	r, parent := newTestRunner(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.onStage = func(_, stage string) {
		if stage == StagePan {
			time.AfterFunc(300*time.Millisecond, cancel)
		}
	}
	_, err := r.Check(ctx, readModel(t, "huge.pml", "unreachable"))
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertClean(t, parent)
}

func TestKeepDir(t *testing.T) {
	t.Parallel()
	keep := t.TempDir()
	r, parent := newTestRunner(t, Options{KeepDir: keep})
	m := readModel(t, "lost_update.pml", "P3_1", "never3")
	var stages stageCounter
	r.onStage = stages.hook
	m.Name = "balance t1,t2"
	m.File = "balance.pml" // the trail is then balance.pml.trail
	var dirs []string
	for range 2 {
		res, err := r.Check(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, res.Dir)
	}
	want := []string{filepath.Join(keep, "balance_t1_t2"), filepath.Join(keep, "balance_t1_t2-2")}
	for i, d := range dirs {
		if d != want[i] {
			t.Errorf("Dir %d = %q, want %q", i, d, want[i])
		}
		for _, f := range []string{"balance.pml", "pan.c", "pan"} {
			if _, err := os.Stat(filepath.Join(d, f)); err != nil {
				t.Errorf("kept dir lacks %s: %v", f, err)
			}
		}
	}
	if got := stages.get(StageReplay); got != 2 {
		t.Errorf("%d replays, want 2 (one violated claim per check)", got)
	}
	assertClean(t, parent)
}

func TestCheckAll(t *testing.T) {
	t.Parallel()
	r, parent := newTestRunner(t, Options{Jobs: 2})
	n := 20
	if testing.Short() {
		n = 6 // every model costs a gcc compile of about a second
	}
	var models []Model
	for i := range n {
		file, claims := "lost_update.pml", []string{"P3_1", "never3"}
		if i%2 == 1 {
			file, claims = "locked.pml", []string{"P3_1", "P3_2"}
		}
		m := readModel(t, file, claims...)
		m.Name = fmt.Sprintf("%s #%d", m.Name, i)
		models = append(models, m)
	}
	calls := make([]int, len(models))
	var inside, overlaps atomic.Int32
	r.CheckAll(context.Background(), models, func(i int, res Result, err error) {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer inside.Add(-1)
		calls[i]++
		if err != nil {
			t.Errorf("model %d: %v", i, err)
			return
		}
		if res.Model != models[i].Name {
			t.Errorf("model %d: result for %q", i, res.Model)
		}
		wantViolated := i%2 == 0
		if len(res.Claims) != 2 || res.Claims[0].Violated != wantViolated || res.Claims[1].Violated {
			t.Errorf("model %d: claims %+v", i, res.Claims)
		}
	})
	for i, n := range calls {
		if n != 1 {
			t.Errorf("model %d reported %d times", i, n)
		}
	}
	if overlaps.Load() != 0 {
		t.Error("each was called concurrently")
	}
	assertClean(t, parent)
}

func TestCheckAllCancelled(t *testing.T) {
	t.Parallel()
	r, parent := newTestRunner(t, Options{Jobs: 2})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	models := make([]Model, 5)
	for i := range models {
		models[i] = readModel(t, "lost_update.pml", "P3_1")
	}
	n := 0
	r.CheckAll(ctx, models, func(i int, res Result, err error) {
		n++
		if err != context.Canceled {
			t.Errorf("model %d: err = %v, want context.Canceled", i, err)
		}
	})
	if n != len(models) {
		t.Errorf("%d reports, want %d", n, len(models))
	}
	assertClean(t, parent)
}

// BenchmarkCheck measures one small model end to end: spin -a, one compile,
// two pan runs and one replay.
func BenchmarkCheck(b *testing.B) {
	r := New(tools(b), Options{})
	m := readModel(b, "lost_update.pml", "P3_1", "never3")
	for b.Loop() {
		if _, err := r.Check(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
}
