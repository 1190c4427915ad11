package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
	"github.com/mcpredict/mcpredict/reproduce"
	"github.com/mcpredict/mcpredict/tracemodel"
)

const reproduceDescription = `
Re-runs the recorded program under schedules that force the interleaving of
each predicted bug, records every directed run, and reports which bugs
really happened (reproduced: the directed run's own trace has the pattern's
accesses, on the same sites and variables, in the predicted order) and
which changed the program's outcome (failed: a run that ended differently
from the recorded one in the bug's window — exit status, a signal, an
assertion or sanitizer message, a hang — or whose --check command failed;
"pattern observed" or "not observed in order"). Every run that ends
differently is reported: one that failed outside any bug's window, or in
the exploration, is listed under "failing runs".

When no candidate fails, --explore runs try schedules a PCT scheduler
would: change points drawn from the recorded accesses and lock
acquisitions (the predicted variables weighted up), and a third of them
blind (the n-th lock acquisition of the run, wherever it is), each holding
its thread until no other can run; the first failure ends them, and is
re-run with each change point alone to pin it.

The command is the one recorded in the trace's header (argv and working
directory; mcpredict record writes them), or the one after --. A server is
recorded with its load as one script that starts the server, runs the
clients, stops the server and exits with the clients' verdict
(examples/server). The program must be the build that was recorded: the
schedule finds the source lines in its DWARF.

Candidates are the bugs the model predicts (run's flags choose the model,
the analyses and the report format; --report takes an existing JSON report
instead), then, with --relaxed (default on), the bugs only relaxed models
contain — another value read, a region boundary dropped — which no sound
reordering of the recording has: they are reported only if a directed run
reproduces them, marked as such. Relaxed candidates come from the native
engine only.

A schedule holds the local thread after its first access of the pattern
(at its next lock acquisition, after it released a lock it held, or before
its second access) until other threads made the remote accesses on the
same address, for at most --pause; a thread that would block on a lock the
held thread holds releases it at once. A site reached many times is tried
at other occurrences in later runs (--runs-per-bug). Each bug's schedules
and reproducing traces go to --out-dir; mcpredict replay runs a schedule
again.

Standard input kept by mcpredict record (TRACE.stdin) is given to every
run. The summary says how many candidates the budget left untried.

Exit status: 0 no bug reproduced and no run failed, 1 bugs reproduced or
failed, or a failing run, 2 bad usage or bad input, 3 tool failure,
4 interrupted (the report says what was tried).`

// reproduceFlags are the flags of reproduce that run does not have.
type reproduceFlags struct {
	reportPath     string
	check          string
	pause          time.Duration
	runTimeout     time.Duration
	runsPerBug     int
	maxRuns        int
	budget         time.Duration
	outDir         string
	relaxed        string
	relaxedTimeout time.Duration
	maxRelaxed     int
	showRelaxed    string
	controls       int
	relaxedMemory  int64
	explore        int
	seed           int64
	stdin          string
}

