package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/analysis/block"
	"github.com/mcpredict/mcpredict/analysis/deadlock"
	"github.com/mcpredict/mcpredict/analysis/mcpatom"
	"github.com/mcpredict/mcpredict/analysis/sidetrack"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service/batch"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// analysisFlags choose the analyses of run and batch.
type analysisFlags struct {
	list              string
	maxCycle          int
	atomic, notAtomic listFlag
	blockConflict     bool
}

func (a *analysisFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.list, "analysis", all.Default, "analyses to run: a comma-separated `LIST` of names, or all (see mcpredict analyses)")
	fs.IntVar(&a.maxCycle, "deadlock-max-cycle", 8, "deadlock: longest lock-order cycle searched, in locks (= threads)")
	fs.Var(&a.atomic, "atomic", "sidetrack, block: only these functions or Begin/End labels are transactions (comma-separated)")
	fs.Var(&a.notAtomic, "not-atomic", "sidetrack, block: these functions or labels are never transactions (comma-separated)")
	fs.BoolVar(&a.blockConflict, "block-conflict", false, "block: also report conflict-unserializable blocks that are view-serializable")
}

// selected returns the selected analyses configured with the McPatom
// options; a bad list is a usage error.
func (a *analysisFlags) selected(opts predict.Options) ([]*analysis.Analyzer, error) {
	if a.maxCycle < 2 {
		return nil, &predict.UsageError{Msg: fmt.Sprintf("--deadlock-max-cycle: %d: want at least 2", a.maxCycle)}
	}
	as, err := all.Select(all.Options{
		MCPatom:   opts,
		Deadlock:  deadlock.Options{MaxCycle: a.maxCycle},
		SideTrack: sidetrack.Options{Atomic: a.atomic, NotAtomic: a.notAtomic},
		Block:     block.Options{Atomic: a.atomic, NotAtomic: a.notAtomic, Conflict: a.blockConflict},
	}, a.list)
	if err != nil {
		return nil, &predict.UsageError{Msg: "--analysis: " + err.Error()}
	}
	return as, nil
}

// withMCPatom reports whether the list selects McPatom (so that Spin and
// the verdict cache are needed); a bad list is left to selected.
func (a *analysisFlags) withMCPatom() bool {
	as, err := all.Select(all.Options{}, a.list)
	if err != nil {
		return true
	}
	for _, x := range as {
		if x.Name == mcpatom.Name {
			return true
		}
	}
	return false
}

// run runs the selected analyses on m.
func (a *analysisFlags) run(ctx context.Context, m *tracemodel.Model, opts predict.Options) (*bugs.Report, error) {
	as, err := a.selected(opts)
	if err != nil {
		return nil, err
	}
	return analysis.Run(ctx, m, as, analysis.Options{Version: opts.Version})
}

const analysesDescription = `
Lists the analyses of mcpredict run --analysis: name, what it reports, and
the paper it comes from. The default is ` + all.Default + `; all runs every one.`

func cmdAnalyses(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("analyses", "", analysesDescription, stderr)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		fmt.Fprintln(stderr, "mcpredict analyses: no arguments expected")
		return exitUsage
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	def := map[string]bool{}
	for _, n := range strings.Split(all.Default, ",") {
		def[n] = true
	}
	for _, a := range all.Analyzers(all.Options{}) {
		mark := ""
		if def[a.Name] {
			mark = " (default)"
		}
		fmt.Fprintf(tw, "%s%s\t%s\n\t%s\n", a.Name, mark, a.Doc, "from: "+a.Paper)
	}
	if err := tw.Flush(); err != nil {
		return fail(stderr, "analyses", err)
	}
	return exitOK
}

// localChecker checks a batch's traces here with the selected analyses.
func (a *analysisFlags) localChecker(opts predict.Options, open func(ctx context.Context, path string) (*tracemodel.Model, error)) batch.Checker {
	return func(ctx context.Context, path string) (*bugs.Report, error) {
		m, err := open(ctx, path)
		if err != nil {
			return nil, err
		}
		return a.run(ctx, m, opts)
	}
}
