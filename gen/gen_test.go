package gen_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// generate writes the trace of c and parses it.
func generate(t *testing.T, c gen.Config) (*tracemodel.Model, gen.Stats, []byte) {
	t.Helper()
	var buf bytes.Buffer
	st, err := gen.Write(context.Background(), &buf, c)
	if err != nil {
		t.Fatalf("Write(%+v): %v", c, err)
	}
	text := buf.Bytes()
	m, err := tracemodel.Parse(context.Background(), bytes.NewReader(text), c.Kind+".csv", tracemodel.Options{})
	if err != nil {
		t.Fatalf("Parse of %+v: %v\n%s", c, err, head(text))
	}
	if int64(m.EventCount()) != st.Events {
		t.Errorf("%+v: Stats.Events = %d, parser kept %d", c, st.Events, m.EventCount())
	}
	if len(m.Threads) != st.Threads {
		t.Errorf("%+v: Stats.Threads = %d, parser saw %d", c, st.Threads, len(m.Threads))
	}
	// A random trace may create a thread and end before it runs; the parser
	// rightly says so. Any other warning is a generator bug.
	var warnings []string
	for _, w := range m.Warnings {
		if !strings.Contains(w, "never ran: the trace has no event") {
			warnings = append(warnings, w)
		}
	}
	if len(warnings) > 0 {
		t.Errorf("%+v: parser warnings: %v", c, warnings)
	}
	return m, st, text
}

// head returns the beginning of a trace for failure messages.
func head(b []byte) string {
	const max = 4000
	if len(b) > max {
		return string(b[:max]) + "\n..."
	}
	return string(b)
}

func TestWriteParses(t *testing.T) {
	tests := []gen.Config{
		{Kind: gen.KindFFT},
		{Kind: gen.KindFFT, Threads: 1, Vars: 1, Phases: 1},
		{Kind: gen.KindFFT, Threads: 5, Vars: 3, Phases: 3, Seed: 7},
		{Kind: gen.KindFFT, Threads: 8, Vars: 64, Events: 20000, Seed: 3},
		{Kind: gen.KindServer},
		{Kind: gen.KindServer, Threads: 2, Phases: 1},
		{Kind: gen.KindServer, Threads: 6, Bugs: 9, Seed: 11},
		{Kind: gen.KindServer, Threads: 3, Bugs: 4, Events: 20000, Seed: 5},
		{Kind: gen.KindRandom},
		{Kind: gen.KindRandom, Threads: 4, Vars: 3, Events: 2000, Seed: 9},
		{Kind: gen.KindRandom, Threads: 2, Vars: 1, Events: 1},
	}
	for _, c := range tests {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			m, _, _ := generate(t, c)
			if c.Kind != gen.KindRandom && len(m.SharedVars()) == 0 {
				t.Errorf("no shared variable")
			}
		})
	}
}

// TestRandomAlwaysValid parses many random traces, including ones whose
// decisions come from a tape as in fuzzing.
func TestRandomAlwaysValid(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := int64(0); seed < int64(n); seed++ {
		c := gen.Config{Kind: gen.KindRandom, Seed: seed}
		if seed%3 == 0 {
			c.Tape = []byte(fmt.Sprintf("tape %d %x", seed, seed*seed*2654435761))
		}
		if seed%5 == 0 {
			c.Events = 200
		}
		m, _, _ := generate(t, c)
		for _, sv := range m.SharedVars() {
			for t1, t2 := range sv.Pairs() {
				for _, nb := range []bool{false, true} {
					if _, err := m.Project(sv.Var, t1, t2, tracemodel.ProjectOptions{NoBoundaries: nb}); err != nil {
						t.Fatalf("seed %d: Project(%s, %d, %d): %v", seed, sv.Name, t1, t2, err)
					}
				}
			}
		}
		if t.Failed() {
			return
		}
	}
}

