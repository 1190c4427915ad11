package svd

import (
	"bytes"
	"context"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func benchTrace(b *testing.B, cfg gen.Config) *tracemodel.Model {
	b.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, cfg); err != nil {
		b.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), &buf, "bench.csv", tracemodel.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func bench(b *testing.B, m *tracemodel.Model) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Check(context.Background(), m, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAnalyze measures the analysis after parsing, in events/s, on
// the 1M-event fft-like trace of `mcpredict gen --kind fft --events
// 1000000` (the figure of make bench).
func BenchmarkAnalyze(b *testing.B) {
	bench(b, benchTrace(b, gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 2000, Events: 1_000_000}))
}

// BenchmarkAnalyzeServer is the same on a 1M-event server-like trace,
// whose critical sections (a locked queue, locked statistics) the fft
// trace nearly lacks.
func BenchmarkAnalyzeServer(b *testing.B) {
	bench(b, benchTrace(b, gen.Config{Kind: gen.KindServer, Threads: 4, Bugs: 4, Events: 1_000_000}))
}
