package reproduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/recorder"
)

// ScheduleEnv names the schedule file for the recorder's runtime; RunDirEnv
// is a directory of the directed run's own, for a script that needs one
// (a server's socket, a port file): runs side by side get different ones.
const (
	ScheduleEnv = recorder.ScheduleEnv
	RunDirEnv   = "MCPREDICT_RUN_DIR"
)

// Outcome is what one directed run did.
type Outcome struct {
	Schedule     Schedule
	SchedulePath string // the schedule file it ran
	TracePath    string // its recording (kept when it reproduced the bug)
	Observation  Observation
	Exit         string // "exit status 0", "killed by signal 11 (...)", "timed out after 1m (...)"
	ExitCode     int    // -1 for a signal
	TimedOut     bool
	Stderr       []string // its last lines of standard error
	CheckFailed  bool     // the --check command failed after it
	CheckOutput  []string // the last lines of the check's output
	RuntimeLog   []string // what the runtime did (hold, release, ...)
	Elapsed      time.Duration
	Err          error // the run could not be made or read
	// Log is the runtime's log of the process that failed (or held), and
	// FailTrace that process's recording, kept when the run ended
	// differently from the recorded one.
	Log       runLog
	FailTrace string
	// Placement puts a failure in or outside the window of the run's
	// holds (Place); nil until placed.
	Placement *placement
}

// failureRE finds the messages of a run that went wrong on standard
// error: a failed assertion, a sanitizer report, glibc's heap checks, a
// shell's report of a crash.
var failureRE = regexp.MustCompile(`(?i)assertion .*failed|sanitizer|double free|free\(\): invalid|corrupted|segmentation fault|stack smashing|aborted|core dumped`)

// Changed reports whether the run ended differently from the recorded run,
// and says how.
func (o Outcome) Changed() (bool, string) {
	var why []string
	rec := exitCodeOf(o.Schedule.Ended)
	switch {
	case o.TimedOut && !strings.HasPrefix(o.Schedule.Ended, "timed out"):
		why = append(why, o.Exit+" (the recorded run ended: "+o.Schedule.Ended+")")
	case o.ExitCode != rec && o.Schedule.Ended != "":
		why = append(why, o.Exit+" (the recorded run: "+o.Schedule.Ended+")")
	}
	for _, l := range o.Stderr {
		if failureRE.MatchString(l) {
			why = append(why, "stderr: "+l)
			break
		}
	}
	if o.CheckFailed {
		why = append(why, "--check failed: "+strings.Join(o.CheckOutput, " | "))
	}
	return len(why) > 0, strings.Join(why, "; ")
}

// childDied says, when the run's command ended on its own (a load
// script's exit status) but a recorded process of it died of a signal
// (the server it started), which: "" otherwise.
func (o Outcome) childDied() string {
	if o.Log.Fatal == 0 || o.ExitCode < 0 || o.Log.End == nil {
		return ""
	}
	return fmt.Sprintf("a process of the run died of signal %d (%v) in thread %s, after event %d", o.Log.Fatal, syscall.Signal(o.Log.Fatal), o.Log.End.Thread, o.Log.End.Seq)
}

// Failed reports whether the run ended differently from the recorded one
// in the window of its holds: whether or not the pattern was observed,
// the schedule changed what the program did. A failure placed outside
// any window (Place) is not the run's schedule's.
func (o Outcome) Failed() bool {
	ch, _ := o.Changed()
	return ch && (o.Placement == nil || o.Placement.attribution == bugs.AttrWindow)
}

// FailedOutside reports whether the run ended differently, but outside
// the window of its holds, or without any hold.
func (o Outcome) FailedOutside() bool {
	ch, _ := o.Changed()
	return ch && o.Placement != nil && o.Placement.attribution != bugs.AttrWindow
}

// NoHold reports whether the run ended differently with no thread held
// (or held only in preparation, its candidate's window never open).
func (o Outcome) NoHold() bool {
	return o.FailedOutside() && o.Placement.attribution == bugs.AttrNoHold
}

// Place puts the failure of a run that ended differently in or outside
// the window of its last hold (objects: the window's objects, ObjectOf
// names; vars: its variables; recorded: the orders of the recorded run).
// It does nothing for a run that ended as the recorded one.
func (o *Outcome) Place(objects, vars []string, recorded map[orderKey]bool) {
	if ch, _ := o.Changed(); !ch || o.Placement != nil {
		return
	}
	p := placement{attribution: bugs.AttrWindow}
	if o.FailTrace != "" {
		f, err := os.Open(o.FailTrace)
		if err == nil {
			p, err = place(f, o.Log, objects, vars, recorded)
			f.Close()
		}
		if err != nil {
			p = placement{attribution: bugs.AttrWindow}
		}
	} else if o.Log.lastHold() == nil {
		p.attribution = bugs.AttrNoHold
	}
	o.Placement = &p
}