// TestRandomCoversActions checks that the random traces use every action
// the differential tests are meant to exercise.
func TestRandomCoversActions(t *testing.T) {
	seen := map[string]int{}
	for seed := int64(0); seed < 300; seed++ {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindRandom, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(buf.String(), "\n") {
			f := strings.Split(line, ", ")
			if len(f) < 5 {
				continue
			}
			act := f[3]
			if act == "Wait" && len(f) == 6 {
				act = "Wait+mutex"
			}
			seen[act]++
		}
	}
	for _, act := range []string{"Read", "Write", "Lock", "TryLock", "Unlock", "RdLock", "WrLock", "RwUnlock",
		"Signal", "Broadcast", "Wait", "Wait+mutex", "BarrierWait", "Create", "Join", "SemPost", "SemWait", "Free"} {
		if seen[act] == 0 {
			t.Errorf("no %s in 300 random traces (seen %v)", act, seen)
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, kind := range gen.Kinds() {
		t.Run(kind, func(t *testing.T) {
			c := gen.Config{Kind: kind, Seed: 42, Bugs: 2}
			_, _, a := generate(t, c)
			_, _, b := generate(t, c)
			if !bytes.Equal(a, b) {
				t.Fatalf("two traces of one config differ")
			}
			c.Seed = 43
			_, _, d := generate(t, c)
			if bytes.Equal(a, d) {
				t.Errorf("seeds 42 and 43 give the same trace")
			}
		})
	}
}

// TestGolden pins the output for a seed, so that a change of the generator
// (which would silently change every test built on seeds) is noticed.
func TestGolden(t *testing.T) {
	const want = `T1, 1, rand.c-1, Write, y
T1, 2, rand.c-2, Read, y
T1, 3, rand.c-3, Signal, c2
T1, 4, rand.c-4, SemWait, s
T1, 5, rand.c-5, SemPost, s
T1, 6, rand.c-6, Create, T2
T2, 7, rand.c-7, Write, y
T1, 8, rand.c-8, Read, x
T2, 9, rand.c-9, BarrierWait, b
T1, 10, rand.c-10, Lock, m2
T1, 11, rand.c-11, Unlock, m2
T1, 12, rand.c-12, TryLock, m2
T2, 13, rand.c-13, Write, y
T2, 14, rand.c-14, Signal, c2
T1, 15, rand.c-15, Unlock, m2
`
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindRandom, Seed: 0}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != want {
		t.Errorf("random trace of seed 0:\n%s\nwant:\n%s", got, want)
	}
}

func TestEventsTarget(t *testing.T) {
	tests := []gen.Config{
		{Kind: gen.KindFFT, Threads: 4, Vars: 16, Events: 50000},
		{Kind: gen.KindFFT, Threads: 16, Vars: 256, Events: 200000},
		{Kind: gen.KindServer, Threads: 4, Bugs: 4, Events: 50000},
		{Kind: gen.KindServer, Threads: 8, Events: 100000},
		{Kind: gen.KindRandom, Threads: 3, Events: 5000},
	}
	for _, c := range tests {
		t.Run(fmt.Sprintf("%s-%d", c.Kind, c.Events), func(t *testing.T) {
			st, err := gen.Write(context.Background(), io.Discard, c)
			if err != nil {
				t.Fatal(err)
			}
			if lo, hi := c.Events*9/10, c.Events*11/10; st.Events < lo || st.Events > hi {
				t.Errorf("wrote %d events, want about %d", st.Events, c.Events)
			}
		})
	}
}

func TestFFTHasNoViolation(t *testing.T) {
	tests := []gen.Config{
		{Kind: gen.KindFFT, Threads: 2, Vars: 2, Phases: 3},
		{Kind: gen.KindFFT, Threads: 3, Vars: 5, Phases: 4, Seed: 1},
		{Kind: gen.KindFFT, Threads: 4, Vars: 4, Phases: 2, Seed: 2},
		{Kind: gen.KindFFT, Threads: 3, Vars: 2, Phases: 3, Seed: 3}, // a thread with no elements
	}
	for _, c := range tests {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			m, _, text := generate(t, c)
			rep, err := predict.Run(context.Background(), m, predict.Options{Engine: predict.EngineNative})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Violations) > 0 {
				v := rep.Violations[0]
				t.Fatalf("%d violations, e.g. %s on %s (%s local): %+v\n%s", len(rep.Violations), v.Pattern, v.Var, v.Local.Handle, v.Accesses, head(text))
			}
			// Without region boundaries the phases are one region: the
			// generator's guarantee depends on them.
			rep, err = predict.Run(context.Background(), m, predict.Options{Engine: predict.EngineNative, Project: tracemodel.ProjectOptions{NoBoundaries: true}})
			if err != nil {
				t.Fatal(err)
			}
			if c.Phases > 2 && len(rep.Violations) == 0 {
				t.Errorf("no violation without region boundaries")
			}
		})
	}
}

// bugKey identifies a bug by pattern and variable.
type bugKey struct{ pattern, v string }

