package atest

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// BenchmarkAnalyzers measures the analyzers that as returns (fresh ones
// per run, so that nothing is cached) on the 1M-event fft-like trace of
// `mcpredict gen --kind fft --threads 4 --vars 2000 --events 1000000`,
// after parsing. It reports events/s of the analyses with everything they
// require (facts and required analyzers), without the driver's report
// statistics (the time of a run of an analyzer that does nothing is
// subtracted), and events/s-driver for the whole analysis.Run.
func BenchmarkAnalyzers(b *testing.B, as func() []*analysis.Analyzer) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 2000, Events: 1_000_000}); err != nil {
		b.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), &buf, "fft.csv", tracemodel.Options{})
	if err != nil {
		b.Fatal(err)
	}
	noop := []*analysis.Analyzer{{Name: "noop", Doc: "nothing", Run: func(context.Context, *analysis.Pass) (any, error) { return nil, nil }}}
	timed := func(list []*analysis.Analyzer) time.Duration {
		t0 := time.Now()
		if _, err := analysis.Run(context.Background(), m, list, analysis.Options{}); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	runtime.GC()
	b.ResetTimer()
	var total, driver time.Duration
	for i := 0; i < b.N; i++ {
		d := timed(as())
		b.StopTimer()
		base := timed(noop)
		runtime.GC()
		b.StartTimer()
		total += d
		driver += max(d-base, time.Microsecond)
	}
	n := float64(m.EventCount()) * float64(b.N)
	b.ReportMetric(n/driver.Seconds(), "events/s")
	b.ReportMetric(n/total.Seconds(), "events/s-driver")
}
