package predict

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/cache"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// spinTools returns the real spin and gcc, or skips when they are missing
// (make setup installs them; CI always has them).
func spinTools(t *testing.T) spinrunner.Tools {
	t.Helper()
	tools, err := spinrunner.FindTools()
	if err != nil {
		t.Skipf("spin/gcc not installed (run make setup): %v", err)
	}
	return tools
}

// fastTools is spinTools with tcc as the C compiler when it is installed
// (make setup installs it): Spin's verifier compiles ~20x faster, which
// keeps the big tables quick. TestExamples uses gcc.
func fastTools(t *testing.T) spinrunner.Tools {
	tools := spinTools(t)
	if tcc, err := exec.LookPath("tcc"); err == nil {
		tools.CC = tcc
	}
	return tools
}

func parseText(t *testing.T, name, text string) *tracemodel.Model {
	t.Helper()
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(text), name, tracemodel.Options{})
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return m
}

// patternsFound lists the distinct pattern ids of the bugs, sorted.
func patternsFound(r *bugs.Report) string {
	set := map[string]bool{}
	for _, b := range r.Bugs {
		set[b.Pattern] = true
	}
	var ids []string
	for id := range set {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

// cases: each trace and the patterns that must be predicted — no more, no
// fewer. Lines are "thread, line, Action, object"; the helper adds the
// timestamp and file.
var cases = []struct {
	name  string
	trace string
	want  string
	opts  func(*Options)
}{
	// Each pattern where it occurs, and only it.
	{"P1 unrepeatable read", "1 1 Read x\n1 2 Read x\n2 5 Write x\n", "P1", nil},
	{"P2 stale read", "1 1 Write x\n1 2 Read x\n2 5 Write x\n", "P2", nil},
	{"P3 lost update", "1 1 Read x\n1 2 Write x\n2 5 Write x\n", "P3", nil},
	{"P4 dirty read", "1 1 Write x\n1 2 Write x\n2 5 Read x\n", "P4", nil},
	{"P5 overwritten write", "1 1 Write x\n1 2 Write x\n2 5 Write x\n", "P5", nil},
	{"remote reads only: serializable", "1 1 Read x\n1 2 Read x\n2 5 Read x\n3 6 Write y\n3 7 Read x\n4 8 Read y\n", "", nil},
	{"one access each: nothing", "1 1 Write x\n2 2 Write x\n", "", nil},
	// Mutex.
	{"mutex makes P3 impossible", "1 1 Lock m\n1 2 Read x\n1 3 Write x\n1 4 Unlock m\n2 5 Lock m\n2 6 Write x\n2 7 Unlock m\n", "", nil},
	{"mutex around each access: P3 remains", "1 1 Lock m\n1 2 Read x\n1 3 Unlock m\n1 4 Lock m\n1 5 Write x\n1 6 Unlock m\n2 7 Lock m\n2 8 Write x\n2 9 Unlock m\n", "P3", nil},
	{"different mutexes do not exclude", "1 1 Lock m\n1 2 Read x\n1 3 Write x\n1 4 Unlock m\n2 5 Lock n\n2 6 Write x\n2 7 Unlock n\n", "P3", nil},
	{"recursive mutex", "1 1 Lock m\n1 2 Lock m\n1 3 Read x\n1 4 Unlock m\n1 5 Write x\n1 6 Unlock m\n2 7 Lock m\n2 8 Write x\n2 9 Unlock m\n", "", nil},
	// Rwlock.
	{"write lock excludes readers", "1 1 WrLock l\n1 2 Write x\n1 3 Write x\n1 4 RwUnlock l\n2 5 RdLock l\n2 6 Read x\n2 7 RwUnlock l\n", "", nil},
	{"read locks do not exclude each other", "1 1 RdLock l\n1 2 Write x\n1 3 Write x\n1 4 RwUnlock l\n2 5 RdLock l\n2 6 Read x\n2 7 RwUnlock l\n", "P4", nil},
	// Causal order.
	{"signal/wait orders", "1 1 Write x\n1 2 Write x\n1 3 Signal c\n2 4 Wait c\n2 5 Read x\n", "", nil},
	{"broadcast orders", "1 1 Write x\n1 2 Write x\n1 3 Broadcast c\n2 4 Wait c\n2 5 Read x\n", "", nil},
	{"wait before the signal is not ordered", "2 1 Wait c\n1 2 Write x\n1 3 Write x\n1 4 Signal c\n2 5 Read x\n", "P4", nil},
	{"semaphore orders", "1 1 Write x\n1 2 Write x\n1 3 SemPost s\n2 4 SemWait s\n2 5 Read x\n", "", nil},
	{"barrier orders", "1 1 Write x\n1 2 Write x\n1 3 BarrierWait b\n2 4 BarrierWait b\n2 5 Read x\n", "", nil},
	{"create orders", "1 1 Write x\n1 2 Write x\n1 3 Create 2\n2 4 Read x\n", "", nil},
	{"join orders", "1 1 Create 2\n2 2 Read x\n1 3 Join 2\n1 4 Write x\n1 5 Write x\n", "", nil},
	{"order through a third thread", "1 1 Write x\n1 2 Write x\n1 3 Signal c\n3 4 Wait c\n3 5 Create 2\n2 6 Read x\n", "", nil},
	{"no order without the signal", "1 1 Write x\n1 2 Write x\n3 4 Wait c\n3 5 Create 2\n2 6 Read x\n", "P4", nil},
	// Region boundaries.
	{"cond wait loop is a boundary", "1 1 Lock m\n1 2 Read ready\n2 3 Lock m\n2 4 Write ready\n2 5 Signal cv\n2 6 Unlock m\n1 7 Wait cv m\n1 8 Read ready\n1 9 Unlock m\n", "", nil},
	{"--no-boundaries: the paper's false positive", "1 1 Lock m\n1 2 Read ready\n2 3 Lock m\n2 4 Write ready\n2 5 Signal cv\n2 6 Unlock m\n1 7 Wait cv m\n1 8 Read ready\n1 9 Unlock m\n", "P1",
		func(o *Options) { o.Project.NoBoundaries = true }},
	// Published writes: a later critical section is a new region for the
	// patterns that start with a local write.
	{"locked counter, two critical sections each", "1 1 Lock m\n1 2 Read n\n1 3 Write n\n1 4 Unlock m\n1 5 Lock m\n1 6 Read n\n1 7 Write n\n1 8 Unlock m\n2 9 Lock m\n2 10 Read n\n2 11 Write n\n2 12 Unlock m\n2 13 Lock m\n2 14 Read n\n2 15 Write n\n2 16 Unlock m\n", "", nil},
	{"locked counter, --no-boundaries", "1 1 Lock m\n1 2 Read n\n1 3 Write n\n1 4 Unlock m\n1 5 Lock m\n1 6 Read n\n1 7 Write n\n1 8 Unlock m\n2 9 Lock m\n2 10 Read n\n2 11 Write n\n2 12 Unlock m\n", "P2,P5",
		func(o *Options) { o.Project.NoBoundaries = true }},
	{"write then read back in a new critical section", "1 1 Lock m\n1 2 Write x\n1 3 Unlock m\n1 4 Lock m\n1 5 Read x\n1 6 Unlock m\n2 7 Write x\n", "", nil},
	{"unlocked write then read back", "1 2 Write x\n1 5 Read x\n2 7 Write x\n", "P2", nil},
	{"check in one critical section, use in the next", "1 1 Lock m\n1 2 Read x\n1 3 Unlock m\n1 4 Lock m\n1 5 Read x\n1 6 Unlock m\n2 7 Lock m\n2 8 Write x\n2 9 Unlock m\n", "P1", nil},
	// Options.
	{"--patterns selects", "1 1 Write x\n1 2 Write x\n2 5 Write x\n2 6 Read x\n", "P4", func(o *Options) { o.Models = variableModels(pick("P4")...) }},
	{"user pattern", "1 1 Write x\n2 2 Read x\n1 3 Write x\n", "U1", func(o *Options) {
		p, err := ltl.User("U1", "W1 R2 W1")
		if err != nil {
			panic(err)
		}
		o.Models = variableModels(p)
	}},
	{"--vars narrows", "1 1 Read x\n1 2 Read x\n2 5 Write x\n1 6 Read y\n1 7 Write y\n2 8 Write y\n", "P3", func(o *Options) { o.Vars = []string{"y"} }},
	{"--threads narrows", "1 1 Read x\n1 2 Read x\n2 5 Write x\n3 6 Write x\n3 7 Write x\n", "P1", func(o *Options) { o.Threads = []string{"1", "2"} }},
}

// variableModels selects the models of one variable with the patterns.
func variableModels(pats ...ltl.Pattern) []Models {
	return []Models{{Kind: VariableModels, Patterns: pats}}
}

// withSets selects the models of one variable and those of atomic sets
// with the built-in patterns.
var withSets = []Models{{Kind: VariableModels, Patterns: ltl.Builtin()}, {Kind: SetModels, Patterns: ltl.BuiltinSets()}}

func pick(ids ...string) []ltl.Pattern {
	var out []ltl.Pattern
	for _, p := range ltl.Builtin() {
		for _, id := range ids {
			if p.ID == id {
				out = append(out, p)
			}
		}
	}
	return out
}

// expand turns "thread line Action obj [obj2]" lines into trace lines.
func expand(short string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSpace(short), "\n") {
		f := strings.Fields(l)
		obj := strings.Join(f[3:], ", ")
		b.WriteString(f[0] + ", " + itoa(i+1) + ", t.c-" + f[1] + ", " + f[2] + ", " + obj + "\n")
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestPatternsAndSyncKinds(t *testing.T) {
	tools := fastTools(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := parseText(t, "t.csv", expand(tc.trace))
			verdicts := map[Engine]string{}
			// Auto is native plus Spin on the violating models; the
			// examples test covers it.
			for _, eng := range []Engine{EngineNative, EngineSpin} {
				o := Options{Engine: eng, Tools: tools, Jobs: 2}
				if tc.opts != nil {
					tc.opts(&o)
				}
				rep, err := Run(context.Background(), m, o)
				if err != nil {
					t.Fatalf("%s: %v", eng, err)
				}
				verdicts[eng] = patternsFound(rep)
				// Every violation's instance is the pattern, in order.
				for _, v := range rep.Violations {
					if len(v.Accesses) < 3 {
						t.Errorf("%s: violation %s with %d accesses", eng, v.Pattern, len(v.Accesses))
					}
					if v.Accesses[0].Role != "local" || v.Accesses[len(v.Accesses)-1].Role != "local" {
						t.Errorf("%s: instance must start and end with the local thread: %+v", eng, v.Accesses)
					}
				}
			}
			for eng, got := range verdicts {
				if got != tc.want {
					t.Errorf("engine %s found %q, want %q", eng, got, tc.want)
				}
			}
		})
	}
}

func TestExamples(t *testing.T) {
	tools := spinTools(t)
	tests := []struct {
		file string
		want string
		// bug: a pattern and its source lines (local first, as in the report)
		bug string
	}{
		{"bank.csv", "P3", "P3 local Read bank.c:11 deposit|local Write bank.c:15 deposit|remote Write bank.c:15 deposit"},
		{"logbuf.csv", "P1,P3", "P1 local Read mod_log_config.c:1353 ap_buffered_log_writer|local Read mod_log_config.c:1369 ap_buffered_log_writer|remote Write mod_log_config.c:1373 ap_buffered_log_writer"},
		{"fig5.csv", "P4", "P4 local Write nsEventQueue.cpp:100 |local Read nsEventQueue.cpp:102 |local Write nsEventQueue.cpp:108 |remote Read nsEventQueue.cpp:200 "},
		// Thread 3 reads the flag twice, and thread 1's write can come
		// between: a true unrepeatable read besides the dirty read.
		{"fig5-mutant.csv", "P1,P4", "P1 local Read nsEventQueue.cpp:200 |local Read nsEventQueue.cpp:201 |remote Write nsEventQueue.cpp:100 "},
		{"splash-barrier.csv", "", ""},
		{"create-join.csv", "", ""},
		{"condvar-handoff.csv", "", ""},
		{"third-thread.csv", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			m, err := tracemodel.Open(context.Background(), filepath.Join("..", "examples", tc.file), tracemodel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(context.Background(), m, Options{Tools: tools, Jobs: 2})
			if err != nil {
				t.Fatal(err)
			}
			if got := patternsFound(rep); got != tc.want {
				t.Fatalf("patterns = %q, want %q", got, tc.want)
			}
			if tc.bug == "" {
				return
			}
			var sigs []string
			for _, b := range rep.Bugs {
				var locs []string
				for _, l := range b.Locations {
					locs = append(locs, l.Role+" "+l.Action+" "+l.String()+" "+l.Func)
				}
				sigs = append(sigs, b.Pattern+" "+strings.Join(locs, "|"))
			}
			found := false
			for _, s := range sigs {
				found = found || s == tc.bug
			}
			if !found {
				t.Errorf("bug %q not reported; bugs:\n%s", tc.bug, strings.Join(sigs, "\n"))
			}
		})
	}
}

// TestPredictedNotObserved checks that the lost update of bank.csv, whose
// recorded run executed the two deposits one after the other, is predicted
// with an interleaving that differs from the observed order.
func TestPredictedNotObserved(t *testing.T) {
	tools := spinTools(t)
	m, err := tracemodel.Open(context.Background(), "../examples/bank.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), m, Options{Tools: tools, Engine: EngineSpin, Models: variableModels(pick("P3")...)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) == 0 {
		t.Fatal("no lost update predicted")
	}
	for _, v := range rep.Violations {
		if v.Engine != "spin" {
			t.Errorf("engine = %s, want spin", v.Engine)
		}
		reordered := false
		for i := 1; i < len(v.Accesses); i++ {
			if v.Accesses[i].TraceLine < v.Accesses[i-1].TraceLine {
				reordered = true
			}
		}
		if !reordered {
			t.Errorf("instance follows the observed order, so it was not a prediction: %+v", v.Accesses)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	m := parseText(t, "t.csv", expand("1 1 Read x\n1 2 Read x\n2 5 Write x\n1 6 Lock m\n1 7 Unlock m\n"))
	for _, o := range []Options{{Vars: []string{"nosuch"}}, {Threads: []string{"9"}}, {Vars: []string{"["}}} {
		if _, err := Plan(context.Background(), m, o); err == nil {
			t.Errorf("Plan(%+v): no error", o)
		} else if _, ok := err.(*UsageError); !ok {
			t.Errorf("Plan(%+v): %T, want *UsageError", o, err)
		}
	}
}

func TestCacheGivesTheSameReport(t *testing.T) {
	tools := fastTools(t)
	m, err := tracemodel.Open(context.Background(), "../examples/logbuf.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var reports []*bugs.Report
	for i := 0; i < 2; i++ {
		rep, err := Run(context.Background(), m, Options{Tools: tools, Cache: dir})
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, rep)
	}
	if reports[0].Stats.CacheHits != 0 || reports[1].Stats.CacheHits != reports[1].Stats.Models {
		t.Errorf("cache hits %d then %d, want 0 then %d", reports[0].Stats.CacheHits, reports[1].Stats.CacheHits, reports[1].Stats.Models)
	}
	if reports[1].Stats.SpinModels != reports[0].Stats.SpinModels {
		t.Errorf("cached entry lost the Spin flag")
	}
	a, _ := json.Marshal(reports[0].Violations)
	b, _ := json.Marshal(reports[1].Violations)
	if string(a) != string(b) || len(reports[0].Violations) == 0 {
		t.Errorf("cached report differs:\n%s\n%s", a, b)
	}
}

// TestBugIDsIndependentOfEngine checks issue 10's canonical identity: the
// same trace gives the same bugs (ids, locations, instance counts) whether
// the native search, Spin, or both decide the claims.
func TestBugIDsIndependentOfEngine(t *testing.T) {
	tools := fastTools(t)
	// racy_counter.csv: examples/c/racy_counter.c recorded by mcpredict
	// record (three racy increments, each a bug with several remote writes).
	for _, file := range []string{"examples/bank.csv", "examples/logbuf.csv", "examples/fig5.csv", "examples/fig5-mutant.csv", "predict/testdata/racy_counter.csv"} {
		t.Run(file, func(t *testing.T) {
			m, err := tracemodel.Open(context.Background(), filepath.Join("..", file), tracemodel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want string
			for _, eng := range []Engine{EngineNative, EngineAuto, EngineSpin} {
				rep, err := Run(context.Background(), m, Options{Tools: tools, Jobs: 2, Engine: eng})
				if err != nil {
					t.Fatalf("engine %s: %v", eng, err)
				}
				var lines []string
				for _, b := range rep.Bugs {
					var locs []string
					for _, l := range b.Locations {
						locs = append(locs, l.Role+" "+l.Action+" "+l.String())
					}
					lines = append(lines, fmt.Sprintf("%s %s %d: %s", b.ID, b.Pattern, b.Count, strings.Join(locs, ", ")))
				}
				got := strings.Join(lines, "\n")
				if eng == EngineNative {
					if len(lines) == 0 {
						t.Fatalf("no bug in %s: the comparison would prove nothing", file)
					}
					want = got
					continue
				}
				if got != want {
					t.Errorf("engine %s:\n%s\nengine native:\n%s", eng, got, want)
				}
			}
		})
	}
}

// TestAtomicSets checks the models of atomic sets end to end: the torn
// read of range.csv is predicted as M1 on {lo, hi} with the sets on
// (inferred or declared), by every engine, and nothing without them.
func TestAtomicSets(t *testing.T) {
	tools := spinTools(t)
	m, err := tracemodel.Open(context.Background(), "testdata/range.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want bool
	}{
		{"off", Options{Engine: EngineNative}, false},
		{"inferred native", Options{Engine: EngineNative, Models: withSets}, true},
		{"inferred auto", Options{Engine: EngineAuto, Tools: tools, Models: withSets}, true},
		{"inferred spin", Options{Engine: EngineSpin, Tools: tools, Models: withSets}, true},
		{"declared only", Options{Engine: EngineNative, Models: withSets,
			Sets: tracemodel.SetOptions{MaxPartners: -1, Declared: [][]string{{"l?", "hi"}}}}, true},
		{"no partners", Options{Engine: EngineNative, Models: withSets, Sets: tracemodel.SetOptions{MaxPartners: -1}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), m, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want {
				if len(rep.Bugs) != 0 {
					t.Fatalf("bugs = %+v, want none", rep.Bugs)
				}
				return
			}
			if len(rep.Bugs) != 1 {
				t.Fatalf("bugs = %+v, want one M1", rep.Bugs)
			}
			b := rep.Bugs[0]
			if b.Pattern != "M1" || !slices.Equal(b.Vars, []string{"lo", "hi"}) {
				t.Errorf("bug = %s on %v, want M1 on [lo hi]", b.Pattern, b.Vars)
			}
			var lines []int
			for _, l := range b.Locations {
				lines = append(lines, l.Line)
			}
			if !slices.Equal(lines, []int{29, 37, 21, 22}) {
				t.Errorf("locations %v, want the reads at 29, 37 and the writes at 21, 22", lines)
			}
			v := rep.Violations[b.Instances[0]]
			for _, a := range v.Accesses {
				if a.Object != "lo" && a.Object != "hi" {
					t.Errorf("access %+v names no variable of the set", a)
				}
			}
			if tc.opts.Engine == EngineAuto && !b.Confirmed {
				t.Error("Spin did not confirm the bug")
			}
		})
	}
	if _, err := Plan(context.Background(), m, Options{Models: withSets, Sets: tracemodel.SetOptions{Declared: [][]string{{"lo", "nosuch"}}}}); err == nil {
		t.Error("a declared set with an unknown variable is accepted")
	}
}

// TestModelsNamed: each kind of models is planned only when selected, its
// violations and bugs carry the analysis it is named for, and the report
// lists each named analysis with its bugs, models and claims.
func TestModelsNamed(t *testing.T) {
	m, err := tracemodel.Open(context.Background(), "testdata/range.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sets := []Models{{Kind: SetModels, Analysis: "sets", Patterns: ltl.AllBuiltin()}}
	rep, err := Run(context.Background(), m, Options{Engine: EngineNative, Models: sets})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Bugs) != 1 || rep.Bugs[0].Analysis != "sets" || rep.Violations[0].Analysis != "sets" {
		t.Fatalf("bugs %+v", rep.Bugs)
	}
	if !slices.Equal(rep.Stats.Patterns, []string{"M1", "M2", "M3", "M4", "M5", "M6"}) {
		t.Errorf("patterns %v: want the set patterns only", rep.Stats.Patterns)
	}
	want := fmt.Sprintf("%d %s, %d claims", rep.Stats.Models, plural(rep.Stats.Models, "model", "models"), rep.Stats.Claims)
	if len(rep.Analyses) != 1 || rep.Analyses[0].Name != "sets" || rep.Analyses[0].Bugs != 1 ||
		!rep.Analyses[0].ModelChecked || rep.Analyses[0].Summary != want || rep.Stats.Claims != 24*rep.Stats.Models {
		t.Errorf("analyses %+v, stats %+v", rep.Analyses, rep.Stats)
	}
	if _, err := Plan(context.Background(), m, Options{Models: append(sets, sets...)}); err == nil {
		t.Error("a kind selected twice is accepted")
	}
	none, err := Plan(context.Background(), m, Options{Models: []Models{{Kind: VariableModels, Patterns: []ltl.Pattern{}}}})
	if err != nil || len(none) != 0 {
		t.Errorf("a kind without patterns plans %d models (%v)", len(none), err)
	}
}
