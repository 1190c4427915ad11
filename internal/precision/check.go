package precision

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Options configure Record, Predict and Check.
type Options struct {
	// Engine is mcpredict run's --engine ("" for its default).
	Engine string
	// Extra are more flags for mcpredict run.
	Extra []string
	// CFlags are the compiler flags of mcpredict cc (default -O1): a
	// user's build is often -O2, which inlines and changes the functions a
	// trace shows.
	CFlags []string
	// Env is added to the environment of every command (for example
	// XDG_CACHE_HOME, where mcpredict cc builds its runtime once).
	Env []string
	// RunEnv is added to the environment of mcpredict run only (for
	// example MCPREDICT_CC=tcc, which compiles Spin's verifiers faster
	// but cannot build the recorder's runtime for mcpredict cc).
	RunEnv []string
	// Cache lets mcpredict run use its verdict cache; by default
	// (--no-cache) every claim is decided again, so the check time is
	// the real cost and a changed analysis is never answered from the
	// cache.
	Cache bool
	// Attempts bounds the recordings of a program with NotExhibited
	// (default 5).
	Attempts int
	// WorkDir is where Check compiles and records ("" for a temporary
	// directory it removes).
	WorkDir string
	// KeepDir, if set, receives a copy of each trace as <program>.csv.
	KeepDir string
	// Serial records with mcpredict record --serial (first or last): the
	// threads one after the other, never overlapping.
	Serial string
}

// Recording is a program compiled and recorded once; Predict checks it.
type Recording struct {
	Program  *Program
	Trace    string // the trace file
	Attempts int    // recordings made (more than 1 when a run exhibited the bug)
	Compile  time.Duration
	Record   time.Duration // all attempts
}

// Result is the outcome of predicting on one program's trace.
type Result struct {
	*Recording
	Engine     string        // the --engine given ("" for the default)
	Bugs       []Bug         // every bug reported
	Missing    []Expectation // expectations no bug matched
	Unexpected []Bug         // bugs that match no expectation
	Allowed    []Bug         // bugs that match only an mcpredict:allow line
	Check      time.Duration // mcpredict run's wall time
}

// Expected is the number of bugs that must be found.
func (r *Result) Expected() int { return len(r.Program.Expect) }

// Found is the number of expected bugs found.
func (r *Result) Found() int { return r.Expected() - len(r.Missing) }

// OK reports whether every expected bug was found and nothing else reported.
func (r *Result) OK() bool { return len(r.Missing) == 0 && len(r.Unexpected) == 0 }

// Bug is one bug of mcpredict's JSON report (schema mcpredict.report/v1).
type Bug struct {
	ID        string     `json:"id"`
	Pattern   string     `json:"pattern"`
	Vars      []string   `json:"vars"`
	Locations []Location `json:"locations"`
	Count     int        `json:"count"`
}

