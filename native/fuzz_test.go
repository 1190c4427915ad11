package native_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// maxTape bounds the decisions a fuzz input may supply, which keeps traces
// small enough for Spin.
const maxTape = 256

// FuzzNativeVsSpin builds a random trace from the fuzz input and checks, for
// every model of the trace, that the native search decides every claim as
// Spin does. The input is the generator's seed and shape (threads,
// variables, number of actions), flags (bit 0: no region boundaries; bit 1:
// add the user patterns) and a tape of decisions that the generator uses
// before its seeded stream, so that mutations of the tape change the trace
// locally (see fuzzTrace). The seed corpus (below and in testdata/fuzz) runs as a normal
// test; run the fuzzer with
//
//	go test ./native -run '^$' -fuzz FuzzNativeVsSpin -fuzztime 2m
func FuzzNativeVsSpin(f *testing.F) {
	addSeeds(f)
	tools, _ := spinTools(f)
	runner := spinrunner.New(tools, spinrunner.Options{Jobs: 1, Timeout: time.Minute})
	builtin := ltl.Builtin()
	withUser := append(ltl.Builtin(), userPatterns(f)...)
	// Spin results by program, shared by the inputs one fuzzing process
	// runs: small traces repeat models often.
	var (
		mu    sync.Mutex
		cache = map[string]spinrunner.Result{}
	)
	f.Fuzz(func(t *testing.T, seed int64, threads, vars, events, flags uint8, tape []byte) {
		trace := fuzzTrace(t, seed, threads, vars, events, tape)
		pats := builtin
		if flags&2 != 0 {
			pats = withUser
		}
		opts := tracemodel.ProjectOptions{NoBoundaries: flags&1 != 0}
		mismatches := 0
		for _, d := range modelsOf(t, "fuzz input", trace, opts, pats) {
			key := semanticKey(d.prog.Source)
			mu.Lock()
			res, ok := cache[key]
			mu.Unlock()
			j := &spinJob{first: d, models: []*diffModel{d}}
			var err error
			if !ok {
				m := j.spinModel()
				res, err = runner.Check(context.Background(), m)
				if err == nil {
					mu.Lock()
					cache[key] = res
					mu.Unlock()
				}
			}
			j.compare(t, res, err, &mismatches)
		}
	})
}

// addSeeds adds the seed inputs shared by the fuzz targets.
func addSeeds(f *testing.F) {
	f.Add(int64(1), uint8(0), uint8(0), uint8(20), uint8(0), []byte{})
	f.Add(int64(2), uint8(1), uint8(2), uint8(30), uint8(1), []byte{})
	f.Add(int64(3), uint8(2), uint8(1), uint8(40), uint8(2), []byte{7, 7, 7, 0, 0, 1})
	f.Add(int64(4), uint8(2), uint8(0), uint8(25), uint8(3), []byte("lock order"))
}

// fuzzTrace is the random trace of a fuzz input: the generator's seed, its
// shape (threads, variables, number of actions) and a tape of decisions
// that it uses before its seeded stream.
func fuzzTrace(t *testing.T, seed int64, threads, vars, events uint8, tape []byte) []byte {
	t.Helper()
	if len(tape) > maxTape {
		tape = tape[:maxTape]
	}
	c := gen.Config{
		Kind: gen.KindRandom, Seed: seed, Tape: tape,
		Threads: 2 + int(threads%3), Vars: 1 + int(vars%3), Events: 1 + int64(events%48),
	}
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzNativeVsOracle checks a fuzz input's trace against the trace oracle
// of TestNativeMatchesTraceOracle (parse, plan, projection and native
// search, with and without region boundaries, all built-in and user
// claims). It needs no Spin, so it runs thousands of inputs a second:
//
//	go test ./native -run '^$' -fuzz FuzzNativeVsOracle -fuzztime 2m
func FuzzNativeVsOracle(f *testing.F) {
	addSeeds(f)
	pats := append(ltl.Builtin(), userPatterns(f)...)
	f.Fuzz(func(t *testing.T, seed int64, threads, vars, events, flags uint8, tape []byte) {
		mismatches := 0
		compareWithOracle(t, "fuzz input", fuzzTrace(t, seed, threads, vars, events, tape), pats, oracleSemantics, &mismatches)
	})
}
