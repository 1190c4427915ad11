package formats_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcpredict/mcpredict/formats"
	"github.com/mcpredict/mcpredict/tracemodel"
)

var (
	benchOnce  sync.Once
	benchDir   string
	benchError error
)

// benchTraces writes a 1M-event fft trace in CSV, STD and JSONL (once).
func benchTraces(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchError = os.MkdirTemp("", "mcpredict-formats-bench-")
		if benchError != nil {
			return
		}
		csv := filepath.Join(benchDir, "fft.csv")
		if code, _, errs := mcpredict(&testing.T{}, benchDir, good, "gen", "--kind", "fft", "--threads", "4", "--vars", "2000", "--events", "1000000", "-o", csv); code != 0 {
			benchError = os.ErrInvalid
			b.Log(errs)
			return
		}
		for _, to := range []string{"std", "jsonl"} {
			if code, _, errs := mcpredict(&testing.T{}, benchDir, good, "convert", "--compact", "--to", to, csv, "-o", filepath.Join(benchDir, "fft."+to)); code != 0 {
				benchError = os.ErrInvalid
				b.Log(errs)
				return
			}
		}
	})
	if benchError != nil {
		b.Fatal(benchError)
	}
	return benchDir
}

// BenchmarkRead measures events per second read into a model from a
// 1M-event trace: the built-in CSV reader and the std and jsonl plugins
// (process start included).
func BenchmarkRead(b *testing.B) {
	dir := benchTraces(b)
	b.Cleanup(func() { os.RemoveAll(dir) })
	for _, f := range []string{"csv", "std", "jsonl"} {
		b.Run(f, func(b *testing.B) {
			h := formats.NewHost(formats.Config{Dirs: []string{good}})
			defer h.Close()
			events := 0
			for i := 0; i < b.N; i++ {
				m, _, err := h.Open(context.Background(), filepath.Join(dir, "fft."+f), f, tracemodel.Options{})
				if err != nil {
					b.Fatal(err)
				}
				events += len(m.Events)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