func (r *reproduceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.reportPath, "report", "", "reproduce the bugs of this JSON report (of the same trace) instead of predicting them")
	fs.StringVar(&r.check, "check", "", "a shell `CMD` run after each directed run (in the program's directory): failing makes the run failed")
	fs.DurationVar(&r.pause, "pause", 300*time.Millisecond, "the longest a thread is held by a schedule")
	fs.DurationVar(&r.runTimeout, "run-timeout", 0, "a directed run still running after this is stopped, with every process it started (default: 20 times the recorded run, from 10 s to 1 min)")
	fs.IntVar(&r.runsPerBug, "runs-per-bug", 4, "directed runs per bug at most (other instances, other occurrences of its first access)")
	fs.IntVar(&r.maxRuns, "max-runs", 200, "directed runs in all at most (0: no limit)")
	fs.DurationVar(&r.budget, "budget", 10*time.Minute, "wall time for all directed runs (0: no limit)")
	fs.StringVar(&r.outDir, "out-dir", "", "`DIR` for the schedules and the traces of reproducing runs (default TRACE.reproduce)")
	fs.StringVar(&r.relaxed, "relaxed", "dataflow,reads,boundaries,trylocks", "relaxed models whose extra bugs are tried too, a comma-separated `LIST`: dataflow (a read sees another value), reads (a read sees an older write), boundaries (regions go on over blocking synchronization; the costliest: each model stops at --relaxed-timeout), trylocks (boundaries', and a trylock that succeeded may fail; only for traces with a TryLock), or none")
	fs.DurationVar(&r.relaxedTimeout, "relaxed-timeout", time.Minute, "the longest each relaxed model may take; its candidates found by then are tried")
	fs.Int64Var(&r.relaxedMemory, "relaxed-memory", 2048, "the heap, in `MiB`, at which a relaxed model is stopped (its candidates found by then are tried; 0: no bound)")
	fs.IntVar(&r.maxRelaxed, "max-relaxed", 50, "relaxed candidates tried at most: round-robin over the objects they are on, the models in turn, more instances first")
	fs.IntVar(&r.controls, "controls", 2, "runs of the command without a schedule made first: when one ends differently from the recorded run, the program fails on its own, which failed bugs' evidence then says")
	fs.IntVar(&r.explore, "explore", 20, "exploring runs once the candidates are used up and none of them failed, within --budget and --max-runs (0: none): change points drawn from the recording, weighted toward the predicted variables, as PCT would put them; stops at the first failure")
	fs.Int64Var(&r.seed, "seed", 1, "the seed of the exploration's draws (the same seed, the same schedules)")
	fs.StringVar(&r.stdin, "stdin", "", "a `FILE` given as standard input to every run (default: the input mcpredict record kept beside the trace, TRACE.stdin, if any)")
	fs.StringVar(&r.showRelaxed, "show-relaxed", "failed", "which bugs only relaxed models predict are reported: failed (their directed run changed the outcome) or reproduced (also those whose run changed nothing)")
}

// splitCommand splits the arguments at the first "--": the flags and the
// trace before it, the command after it.
func splitCommand(args []string) (flags, command []string) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:]
	}
	return args, nil
}

func cmdReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	args, command := splitCommand(args)
	fs := newFlagSet("reproduce", "[flags] TRACE [-- CMD ARGS...]", reproduceDescription, stderr)
	var rfl runFlags
	rfl.register(fs)
	cf, of, af := &rfl.check, &rfl.output, &rfl.analysis
	var rf reproduceFlags
	rf.register(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "mcpredict reproduce: want exactly one TRACE argument (see mcpredict reproduce -h)")
		return exitUsage
	}
	if rf.showRelaxed != "failed" && rf.showRelaxed != "reproduced" {
		return fail(stderr, "reproduce", &predict.UsageError{Msg: fmt.Sprintf("--show-relaxed %q: want failed or reproduced", rf.showRelaxed)})
	}
	filt, err := of.load()
	if err != nil {
		return fail(stderr, "reproduce", err)
	}
	jobs := 1
	if flagSet(fs, "jobs") {
		jobs = cf.jobs
	}
	rep, err := reproduceTrace(ctx, pos[0], command, cf, af, &rfl.input, &rf, jobs, of.quiet, stderr)
	if err != nil {
		return fail(stderr, "reproduce", err)
	}
	filt.apply(rep)
	of.warn(stderr, "reproduce", rep)
	pats, _ := cf.checkPatterns()
	if werr := of.write(stdout, rep, pats); werr != nil {
		return fail(stderr, "reproduce", fmt.Errorf("writing report: %w", werr))
	}
	return reproduceStatus(ctx, stderr, rep)
}

