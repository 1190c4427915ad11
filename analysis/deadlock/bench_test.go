package deadlock_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/deadlock"
	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// BenchmarkDeadlock measures the deadlock analysis (its facts included:
// the lock sets) after parsing, in events/s, on the 1M-event fft-like
// trace of `mcpredict gen --kind fft --events 1000000`.
func BenchmarkDeadlock(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 2000, Events: 1_000_000}); err != nil {
		b.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), &buf, "fft.csv", tracemodel.Options{})
	if err != nil {
		b.Fatal(err)
	}
	as := []*analysis.Analyzer{deadlock.New(deadlock.Options{})}
	runtime.GC()
	b.ResetTimer()
	var analysing time.Duration
	for i := 0; i < b.N; i++ {
		rep, err := analysis.Run(context.Background(), m, as, analysis.Options{})
		if err != nil {
			b.Fatal(err)
		}
		analysing += rep.Analyses[0].Elapsed
	}
	// The analysis alone (lock sets and cycle search), and the whole
	// driver (with the report's statistics).
	b.ReportMetric(float64(m.EventCount())*float64(b.N)/analysing.Seconds(), "events/s")
	b.ReportMetric(float64(m.EventCount())*float64(b.N)/b.Elapsed().Seconds(), "events/s-driver")
}