func TestServerSeededBugs(t *testing.T) {
	tests := []gen.Config{
		{Kind: gen.KindServer, Threads: 2, Phases: 2, Bugs: 0},
		{Kind: gen.KindServer, Threads: 2, Phases: 2, Bugs: 1},
		{Kind: gen.KindServer, Threads: 2, Phases: 3, Bugs: 4, Seed: 1},
		{Kind: gen.KindServer, Threads: 3, Phases: 2, Bugs: 5, Seed: 2},
		{Kind: gen.KindServer, Threads: 4, Phases: 2, Bugs: 8, Seed: 3},
		{Kind: gen.KindServer, Threads: 3, Phases: 1, Bugs: 3, Seed: 4},
	}
	for _, c := range tests {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			m, st, text := generate(t, c)
			seeded := map[bugKey]gen.SeededBug{}
			for _, b := range st.Bugs {
				seeded[bugKey{b.Pattern, b.Var}] = b
			}
			if got := len(st.Bugs); got < c.Bugs || got > c.Bugs+(c.Bugs+1)/4 {
				t.Errorf("%d seeded bug entries for %d bugs", got, c.Bugs)
			}
			rep, err := predict.Run(context.Background(), m, predict.Options{Engine: predict.EngineNative})
			if err != nil {
				t.Fatal(err)
			}
			found := map[bugKey]bool{}
			for _, v := range rep.Violations {
				k := bugKey{v.Pattern, v.Var}
				b, ok := seeded[k]
				if !ok {
					t.Errorf("unexpected %s on %s (local %s, remote %s): %+v", v.Pattern, v.Var, v.Local.Handle, v.Remote.Handle, v.Accesses)
					continue
				}
				found[k] = true
				for _, a := range v.Accesses {
					if a.File != b.File || !slices.Contains(b.Lines, a.Line) {
						t.Errorf("%s on %s: access at %s:%d, want one of %v", v.Pattern, v.Var, a.File, a.Line, b.Locs())
					}
				}
			}
			var missing []string
			for k := range seeded {
				if !found[k] {
					missing = append(missing, k.pattern+" on "+k.v)
				}
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("seeded bugs not predicted: %v", missing)
			}
			if t.Failed() {
				t.Logf("trace:\n%s", head(text))
			}
		})
	}
}

func TestServerBugLines(t *testing.T) {
	var buf bytes.Buffer
	st, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindServer, Threads: 2, Phases: 1, Bugs: 4})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range st.Bugs {
		got = append(got, b.Pattern+" "+b.Var+" "+strings.Join(b.Locs(), ","))
	}
	want := []string{
		"P3 hits_1 server.c:101,server.c:105",
		"P1 config_2 server.c:111,server.c:113,server.c:118",
		"P4 busy_3 server.c:121,server.c:124,server.c:128",
		"P5 busy_3 server.c:121,server.c:124",
		"P2 last_client_4 server.c:131,server.c:133",
	}
	if !slices.Equal(got, want) {
		t.Errorf("seeded bugs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Every listed line is in the trace.
	for _, b := range st.Bugs {
		for _, l := range b.Locs() {
			if !strings.Contains(buf.String(), strings.Replace(l, ":", "-", 1)+",") {
				t.Errorf("%s: no event at %s", b.Var, l)
			}
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []gen.Config{
		{Kind: "nope"},
		{},
		{Kind: gen.KindServer, Threads: 1},
		{Kind: gen.KindRandom, Threads: 5},
		{Kind: gen.KindRandom, Threads: 1},
		{Kind: gen.KindRandom, Vars: 4},
		{Kind: gen.KindFFT, Events: -1},
	}
	for _, c := range tests {
		_, err := gen.Write(context.Background(), io.Discard, c)
		var ce *gen.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("Write(%+v) = %v, want a *ConfigError", c, err)
		}
	}
}

type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errDiskFull
	}
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	for _, kind := range gen.Kinds() {
		t.Run(kind, func(t *testing.T) {
			_, err := gen.Write(context.Background(), &failingWriter{n: 100000}, gen.Config{Kind: kind, Events: 1e6})
			if !errors.Is(err, errDiskFull) {
				t.Errorf("writer error: got %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			st, err := gen.Write(ctx, io.Discard, gen.Config{Kind: kind, Events: 1e6})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled context: got %v", err)
			}
			if st.Events >= 1e6 {
				t.Errorf("cancelled context: wrote all %d events", st.Events)
			}
		})
	}
}

// TestStreaming checks that memory does not grow with the trace: a trace
// ten times longer allocates no more (the generators reuse their per-phase
// buffers and format lines into one buffer).
func TestStreaming(t *testing.T) {
	if testing.Short() {
		t.Skip("writes millions of events")
	}
	for _, kind := range gen.Kinds() {
		t.Run(kind, func(t *testing.T) {
			c := gen.Config{Kind: kind, Threads: 4, Bugs: 4, Seed: 1}
			alloc := func(events int64) float64 {
				c.Events = events
				return testing.AllocsPerRun(1, func() {
					if _, err := gen.Write(context.Background(), io.Discard, c); err != nil {
						t.Fatal(err)
					}
				})
			}
			small, large := alloc(100_000), alloc(1_000_000)
			if large > small+100 {
				t.Errorf("allocations grow with the trace: %v for 100k events, %v for 1M", small, large)
			}
		})
	}
}
