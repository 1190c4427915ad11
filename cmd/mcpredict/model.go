package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/tracemodel"
)

const modelDescription = `
Prints the Promela model of one (shared variable, thread pair) of the trace,
with its LTL claims, exactly as it is given to Spin. Every statement carries
the source location and trace line it comes from. With --var2, the model of
the atomic set {var, var2} with the two-variable claims (M1..M6 in both
assignments, or the two-variable --patterns and --pattern). --format json
prints the PairModel (the projection) instead.`

func cmdModel(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("model", "TRACE --var V --threads A,B [flags]", modelDescription, stderr)
	varName := fs.String("var", "", "the shared `variable` (required)")
	var2Name := fs.String("var2", "", "a second shared `variable`: the model of the atomic set {var, var2}")
	var threads, patterns listFlag
	var user multiFlag
	fs.Var(&threads, "threads", "the two thread handles `A,B` (required)")
	fs.Var(&patterns, "patterns", "claims for these built-in patterns only")
	fs.Var(&user, "pattern", "add a user pattern (repeatable)")
	var sem checkFlags
	sem.registerSemantics(fs)
	lenient := fs.Bool("lenient", false, "skip malformed trace lines")
	sem.registerStrictSync(fs)
	format := fs.String("format", "pml", "pml or json")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || *varName == "" || len(threads) != 2 {
		fmt.Fprintln(stderr, "mcpredict model: want TRACE, --var V and --threads A,B (see mcpredict model -h)")
		return exitUsage
	}
	if *format != "pml" && *format != "json" {
		fmt.Fprintf(stderr, "mcpredict model: unknown --format %q\n", *format)
		return exitUsage
	}
	pats, err := selectPatterns(patterns, user)
	if err != nil {
		return fail(stderr, "model", err)
	}
	m, err := tracemodel.Open(ctx, pos[0], tracemodel.Options{Lenient: *lenient, StrictSync: sem.strictSync})
	if err != nil {
		return fail(stderr, "model", err)
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(stderr, "mcpredict model: warning: %s\n", w)
	}
	v := m.VarByName(*varName)
	if v == 0 {
		return fail(stderr, "model", &predict.UsageError{Msg: fmt.Sprintf("no variable %q in %s", *varName, m.Name)})
	}
	var tids [2]int
	for i, h := range threads {
		if tids[i] = m.ThreadByHandle(h); tids[i] == 0 {
			return fail(stderr, "model", &predict.UsageError{Msg: fmt.Sprintf("no thread %q in %s", h, m.Name)})
		}
	}
	popts, err := sem.projectOptions()
	if err != nil {
		return fail(stderr, "model", err)
	}
	var pm *tracemodel.PairModel
	if *var2Name != "" {
		w := m.VarByName(*var2Name)
		if w == 0 {
			return fail(stderr, "model", &predict.UsageError{Msg: fmt.Sprintf("no variable %q in %s", *var2Name, m.Name)})
		}
		if len(patterns) == 0 && len(user) == 0 {
			pats = predict.SetModels.Builtin()
		}
		pats = ltl.BothAssignments(slices.DeleteFunc(pats, func(p ltl.Pattern) bool { return !p.TwoVariable() }))
		if len(pats) == 0 {
			return fail(stderr, "model", &predict.UsageError{Msg: "--var2: no two-variable pattern selected (M1..M6 or a --pattern naming x and y)"})
		}
		pm, err = m.ProjectSet(v, w, tids[0], tids[1], popts)
	} else {
		pats = slices.DeleteFunc(pats, ltl.Pattern.TwoVariable)
		if len(pats) == 0 {
			return fail(stderr, "model", &predict.UsageError{Msg: "no one-variable pattern selected (P1..P5 or a --pattern without x and y; --var2 for a set)"})
		}
		pm, err = m.Project(v, tids[0], tids[1], popts)
	}
	if err != nil {
		return fail(stderr, "model", &predict.UsageError{Msg: err.Error()})
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(pm); err != nil {
			return fail(stderr, "model", err)
		}
		return exitOK
	}
	prog := promela.Emit(pm, predict.Claims(predict.CheckedPatterns(pats, popts)))
	if _, err := stdout.Write(prog.Source); err != nil {
		return fail(stderr, "model", err)
	}
	return exitOK
}