// Location is one access of a bug.
type Location struct {
	Role   string `json:"role"`
	Action string `json:"action"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Func   string `json:"func,omitempty"`
}

// String is a compact one-line form: pattern, variables, then each
// location as role:Action@line.
func (b Bug) String() string {
	var sb strings.Builder
	sb.WriteString(b.Pattern + " " + strings.Join(b.Vars, ","))
	for _, l := range b.Locations {
		fmt.Fprintf(&sb, " %s:%s@%d", l.Role, l.Action, l.Line)
	}
	return sb.String()
}

// Matches reports whether the bug, reported for a program in file, is
// the expected one.
func (e Expectation) Matches(b Bug, file string) bool {
	if !slices.Contains(e.Patterns, b.Pattern) {
		return false
	}
	// "lo+hi": a bug of an atomic set lists every one of the variables.
	for _, v := range strings.Split(e.Var, "+") {
		if !slices.Contains(b.Vars, v) {
			return false
		}
	}
	for _, a := range e.Accesses {
		if !slices.ContainsFunc(b.Locations, func(l Location) bool {
			return l.Role == a.Role && l.Action == a.Action && filepath.Base(l.File) == file &&
				(a.Line == 0 || l.Line == a.Line)
		}) {
			return false
		}
	}
	return true
}

// Match compares the reported bugs with the program's expectations: the
// expected bugs no report matched, the reports that match no expect or
// allow line, and those that match an allow line only.
func Match(p *Program, bugs []Bug) (missing []Expectation, unexpected, allowed []Bug) {
	found := make([]bool, len(p.Expect))
	for _, b := range bugs {
		matched := false
		for i, e := range p.Expect {
			if e.Matches(b, p.Name) {
				found[i], matched = true, true
			}
		}
		switch {
		case matched:
		case slices.ContainsFunc(p.Allow, func(e Expectation) bool { return e.Matches(b, p.Name) }):
			allowed = append(allowed, b)
		default:
			unexpected = append(unexpected, b)
		}
	}
	for i, e := range p.Expect {
		if !found[i] {
			missing = append(missing, e)
		}
	}
	return missing, unexpected, allowed
}

// Check compiles, records and predicts on one program.
func Check(ctx context.Context, bin string, prog *Program, opts Options) (*Result, error) {
	dir := opts.WorkDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "precision-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	rec, err := Record(ctx, bin, prog, dir, opts)
	if err != nil {
		return nil, err
	}
	return Predict(ctx, bin, rec, opts)
}

// Record compiles the program with `bin cc -O1` (Options.CFlags) into dir and records it
// with `bin record` (prog.Stdin its standard input), again while the run
// interleaves prog.NotExhibited.
func Record(ctx context.Context, bin string, prog *Program, dir string, opts Options) (*Recording, error) {
	rec := &Recording{Program: prog}
	exe := filepath.Join(dir, strings.TrimSuffix(prog.Name, filepath.Ext(prog.Name)))
	start := time.Now()
	cflags := opts.CFlags
	if len(cflags) == 0 {
		cflags = []string{"-O1"}
	}
	ccArgs := append(append([]string{"cc"}, cflags...), "-o", exe, prog.Path)
	if _, err := run(ctx, bin, opts.Env, ccArgs...); err != nil {
		return nil, fmt.Errorf("%s: compiling: %w", prog.Path, err)
	}
	rec.Compile = time.Since(start)

	rec.Trace = filepath.Join(dir, "trace.csv")
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	start = time.Now()
	for {
		rec.Attempts++
		args := []string{"record", "-o", rec.Trace}
		if opts.Serial != "" {
			args = append(args, "--serial", opts.Serial)
		}
		args = append(append(args, "--", exe), prog.Args...)
		if _, err := runStdin(ctx, bin, opts.Env, prog.Stdin, args...); err != nil {
			return nil, fmt.Errorf("%s: recording: %w", prog.Path, err)
		}
		if prog.Reproduce != "" {
			// A program that checks its own result: the recorded run
			// must be one where the bug did not happen.
			clean, err := endedCleanly(rec.Trace)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", prog.Path, err)
			}
			if !clean {
				if rec.Attempts >= attempts {
					return nil, fmt.Errorf("%s: every one of %d recorded runs failed", prog.Path, attempts)
				}
				continue
			}
		}
		if prog.NotExhibited == "" {
			break
		}
		threads, inter, err := interleaved(rec.Trace, prog.NotExhibited)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", prog.Path, err)
		}
		if threads < 2 {
			return nil, fmt.Errorf("%s: mcpredict:notexhibited %s: accessed by %d thread(s) in the trace, want 2 or more (is the name as the trace writes it?)",
				prog.Path, prog.NotExhibited, threads)
		}
		if !inter {
			break
		}
		if rec.Attempts >= attempts {
			return nil, fmt.Errorf("%s: every one of %d recorded runs interleaved the accesses to %s", prog.Path, attempts, prog.NotExhibited)
		}
	}
	rec.Record = time.Since(start)

	if opts.KeepDir != "" {
		keep := filepath.Join(opts.KeepDir, TraceName(prog))
		if err := copyFile(keep, rec.Trace); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// TraceName is the file name of a program's trace in Options.KeepDir.
func TraceName(p *Program) string {
	return strings.TrimSuffix(p.Name, filepath.Ext(p.Name)) + ".csv"
}

// FromTrace is a Recording of an existing trace of the program, for
// checking a kept trace again (its times are zero).
func FromTrace(prog *Program, trace string) (*Recording, error) {
	if _, err := os.Stat(trace); err != nil {
		return nil, fmt.Errorf("%s: %w", prog.Path, err)
	}
	return &Recording{Program: prog, Trace: trace}, nil
}

// Predict runs `bin run --format json` on the recording and matches its
// report with the program's expectations.
func Predict(ctx context.Context, bin string, rec *Recording, opts Options) (*Result, error) {
	args := []string{"run", "--format", "json", "--quiet"}
	if !opts.Cache {
		args = append(args, "--no-cache")
	}
	if opts.Engine != "" {
		args = append(args, "--engine", opts.Engine)
	}
	args = append(append(args, opts.Extra...), rec.Trace)
	start := time.Now()
	out, err := run(ctx, bin, append(opts.Env[:len(opts.Env):len(opts.Env)], opts.RunEnv...), args...)
	elapsed := time.Since(start)
	violations := false
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		violations, err = true, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: predicting: %w", rec.Program.Path, err)
	}
	var report struct {
		Bugs []Bug `json:"bugs"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		return nil, fmt.Errorf("%s: mcpredict run: bad JSON report: %w", rec.Program.Path, err)
	}
	if violations != (len(report.Bugs) > 0) {
		return nil, fmt.Errorf("%s: mcpredict run: exit status 1 is %v, but the report has %d bugs", rec.Program.Path, violations, len(report.Bugs))
	}
	res := &Result{Recording: rec, Engine: opts.Engine, Bugs: report.Bugs, Check: elapsed}
	res.Missing, res.Unexpected, res.Allowed = Match(rec.Program, report.Bugs)
	return res, nil
}

