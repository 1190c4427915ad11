package lockset_test

import (
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/atest"
	"github.com/mcpredict/mcpredict/analysis/lockset"
)

// BenchmarkLockset: the multi-lockset detector with the escape analysis,
// lock sets and thread periods it requires, on the 1M-event fft trace.
func BenchmarkLockset(b *testing.B) {
	atest.BenchmarkAnalyzers(b, func() []*analysis.Analyzer {
		return []*analysis.Analyzer{lockset.New(lockset.Options{}, escape.New())}
	})
}
