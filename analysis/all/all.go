// Package all lists every analysis of mcpredict with its options: the
// registry that drivers (`mcpredict run`, batch, serve, worker) select
// analyses from by name.
package all

import (
	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/block"
	"github.com/mcpredict/mcpredict/analysis/deadlock"
	"github.com/mcpredict/mcpredict/analysis/mcpatom"
	"github.com/mcpredict/mcpredict/analysis/sidetrack"
	"github.com/mcpredict/mcpredict/predict"
)

// Default is the analyses run when none are named.
const Default = "mcpatom,deadlock"

// Options are the options of every analysis.
type Options struct {
	MCPatom   predict.Options
	Deadlock  deadlock.Options
	SideTrack sidetrack.Options
	Block     block.Options
}

// Analyzers returns every analysis, in report order, configured with o.
func Analyzers(o Options) []*analysis.Analyzer {
	return []*analysis.Analyzer{
		mcpatom.New(o.MCPatom),
		deadlock.New(o.Deadlock),
		sidetrack.New(o.SideTrack),
		block.New(o.Block),
	}
}

// Select returns the analyzers named by list (comma-separated names, "all",
// or "" for Default); an unknown name is an error listing the known ones.
func Select(o Options, list string) ([]*analysis.Analyzer, error) {
	return analysis.Select(Analyzers(o), list, Default)
}
