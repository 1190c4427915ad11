package conflict

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// streamed checks the CSV trace data with a Stream as it is parsed. It
// returns the violations (the stream's when it stopped the read, else
// CheckFirst's of the whole model, as mcpredict run does), whether it
// stopped, the trace line of the last event read, and the parse's error.
func streamed(t testing.TB, data []byte, name string, opts Options) ([]Violation, bool, int, error) {
	t.Helper()
	s := NewStream(opts)
	m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), name, tracemodel.Options{Visit: s.Visit})
	if err != nil {
		return nil, false, 0, err
	}
	defer m.Close()
	if s.Stopped() {
		vs, st := s.Result()
		if st.Cycles < 1 || len(vs) == 0 || st.Witnesses > st.Cycles {
			t.Errorf("%s: stopped with stats %+v and %d violations", name, st, len(vs))
		}
		return vs, true, s.Line(), nil
	}
	vs, _, err := Analyze(context.Background(), m, Options{First: true, Atomic: opts.Atomic, NotAtomic: opts.NotAtomic})
	if err != nil {
		t.Fatal(err)
	}
	return vs, false, int(m.Events[len(m.Events)-1].Line), nil
}

// whole is CheckFirst of the whole model of data.
func whole(t testing.TB, data []byte, name string, opts Options) []Violation {
	t.Helper()
	m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), name, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	opts.First = true
	vs, _, err := Analyze(context.Background(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func sameFirst(t *testing.T, name string, got, want []Violation) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: streamed --first differs from the whole model's:\n got %s\nwant %s", name, describe(got), describe(want))
	}
}

func describe(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "[%s close %d end %d count %d steps %d] ", v.Message, v.Close.Line, v.End.Line, v.Count, len(v.Cycle))
	}
	return b.String()
}

// TestStreamTestdata: on the traces of testdata (CSV), the streamed
// --first report is the whole model's, and the read stops where the
// prefix decides.
func TestStreamTestdata(t *testing.T) {
	for _, tc := range []struct {
		file string
		opts Options
		stop bool // the read stops before the end
	}{
		{"rapid1.csv", Options{}, true}, // at the last line: the End of the cycle's transaction
		{"rapid2.csv", Options{}, true},
		{"fresh.csv", Options{}, true},
		{"fig3b_in.csv", Options{}, true},
		{"stringbuffer.csv", Options{}, false}, // every function: a later Begin would change that

		{"stringbuffer.csv", Options{Atomic: []string{"append"}}, true},
		{"fig1_after.csv", Options{}, false},   // serializable
		{"fig3a_before.csv", Options{}, false}, // serializable
	} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		// The same trace with a tail: more events of every thread after it.
		for _, tail := range []bool{false, true} {
			in := data
			name := tc.file
			if tail {
				in, name = withTail(data), tc.file+"+tail"
			}
			got, stopped, _, err := streamed(t, in, name, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			sameFirst(t, name, got, whole(t, in, name, tc.opts))
			if !tail && stopped != tc.stop {
				t.Errorf("%s: stopped %v, want %v", name, stopped, tc.stop)
			}
		}
	}
}

// withTail appends to a trace an event of each of its threads (a read of a
// variable of its own): the threads' transactions left open (none in
// testdata) stay open, every thread has events after the rest.
func withTail(data []byte) []byte {
	var out bytes.Buffer
	out.Write(data)
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ",")
		if strings.HasPrefix(line, "#") || len(f) < 5 {
			continue
		}
		th := strings.TrimSpace(f[0])
		if !seen[th] {
			seen[th] = true
			fmt.Fprintf(&out, "%s, 0, tail.c-1, Read, own_%s\n", th, th)
		}
	}
	return out.Bytes()
}

// firstCycle is a trace whose first cycle is in transaction "a" of thread
// 1, decided at line 6 (the End of "a"; thread 2 has no open transaction),
// followed by rest.
func firstCycle(rest string) string {
	return `1, 1, f.c-10, Begin, a
1, 2, f.c-11, Read, x
2, 3, f.c-20, Write, x
1, 4, f.c-12, Write, x
1, 5, f.c-13, Write, y
1, 6, f.c-14, End, a
` + rest
}

