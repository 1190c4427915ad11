package conflict

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/formats/std"
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

// summary is "thread begin→end: from→to,... " with source locations.
func summary(v Violation) string {
	var steps []string
	for _, s := range v.Cycle {
		steps = append(steps, fmt.Sprintf("%s %s@%s>%s %s@%s", s.From.Thread, s.From.Action, s.From.Where(), s.To.Thread, s.To.Action, s.To.Where()))
	}
	return fmt.Sprintf("%s %s-%s: %s", v.Txn.Thread, v.Begin.Where(), v.End.Where(), strings.Join(steps, ", "))
}

// TestPaperTraces asserts the verdicts of the papers and of RAPID on their
// traces, and the witness cycle of each finding: the cheapest cycle of the
// graph of the trace up to the event where the cycle closed (rapid2: the
// acquire of n at loc:14, after T2's release of n; the read of y comes
// later).
func TestPaperTraces(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		// Issue 23's first trace: RAPID's Aerodrome, AerodromeBasic and
		// Velodrome all say "Atomicity violation detected".
		{"rapid1.csv", []string{"T1 loc:1-loc:5: T1 Read@loc:2>T2 Write@loc:3, T2 Write@loc:3>T1 Read@loc:4"}},
		// Issue 23's second trace (two locks, two variables): the same
		// three say "Atomicity violation detected".
		{"rapid2.csv", []string{"T1 loc:10-loc:17: T1 Write@loc:12>T2 Read@loc:21, T2 Unlock@loc:25>T1 Lock@loc:14"}},
		// RAPID's optimized Aerodrome says "No atomicity violation
		// detected"; its AerodromeBasic and Velodrome say "Atomicity
		// violation detected" (conflict.go, "The algorithm").
		{"fresh.csv", []string{"T1 loc:1-loc:11: T1 Write@loc:1>T2 Read@loc:2, T2 Write@loc:3>T3 Write@loc:4, T3 Write@loc:5>T1 Read@loc:10"}},
		// SideTrack paper (seeds/000) §1: the trace of Figure 1 "is
		// serial and hence trivially serializable, and so a precise
		// checker such as Velodrome would not detect any errors"; §1,
		// Figure 3: "Prior precise tools such as Velodrome only detect
		// in-errors" — 3(b), not the before-error of 3(a).
		{"fig1_after.csv", nil},
		{"fig3a_before.csv", nil},
		{"fig3b_in.csv", []string{"1 f.c:1-f.c:8: 1 Write@f.c:3>2 Read@f.c:21, 2 Unlock@f.c:22>1 Lock@f.c:5"}},
		// The JDK 1.4 StringBuffer.append bug of the Atomizer and
		// Velodrome papers (reconstructed): append reads the other
		// buffer's length and then copies its characters, each under the
		// other buffer's lock; a setLength between them makes append
		// unserializable.
		{"stringbuffer.csv", []string{"T1 sb.java:10-sb.java:18: T1 Read@sb.java:12>T2 Write@sb.java:31, T2 Unlock@sb.java:31>T1 Lock@sb.java:15"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			m := open(t, filepath.Join("testdata", tc.file))
			vs, _, err := Analyze(context.Background(), m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, summary(v))
				if v.Count < 1 || v.Message == "" || len(v.Threads) < 2 {
					t.Errorf("incomplete violation %+v", v)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestSTD: RAPID's STD files of the traces (begin/end as Begin/End,
// integer locations as loc:N) read by formats/std give the same models as
// the CSV fixtures.
func TestSTD(t *testing.T) {
	for _, name := range []string{"rapid1", "rapid2", "fresh"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".std"))
		if err != nil {
			t.Fatal(err)
		}
		var csv strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(data))
		n := 0
		for sc.Scan() {
			n++
			e, err := std.Parse(sc.Bytes())
			if err != nil {
				t.Fatalf("%s.std:%d: %v", name, n, err)
			}
			fmt.Fprintf(&csv, "%s, %d, %s:%d, %s, %s\n", e.Thread, n, e.File, e.Line, e.Action, e.Object)
		}
		a, err := tracemodel.Parse(context.Background(), strings.NewReader(csv.String()), name+".std", tracemodel.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b := open(t, filepath.Join("testdata", name+".csv"))
		va, _, _ := Analyze(context.Background(), a, Options{})
		vb, _, _ := Analyze(context.Background(), b, Options{})
		if len(va) != 1 || len(vb) != 1 || summary(va[0]) != summary(vb[0]) {
			t.Errorf("%s: std %v, csv %v", name, va, vb)
		}
	}
}

// TestDedup: the same cycle at the same locations, repeated, is one
// violation with a count.
func TestDedup(t *testing.T) {
	var b strings.Builder
	n := 0
	line := func(th, loc, act, obj string) {
		n++
		fmt.Fprintf(&b, "%s, %d, f.c-%s, %s, %s\n", th, n, loc, act, obj)
	}
	for i := 0; i < 3; i++ {
		line("1", "1", "Begin", "blk")
		line("1", "2", "Read", "x")
		line("2", "20", "Write", "x")
		line("1", "3", "Read", "x")
		line("1", "4", "End", "blk")
	}
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(b.String()), "dedup.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	vs, st, err := Analyze(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Count != 3 || st.Cycles != 3 || st.Witnesses != 1 {
		t.Errorf("got %d violations %+v, stats %+v", len(vs), vs, st)
	}
}

func TestCanceled(t *testing.T) {
	m := open(t, "testdata/rapid1.csv")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Analyze(ctx, m, Options{}); err == nil {
		t.Error("no error from a canceled context")
	}
}

// withRegions rewrites a generated trace so that threads run Begin/End
// regions of random lengths (some nested, some left open), and sometimes
// Enter/Exit frames instead.
func withRegions(data []byte, seed int64) []byte {
	rng := rand.New(rand.NewSource(seed))
	funcs := rng.Intn(4) == 0
	open, close, name := "Begin", "End", "r"
	if funcs {
		open, close, name = "Enter", "Exit", "f"
	}
	depth := map[string]int{}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		th := strings.TrimSpace(strings.SplitN(line, ",", 2)[0])
		if rng.Intn(3) == 0 && depth[th] < 2 {
			fmt.Fprintf(&out, "%s, 0, r.c-%d, %s, %s\n", th, 900+rng.Intn(3), open, name)
			depth[th]++
		}
		out.WriteString(line + "\n")
		if depth[th] > 0 && rng.Intn(3) == 0 {
			fmt.Fprintf(&out, "%s, 0, r.c-950, %s, %s\n", th, close, name)
			depth[th]--
		}
	}
	return out.Bytes()
}

