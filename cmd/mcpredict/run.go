package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/cache"
	traceformats "github.com/mcpredict/mcpredict/formats"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// version is the tool version; release builds set it with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const runDescription = `
Predicts atomicity violations in the trace: for every shared variable and
every pair of threads that access it (one writing), it builds the
partial-order model, checks the five unserializable patterns P1-P5 (and any
--pattern) in both views, and reports each violation mapped to source lines,
including violations that did not happen in the recorded run.

--analysis chooses the analyses (mcpredict analyses; default ` + all.Default + `):
the model-checked ones, mcpatom (the models above) and atomicset (atomic
sets: pairs of variables that belong together, with the two-variable
patterns M1-M6; --atomic-sets, --atomic-set, --set-partners and a
two-variable pattern add it), have all their models checked in one pass;
deadlock, sidetrack and block report their findings in the same report.

TRACE is a Pin-style CSV trace (see docs/trace-format.md), or a trace in
the format of a plugin (RAPID's STD, JSON lines, ...: mcpredict formats;
--input-format, or detected by content), optionally gzip or zstd
compressed, or - for standard input.

The report goes to standard output (or -o FILE) as --format text (bugs
grouped by source file, each with its interleaving), json (the versioned
schema mcpredict.report/v1, input of mcpredict diff and --baseline), sarif
(SARIF 2.1.0 for code scanning) or html (one self-contained page with a
swimlane diagram per bug; --src-root adds source snippets). --baseline
leaves out the bugs a previous JSON report has; --suppressions silences
the bugs its rules match (docs/formats.md). Both are counted in the
summary. On a terminal, standard error shows a progress bar (--quiet: none).

