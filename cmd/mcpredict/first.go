package main

import (
	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/conflict"
)

// firstStream returns the check that run --first makes as the trace is
// read, when the selection is exactly conflict (the one analysis that can
// decide on a prefix of the trace), nil otherwise. Its Visit goes into
// the parser's options; if it stopped the read, its Analyzer replaces the
// selection (the model is then that of the events read), else the trace
// was read whole and the selection runs on it as usual.
func (a *analysisFlags) firstStream(as []*analysis.Analyzer) *conflict.Stream {
	if !a.first || len(as) != 1 || as[0].Name != conflict.Name {
		return nil
	}
	return conflict.NewStream(conflict.Options{Atomic: a.atomic, NotAtomic: a.notAtomic})
}

// streamed returns the analyses to run on the model of a read that cs
// (firstStream's, nil for none) watched.
func streamed(cs *conflict.Stream, as []*analysis.Analyzer) []*analysis.Analyzer {
	if cs == nil || !cs.Stopped() {
		return as
	}
	return []*analysis.Analyzer{cs.Analyzer()}
}