// reproduceTrace predicts on a trace (or reads --report) and makes the
// directed runs of its candidates, then of the exploration: the report of
// mcpredict reproduce, with its reproductions, failing runs and counts.
// command replaces the recorded one when given; jobs is the number of
// directed runs side by side; quiet leaves out the progress lines.
func reproduceTrace(ctx context.Context, trace string, command []string, cf *checkFlags, af *analysisFlags, inf *inputFlags, rf *reproduceFlags, jobs int, quiet bool, stderr io.Writer) (*bugs.Report, error) {
	rec, err := reproduce.ReadRecording(trace)
	if err != nil {
		return nil, err
	}
	if len(command) == 0 && len(rec.Argv) == 0 {
		return nil, &predict.UsageError{Msg: fmt.Sprintf("trace %s: its header names no command (not recorded by mcpredict record): give it after --", trace)}
	}
	rep, cands, err := reproduceCandidates(ctx, trace, cf, af, inf, rf, stderr)
	if err != nil {
		return nil, err
	}
	opts := reproduce.Options{Pause: rf.pause, RunTimeout: rf.runTimeout, RunsPerBug: rf.runsPerBug, MaxRuns: rf.maxRuns,
		Budget: rf.budget, Check: rf.check, Argv: command, OutDir: rf.outDir, Jobs: jobs, Controls: rf.controls,
		Explore: rf.explore, Seed: rf.seed}
	if rf.stdin != "" {
		if _, err := os.Stat(rf.stdin); err != nil {
			return nil, &predict.UsageError{Msg: fmt.Sprintf("--stdin: %v", err)}
		}
		opts.Stdin = absPath(rf.stdin)
	}
	if opts.OutDir == "" {
		opts.OutDir = trace + ".reproduce"
	}
	// Absolute: the program runs in its own directory, and a server that
	// changes directory still finds its run directory (MCPREDICT_RUN_DIR).
	opts.OutDir = absPath(opts.OutDir)
	if !quiet {
		fmt.Fprintf(stderr, "mcpredict reproduce: %d candidates; directed runs of %s, schedules in %s\n", len(cands), strings.Join(commandOf(rec, command), " "), opts.OutDir)
		opts.Progress = reproduceProgress(stderr)
	}
	results, err := reproduce.Run(ctx, rec, cands, opts)
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, results.Summary.Warnings...)
	reproduce.Apply(rep, results, rf.showRelaxed == "reproduced")
	return rep, nil
}

// setDefault sets m[k] to v unless m has k, making m if needed.
func setDefault(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	if _, ok := m[k]; !ok {
		m[k] = v
	}
	return m
}

func commandOf(rec reproduce.Recording, command []string) []string {
	if len(command) > 0 {
		return command
	}
	return rec.Argv
}

// reproduceProgress prints one line per directed run.
func reproduceProgress(stderr io.Writer) func(string, int, reproduce.Outcome) {
	return func(bug string, run int, o reproduce.Outcome) {
		state := "not reproduced"
		switch {
		case o.Err != nil:
			state = "error: " + o.Err.Error()
		case o.NoHold():
			state = "FAILED with no thread held"
		case o.FailedOutside():
			state = "FAILED outside its window"
		case o.Failed() && o.Observation.Reproduced():
			state = "FAILED, pattern observed"
		case o.Failed() && len(o.Schedule.Points) > 0:
			state = "FAILED"
		case o.Failed():
			state = "FAILED, pattern not observed in order"
		case o.Observation.Reproduced():
			state = "reproduced"
		case len(o.Schedule.Points) > 0:
			state = "ended as recorded"
		}
		where := fmt.Sprintf("occurrence %d", o.Schedule.Occurrence)
		if len(o.Schedule.Points) > 0 {
			where = fmt.Sprintf("%d change points", len(o.Schedule.Points))
		}
		fmt.Fprintf(stderr, "  %s run %d (%s): %s, %s, %.1fs\n", bug, run, where, state, o.Exit, o.Elapsed.Seconds())
	}
}