// TestStreamStops: with labels, the read stops at the End of the cycle's
// transaction; a bad line after it is not read, one before it is the
// parser's error; a thread with a transaction open at the cycle must show
// another event first.
func TestStreamStops(t *testing.T) {
	bad := "garbage without commas\n"
	more := "2, 7, f.c-21, Read, y\n1, 8, f.c-15, Read, z\n"
	for _, tc := range []struct {
		name  string
		trace string
		stop  int    // the line the read stops at, 0: read to the end
		err   string // the parse's error
	}{
		{"stop at End", firstCycle(more), 6, ""},
		{"bad line after the stop", firstCycle(more + bad), 6, ""},
		{"bad line right after the stop", firstCycle(bad), 6, ""},
		{"bad line before the cycle", strings.Replace(firstCycle(more), "2, 3, f.c-20, Write, x\n", bad+"2, 3, f.c-20, Write, x\n", 1), 0, "t.csv:3: missing field timestamp"},
		{"strict sync oddity before", "1, 0, f.c-1, Unlock, m\n" + firstCycle(more), 0, "t.csv:1: Unlock of m"},
		// Thread 2 is in transaction b at the cycle: its next event
		// must be read, and the bad line 9 comes before it.
		{"open transaction waits", "2, 0, f.c-30, Begin, b\n" + firstCycle("1, 7, f.c-16, Read, w\n"+bad+"2, 8, f.c-22, End, b\n"), 0, "t.csv:9: missing field"},
		{"open transaction waits, then stops", "2, 0, f.c-30, Begin, b\n" + firstCycle("1, 7, f.c-16, Read, w\n2, 8, f.c-22, Read, w\n"+bad), 9, ""},
		// Never closed: the whole trace decides (its last event ends it).
		{"cycle's transaction never ends", strings.Replace(firstCycle(more), "1, 6, f.c-14, End, a\n", "", 1), 0, ""},
		// A Begin later, the trace's first: function frames are not its
		// transactions.
		{"functions then a label", "1, 0, f.c-1, Enter, g\n" + strings.ReplaceAll(strings.ReplaceAll(firstCycle(more), "Begin, a", "Enter, a"), "End, a", "Exit, a") + "2, 0, f.c-40, Begin, q\n", 0, ""},
		// x is a lock after the cycle's window but before the stop.
		{"variable later a lock", "2, 0, f.c-30, Begin, b\n" + firstCycle("2, 8, f.c-22, Lock, x\n2, 9, f.c-23, Unlock, x\n2, 10, f.c-24, End, b\n"), 0, ""},
		// ...and before the cycle: checked again without its accesses.
		{"variable a lock before the cycle", strings.Replace(firstCycle(more), "1, 5, f.c-13, Write, y\n", "2, 0, f.c-25, Lock, x\n2, 0, f.c-26, Unlock, x\n1, 5, f.c-13, Write, y\n", 1), 0, ""},
	} {
		strict := strings.Contains(tc.name, "strict")
		s := NewStream(Options{})
		m, err := tracemodel.Parse(context.Background(), strings.NewReader(tc.trace), "t.csv", tracemodel.Options{Visit: s.Visit, StrictSync: strict})
		if tc.err != "" {
			var pe *tracemodel.ParseError
			if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %s...", tc.name, err, tc.err)
			}
			_, werr := tracemodel.Parse(context.Background(), strings.NewReader(tc.trace), "t.csv", tracemodel.Options{StrictSync: strict})
			if werr == nil || err == nil || werr.Error() != err.Error() {
				t.Errorf("%s: streamed error %v, whole parse's %v", tc.name, err, werr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		m.Close()
		if got := s.Line(); s.Stopped() != (tc.stop > 0) || got != tc.stop {
			t.Errorf("%s: stopped %v at line %d, want line %d", tc.name, s.Stopped(), got, tc.stop)
		}
		if !strings.Contains(tc.trace, bad) {
			got, _, _, _ := streamed(t, []byte(tc.trace), "t.csv", Options{})
			sameFirst(t, tc.name, got, whole(t, []byte(tc.trace), "t.csv", Options{}))
		}
	}
}

// TestStreamRandom: on random traces with transactions (regions, frames,
// some left open; with and without a cycle) and on generated fft traces
// with phase transactions (clean, and with racy counters), the streamed
// --first report is CheckFirst's on the whole model.
func TestStreamRandom(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	stops, cycles := 0, 0
	for seed := int64(1); seed <= int64(n); seed++ {
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
		data := withRegions(buf.Bytes(), seed)
		if seed%2 == 0 {
			data = withTail(data)
		}
		name := fmt.Sprintf("random-%d.csv", seed)
		if _, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), name, tracemodel.Options{}); err != nil {
			continue // see randomTrace
		}
		opts := Options{}
		if seed%5 == 0 {
			opts.Atomic = []string{"f", "r"}
		}
		got, stopped, _, err := streamed(t, data, name, opts)
		if err != nil {
			t.Fatal(err)
		}
		want := whole(t, data, name, opts)
		sameFirst(t, name, got, want)
		if stopped {
			stops++
		}
		if len(want) > 0 {
			cycles++
		}
	}
	if stops == 0 || cycles == 0 {
		t.Errorf("%d reads stopped, %d traces with a cycle: the test tests nothing", stops, cycles)
	}
	for _, bugs := range []int{0, 2} {
		var buf bytes.Buffer
		cfg := gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 200, Events: 20000, Bugs: bugs, Seed: 3}
		if _, err := gen.Write(context.Background(), &buf, cfg); err != nil {
			t.Fatal(err)
		}
		data := phases(buf.Bytes())
		name := fmt.Sprintf("fft-bugs%d.csv", bugs)
		got, stopped, line, err := streamed(t, data, name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := whole(t, data, name, Options{})
		sameFirst(t, name, got, want)
		if (bugs > 0) != (len(want) > 0) || (bugs > 0) != stopped {
			t.Errorf("%s: %d violations, stopped %v (line %d)", name, len(want), stopped, line)
		}
	}
}
