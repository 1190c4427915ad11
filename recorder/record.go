package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RecordOptions configure Record.
type RecordOptions struct {
	Program string   // the program, built with mcpredict cc
	Args    []string // its arguments
	Env     []string // added to the environment ("NAME=value")
	Dir     string   // its working directory ("" = ours)

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// StdinCopy, if set, is a file that gets a copy of what is read from
	// Stdin, named in the trace header (stdin:) so that mcpredict
	// reproduce gives every directed run the same input.
	StdinCopy string

	// RawDir keeps the raw log there (it is created); "" uses a temporary
	// directory removed afterwards.
	RawDir string
	// Timeout stops the program (SIGTERM, then SIGKILL 2 s later) after
	// this long; the trace up to that point is still written. 0: none.
	Timeout time.Duration
	// NoFuncs does not record Enter/Exit (less overhead).
	NoFuncs bool
	// Serial runs the threads one after the other: each is held at its
	// start until no other thread can run (the runtime's serial schedule),
	// the first created going first ("first") or the last ("last"). It
	// records the run in which the threads did not overlap, from which a
	// prediction must still be made. "": the scheduler's own order.
	Serial string

	// Convert configures the conversion; its Comments are added after
	// the ones Record writes, and its PID defaults to the started process.
	Convert ConvertOptions
}

// RecordResult describes a recorded run.
type RecordResult struct {
	Stats
	// Exit describes how the program ended: "exit status 0",
	// "killed by signal 9 (killed)", "timed out (killed by …)".
	Exit string
	// ExitCode is the program's exit status, or -1 if a signal ended it.
	ExitCode int
	// RawDir is where the raw log is, if it was kept.
	RawDir string
}

// Record runs a program built with mcpredict cc with recording on and
// writes its trace to out. A program that fails, crashes or is killed
// still gives the trace of what it did until then; Record fails only when
// the program cannot be started, left no log, or the log cannot be read.
func Record(ctx context.Context, out io.Writer, opts RecordOptions) (RecordResult, error) {
	var res RecordResult
	raw := opts.RawDir
	if raw == "" {
		tmp, err := os.MkdirTemp("", "mcpredict-raw-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(tmp)
		raw = tmp
		if err := shareRawDir(raw); err != nil {
			return res, err
		}
	} else {
		_, statErr := os.Stat(raw)
		if err := os.MkdirAll(raw, 0o755); err != nil {
			return res, err
		}
		if errors.Is(statErr, fs.ErrNotExist) {
			if err := shareRawDir(raw); err != nil {
				return res, err
			}
		}
		res.RawDir = raw
	}
	abs, err := filepath.Abs(raw)
	if err != nil {
		return res, err
	}
	prog := opts.Program
	if !strings.Contains(prog, "/") {
		if p, err := exec.LookPath(prog); err == nil {
			prog = p
		}
	}

	runCtx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(runCtx, prog, opts.Args...)
	cmd.Dir = opts.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.Stdin, opts.Stdout, opts.Stderr
	var stdinCopy *os.File
	if opts.StdinCopy != "" && opts.Stdin != nil {
		f, err := os.Create(opts.StdinCopy)
		if err != nil {
			return res, fmt.Errorf("copying standard input: %w", err)
		}
		defer f.Close()
		stdinCopy = f
		cmd.Stdin = io.TeeReader(opts.Stdin, f)
	}
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Env = append(cmd.Env, TraceDirEnv+"="+abs)
	var serialLine []string
	if opts.Serial != "" {
		sched, err := writeSerialSchedule(abs, opts.Serial)
		if err != nil {
			return res, err
		}
		cmd.Env = append(cmd.Env, ScheduleEnv+"="+sched)
		serialLine = []string{"serial: " + opts.Serial}
	}
	if opts.NoFuncs {
		cmd.Env = append(cmd.Env, FuncsEnv+"=0")
	}
	// Stop politely first so that the program's own cleanup runs; the
	// trace survives SIGKILL anyway.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("starting %s: %w", opts.Program, err)
	}
	waitErr := cmd.Wait()
	elapsed := time.Since(start)
	res.ExitCode, res.Exit = describeExit(cmd.ProcessState, waitErr)
	if runCtx.Err() != nil && ctx.Err() == nil {
		res.Exit = "timed out after " + opts.Timeout.String() + " (" + res.Exit + ")"
	}

	copts := opts.Convert
	// The temporary log is removed afterwards: the conversion may free
	// it as it reads it.
	copts.Consume = copts.Consume || opts.RawDir == ""
	if copts.PID == 0 {
		pids, err := rawPIDs(raw)
		if err != nil {
			return res, err
		}
		for _, p := range pids {
			if p == cmd.Process.Pid {
				copts.PID = p
			}
		}
		if len(pids) == 0 {
			return res, fmt.Errorf("%s left no trace log (%s): was it built with mcpredict cc?", opts.Program, res.Exit)
		}
	}
	quoted := make([]string, 0, len(opts.Args)+1)
	for _, a := range append([]string{opts.Program}, opts.Args...) {
		if a == "" || strings.ContainsAny(a, " \t\"'\\,") {
			a = strconv.Quote(a)
		}
		quoted = append(quoted, a)
	}
	argv, _ := json.Marshal(append([]string{opts.Program}, opts.Args...))
	cwd := opts.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if a, err := filepath.Abs(cwd); err == nil {
		cwd = a
	}
	var stdinLine []string
	if stdinCopy != nil {
		if a, err := filepath.Abs(opts.StdinCopy); err == nil {
			// What the program read from standard input: reproduce
			// gives it to every directed run.
			stdinLine = []string{"stdin: " + a}
		}
	}
	copts.Comments = append(append([]string{
		"mcpredict trace (CSV: thread, sequence number, file-line, action, object[, object2])",
		"program: " + strings.Join(quoted, " "),
		// argv and cwd let mcpredict reproduce run the program again.
		"argv: " + string(argv),
		"cwd: " + cwd,
		"date: " + start.UTC().Format(time.RFC3339),
		"ended: " + res.Exit,
		// How long the run took (recording on): mcpredict reproduce
		// bounds its directed runs by it.
		"elapsed: " + elapsed.Round(time.Millisecond).String(),
	}, append(stdinLine, serialLine...)...), copts.Comments...)
	st, err := Convert(raw, out, copts)
	res.Stats = st
	return res, err
}

