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
	"github.com/mcpredict/mcpredict/analysis/conflict"
	"github.com/mcpredict/mcpredict/analysis/deadlock"
	"github.com/mcpredict/mcpredict/analysis/txn"
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
	first             bool
	valueFlow         string
}

// defaultAnalysisFlags are the flags' defaults, for commands without them
// (serve: a job names its analyses).
func defaultAnalysisFlags() analysisFlags {
	return analysisFlags{list: all.Default, maxCycle: deadlock.DefaultMaxCycle}
}

func (a *analysisFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.list, "analysis", all.Default, "analyses to run: a comma-separated `LIST` of names, or all (see mcpredict analyses); --atomic-sets, --atomic-set, --set-partners and a two-variable pattern add atomicset")
	fs.IntVar(&a.maxCycle, "deadlock-max-cycle", deadlock.DefaultMaxCycle, "deadlock: longest lock-order cycle searched, in locks (= threads)")
	fs.Var(&a.atomic, "atomic", "sidetrack, block, conflict, reduction, commitnode: only these functions or Begin/End labels are transactions (comma-separated)")
	fs.Var(&a.notAtomic, "not-atomic", "sidetrack, block, conflict, reduction, commitnode: these functions or labels are never transactions (comma-separated)")
	fs.BoolVar(&a.blockConflict, "block-conflict", false, "block: also report conflict-unserializable blocks that are view-serializable")
	fs.BoolVar(&a.first, "first", false, "conflict: stop at the first cycle (its witness reported), not reading the rest of the trace: a CI gate")
	fs.StringVar(&a.valueFlow, "value-flow", "update", "svd, hldr, stale: how far a read's value is assumed to flow, the trace recording none: `MODE` statement, update or invocation (analysis/internal/flow)")
}

// selected returns the analyses of list ("" for the default) configured
// with the flags and the check flags' patterns and atomic-set shorthands;
// a bad list or pattern is a usage error.
func (a *analysisFlags) selected(list string, c *checkFlags) ([]*analysis.Analyzer, error) {
	if a.maxCycle < 2 {
		return nil, &predict.UsageError{Msg: fmt.Sprintf("--deadlock-max-cycle: %d: want at least 2", a.maxCycle)}
	}
	switch a.valueFlow {
	case "", "statement", "update", "invocation":
	default:
		return nil, &predict.UsageError{Msg: fmt.Sprintf("--value-flow: %q: want statement, update or invocation", a.valueFlow)}
	}
	pats, err := c.checkPatterns()
	if err != nil {
		return nil, err
	}
	as, err := all.Select(all.Options{
		Patterns:     pats,
		AtomicSets:   c.atomicSetsOn || len(c.atomicSets) > 0 || c.setPartners.set,
		Deadlock:     deadlock.Options{MaxCycle: a.maxCycle},
		Transactions: txn.Options{Atomic: a.atomic, NotAtomic: a.notAtomic},
		Block:        block.Options{Conflict: a.blockConflict},
		Conflict:     conflict.Options{First: a.first},
		ValueFlow:    a.valueFlow,
	}, list)
	if err != nil {
		return nil, &predict.UsageError{Msg: "--analysis: " + err.Error()}
	}
	return as, nil
}

// run runs the analyses on m, checking the models of the model-checked
// ones in this process with opts.
func run(ctx context.Context, m *tracemodel.Model, as []*analysis.Analyzer, opts predict.Options) (*bugs.Report, error) {
	return analysis.Run(ctx, m, as, analysis.Options{Version: opts.Version, CheckModels: predict.ModelChecker(opts)})
}

const analysesDescription = `
Lists the analyses of mcpredict run --analysis: name, what it reports, and
the paper it comes from. The default is ` + all.Default + `; all runs every one.
The model-checked analyses (mcpatom, atomicset) check all their models in
one pass; --atomic-sets, --atomic-set, --set-partners and a two-variable
pattern add atomicset to the list. --names prints only the names, one a
line (for scripts).`

func cmdAnalyses(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("analyses", "", analysesDescription, stderr)
	names := fs.Bool("names", false, "print only the names of the analyses, one a line")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		fmt.Fprintln(stderr, "mcpredict analyses: no arguments expected")
		return exitUsage
	}
	if *names {
		for _, a := range all.Analyzers(all.Options{}) {
			fmt.Fprintln(stdout, a.Name)
		}
		return exitOK
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

// localChecker checks a batch's traces here with the analyses as.
func localChecker(as []*analysis.Analyzer, opts predict.Options, open func(ctx context.Context, path string) (*tracemodel.Model, error)) batch.Checker {
	return func(ctx context.Context, path string) (*bugs.Report, error) {
		m, err := open(ctx, path)
		if err != nil {
			return nil, err
		}
		defer m.Close()
		return run(ctx, m, as, opts)
	}
}
