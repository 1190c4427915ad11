package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpredict/mcpredict/analysis/deadlock"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/batch"
	"github.com/mcpredict/mcpredict/service/client"
	"github.com/mcpredict/mcpredict/tracemodel"
)

const batchDescription = `
Checks many traces: every trace file under each DIR (recursively; by default
*.csv, *.trace, *.std, *.jsonl and their .gz/.zst forms) and every file matching each GLOB;
the format of each is detected (--input-format chooses one for all).
Writes one report per trace under DIR/reports/ (--out-dir DIR), and
DIR/summary.json and DIR/summary.txt (per trace: events, shared variables,
models, bugs, time), which is also printed on standard output. Standard
error shows a line per trace (--quiet: none).

Resumable: run the same command again after an interruption and the traces
already finished (same file size, modification time and options) are not
checked again; traces that failed are.

--previous OLD compares the bugs with an earlier batch's output directory by
their stable ids and lists new and fixed bugs.

--server URL sends every trace to a running "mcpredict serve" instead of
checking it here (the check flags then become the jobs' options; the server's
own time and memory limits apply). The token is read from --token-file FILE,
else $MCPREDICT_TOKEN. With --reproduce the server runs the programs (it must
allow them: mcpredict serve --allow-reproduce DIR).

Exit status: 4 if interrupted (SIGINT/SIGTERM: the traces not checked are
counted on stderr); 2 or 3 if some trace could not be checked (bad input, or a
tool failure); otherwise, with --previous, 1 if there are new bugs, without it,
1 if any bug was predicted; else 0.`

func cmdBatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("batch", "[flags] DIR|GLOB...", batchDescription, stderr)
	var cf checkFlags
	cf.register(fs)
	cf.registerMemory(fs)
	out := fs.String("out-dir", "mcpredict-batch", "output `DIR`: reports, summary.json and summary.txt")
	previous := fs.String("previous", "", "compare with the batch in `DIR` (new and fixed bugs)")
	var formatList listFlag
	fs.Var(&formatList, "formats", "also write reports in these formats: a comma-separated `LIST` of text, sarif and html (json is always written)")
	fs.Var(&formatList, "format", "same as --formats")
	var match listFlag
	fs.Var(&match, "match", "base-name globs of the trace files taken from directories (default *.csv,*.trace,*.std,*.jsonl and .gz/.zst)")
	parallel := fs.Int("parallel", 1, "traces checked at once")
	reproduceEach := fs.Bool("reproduce", false, "also run mcpredict reproduce on each trace (its program must be where it was recorded): the reports then say which bugs failed or were reproduced, and list the failing runs; directed runs go beside each trace, TRACE.reproduce/ (with --server: on the server)")
	reproduceBudget := fs.Duration("reproduce-budget", 2*time.Minute, "with --reproduce, the wall time of each trace's directed runs (with --server: default the server's, at most the server's)")
	server := fs.String("server", "", "check on the mcpredict server at `URL` instead of locally")
	tokenFile := fs.String("token-file", "", "read the bearer token for --server from `FILE` (default $MCPREDICT_TOKEN)")
	poll := fs.Duration("poll", 500*time.Millisecond, "how often to poll the server for a job's state")
	srcRoot := fs.String("src-root", "", "source `DIR` (the repository) for the snippets of html reports; sarif paths relative to it, absolute ones under it too")
	expand := fs.Bool("expand", false, "list every bug of a group in text and html reports (--formats), not only the first "+fmt.Sprint(report.FirstShown))
	var quiet bool
	registerQuiet(fs, &quiet, "no progress lines on standard error (warnings are still printed: --no-warnings)")
	noWarnings := fs.Bool("no-warnings", false, "print no warnings on standard error")
	var inf inputFlags // trace formats (formats.go)
	inf.register(fs)
	var af analysisFlags
	af.register(fs)
	// -out and --token are the old names of --out-dir and --token-file:
	// they still work, with a warning, and -h does not list them.
	args, old, err := takeFlags(fs, args, "out", "token")
	if err != nil {
		return fail(stderr, "batch", err)
	}
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	warnf := func(format string, a ...any) {
		if !*noWarnings {
			fmt.Fprintf(stderr, "mcpredict batch: warning: "+format+"\n", a...)
		}
	}
	if v, ok := old["out"]; ok {
		if flagSet(fs, "out-dir") {
			return fail(stderr, "batch", &predict.UsageError{Msg: "-out is the old name of --out-dir: give only --out-dir"})
		}
		*out = v
		warnf("-out is deprecated: use --out-dir %s", v)
	}
	token := os.Getenv("MCPREDICT_TOKEN")
	if v, ok := old["token"]; ok {
		if *tokenFile != "" {
			return fail(stderr, "batch", &predict.UsageError{Msg: "--token and --token-file exclude each other: give only --token-file"})
		}
		token = v
		warnf("--token is deprecated: other users can read it in the process list (ps); use --token-file FILE or $MCPREDICT_TOKEN")
	}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fail(stderr, "batch", &predict.UsageError{Msg: "--token-file: " + err.Error()})
		}
		token = strings.TrimSpace(string(b))
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "mcpredict batch: want at least one DIR or GLOB (see mcpredict batch -h)")
		return exitUsage
	}
	as, err := af.selected(af.list, &cf)
	if err != nil {
		return fail(stderr, "batch", err)
	}
	pats, _ := cf.checkPatterns() // checked by selected
	all := formats(report.Options{Patterns: pats, SrcRoot: *srcRoot, Expand: *expand}, false)
	extra := map[string]service.Renderer{}
	for _, f := range formatList {
		r, ok := all[f]
		if !ok {
			fmt.Fprintf(stderr, "mcpredict batch: unknown format %q in --formats: want text, json, sarif or html\n", f)
			return exitUsage
		}
		extra[f] = r
	}
	jo := cf.jobOptions()
	af.jobOptions(&jo)
	jo.InputFormat = inf.format
	if *server != "" {
		// Said, not dropped silently: these are the server's.
		var ignored []string
		for _, f := range serverFlags {
			if flagSet(fs, f) {
				ignored = append(ignored, "--"+f)
			}
		}
		if len(ignored) > 0 {
			warnf("%s: the server's own limits, cache and tools apply with --server; ignored", strings.Join(ignored, ", "))
		}
	}
	if flagSet(fs, "analysis") {
		jo.Analysis = af.list
	}
	if !flagSet(fs, "engine") {
		jo.Engine = "" // the server's default, not this command's
	}
	if *server != "" && *reproduceEach {
		// The server runs the programs (serve --allow-reproduce).
		jo.Reproduce = true
		if flagSet(fs, "reproduce-budget") {
			jo.ReproduceBudget = reproduceBudget.String()
		}
	}
	cfg := batch.Config{
		Inputs: pos, Out: *out, Formats: extra, Previous: *previous, Parallel: *parallel, Match: match,
		OptionsKey: optionsKey(jo, *server),
	}
	if !quiet {
		cfg.Log = stderr
	}
	if *server != "" {
		cfg.Check = batch.Remote(&client.Client{Base: *server, Token: token}, jo, *poll)
	} else {
		opts, err := cf.options()
		if err == nil {
			err = cf.applyMemory()
		}
		if err != nil {
			return fail(stderr, "batch", err)
		}
		cf.warnSpinSkipped(stderr, "batch")
		plugins := inf.host(stderr, "batch")
		defer plugins.Close()
		topts := cf.traceOptions()
		cfg.Check = localChecker(as, opts, func(ctx context.Context, path string) (*tracemodel.Model, error) {
			m, _, err := plugins.Open(ctx, path, inf.format, topts)
			return m, err
		})
		if *reproduceEach {
			cfg.Check = reproduceChecker(&cf, &af, &inf, *reproduceBudget, stderr)
			cfg.OptionsKey += " reproduce"
		}
	}
	sum, err := batch.Run(ctx, cfg)
	if sum == nil {
		return fail(stderr, "batch", err)
	}
	if werr := batch.WriteText(stdout, sum); werr != nil && err == nil {
		err = werr
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "mcpredict batch: interrupted: %d of %d traces not checked; run the same command again to resume\n",
			sum.Totals.Pending, sum.Totals.Traces)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpredict batch: %v\n", err)
		return exitInternal
	}
	return batchStatus(sum)
}