// tailWriter keeps the last bytes written to it.
type tailWriter struct {
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// lines returns the last n non-empty lines.
func (t *tailWriter) lines(n int) []string {
	var out []string
	for _, l := range strings.Split(string(bytes.TrimSpace(t.buf)), "\n") {
		if l = strings.TrimRight(l, "\r "); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// command builds the process of argv run in dir, in a process group of
// its own (so that the whole of it can be stopped).
func command(argv []string, dir string, env []string, stdout, stderr *tailWriter) *exec.Cmd {
	return commandIn(argv, dir, env, "", stdout, stderr)
}

// commandIn is command with a file as standard input ("": none, an empty
// input). A file that cannot be opened makes the start fail.
func commandIn(argv []string, dir string, env []string, stdin string, stdout, stderr *tailWriter) *exec.Cmd {
	prog := argv[0]
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) && dir != "" {
		prog = filepath.Join(dir, prog)
	} else if !strings.Contains(prog, "/") {
		if p, err := exec.LookPath(prog); err == nil {
			prog = p
		}
	}
	cmd := exec.Command(prog, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if stdin != "" {
		cmd.Stdin = &stdinFile{path: stdin}
	}
	return cmd
}

// stdinFile opens its file when first read, so that a missing file is an
// error of the run (exec copies from a Reader that is not an *os.File).
type stdinFile struct {
	path string
	f    *os.File
	err  error
}

func (s *stdinFile) Read(p []byte) (int, error) {
	if s.f == nil && s.err == nil {
		s.f, s.err = os.Open(s.path)
	}
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.f.Read(p)
	if err != nil {
		s.f.Close()
	}
	return n, err
}

// runGroup runs cmd until it ends, timeout passes or ctx is done; then
// stops every process of its group still running (SIGTERM, SIGKILL 2 s
// later), so that a server a script started never outlives the run.
func runGroup(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (timedOut bool, err error) {
	if err := cmd.Start(); err != nil {
		return false, err
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	stop := func() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(2 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			err = <-done
		}
	}
	select {
	case err = <-done:
	case <-timer:
		timedOut = true
		stop()
	case <-ctx.Done():
		stop()
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // what the command left running
	return timedOut, err
}

// describe says how a process ended, as mcpredict record's header does.
func describe(cmd *exec.Cmd, err error) (int, string) {
	ps := cmd.ProcessState
	if ps == nil {
		return -1, fmt.Sprint(err)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		s := fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
		if ws.CoreDump() {
			s += ", core dumped"
		}
		return -1, s
	}
	return ps.ExitCode(), fmt.Sprintf("exit status %d", ps.ExitCode())
}

// directedRun runs the schedule at schedPath once, in workDir (its raw
// logs and trace), and observes its trace.
func directedRun(ctx context.Context, s Schedule, schedPath, workDir string, timeout time.Duration, keep bool) (o Outcome) {
	o = Outcome{Schedule: s, SchedulePath: schedPath}
	start := time.Now()
	defer func() { o.Elapsed = time.Since(start) }()
	raw := filepath.Join(workDir, "raw")
	// A program started as root that switches user (httpd's "User
	// nobody") must still create its threads' logs, as mcpredict record
	// allows.
	if err := errors.Join(os.MkdirAll(raw, 0o755), recorder.ShareRawDir(raw)); err != nil {
		o.Err = err
		return o
	}
	defer os.RemoveAll(raw)
	stdout, stderr := &tailWriter{max: 8 << 10}, &tailWriter{max: 8 << 10}
	cmd := commandIn(s.Argv, s.Dir, []string{recorder.TraceDirEnv + "=" + raw, ScheduleEnv + "=" + schedPath, RunDirEnv + "=" + workDir}, s.Stdin, stdout, stderr)
	timedOut, err := runGroup(ctx, cmd, timeout)
	if cmd.Process == nil {
		o.Err = fmt.Errorf("starting %s: %w", s.Argv[0], err)
		return o
	}
	o.ExitCode, o.Exit = describe(cmd, err)
	if timedOut {
		o.TimedOut = true
		o.Exit = fmt.Sprintf("timed out after %v (%s)", timeout, o.Exit)
	}
	o.Stderr = stderr.lines(12)
	if ctx.Err() != nil {
		o.Err = ctx.Err()
		return o
	}
	if s.Check != "" {
		o.check(ctx, s)
	}
	o.observe(raw, workDir, keep)
	return o
}

// observe converts each process's raw log and looks for the pattern in
// it; the first trace that has it is kept.
func (o *Outcome) observe(raw, workDir string, keep bool) {
	pids, err := recorder.RawPIDs(raw)
	if err == nil && len(pids) == 0 {
		err = errors.New("the run left no trace log: is the program built with mcpredict cc?")
	}
	if err != nil {
		o.Err = err
		return
	}
	changed, _ := o.Changed()
	failPID, failRank := -1, -1
	logs := map[int]runLog{}
	for _, pid := range pids {
		if b, err := os.ReadFile(filepath.Join(raw, fmt.Sprintf("p%d.sched", pid))); err == nil {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			o.RuntimeLog = append(o.RuntimeLog, lines...)
			l := parseRunLog(lines)
			logs[pid] = l
			// The process that failed: the one that died of a signal,
			// else one that held a thread, else the first.
			rank := 0
			switch {
			case l.Fatal != 0:
				rank = 2
			case len(l.Holds) > 0:
				rank = 1
			}
			if rank > failRank {
				failPID, failRank = pid, rank
			}
		}
	}
	if failPID < 0 && len(pids) > 0 {
		failPID = pids[0]
	}
	o.Log = logs[failPID]
	for _, pid := range pids {
		path := filepath.Join(workDir, fmt.Sprintf("trace-%d.csv", pid))
		f, err := os.Create(path)
		if err != nil {
			o.Err = err
			return
		}
		// The raw directory goes after the run: its process's logs are
		// freed as they are read (ConvertOptions.Consume).
		_, cerr := recorder.Convert(raw, f, recorder.ConvertOptions{PID: pid, Consume: true,
			Comments: []string{"directed run of " + o.Schedule.Bug + " (" + o.SchedulePath + ")", "ended: " + o.Exit}})
		if err := f.Close(); cerr == nil {
			cerr = err
		}
		if cerr != nil {
			o.Err = fmt.Errorf("converting the directed run's log: %w", cerr)
			return
		}
		var obs Observation
		if len(o.Schedule.Steps) > 0 { // an exploring run has no pattern to observe
			if obs, err = observeFile(path, o.Schedule); err != nil {
				o.Err = err
				return
			}
		}
		kept := false
		if obs.Reproduced() && o.TracePath == "" {
			o.Observation, o.TracePath = obs, path
			kept = true
		}
		if changed && pid == failPID {
			o.FailTrace, kept = path, true
		}
		if !kept && !keep {
			os.Remove(path)
		}
	}
}

// observeFile observes the pattern of schedule s in a trace file, exactly
// or else loosely (at the schedule's occurrence).
func observeFile(path string, s Schedule) (Observation, error) {
	var obs Observation
	loose := func(r io.Reader, steps []Step) (Observation, error) { return ObserveLoose(r, steps, s.Occurrence) }
	for _, fn := range []func(io.Reader, []Step) (Observation, error){Observe, loose} {
		f, err := os.Open(path)
		if err != nil {
			return obs, err
		}
		obs, err = fn(f, s.Steps)
		f.Close()
		if err != nil || obs.Reproduced() {
			return obs, err
		}
	}
	return obs, nil
}

// check runs the --check command after the directed run.
func (o *Outcome) check(ctx context.Context, s Schedule) {
	out := &tailWriter{max: 4 << 10}
	cmd := command([]string{"/bin/sh", "-c", s.Check}, s.Dir, nil, out, out)
	_, err := runGroup(ctx, cmd, time.Minute)
	if cmd.Process == nil {
		o.Err = fmt.Errorf("--check %q: %w", s.Check, err)
		return
	}
	if code, desc := describe(cmd, err); code != 0 {
		o.CheckFailed = true
		o.CheckOutput = append(out.lines(4), desc)
	}
}

// controlRun runs the recorded command once without a schedule, recording
// on (so that it runs as slowly as a directed run), and says whether it
// ended differently from the recorded run: a program that fails on its own
// makes a failed directed run say little about the bug it was directed at.
func controlRun(ctx context.Context, s Schedule, workDir string, timeout time.Duration) (changed bool, why string) {
	raw := filepath.Join(workDir, "control")
	if err := errors.Join(os.MkdirAll(raw, 0o755), recorder.ShareRawDir(raw)); err != nil {
		return false, ""
	}
	defer os.RemoveAll(raw)
	stdout, stderr := &tailWriter{max: 8 << 10}, &tailWriter{max: 8 << 10}
	cmd := commandIn(s.Argv, s.Dir, []string{recorder.TraceDirEnv + "=" + raw, RunDirEnv + "=" + raw}, s.Stdin, stdout, stderr)
	timedOut, err := runGroup(ctx, cmd, timeout)
	if cmd.Process == nil || ctx.Err() != nil {
		return false, ""
	}
	o := Outcome{Schedule: s, TimedOut: timedOut, Stderr: stderr.lines(12)}
	o.ExitCode, o.Exit = describe(cmd, err)
	if s.Check != "" {
		o.check(ctx, s)
	}
	return o.Changed()
}
