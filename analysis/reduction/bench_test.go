package reduction_test

import (
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/internal/atest"
)

// BenchmarkReduction: the reduction-based checker with everything it
// requires (transactions, escape, the multi-lockset races, lock sets,
// thread periods), on the 1M-event fft trace.
func BenchmarkReduction(b *testing.B) {
	atest.BenchmarkAnalyzers(b, func() []*analysis.Analyzer { return analyzers(false) })
}
