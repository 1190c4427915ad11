package hldr

import (
	"context"
	"testing"

	"github.com/mcpredict/mcpredict/analysis/internal/atest"
)

// BenchmarkAnalyze measures the analysis after parsing, in events/s, on
// the 1M-event fft-like trace (the figure of make bench).
func BenchmarkAnalyze(b *testing.B) {
	m := atest.Generated(b, atest.FFT1M)
	atest.BenchmarkEvents(b, m, func() error { _, err := Check(context.Background(), m, m.SyncOrder(), Options{}); return err })
}

// BenchmarkAnalyzeServer is the same on the 1M-event server-like trace.
func BenchmarkAnalyzeServer(b *testing.B) {
	m := atest.Generated(b, atest.Server1M)
	atest.BenchmarkEvents(b, m, func() error { _, err := Check(context.Background(), m, m.SyncOrder(), Options{}); return err })
}
