package sidetrack

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

// summary is "kind lock first-second-culprit [blame]" with source locations.
func summary(e Error) string {
	var locs []string
	for _, r := range e.Events {
		locs = append(locs, r.Role+"@"+r.Where())
	}
	return fmt.Sprintf("%s %s %s %v", e.Kind, e.Var, strings.Join(locs, ","), e.Blame)
}

func TestFigures(t *testing.T) {
	tests := []struct {
		file string
		opts Options
		want []string
	}{
		{"fig1_after.csv", Options{}, []string{"after m first@f.c:2,second@f.c:5,culprit@f.c:20 [blk]"}},
		{"fig3a_before.csv", Options{}, []string{"before m culprit@f.c:20,first@f.c:2,second@f.c:5 [blk]"}},
		{"fig3b_in.csv", Options{}, []string{"in m first@f.c:2,culprit@f.c:20,second@f.c:5 [blk]"}},
		{"fig4_fork.csv", Options{}, nil},
		{"fig5_lock_n.csv", Options{}, nil},
		{"fig8_top.csv", Options{}, nil},
		{"fig8_bottom.csv", Options{}, []string{"after m first@f.c:3,second@f.c:5,culprit@f.c:20 [blk]"}},
		{"fig9_blame.csv", Options{}, []string{"after m first@f.c:31,second@f.c:31,culprit@f.c:40 [a b]"}},
		{"fig9_blame.csv", Options{NotAtomic: []string{"a"}}, []string{"after m first@f.c:31,second@f.c:31,culprit@f.c:40 [b]"}},
		{"fig9_blame.csv", Options{Atomic: []string{"d"}}, nil}, // d alone is atomic
		{"fig1_after.csv", Options{NotAtomic: []string{"blk"}}, nil},
		{"start_routine.csv", Options{}, nil},
		{"start_routine.csv", Options{Atomic: []string{"worker"}}, []string{"after m first@f.c:2,second@f.c:4,culprit@f.c:10 [worker]"}},
		// Enter/Exit transactions of the shipped example: the deposits ran
		// one after the other; SideTrack predicts both orders.
		{"../../../examples/bank.csv", Options{}, []string{
			"after acct_lock first@bank.c:10,second@bank.c:14,culprit@bank.c:10 [deposit]",
			"before acct_lock culprit@bank.c:14,first@bank.c:10,second@bank.c:14 [deposit]",
		}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s%v%v", tc.file, tc.opts.Atomic, tc.opts.NotAtomic), func(t *testing.T) {
			m := open(t, filepath.Join("testdata", tc.file))
			errs, err := Analyze(context.Background(), m, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, summary(e))
				if e.Count < 1 || e.Message == "" || e.Txn.Thread == "" {
					t.Errorf("incomplete error %+v", e)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestDedup: the same window and culprit at the same locations, repeated,
// is one Error with a count.
func TestDedup(t *testing.T) {
	var b strings.Builder
	n := 0
	line := func(th, loc, act, obj string) {
		n++
		fmt.Fprintf(&b, "%s, %d, f.c-%s, %s, %s\n", th, n, loc, act, obj)
	}
	for i := 0; i < 3; i++ {
		line("1", "1", "Begin", "blk")
		line("1", "2", "Lock", "m")
		line("1", "3", "Unlock", "m")
		line("1", "4", "Lock", "m")
		line("1", "5", "Unlock", "m")
		line("1", "6", "End", "blk")
		line("2", "20", "Lock", "m")
		line("2", "21", "Unlock", "m")
	}
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(b.String()), "dedup.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := Analyze(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range errs {
		counts[e.Kind] += e.Count
		if e.Kind == After && e.Count != 3 {
			t.Errorf("after-error count %d, want 3", e.Count)
		}
	}
	if len(errs) == 0 || counts[After] != 3 {
		t.Errorf("got %v", errs)
	}
}

// TestRobust runs Analyze over the shipped examples and random traces: no
// panic, deterministic output.
func TestRobust(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.csv")
	more, _ := filepath.Glob("../../examples/semantics/*.csv")
	files = append(files, more...)
	for _, f := range files {
		m := open(t, f)
		a, err := Analyze(context.Background(), m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Analyze(context.Background(), m, Options{})
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
		if _, err := Analyze(context.Background(), m, Options{}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, labels := range []bool{false, true} {
			data, err := atest.RandomWithRegions(int64(seed), labels)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), "regions.csv", tracemodel.Options{})
			if err != nil {
				continue // see RandomWithRegions
			}
			parsed++
			if _, err := Analyze(context.Background(), m, Options{}); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	}
	if parsed < seeds {
		t.Errorf("only %d of %d rewritten random traces parse", parsed, 2*seeds)
	}
}

func TestCanceled(t *testing.T) {
	m := open(t, "testdata/fig1_after.csv")
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
		if _, err := Analyze(context.Background(), m, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