Large traces: past 1 M events the events and their indexes move to an
unlinked temporary file in --temp-dir (--spill; 32 to 64 bytes of disk an
event, said on standard error), of which the process keeps about 512 MiB
resident (a quarter of --max-memory when it is given; the rest of it is
then Go's soft heap limit). Memory then grows with the synchronization
events and the largest model, not with the accesses. A full temporary directory is an
error naming the trace line (exit 3).

The native search decides every claim; with --engine auto, Spin then
confirms one model per distinct bug (--confirm one; all: every violating
model; none: no Spin), and the report marks the confirmed bugs.

Environment: MCPREDICT_SPIN and MCPREDICT_CC choose the spin and C compiler
binaries (default: spin, and tcc when installed, about 20 times faster to
compile Spin's verifiers, else gcc). Verdicts are cached (--cache-dir).

A model over its limits (--timeout, --memory, the native state bound) is
listed as undecided, with the flag that raises the limit, and the run goes
on. SIGINT or SIGTERM stops the run: the report of the models checked so
far is written, marked incomplete; a second one ends the process at once.

Synchronization oddities of real programs (an Unlock of a mutex the thread
does not hold, a Join of an unknown thread, ...) are warnings on standard
error and in the report, and the model absorbs each as docs/trace-format.md
says; --strict-sync refuses such a trace instead (exit 2).

Exit status: 0 no violation, 1 violations found (not counting the bugs left
out by --baseline or --suppressions), 2 bad usage or bad input (including
a trace over --max-line-bytes, --max-trace-bytes, --max-events or
--max-models, or a synchronization oddity with --strict-sync), 3 internal
or tool failure (spin or gcc missing or failing), or undecided models with
--strict, or no model decided; 4 interrupted (the report is incomplete).`

// checkFlags are the flags shared by the commands that check traces.
type checkFlags struct {
	vars, threads, patterns listFlag
	userPatterns            multiFlag
	noBoundaries, lenient   bool
	strictSync              bool
	semantics               string
	noDataflow, noScope     bool
	noHandoffs, noWaitConds bool
	noObservedReads         bool
	engine                  string
	jobs                    int
	timeout                 time.Duration
	keepModels              string
	memoryMB                int
	cacheDir                string
	noCache                 bool
	maxInstances            int
	partAccesses            int
	maxLineBytes            int
	strict                  bool
	maxTraceBytes           int64
	excludeVars             listFlag
	confirm                 string
	confirmMaxSteps         int
	maxModels               int
	maxEvents               int
	spill, tempDir          string
	maxMemory               sizeFlag
	atomicSets              multiFlag
	atomicSetsOn            bool
	setPartners             countFlag
	setConfidence           float64
	// spinSkipped is why --engine auto runs without Spin (options).
	spinSkipped error
}

// countFlag is an int flag that knows whether it was given.
type countFlag struct {
	n   int
	set bool
}

func (f *countFlag) String() string { return strconv.Itoa(f.n) }
func (f *countFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want an integer")
	}
	f.n, f.set = n, true
	return nil
}

func (c *checkFlags) register(fs *flag.FlagSet) {
	fs.Var(&c.vars, "vars", "check only these variables (comma-separated names or globs)")
	fs.Var(&c.excludeVars, "exclude-vars", "leave out these variables (comma-separated names or globs; applied after --vars)")
	fs.IntVar(&c.maxModels, "max-models", predict.DefaultMaxModels, "refuse a trace whose selection needs more models than this (one per shared variable and thread pair; 0: no limit)")
	fs.StringVar(&c.confirm, "confirm", "one", "with --engine auto, which bugs Spin confirms: one (one model per distinct bug), all (every violating model) or none")
	fs.IntVar(&c.confirmMaxSteps, "confirm-max-steps", predict.DefaultConfirmMaxSteps, "with --confirm one, the largest model sent to Spin, in statements: a bug whose smallest model is larger stays unconfirmed, with a warning (0: no limit)")
	fs.Var(&c.threads, "threads", "check only pairs of these thread handles (one handle: every pair with it)")
	fs.Var(&c.patterns, "patterns", "check only these built-in patterns, e.g. P1,P3 (default all)")
	fs.Var(&c.userPatterns, "pattern", "add a user pattern in the pattern language, e.g. 'W1 R2 W1', or over an atomic set, 'R1(x) W2(x) W2(y) R1(y)' (repeatable)")
	fs.BoolVar(&c.atomicSetsOn, "atomic-sets", false, "also run the analysis atomicset (--analysis atomicset): check atomic sets — pairs of variables that belong together, inferred from the trace — with the two-variable patterns M1..M6 (on by default; this adds it to an --analysis list without it)")
	fs.Var(&c.atomicSets, "atomic-set", "declare an atomic set, variables that must change together, e.g. 'range.lo,range.hi' (names or globs; repeatable; implies --atomic-sets)")
	c.setPartners.n = tracemodel.DefaultMaxPartners
	fs.Float64Var(&c.setConfidence, "set-confidence", tracemodel.DefaultMinConfidence, "inferred atomic sets: the least share of the less accessed variable's regions in which both are accessed (0 to 1)")
	fs.Var(&c.setPartners, "set-partners", "inferred atomic sets: the most partners of one variable, strongest correlation first (0: none, only --atomic-set; implies --atomic-sets)")
	c.registerSemantics(fs)
	fs.BoolVar(&c.lenient, "lenient", false, "skip malformed trace lines (counted in the report) instead of failing")
	c.registerStrictSync(fs)
	fs.IntVar(&c.maxLineBytes, "max-line-bytes", tracemodel.DefaultMaxLineBytes, "longest trace line accepted, in bytes")
	fs.Int64Var(&c.maxTraceBytes, "max-trace-bytes", 0, "largest trace accepted after decompression, in bytes (0: no limit)")
	fs.IntVar(&c.maxEvents, "max-events", tracemodel.DefaultMaxEvents, "most events accepted in a trace (a spilled trace takes 32 to 64 bytes of temporary disk an event; 0: no limit but the 2^31-1 the model can index)")
	fs.StringVar(&c.engine, "engine", "auto", "auto (native search, Spin confirms violations), spin (every model through Spin) or native (no Spin)")
	fs.IntVar(&c.jobs, "jobs", 0, "models checked in parallel (default: number of CPUs)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "time limit per model (0: none)")
	fs.StringVar(&c.keepModels, "keep-models", "", "keep each model's Promela file and Spin output under `DIR`")
	fs.IntVar(&c.memoryMB, "memory", 1024, "Spin memory limit per model in MB")
	fs.StringVar(&c.cacheDir, "cache-dir", "", "verdict cache `DIR` (default: mcpredict/verdicts under the user cache directory)")
	fs.BoolVar(&c.noCache, "no-cache", false, "do not read or write the verdict cache")
	fs.BoolVar(&c.strict, "strict", false, "exit 3 when any model is undecided (over its --timeout, --memory or state limit); default: report it and go on (about models; --strict-sync is about the trace)")
	fs.IntVar(&c.maxInstances, "max-instances", native.DefaultMaxInstances, "instances listed per claim of a model: one per access that completes the pattern (each can be another bug)")
	fs.IntVar(&c.partAccesses, "part-accesses", tracemodel.DefaultPartAccesses, "a model is checked in parts cut where both threads pass a barrier, each of about N accesses (0: whole models; an interleaving then starts at the model's start, not at its part's cut)")
}

// options turns the flags into predict.Options. Tool lookup errors are
// returned as is (exit status 3).
func (c *checkFlags) options() (predict.Options, error) {
	var o predict.Options
	eng, err := predict.ParseEngine(c.engine)
	if err != nil {
		return o, &predict.UsageError{Msg: "--engine: " + err.Error()}
	}
	if c.maxInstances <= 0 {
		return o, &predict.UsageError{Msg: fmt.Sprintf("--max-instances: %d: want a positive number", c.maxInstances)}
	}
	partAccesses := c.partAccesses
	switch {
	case partAccesses < 0:
		return o, &predict.UsageError{Msg: fmt.Sprintf("--part-accesses: %d: want 0 (whole models) or a positive number", partAccesses)}
	case partAccesses == 0:
		partAccesses = -1
	}
	confirm, err := predict.ParseConfirm(c.confirm)
	if err != nil {
		return o, &predict.UsageError{Msg: "--confirm: " + err.Error()}
	}
	if eng == predict.EngineNative {
		confirm = predict.ConfirmNone
	}
	maxModels := c.maxModels
	switch {
	case maxModels < 0:
		return o, &predict.UsageError{Msg: fmt.Sprintf("--max-models: %d: want 0 (no limit) or a positive number", maxModels)}
	case maxModels == 0:
		maxModels = -1
	}
	if _, err := c.checkPatterns(); err != nil {
		return o, err
	}
	proj, err := c.projectOptions()
	if err != nil {
		return o, err
	}
	sets := tracemodel.SetOptions{MaxPartners: c.setPartners.n, MinConfidence: c.setConfidence}
	switch {
	case c.setConfidence < 0 || c.setConfidence > 1:
		return o, &predict.UsageError{Msg: fmt.Sprintf("--set-confidence: %g: want a number from 0 to 1", c.setConfidence)}
	case c.setConfidence == 0:
		sets.MinConfidence = -1 // every correlated pair
	}
	switch {
	case c.setPartners.n < 0:
		return o, &predict.UsageError{Msg: fmt.Sprintf("--set-partners: %d: want 0 or a positive number", c.setPartners.n)}
	case c.setPartners.n == 0:
		sets.MaxPartners = -1
	}
	for _, a := range c.atomicSets {
		var globs []string
		for _, g := range strings.Split(a, ",") {
			if g = strings.TrimSpace(g); g != "" {
				globs = append(globs, g)
			}
		}
		if len(globs) == 0 {
			return o, &predict.UsageError{Msg: fmt.Sprintf("--atomic-set %q: want comma-separated variable names or globs", a)}
		}
		sets.Declared = append(sets.Declared, globs)
	}
	// The patterns and the kinds of models are the analyses' (Models,
	// set by analysis.Run from the selected analyzers).
	o = predict.Options{
		Sets: sets,
		Vars: c.vars, Threads: c.threads, Engine: eng, Jobs: c.jobs,
		Project: proj, MaxInstances: c.maxInstances, PartAccesses: partAccesses,
		ExcludeVars: c.excludeVars, Confirm: confirm, ConfirmMaxSteps: confirmMaxSteps(c.confirmMaxSteps), MaxModels: maxModels,
		Spin:    spinrunner.Options{Timeout: c.timeout, KeepDir: c.keepModels, MemoryMB: c.memoryMB},
		Version: version,
	}
	if c.keepModels != "" {
		// pan runs in the model's directory: the path must be absolute.
		abs, err := filepath.Abs(c.keepModels)
		if err != nil {
			return o, &predict.UsageError{Msg: "--keep-models: " + err.Error()}
		}
		o.Spin.KeepDir = abs
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return o, &predict.UsageError{Msg: "--keep-models: " + err.Error()}
		}
	}
	if !c.noCache {
		dir := c.cacheDir
		if dir == "" {
			if dir, err = cache.DefaultPath(); err != nil {
				return o, &predict.UsageError{Msg: err.Error()}
			}
		}
		if o.Cache, err = cache.Open(dir); err != nil {
			return o, &predict.UsageError{Msg: "--cache-dir: " + err.Error()}
		}
	}
	if eng != predict.EngineNative {
		o.Tools, err = spinrunner.FindTools()
		switch {
		case err != nil && eng == predict.EngineAuto:
			// The native engine decides every verdict; only the
			// confirmation needs Spin.
			c.spinSkipped = err
			o.Engine, o.Confirm = predict.EngineNative, predict.ConfirmNone
		case err != nil:
			return o, err
		}
	}
	return o, nil
}

// warnSpinSkipped says, once, that Spin confirmation was skipped because
// Spin or a C compiler is missing, and how to install them.
func (c *checkFlags) warnSpinSkipped(stderr io.Writer, cmd string) {
	if c.spinSkipped != nil {
		fmt.Fprintf(stderr, "mcpredict %s: warning: %v; meanwhile the native engine decides every verdict and Spin confirmation is skipped (--engine native says so and silences this)\n", cmd, c.spinSkipped)
		c.spinSkipped = nil
	}
}

// confirmMaxSteps turns --confirm-max-steps into Options.ConfirmMaxSteps
// (0 on the command line is no limit).
func confirmMaxSteps(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// traceOptions are the parser options of the flags.
func (c *checkFlags) traceOptions() tracemodel.Options {
	maxEvents := c.maxEvents
	if maxEvents <= 0 {
		maxEvents = -1 // no limit
	}
	return tracemodel.Options{Lenient: c.lenient, StrictSync: c.strictSync, MaxLineBytes: c.maxLineBytes, MaxBytes: c.maxTraceBytes, MaxEvents: maxEvents,
		Spill: tracemodel.SpillMode(c.spill), SpillDir: c.tempDir, MaxResident: c.maxMemory.n / 4}
}

// strictSyncUsage is the help of --strict-sync (run, batch, serve, convert,
// model).
const strictSyncUsage = "refuse a trace with a synchronization oddity (Unlock of a lock the thread does not hold, Join of an unknown thread, " +
	"Wait with a mutex not held, Lock of a lock another thread holds, event after the thread's Join): exit 2 with FILE:LINE: problem. " +
	"Default: a warning, and the model absorbs it (docs/trace-format.md). Not --strict, which is about undecided models"

func (c *checkFlags) registerStrictSync(fs *flag.FlagSet) {
	fs.BoolVar(&c.strictSync, "strict-sync", false, strictSyncUsage)
}

// registerSemantics registers --semantics and the --no-* rule flags (run,
// batch, serve and model share them).
func (c *checkFlags) registerSemantics(fs *flag.FlagSet) {
	fs.StringVar(&c.semantics, "semantics", tracemodel.SemanticsPrecise, "model semantics: precise (observed data flow, region scope, boundaries) or paper (McPatom's literal over-approximation); the --no-* flags turn single rules off")
	fs.BoolVar(&c.noBoundaries, "no-boundaries", false, "no region boundaries at blocking synchronization, hand-offs or published writes (a write by a mutex-based atomic read back by its caller is never one)")
	fs.BoolVar(&c.noHandoffs, "no-handoffs", false, "no region boundaries at Create, Signal, Broadcast, SemPost")
	fs.BoolVar(&c.noDataflow, "no-dataflow", false, "do not order a model by the data flow observed on other variables (with it, locked counter updates read by DataRead commute: docs/semantics.md, Commutative updates)")
	fs.BoolVar(&c.noScope, "no-scope", false, "regions span loop iterations, returns of updates and callbacks from uninstrumented code (no region scope)")
	fs.BoolVar(&c.noWaitConds, "no-wait-conditions", false, "no region boundary after a critical section that checks a cond-wait loop's condition")
	fs.BoolVar(&c.noObservedReads, "no-observed-reads", false, "a local read may run before the other thread's write it observed even when it would then read its own thread's value")
}

// projectOptions turns --semantics and the --no-* rule flags into
// projection options.
func (c *checkFlags) projectOptions() (tracemodel.ProjectOptions, error) {
	o, err := tracemodel.SemanticsOptions(c.semantics)
	if err != nil {
		return o, &predict.UsageError{Msg: "--semantics: " + err.Error()}
	}
	if c.noBoundaries {
		o.NoBoundaries, o.Handoffs = true, false
	}
	if c.noHandoffs {
		o.Handoffs = false
	}
	if c.noDataflow {
		o.Dataflow = false
	}
	if c.noScope {
		o.Scope = false
	}
	if c.noWaitConds {
		o.WaitConditions = false
	}
	if c.noObservedReads {
		o.ObservedReads = false
	}
	return o, nil
}

// checkPatterns are the patterns of the model-checked analyses
// (all.Options.Patterns), each of which takes those of its kind of models:
// the built-ins --patterns names and the --pattern ones; every built-in
// with the --pattern ones when only they are given; nil, each analysis its
// built-in ones, when neither is.
func (c *checkFlags) checkPatterns() ([]ltl.Pattern, error) {
	if len(c.patterns) == 0 && len(c.userPatterns) == 0 {
		return nil, nil
	}
	pats, err := selectPatterns(c.patterns, c.userPatterns)
	if err != nil || len(c.patterns) > 0 {
		return pats, err
	}
	return append(ltl.AllBuiltin(), pats[len(ltl.Builtin()):]...), nil
}

// selectPatterns returns the chosen built-ins (P1..P5 by default) and the
// user patterns, named U1, U2, ...
func selectPatterns(ids []string, user []string) ([]ltl.Pattern, error) {
	var out []ltl.Pattern
	builtin := ltl.AllBuiltin()
	if len(ids) == 0 && len(user) == 0 {
		return ltl.Builtin(), nil
	}
	for _, id := range ids {
		found := false
		for _, p := range builtin {
			if strings.EqualFold(p.ID, id) {
				out = append(out, p)
				found = true
			}
		}
		if !found {
			return nil, &predict.UsageError{Msg: fmt.Sprintf("--patterns: unknown pattern %q (built-ins are P1..P5 and M1..M6; see `mcpredict patterns`)", id)}
		}
	}
	if len(ids) == 0 {
		out = ltl.Builtin()
	}
	for i, src := range user {
		p, err := ltl.User(fmt.Sprintf("U%d", i+1), src)
		if err != nil {
			return nil, &predict.UsageError{Msg: fmt.Sprintf("--pattern %q: %v", src, err)}
		}
		out = append(out, p)
	}
	return out, nil
}

// formats are the report renderers by --format name; o configures sarif
// and html (and o.Expand the text), color the text.
func formats(o report.Options, color bool) map[string]func(io.Writer, *bugs.Report) error {
	return map[string]func(io.Writer, *bugs.Report) error{
		"text": func(w io.Writer, r *bugs.Report) error {
			return report.WriteTextOptions(w, r, report.TextOptions{Color: color, Expand: o.Expand})
		},
		"json":  bugs.WriteJSON,
		"sarif": func(w io.Writer, r *bugs.Report) error { return report.WriteSARIF(w, r, o) },
		"html":  func(w io.Writer, r *bugs.Report) error { return report.WriteHTML(w, r, o) },
	}
}

// runFlags are the flags of the commands that predict on one trace (run,
// reproduce): the model, the report, the trace format, the analyses.
type runFlags struct {
	check    checkFlags
	output   outputFlags
	input    inputFlags // trace format (formats.go)
	analysis analysisFlags
}

func (r *runFlags) register(fs *flag.FlagSet) {
	r.check.register(fs)
	r.check.registerMemory(fs)
	r.output.register(fs)
	r.input.register(fs)
	r.analysis.register(fs)
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", "[flags] TRACE", runDescription, stderr)
	var rfl runFlags
	rfl.register(fs)
	cf, of, inf, af := &rfl.check, &rfl.output, &rfl.input, &rfl.analysis
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "mcpredict run: want exactly one TRACE argument (see mcpredict run -h)")
		return exitUsage
	}
	as, err := af.selected(af.list, cf)
	if err != nil {
		return fail(stderr, "run", err)
	}
	if !analysis.ModelChecked(as) {
		cf.engine, cf.noCache = string(predict.EngineNative), true // no Spin, no verdict cache needed
	}
	filt, err := of.load()
	if err != nil {
		return fail(stderr, "run", err)
	}
	removeStaleWorkDirs(stderr, "run")
	opts, err := cf.options()
	if err == nil {
		err = cf.applyMemory()
	}
	if err != nil {
		return fail(stderr, "run", err)
	}
	cf.warnSpinSkipped(stderr, "run")
	topts := cf.traceOptions()
	var endReading func()
	topts.Progress, endReading = of.readingProgress(stderr, pos[0])
	first := af.firstStream(as) // conflict --first: checked as read, the read stopped at the first cycle
	if first != nil {
		topts.Visit = first.Visit
	}
	m, err := inf.open(ctx, pos[0], topts, stderr, "run")
	endReading()
	if err != nil {
		return fail(stderr, "run", err)
	}
	defer m.Close()
	as = streamed(first, as)
	if st := m.Spill(); st.Spilled && !of.quiet {
		fmt.Fprintf(stderr, "mcpredict run: %s: %d events spilled to an unlinked temporary file in %s: %s of disk\n", pos[0], m.EventCount(), st.Dir, humanBytes(st.DiskBytes))
	}
	var endProgress func()
	opts.Progress, endProgress = of.progress(stderr)
	rep, err := run(ctx, m, as, opts)
	endProgress()
	if err != nil && (rep == nil || !rep.Incomplete) {
		return fail(stderr, "run", err)
	}
	filt.apply(rep)
	of.warn(stderr, "run", rep)
	pats, _ := cf.checkPatterns() // checked by selected
	if werr := of.write(stdout, rep, pats); werr != nil {
		return fail(stderr, "run", fmt.Errorf("writing report: %w", werr))
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpredict run: %v; the report above is incomplete\n", err)
	}
	return cf.exitStatus(stderr, rep)
}

// exitStatus is the status of a written report: interrupted, undecided
// models under --strict or nothing decided, violations, or none.
func (c *checkFlags) exitStatus(stderr io.Writer, rep *bugs.Report) int {
	if n := len(rep.Undecided); n > 0 {
		fmt.Fprintf(stderr, "mcpredict: %d of %d models undecided (limits; see the report)\n", n, rep.Stats.Models)
	}
	switch {
	case rep.Incomplete:
		return exitInterrupted
	case len(rep.Undecided) > 0 && (c.strict || len(rep.Undecided) == rep.Stats.Models):
		return exitInternal
	case len(rep.Active()) > 0:
		return exitViolation
	}
	return exitOK
}

// fail prints err and returns the exit status its kind calls for.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "mcpredict %s: %v\n", cmd, err)
	var (
		pe *tracemodel.ParseError
		ue *predict.UsageError
		pa *os.PathError
		mt *spinrunner.MissingToolError
		tm *predict.TooManyModelsError
		ie *traceformats.InputError // unknown or ambiguous trace format
	)
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &mt):
		return exitInternal
	case errors.As(err, &pe), errors.As(err, &ue), errors.As(err, &pa), errors.As(err, &tm), errors.As(err, &ie):
		return exitUsage
	}
	return exitInternal // tool failures, broken format plugins, internal errors, interruption
}
