package atest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Golden compares got with the golden file of the trace fixture (its name
// with .golden for .csv), or rewrites the golden file when update is set
// (the package's -update flag).
func Golden(t *testing.T, fixture, got string, update bool) {
	t.Helper()
	golden := strings.TrimSuffix(fixture, ".csv") + ".golden"
	if update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s\n(go test -run %s -update rewrites it if the change is intended)", golden, got, want, t.Name())
	}
}

// Generated parses the trace that gen writes for c.
func Generated(tb testing.TB, c gen.Config) *tracemodel.Model {
	tb.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, c); err != nil {
		tb.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), &buf, string(c.Kind)+".csv", tracemodel.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// BenchmarkEvents runs check b.N times on m and reports its throughput in
// events/s.
func BenchmarkEvents(b *testing.B, m *tracemodel.Model, check func() error) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := check(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// The traces of the analyses' throughput figures (make bench): the
// 1M-event fft-like trace of `mcpredict gen --kind fft --events 1000000`,
// and a 1M-event server-like one (a locked queue, locked statistics: the
// critical sections the fft trace nearly lacks).
var (
	FFT1M    = gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 2000, Events: 1_000_000}
	Server1M = gen.Config{Kind: gen.KindServer, Threads: 4, Bugs: 4, Events: 1_000_000}
)
