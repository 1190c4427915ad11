package tracemodel_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestConcurrentBruteForce compares Model.Concurrent with its definition,
// pair by pair of accesses (some access of each thread, one a write, that
// the synchronization order leaves unordered), on random traces and on
// barrier- and server-like ones, for every shared variable and thread pair.
func TestConcurrentBruteForce(t *testing.T) {
	pairs, concurrent := 0, 0
	for _, c := range mixedConfigs(600, 50, 10, 2) {
		m, name := genModel(t, c)
		for _, sv := range m.SharedVars() {
			index := m.NewConcurrency().Index([]int{sv.Var})
			for t1, t2 := range sv.Pairs() {
				want := false
				for _, i := range m.Vars[sv.Var].Accesses {
					for _, j := range m.Vars[sv.Var].Accesses {
						a, b := &m.Events[i], &m.Events[j]
						if int(a.Thread) != t1 || int(b.Thread) != t2 || a.Kind != tracemodel.Write && b.Kind != tracemodel.Write {
							continue
						}
						if m.Clock(t2, b.Pos, t1) < a.Pos && m.Clock(t1, a.Pos, t2) < b.Pos {
							want = true
						}
					}
				}
				pairs++
				if want {
					concurrent++
				}
				if got := index.Concurrent(t1, t2); got != want {
					t.Fatalf("%s: %s threads %d,%d: Concurrent = %v, want %v", name, sv.Name, t1, t2, got, want)
				}
				if got := index.Concurrent(t2, t1); got != want {
					t.Fatalf("%s: %s threads %d,%d swapped: Concurrent = %v, want %v", name, sv.Name, t2, t1, got, want)
				}
			}
		}
	}
	t.Logf("%d pairs, %d concurrent", pairs, concurrent)
	if concurrent == 0 || concurrent == pairs {
		t.Errorf("%d of %d pairs concurrent: the test does not exercise both answers", concurrent, pairs)
	}
}

// mixedConfigs returns random traces (seeds 0 to randoms-1, of 10 to
// 10+events-1 events), then barrier-like ones of three phases and
// server-like ones of serverPhases (seeds 0 to others-1).
func mixedConfigs(randoms, events, others int64, serverPhases int) []gen.Config {
	var configs []gen.Config
	for seed := range randoms {
		configs = append(configs, gen.Config{Kind: gen.KindRandom, Seed: seed, Events: 10 + seed%events})
	}
	for seed := range others {
		configs = append(configs,
			gen.Config{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed%3), Vars: 4, Phases: 3, Bugs: int(seed % 2)},
			gen.Config{Kind: gen.KindServer, Seed: seed, Threads: 3, Phases: serverPhases, Bugs: 4})
	}
	return configs
}

// genModel generates the trace of c and parses it; name names it.
func genModel(t *testing.T, c gen.Config) (m *tracemodel.Model, name string) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, c); err != nil {
		t.Fatal(err)
	}
	name = fmt.Sprintf("%s-%d", c.Kind, c.Seed)
	m, err := tracemodel.Parse(context.Background(), &buf, name, tracemodel.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m, name
}