// reproduceStatus is the exit status of reproduce: interrupted, bugs
// reproduced, or none.
func reproduceStatus(ctx context.Context, stderr io.Writer, rep *bugs.Report) int {
	failed, unobserved, reproduced := 0, 0, 0
	for _, b := range rep.Active() {
		r := b.Reproduction
		switch {
		case r == nil:
		case r.Failed:
			failed++
			if !r.Observed {
				unobserved++
			}
		case r.Status == bugs.Reproduced:
			reproduced++
		}
	}
	fmt.Fprintf(stderr, "mcpredict reproduce: %d bugs failed (%d without the pattern observed in order), %d more reproduced; %d other failing runs\n",
		failed, unobserved, reproduced, len(rep.Failures))
	if s := rep.Reproduce; s != nil {
		fmt.Fprintf(stderr, "mcpredict reproduce: %s\n", report.RunSummary(*s))
	}
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case failed+reproduced+len(rep.Failures) > 0:
		return exitViolation
	}
	return exitOK
}

// reproduceCandidates returns the report whose bugs are reproduced (the
// default model's, or --report's) and the candidates: its bugs, then the
// relaxed models' other bugs.
func reproduceCandidates(ctx context.Context, trace string, cf *checkFlags, af *analysisFlags, inf *inputFlags, rf *reproduceFlags, stderr io.Writer) (*bugs.Report, []reproduce.Candidate, error) {
	as, err := af.selected(af.list, cf)
	if err != nil {
		return nil, nil, err
	}
	if !analysis.ModelChecked(as) {
		cf.engine, cf.noCache = string(predict.EngineNative), true
	}
	opts, err := cf.options()
	if err == nil {
		err = cf.applyMemory()
	}
	if err != nil {
		return nil, nil, err
	}
	cf.warnSpinSkipped(stderr, "reproduce")
	m, err := inf.open(ctx, trace, cf.traceOptions(), stderr, "reproduce")
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	var rep *bugs.Report
	if rf.reportPath != "" {
		if rep, err = readReport(rf.reportPath); err == nil {
			rep.ClearReproductions()
		}
	} else {
		rep, err = run(ctx, m, as, opts)
	}
	if err != nil {
		return nil, nil, err
	}
	cands := reproduce.CandidatesOf(rep, false, 3)
	relax, err := relaxationsOf(rf.relaxed)
	if err != nil {
		return nil, nil, err
	}
	if n := len(relax); n > 0 && relax[n-1].name == "trylocks" && !m.HasTryLock() {
		relax = relax[:n-1] // the same model as boundaries'
	}
	runModel := func(ctx context.Context, o predict.Options) (*bugs.Report, error) { return run(ctx, m, as, o) }
	relaxed, err := relaxedCandidates(ctx, runModel, opts, rep, relax, rf, stderr)
	if err != nil {
		return nil, nil, fmt.Errorf("relaxed models: %w", err)
	}
	// What the trace says of the variables of the relaxed models' bugs,
	// which join the report only if their runs fail.
	extra := &bugs.Report{}
	for _, c := range relaxed {
		extra.Bugs = append(extra.Bugs, c.Bug)
	}
	extra.SetReached(m.Reached)
	extra.SetContainers(m.Containers)
	for v, p := range extra.Reached {
		rep.Reached = setDefault(rep.Reached, v, p)
	}
	for v, c := range extra.Containers {
		rep.Containers = setDefault(rep.Containers, v, c)
	}
	return rep, append(cands, relaxed...), nil
}

// relaxation is a relaxed model: its --relaxed name and the options it
// turns off.
type relaxation struct {
	name  string
	relax func(*tracemodel.ProjectOptions)
}

// relaxations are the relaxed models whose extra bugs can be candidates,
// by name, from the least relaxed: another value read (the data flow
// observed on other variables dropped), then reads that may see an older
// write too, then region boundaries at blocking synchronization dropped as
// well, then a trylock that succeeded may fail too (only for traces with a
// TryLock). Each relaxes the ones before it.
var relaxations = []relaxation{
	{"dataflow", func(o *tracemodel.ProjectOptions) { o.Dataflow = false }},
	{"reads", func(o *tracemodel.ProjectOptions) { o.Dataflow, o.ObservedReads, o.FreeSetReads = false, false, true }},
	{"boundaries", func(o *tracemodel.ProjectOptions) {
		o.Dataflow, o.ObservedReads, o.FreeSetReads, o.NoBoundaries, o.Handoffs = false, false, true, true, false
	}},
	{"trylocks", func(o *tracemodel.ProjectOptions) {
		o.Dataflow, o.ObservedReads, o.FreeSetReads, o.NoBoundaries, o.Handoffs, o.TryLocksFail = false, false, true, true, false, true
	}},
}

