package commitnode_test

import (
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/commitnode"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/atest"
	"github.com/mcpredict/mcpredict/analysis/txn"
)

// BenchmarkCommitNode: the commit-node checker (both forests) with
// everything it requires (transactions, escape, thread periods), on the
// 1M-event fft trace.
func BenchmarkCommitNode(b *testing.B) {
	atest.BenchmarkAnalyzers(b, func() []*analysis.Analyzer {
		return []*analysis.Analyzer{commitnode.New(commitnode.Options{}, txn.New(txn.Options{}), escape.New())}
	})
}
