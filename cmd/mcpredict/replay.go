package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/reproduce"
)

const replayDescription = `
Runs a schedule that mcpredict reproduce wrote (TRACE.reproduce/BUG/runN.sched)
once more: the recorded command, or the one after -- (for example the
program under gdb: -- gdb -ex run --args ./prog ARGS), with the recorder's
runtime forcing the same interleaving. It records the run, says whether
the pattern happened again and whether the run failed.

Exit status: 0 the pattern happened again, 1 it did not, 2 bad usage or a
bad schedule file, 3 the run could not be made, 4 interrupted.`

func cmdReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	args, command := splitCommand(args)
	fs := newFlagSet("replay", "[flags] SCHEDULE [-- CMD ARGS...]", replayDescription, stderr)
	outDir := fs.String("out-dir", "", "`DIR` for the run's trace (default: a new temporary directory, kept)")
	runTimeout := fs.Duration("run-timeout", time.Minute, "stop the run, with every process it started, after this (a deadlock's schedule: 10s unless given)")
	pause := fs.Duration("pause", 0, "the longest a thread is held (default: the schedule's)")
	check := fs.String("check", "", "a shell `CMD` run after the run (default: the schedule's)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "mcpredict replay: want exactly one SCHEDULE argument (see mcpredict replay -h)")
		return exitUsage
	}
	s, err := reproduce.ReadSchedule(pos[0])
	if err != nil {
		return fail(stderr, "replay", &predict.UsageError{Msg: err.Error()})
	}
	if len(command) > 0 {
		s.Argv = command
	}
	if *pause > 0 {
		s.Pause = *pause
	}
	if *check != "" {
		s.Check = *check
	}
	if s.Pattern == "DL" && !flagSet(fs, "run-timeout") {
		// A directed deadlock ends only at the time-out, as in reproduce.
		*runTimeout = reproduce.DeadlockTimeout
	}
	dir := *outDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "mcpredict-replay-"); err != nil {
			return fail(stderr, "replay", err)
		}
	}
	o := reproduce.Replay(ctx, s, absPath(dir), *runTimeout)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "mcpredict replay: interrupted")
		return exitInterrupted
	case o.Err != nil:
		return fail(stderr, "replay", o.Err)
	}
	state := "did not happen again"
	switch {
	case len(s.Steps) == 0 && o.Failed():
		state = "the run FAILED again"
	case len(s.Steps) == 0:
		state = "the run ended as the recorded one"
	case o.Failed() && o.Observation.Reproduced():
		state = "happened again, and the run FAILED"
	case o.Failed():
		state = "the run FAILED again, the pattern not observed in order"
	case o.Observation.Reproduced():
		state = "happened again; the run ended as the recorded one"
	}
	fmt.Fprintf(stdout, "%s %s: %s\n%s\n", s.Bug, s.Pattern, state, o.Evidence())
	if o.Observation.Reproduced() || o.Failed() {
		return exitOK
	}
	return exitViolation
}
