package reduction_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis/internal/atest"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/lockset"
	"github.com/mcpredict/mcpredict/analysis/reduction"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// analyzers returns the reduction checker with what it requires.
func analyzers(paper bool) []*analysis.Analyzer {
	esc := escape.New()
	ls := lockset.New(lockset.Options{Paper: paper}, esc)
	return []*analysis.Analyzer{reduction.New(txn.New(txn.Options{}), ls, esc)}
}

func run(t testing.TB, path string, paper bool) *bugs.Report {
	t.Helper()
	m, err := tracemodel.Open(context.Background(), path, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Run(context.Background(), m, analyzers(paper), analysis.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

var unitRE = regexp.MustCompile(`^(.*) of thread (\S+) is not reducible`)

// verdicts lists "kind unit thread" for every reported transaction.
func verdicts(t *testing.T, rep *bugs.Report) []string {
	var out []string
	for _, v := range rep.Violations {
		mm := unitRE.FindStringSubmatch(v.Message)
		if mm == nil {
			t.Fatalf("message %q", v.Message)
		}
		out = append(out, fmt.Sprintf("%s %s %s", v.Pattern, mm[1], mm[2]))
	}
	slices.Sort(out)
	return out
}

// TestPaperVerdicts asserts the dissertation's verdicts on its examples
// (each fixture's comment cites it).
func TestPaperVerdicts(t *testing.T) {
	for _, tc := range []struct {
		file  string
		paper bool // Figure 4.1's lockset test
		want  []string
	}{
		// Figure 4.3: new Vector(v1) is R B L R B B B L, not atomic;
		// removeAllElements is R B B B L, atomic.
		{"vector", false, []string{"cs-cs function Vector thread_1"}},
		// Figure 2.1, (2.1), (2.2): deposit is acq R rel acq W rel.
		{"account", false, []string{"cs-cs function deposit t1", "cs-cs function deposit t2"}},
		// Theorem 4.4.2 and Lemma 4.4.1: lookup and touch are atomic,
		// update (its first critical section reads a shared variable) not.
		{"acqarel", false, []string{"cs-cs function update t1"}},
		// §4.6: re-entrant and protected locks are both-movers.
		{"locks46", false, nil},
		// §4.6: a lock protected for a while and unprotected later is not
		// a both-mover off-line.
		{"locks46_late", false, []string{"cs-cs function twice t1"}},
		// §6.4.1: t1 = R(x) W(x) is NN, "wrongly reported to be
		// non-atomic by the reduction theorem".
		{"sec641", false, []string{"race-race function inc t1"}},
		// §4.5: Figure 4.2's false race "causes a false alarm in
		// atomicity checking" (Figure 4.1's test); none per period.
		{"fig4_2_t234", true, []string{"race-cs function t4 thr4"}},
		{"fig4_2_t234", false, nil},
	} {
		rep := run(t, filepath.Join("testdata", tc.file+".csv"), tc.paper)
		if got := verdicts(t, rep); !slices.Equal(got, tc.want) {
			t.Errorf("%s (paper lockset %v): %v, want %v", tc.file, tc.paper, got, tc.want)
		}
		for _, b := range rep.Bugs {
			if !strings.HasPrefix(b.ID, "RD-") {
				t.Errorf("%s: bug id %s", tc.file, b.ID)
			}
		}
	}
}

// TestVectorDiagnostics: Figure 7.2, the reduction-based algorithm reports
// "synchronized block @ Vector.java:689, synchronized block @
// Vector.java:266": the acquisition in size() at 266, its release, and the
// acquisition in toArray() at 689.
func TestVectorDiagnostics(t *testing.T) {
	rep := run(t, "testdata/vector.csv", false)
	if len(rep.Violations) != 1 {
		t.Fatalf("%d violations", len(rep.Violations))
	}
	var got []string
	for _, a := range rep.Violations[0].Accesses {
		got = append(got, fmt.Sprintf("%s %s %s", a.Role, a.Action, a.Location()))
	}
	want := []string{"acquire Lock Vector.java:266", "release Unlock Vector.java:267", "acquire Lock Vector.java:689"}
	if !slices.Equal(got, want) {
		t.Errorf("sites %v, want %v", got, want)
	}
}

// TestReducible is the mover pattern of §1.2 of the spec (Theorem 4.3.1).
func TestReducible(t *testing.T) {
	const B, R, L, N = reduction.B, reduction.R, reduction.L, reduction.N
	for _, tc := range []struct {
		seq  []reduction.Mover
		want bool
	}{
		{nil, true},
		{[]reduction.Mover{R, B, L}, true},
		{[]reduction.Mover{R, R, N, L, L}, true},
		{[]reduction.Mover{R, B, L, R, B, B, B, L}, false}, // Figure 4.3
		{[]reduction.Mover{N, N}, false},                   // §6.4.1
		{[]reduction.Mover{N, R}, false},
		{[]reduction.Mover{L, N}, false},
		{[]reduction.Mover{B, N, B, L, B}, true},
	} {
		if got := reduction.Reducible(tc.seq); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.seq, got, tc.want)
		}
	}
}

func summary(rep *bugs.Report) string {
	var b strings.Builder
	for _, bug := range rep.Bugs {
		fmt.Fprintf(&b, "%s %s objects=%s instances=%d\n", bug.ID, bug.Pattern, strings.Join(bug.Vars, ","), len(bug.Instances))
		v := rep.Violations[bug.Instances[0]]
		for _, a := range v.Accesses {
			fmt.Fprintf(&b, "  thread %s %s %s %s %s\n", a.Handle, a.Role, a.Action, a.Object, a.Location())
		}
		fmt.Fprintf(&b, "  %s\n", v.Message)
	}
	fmt.Fprintf(&b, "summary: %s\n", rep.AnalysisOf(reduction.Name).Summary)
	return b.String()
}

// TestGolden checks every fixture's report against its golden file;
// -update rewrites them.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		got := summary(run(t, f, false))
		atest.Golden(t, f, got, *update)
	}
}
