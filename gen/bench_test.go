package gen_test

import (
	"context"
	"io"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
)

// BenchmarkGen measures generation speed in events per second, writing to
// io.Discard (formatting and scheduling only, no I/O).
func BenchmarkGen(b *testing.B) {
	benchmarks := []struct {
		name string
		c    gen.Config
	}{
		{"fft", gen.Config{Kind: gen.KindFFT, Threads: 8, Vars: 256, Events: 1_000_000}},
		{"server", gen.Config{Kind: gen.KindServer, Threads: 8, Bugs: 4, Events: 1_000_000}},
		{"random", gen.Config{Kind: gen.KindRandom, Threads: 4, Vars: 3, Events: 1_000_000}},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			var events int64
			for b.Loop() {
				st, err := gen.Write(context.Background(), io.Discard, bm.c)
				if err != nil {
					b.Fatal(err)
				}
				events += st.Events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