// relaxationsOf returns the relaxations a --relaxed list names, in the
// order of relaxations.
func relaxationsOf(list string) ([]relaxation, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" && n != "none" {
			want[n] = true
		}
	}
	var out []relaxation
	for _, r := range relaxations {
		if want[r.name] {
			out = append(out, r)
			delete(want, r.name)
		}
	}
	for n := range want {
		return nil, &predict.UsageError{Msg: fmt.Sprintf("--relaxed: unknown relaxation %q (want trylocks, dataflow, reads, boundaries or none)", n)}
	}
	return out, nil
}

// relaxedCandidates runs the relaxed models with the native engine
// (runModel with the model's options), each for at most --relaxed-timeout,
// and returns the bugs the default report does not have, at most
// --max-relaxed, in reproduce.RankRelaxed's order. A model that fails is
// left out with a warning: the other models' candidates are still tried.
// Only an interruption (ctx done) is an error.
func relaxedCandidates(ctx context.Context, runModel func(context.Context, predict.Options) (*bugs.Report, error), opts predict.Options, rep *bugs.Report, relax []relaxation, rf *reproduceFlags, stderr io.Writer) ([]reproduce.Candidate, error) {
	seen := map[string]bool{}
	for _, b := range rep.Bugs {
		seen[b.ID] = true
	}
	var models [][]reproduce.Candidate
	for _, r := range relax {
		o := opts
		o.Engine, o.Confirm, o.Cache, o.Progress = predict.EngineNative, predict.ConfirmNone, nil, nil
		r.relax(&o.Project)
		rctx, cancel := context.WithTimeout(ctx, rf.relaxedTimeout)
		mctx, overMemory := watchHeap(rctx, rf.relaxedMemory<<20)
		rr, err := runModel(mctx, o)
		over := overMemory()
		timedOut := rctx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case over:
			fmt.Fprintf(stderr, "mcpredict reproduce: warning: relaxed model %s stopped at --relaxed-memory %d MiB: only the candidates found by then are tried\n", r.name, rf.relaxedMemory)
			if rr == nil {
				continue
			}
		case timedOut:
			fmt.Fprintf(stderr, "mcpredict reproduce: warning: relaxed model %s took longer than --relaxed-timeout %v: only the candidates found by then are tried\n", r.name, rf.relaxedTimeout)
			if rr == nil {
				continue
			}
		case err != nil:
			fmt.Fprintf(stderr, "mcpredict reproduce: warning: relaxed model %s: %v: its candidates are not tried\n", r.name, err)
			continue
		}
		var found []reproduce.Candidate
		for _, c := range reproduce.CandidatesOf(rr, true, 3) {
			if !seen[c.Bug.ID] && c.Bug.Pattern != "" && strings.IndexByte("PM", c.Bug.Pattern[0]) >= 0 {
				seen[c.Bug.ID] = true
				found = append(found, c)
			}
		}
		models = append(models, found)
	}
	out := reproduce.RankRelaxed(models...)
	return out[:min(len(out), max(rf.maxRelaxed, 0))], nil
}

// watchHeap returns a context that is cancelled when the process's live
// heap exceeds limit bytes (0: never), and a function that reports
// whether that is what happened. The heap is read every 50 ms.
func watchHeap(ctx context.Context, limit int64) (context.Context, func() bool) {
	if limit <= 0 {
		return ctx, func() bool { return false }
	}
	ctx, cancel := context.WithCancel(ctx)
	var over atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				metrics.Read(sample)
				if sample[0].Value.Kind() == metrics.KindUint64 && int64(sample[0].Value.Uint64()) > limit {
					over.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	return ctx, func() bool {
		cancel()
		<-done
		return over.Load()
	}
}

// absPath is path made absolute, or path if it cannot be.
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}