// run runs bin with args and returns its standard output; an error
// includes the command and its standard error.
func run(ctx context.Context, bin string, env []string, args ...string) ([]byte, error) {
	return runStdin(ctx, bin, env, "", args...)
}

// runStdin is run with the file stdin as the standard input ("" for
// none).
func runStdin(ctx context.Context, bin string, env []string, stdin string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			return nil, fmt.Errorf("standard input of %s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	// On cancellation, kill the whole process group: mcpredict record's
	// child, the recorded program, holds the output pipes too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && args[0] == "run" {
			return stdout.Bytes(), err
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + " …"
		}
		return stdout.Bytes(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// interleaved reads a trace and reports how many threads access v and
// whether their accesses alternate (rather than all of one thread's
// coming before all of the next one's).
func interleaved(trace, v string) (threads int, inter bool, err error) {
	f, err := os.Open(trace)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	seen := map[string]bool{}
	last := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Split(line, ",")
		if len(fields) < 5 {
			return 0, false, fmt.Errorf("%s:%d: %d fields, want 5 or 6", trace, n, len(fields))
		}
		action, obj := strings.TrimSpace(fields[3]), strings.TrimSpace(fields[4])
		if (action != "Read" && action != "Write") || obj != v {
			continue
		}
		th := strings.TrimSpace(fields[0])
		if th == last {
			continue
		}
		if seen[th] {
			inter = true
		}
		seen[th], last = true, th
	}
	if err := sc.Err(); err != nil {
		return 0, false, fmt.Errorf("%s: %w", trace, err)
	}
	return len(seen), inter, nil
}

func copyFile(dst, src string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// endedCleanly reports whether a recorded trace's header says the program
// exited with status 0.
func endedCleanly(trace string) (bool, error) {
	f, err := os.Open(trace)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() && strings.HasPrefix(sc.Text(), "#") {
		if rest, ok := strings.CutPrefix(sc.Text(), "# ended: "); ok {
			return rest == "exit status 0", nil
		}
	}
	return false, sc.Err()
}