// randomTrace returns random trace number seed with transactions, or nil
// if the rewritten trace does not parse (a cond Wait must directly follow
// a takeover of its mutex).
func randomTrace(t testing.TB, seed int64) *tracemodel.Model {
	var buf bytes.Buffer
	cfg := gen.Config{Kind: gen.KindRandom, Seed: seed}
	switch seed % 6 {
	case 0, 3:
		cfg.Events = 120
	case 5:
		cfg.Events, cfg.Threads = 300, 4
	}
	if _, err := gen.Write(context.Background(), &buf, cfg); err != nil {
		t.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), bytes.NewReader(withRegions(buf.Bytes(), seed)), fmt.Sprintf("random-%d.csv", seed), tracemodel.Options{})
	if err != nil {
		return nil
	}
	return m
}

// TestDifferential checks the verdict of the pass against the brute-force
// oracle (oracle_test.go) on random traces with transactions (2,000;
// MCPREDICT_CONFLICT_TRACES=N for more), and that
// every witness is a cycle of the oracle's graph through its transaction.
func TestDifferential(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 500
	}
	if s := os.Getenv("MCPREDICT_CONFLICT_TRACES"); s != "" {
		fmt.Sscan(s, &n)
	}
	checked, cyclic := 0, 0
	for seed := int64(0); checked < n && seed < int64(3*n); seed++ {
		m := randomTrace(t, seed)
		if m == nil {
			continue
		}
		checked++
		ts, err := txn.Extract(context.Background(), m, txn.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := newOracle(m, ts)
		want := o.cyclic()
		vs, _, err := Check(context.Background(), m, ts)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := Verdict(context.Background(), m, ts)
		if err != nil {
			t.Fatal(err)
		}
		if want {
			cyclic++
		}
		if got := len(vs) > 0; got != want || ok == want {
			t.Fatalf("seed %d: pass says cycle=%v (verdict serializable=%v), oracle %v\n%s", seed, got, ok, want, dump(m))
		}
		for _, v := range vs {
			if err := o.checkWitness(&v); err != nil {
				t.Fatalf("seed %d: %v\n%s\n%s", seed, err, v.Message, dump(m))
			}
		}
	}
	if checked < n || cyclic < n/10 || cyclic > n*9/10 {
		t.Errorf("%d traces checked, %d with a cycle: want %d, a mix", checked, cyclic, n)
	}
	t.Logf("%d traces, %d not conflict-serializable", checked, cyclic)
}

func dump(m *tracemodel.Model) string {
	var b strings.Builder
	for i := range m.Events {
		e := &m.Events[i]
		fmt.Fprintf(&b, "%d: T%d %s %d %s\n", i, e.Thread, e.Kind, e.Obj, m.Locs[e.Loc])
	}
	return b.String()
}

// TestRobust runs the pass over the shipped examples: no panic,
// deterministic output.
func TestRobust(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.csv")
	more, _ := filepath.Glob("../../examples/semantics/*.csv")
	for _, f := range append(files, more...) {
		m := open(t, f)
		a, _, err := Analyze(context.Background(), m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := Analyze(context.Background(), m, Options{})
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: nondeterministic output", f)
		}
	}
}

// TestFirst: with Options.First the check stops at the first cycle, which
// it reports with its witness; without, every cycle is counted.
func TestFirst(t *testing.T) {
	var b strings.Builder
	n := 0
	line := func(th, loc, act, obj string) {
		n++
		fmt.Fprintf(&b, "%s, %d, f.c-%s, %s, %s\n", th, n, loc, act, obj)
	}
	for i, v := range []string{"x", "y"} {
		loc := strconv.Itoa(10 * (i + 1))
		line("1", loc, "Begin", "blk"+v)
		line("1", loc+"1", "Read", v)
		line("2", loc+"2", "Write", v)
		line("1", loc+"3", "Read", v)
		line("1", loc+"4", "End", "blk"+v)
	}
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(b.String()), "first.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all, st, err := Analyze(context.Background(), m, Options{})
	if err != nil || len(all) != 2 || st.Cycles != 2 {
		t.Fatalf("all: %d violations, stats %+v, err %v; want 2 cycles", len(all), st, err)
	}
	first, st, err := Analyze(context.Background(), m, Options{First: true})
	if err != nil || len(first) != 1 || st.Cycles != 1 || summary(first[0]) != summary(all[0]) {
		t.Errorf("first: %d violations, stats %+v, err %v; want the first of all", len(first), st, err)
	}
}