// ScheduleEnv names the runtime's schedule file: a serial run's here, a
// directed run's in mcpredict reproduce.
const ScheduleEnv = "MCPREDICT_SCHEDULE"

// serialPause bounds each thread's hold at its start in a serial run: a
// thread that never blocks nor ends (a server's loop) lets the next one go
// after it.
const serialPause = 2 * time.Second

// writeSerialSchedule writes the schedule of a serial run (order "first"
// or "last") into the raw log's directory and returns its path.
func writeSerialSchedule(dir, order string) (string, error) {
	var n int
	switch order {
	case "first":
		n = 1
	case "last":
		n = 2
	default:
		return "", fmt.Errorf("serial order %q: want first or last", order)
	}
	path := filepath.Join(dir, "serial.schedule")
	text := fmt.Sprintf("mcpredict-schedule 1\npause_ms %d\nserial %d\n", serialPause.Milliseconds(), n)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("serial schedule: %w", err)
	}
	return path, nil
}

// ShareRawDir is shareRawDir, for the other commands that run recorded
// programs (mcpredict reproduce).
func ShareRawDir(dir string) error { return shareRawDir(dir) }

// shareRawDir makes a raw log directory that Record created writable by
// every user, sticky as /tmp is (no user can remove or replace another's
// files), when Record runs as root: a program started as root that
// switches user (httpd's "User nobody", a setuid call) must still create
// the logs of the threads it starts afterwards. The runtime creates its
// logs 0666 when it runs as root, so that threads started before the
// switch can still grow theirs (recorder/README.md, "Programs that switch
// user, and lost thread logs"). Other users cannot switch user: their
// directories keep their mode.
func shareRawDir(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	return os.Chmod(dir, 0o777|fs.ModeSticky)
}

// describeExit says how a process ended.
func describeExit(ps *os.ProcessState, err error) (int, string) {
	if ps == nil {
		if err != nil {
			return -1, err.Error()
		}
		return -1, "unknown"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		s := fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		if ws.CoreDump() {
			s += ", core dumped"
		}
		return -1, s
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return ps.ExitCode(), fmt.Sprintf("exit status %d (%v)", ps.ExitCode(), err)
	}
	return ps.ExitCode(), fmt.Sprintf("exit status %d", ps.ExitCode())
}
