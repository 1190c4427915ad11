package block

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis/internal/atest"
	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func open(t testing.TB, path string) *tracemodel.Model {
	t.Helper()
	m, err := tracemodel.Open(context.Background(), path, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func summary(v Violation) string {
	var locs []string
	for _, r := range v.Events {
		locs = append(locs, r.Where())
	}
	vars := v.Var
	if v.Var2 != "" {
		vars += "," + v.Var2
	}
	return fmt.Sprintf("%s %s %s %s", v.Kind, v.Pattern, vars, strings.Join(locs, ","))
}

func TestExamples(t *testing.T) {
	tests := []struct {
		file string
		opts Options
		want []string
	}{
		{"ex5_1_view.csv", Options{}, []string{
			"view R FW W v w.c:3,w.c:20,w.c:5",
			"view W W R v w.c:5,w.c:20,w.c:6",
		}},
		// Without t, its outermost critical section is an implicit
		// transaction (spec S5).
		{"ex5_1_view.csv", Options{NotAtomic: []string{"t"}}, []string{
			"view R FW W v w.c:3,w.c:20,w.c:5",
			"view W W R v w.c:5,w.c:20,w.c:6",
		}},
		{"ex5_1_read.csv", Options{}, nil},
		{"ex5_1_read.csv", Options{Conflict: true}, nil},
		{"fig4_2.csv", Options{}, nil},
		{"fig4_2.csv", Options{Conflict: true}, nil},
		{"www.csv", Options{}, nil},
		{"www.csv", Options{Conflict: true}, []string{"conflict W W W x w.c:2,w.c:20,w.c:3"}},
		{"barrier.csv", Options{}, nil},
		// Enter/Exit transactions of the shipped example: the lost update.
		{"../../../examples/bank.csv", Options{}, []string{"view R FW W balance bank.c:11,bank.c:15,bank.c:15"}},
		// No transaction: the two critical sections of deposit are two
		// implicit ones, each atomic.
		{"../../../examples/bank.csv", Options{Atomic: []string{"nothing"}}, nil},
		// Two variables (§5.2). Table 5.2, rows "0 read", "1 read",
		// "2 reads": the other transaction inside the block, seen from
		// each side when both nestings are feasible.
		{"t5_2_0read.csv", Options{}, []string{
			"view-2v W(x) W'(x) W'(y) W(y) x,y t.c:3,t.c:13,t.c:14,t.c:4",
			"view-2v W(x) W'(x) W'(y) W(y) x,y t.c:13,t.c:3,t.c:4,t.c:14",
		}},
		{"t5_2_1read.csv", Options{Conflict: true}, []string{
			"view-2v R(x) W'(y) W'(x) W(y) x,y t.c:3,t.c:13,t.c:14,t.c:4",
			"view-2v W(x) R'(y) W'(x) W(y) y,x t.c:13,t.c:3,t.c:4,t.c:14",
		}},
		{"t5_2_2reads.csv", Options{}, []string{
			"view-2v R(x) W'(x) R'(y) W(y) x,y t.c:3,t.c:13,t.c:14,t.c:4",
			"view-2v W(x) R'(x) W'(y) R(y) x,y t.c:13,t.c:3,t.c:4,t.c:14",
		}},
		// Transaction (5.5): the 2v-blocks (R1, W4) and (W3, W4) only.
		{"ex5_5.csv", Options{}, []string{
			"view W R W y t.c:4,t.c:14,t.c:6",
			"view-2v W(x) R'(x) R'(y) W(y) x,y t.c:5,t.c:13,t.c:14,t.c:6",
			"view-2v R(x) W'(x) W'(y) R(y) x,y t.c:13,t.c:5,t.c:6,t.c:14",
		}},
		{"ex5_5.csv", Options{Max2vOps: -1}, []string{"view W R W y t.c:4,t.c:14,t.c:6"}},
		{"pair_split.csv", Options{}, []string{"view-2v W(x) R'(x) R'(y) W(y) x,y p.c:4,p.c:14,p.c:15,p.c:7"}},
		{"pair_split.csv", Options{Conflict: true}, []string{"view-2v W(x) R'(x) R'(y) W(y) x,y p.c:4,p.c:14,p.c:15,p.c:7"}},
		{"crossing.csv", Options{}, []string{"view-2v R(x) W'(y) W(y) W'(x) x,y k.c:5,k.c:14,k.c:7,k.c:16"}},
		// Serializable two-variable examples.
		{"pair_locked.csv", Options{Conflict: true}, nil},
		{"pair_join.csv", Options{Conflict: true}, nil},
		{"pair_oneconflict.csv", Options{Conflict: true}, nil},
		{"heldmid.csv", Options{Conflict: true}, nil},
		// Trace (5.6): a cycle of three pairwise-atomic transactions.
		// Theorem 5.3.1 (IR-FW trace enumeration) is not implemented: the
		// pairwise checker (Theorem 5.2.1) reports nothing, as documented.
		{"ex5_6.csv", Options{Conflict: true}, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s%v%v%v", tc.file, tc.opts.Atomic, tc.opts.NotAtomic, tc.opts.Conflict), func(t *testing.T) {
			m := open(t, filepath.Join("testdata", tc.file))
			vs, err := Analyze(context.Background(), m, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, summary(v))
				if v.Kind == View2v {
					check2v(t, v)
					continue
				}
				if v.Count < 1 || v.Message == "" || v.Txn.Thread == "" || len(v.Events) != 3 ||
					v.Events[0].Role != RoleFirst || v.Events[1].Role != RoleMid || v.Events[2].Role != RoleLast {
					t.Errorf("incomplete violation %+v", v)
				}
				if v.Events[0].Thread == v.Events[1].Thread {
					t.Errorf("mid operation of the same thread: %+v", v)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// check2v checks the shape of a View2v violation.
func check2v(t *testing.T, v Violation) {
	t.Helper()
	if v.Count < 1 || v.Message == "" || v.Txn.Thread == "" || v.Other == nil || v.Other.Thread == v.Txn.Thread ||
		v.Var2 == "" || v.Var2 == v.Var || len(v.Events) != 4 || v.Events[0].Role != RoleFirst {
		t.Errorf("incomplete violation %+v", v)
		return
	}
	roles := map[string]string{}
	for _, r := range v.Events {
		roles[r.Role] = r.Thread
	}
	if len(roles) != 4 || roles[RoleFirst] != roles[RoleLast] || roles[RoleOtherFirst] != roles[RoleOtherLast] ||
		roles[RoleFirst] == roles[RoleOtherFirst] {
		t.Errorf("bad roles %+v", v)
	}
}

func TestRobust(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.csv")
	more, _ := filepath.Glob("../../examples/semantics/*.csv")
	files = append(files, more...)
	for _, f := range files {
		m := open(t, f)
		a, err := Analyze(context.Background(), m, Options{Conflict: true})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Analyze(context.Background(), m, Options{Conflict: true})
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: nondeterministic output", f)
		}
	}
	seeds := 400
	if testing.Short() {
		seeds = 200
	}
	parsed := 0
	for seed := 0; seed < seeds; seed++ {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindRandom, Seed: int64(seed)}); err != nil {
			t.Fatal(err)
		}
		m, err := tracemodel.Parse(context.Background(), &buf, "random.csv", tracemodel.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if _, err := Analyze(context.Background(), m, Options{Conflict: true}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, labels := range []bool{false, true} {
			data, err := atest.RandomWithRegions(int64(seed), labels)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), "regions.csv", tracemodel.Options{})
			if err != nil {
				continue
			}
			parsed++
			if _, err := Analyze(context.Background(), m, Options{Conflict: true}); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	}
	if parsed < seeds {
		t.Errorf("only %d of %d rewritten random traces parse", parsed, 2*seeds)
	}
}

// TestWide checks that transactions over many shared variables stay cheap
// (Options.Max2vOps) and that a small bound still finds the violation.
func TestWide(t *testing.T) {
	var sb strings.Builder
	n := 0
	ev := func(th int, line int, act, obj string) {
		n++
		fmt.Fprintf(&sb, "%d, %d, w.c-%d, %s, %s\n", th, n, line, act, obj)
	}
	const vars = 300
	for th := 1; th <= 2; th++ {
		ev(th, 1, "Begin", "t")
		for k := 0; k < vars; k++ {
			act := "Write"
			if th == 2 {
				act = "Read"
			}
			ev(th, 10+th, act, fmt.Sprintf("v%d", k))
		}
		ev(th, 2, "End", "t")
	}
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(sb.String()), "wide.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := Analyze(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 0 {
		t.Errorf("over Max2vOps: %d violations", len(vs))
	}
	if testing.Short() {
		return
	}
	vs, err = Analyze(context.Background(), m, Options{Max2vOps: vars})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 || vs[0].Kind != View2v {
		t.Errorf("with Max2vOps = %d: %v", vars, vs)
	}
}

func TestCanceled(t *testing.T) {
	m := open(t, "testdata/ex5_1_view.csv")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Analyze(ctx, m, Options{}); err == nil {
		t.Error("no error from a canceled context")
	}
}

func BenchmarkAnalyze(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindFFT, Events: 1_000_000}); err != nil {
		b.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), &buf, "fft.csv", tracemodel.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(context.Background(), m, Options{Conflict: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
