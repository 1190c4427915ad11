package predict

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// genTrace writes a generated trace into memory.
func genTrace(b *testing.B, c gen.Config) []byte {
	b.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, c); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

var fft1M = gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 2000, Events: 1_000_000}

// BenchmarkParse measures parse throughput (events/s) and the memory the
// parsed model keeps per event (bytes/event, after GC).
func BenchmarkParse(b *testing.B) {
	data := genTrace(b, fft1M)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var events int
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), "fft.csv", tracemodel.Options{})
		if err != nil {
			b.Fatal(err)
		}
		events = m.EventCount()
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(events), "bytes/event")
		runtime.KeepAlive(m)
		b.StartTimer()
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRunNative measures the default pipeline without Spin on an
// fft-like trace of a million events (no violation: Spin never runs).
func BenchmarkRunNative(b *testing.B) {
	data := genTrace(b, fft1M)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), "fft.csv", tracemodel.Options{})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := Run(context.Background(), m, Options{Engine: EngineNative})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.Stats.Models), "models")
		b.ReportMetric(float64(rep.Stats.SharedVars), "shared-vars")
	}
}
