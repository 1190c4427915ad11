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

// BenchmarkAtomicSets measures the analysis of atomic sets beside McPatom
// alone on gen's fft- and server-like traces and on a 10-million-event fft
// trace, with the native engine: ns/op of each, and the number of models of
// each kind ("variable-models", "set-models"). The target is the
// pair within 2× of McPatom alone.
func BenchmarkAtomicSets(b *testing.B) {
	traces := []struct {
		name string
		c    gen.Config
	}{
		{"fft-1M", fft1M},
		{"server-1M", gen.Config{Kind: gen.KindServer, Threads: 4, Events: 1_000_000, Bugs: 2}},
		{"fft-10M", gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 20000, Events: 10_000_000}},
	}
	kinds := []struct {
		name   string
		models []Models
	}{
		{"mcpatom", []Models{{Kind: VariableModels, Patterns: VariableModels.Builtin()}}},
		{"mcpatom+atomicset", []Models{{Kind: VariableModels, Patterns: VariableModels.Builtin()}, {Kind: SetModels, Patterns: SetModels.Builtin()}}},
	}
	for _, tr := range traces {
		b.Run(tr.name, func(b *testing.B) {
			data := genTrace(b, tr.c)
			m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), tr.name+".csv", tracemodel.Options{})
			if err != nil {
				b.Fatal(err)
			}
			data = nil
			for _, k := range kinds {
				b.Run(k.name, func(b *testing.B) {
					opts := Options{Engine: EngineNative, Models: k.models, MaxModels: -1}
					for i := 0; i < b.N; i++ {
						if _, err := Run(context.Background(), m, opts); err != nil {
							b.Fatal(err)
						}
						b.StopTimer()
						tasks, err := Plan(context.Background(), m, opts)
						if err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						var sets int
						for _, t := range tasks {
							if t.Kind() == SetModels {
								sets++
							}
						}
						b.ReportMetric(float64(len(tasks)-sets), "variable-models")
						b.ReportMetric(float64(sets), "set-models")
					}
				})
			}
		})
	}
}