// reproduceChecker checks a batch's traces as mcpredict reproduce does,
// with its default flags but the budget, quietly: the reports have the
// reproductions.
func reproduceChecker(cf *checkFlags, af *analysisFlags, inf *inputFlags, budget time.Duration, stderr io.Writer) batch.Checker {
	return func(ctx context.Context, path string) (*bugs.Report, error) {
		var rf reproduceFlags
		rf.register(flag.NewFlagSet("reproduce", flag.ContinueOnError)) // its defaults
		rf.budget = budget
		c := *cf // reproduceCandidates may change the engine
		return reproduceTrace(ctx, path, nil, &c, af, inf, &rf, 1, true, stderr)
	}
}

// batchStatus is the exit status of a finished batch.
func batchStatus(sum *batch.Summary) int {
	to := sum.Totals
	switch {
	case to.Errors > to.BadInputs:
		return exitInternal
	case to.BadInputs > 0:
		return exitUsage
	case sum.Compare != nil && len(sum.Compare.New) > 0:
		return exitViolation
	case sum.Compare == nil && to.Bugs > 0:
		return exitViolation
	}
	if sum.Compare == nil {
		for _, t := range sum.Traces {
			if t.Failed > 0 { // a failing run of batch --reproduce that is no bug
				return exitViolation
			}
		}
	}
	return exitOK
}

// jobOptions are the check flags that a job of the service can carry.
func (c *checkFlags) jobOptions() service.JobOptions {
	jo := service.JobOptions{
		Vars: c.vars, Threads: c.threads, Patterns: c.patterns, UserPatterns: c.userPatterns,
		Engine: c.engine, Semantics: c.semantics, NoBoundaries: c.noBoundaries, Lenient: c.lenient, StrictSync: c.strictSync,
		ExcludeVars: c.excludeVars, Confirm: c.confirm,
		NoDataflow: c.noDataflow, NoScope: c.noScope, NoHandoffs: c.noHandoffs, NoWaitConditions: c.noWaitConds,
		NoObservedReads: c.noObservedReads, AtomicSetsOn: c.atomicSetsOn, AtomicSets: c.atomicSets,
	}
	if c.maxInstances != native.DefaultMaxInstances {
		jo.MaxInstances = c.maxInstances
	}
	if c.partAccesses != tracemodel.DefaultPartAccesses {
		jo.PartAccesses = c.partAccesses
		if jo.PartAccesses == 0 {
			jo.PartAccesses = -1 // whole models; 0 is "the server's"
		}
	}
	if c.setPartners.set {
		jo.SetPartners = &c.setPartners.n
	}
	if c.setConfidence != tracemodel.DefaultMinConfidence {
		jo.SetConfidence = &c.setConfidence
	}
	return jo
}

// jobOptions adds the analyses' flags to a job's options.
func (a *analysisFlags) jobOptions(jo *service.JobOptions) {
	jo.Atomic, jo.NotAtomic, jo.BlockConflict = a.atomic, a.notAtomic, a.blockConflict
	if a.maxCycle != deadlock.DefaultMaxCycle {
		jo.DeadlockMaxCycle = a.maxCycle
	}
	if a.valueFlow != "update" {
		jo.ValueFlow = a.valueFlow
	}
}

// apply sets the analyses' flags that a job's options carry.
func (a *analysisFlags) apply(jo service.JobOptions) {
	if len(jo.Atomic) > 0 {
		a.atomic = jo.Atomic
	}
	if len(jo.NotAtomic) > 0 {
		a.notAtomic = jo.NotAtomic
	}
	a.blockConflict = a.blockConflict || jo.BlockConflict
	if jo.DeadlockMaxCycle != 0 {
		a.maxCycle = jo.DeadlockMaxCycle
	}
	if jo.ValueFlow != "" {
		a.valueFlow = jo.ValueFlow
	}
}

// serverFlags are the check flags whose value is the server's with
// --server: its limits, cache and tools (docs/service.md).
var serverFlags = []string{"jobs", "timeout", "memory", "keep-models", "cache-dir", "no-cache", "max-models",
	"max-line-bytes", "max-trace-bytes", "max-events", "strict", "spill", "temp-dir", "max-memory", "confirm-max-steps"}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// optionsKey identifies the options that decide a batch's reports, so that a
// resumed batch with other options checks every trace again.
func optionsKey(jo service.JobOptions, server string) string {
	b, _ := json.Marshal(struct {
		service.JobOptions
		Version string
		Server  bool
	}{jo, version, server != ""})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}
