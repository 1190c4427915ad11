// Package spinrunner runs the Spin model checker on Promela models and
// reports, for each named LTL claim, whether it is violated and, if so, the
// interleaving (trail) Spin found.
//
// For each model it writes the .pml into a fresh work directory, with its
// ltl blocks as the never claims `spin -f` makes of them (each formula
// translated once per Runner: the claims are the patterns', not the
// model's), runs `spin -a` once, compiles pan.c once with gcc, runs `./pan -a -N <claim>`
// for every claim in turn and replays each counterexample with `spin -t -p`
// before the next claim overwrites the trail. Many models are checked in
// parallel on a bounded worker pool (CheckAll), each with its own timeout
// and memory limit; cancelling the context kills the tools' whole process
// groups and removes the work directories.
//
// A search that pan could not finish (depth bound, memory limit) is an
// error, never a "no violation". Failures of spin, gcc or pan come back as
// *ToolError with the tool's output; missing tools as *MissingToolError.
//
// The package does not build models or claims (packages promela and ltl do),
// does not interpret trails beyond .pml lines and processes (package bugs
// maps them to source), and does not cache verdicts.
package spinrunner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"
)

// Model is one Promela model and the claims to check on it.
type Model struct {
	Name   string   // identifies the model in errors and results, e.g. "balance t1,t2"
	Source []byte   // the .pml text, including every `ltl NAME { ... }` claim
	File   string   // base name to write it under; default "model.pml"
	Claims []string // claim names to check, in this order
	// Steps is the number of statements of the model (counting those in
	// inlines and d_steps once each). It sizes pan's depth bound; 0 means
	// small.
	Steps int
}

// Options configures a Runner. Zero values select the defaults.
type Options struct {
	Jobs     int           // models checked at once by CheckAll; default runtime.NumCPU()
	Timeout  time.Duration // per model, all stages included; 0 = none
	MemoryMB int           // pan's memory limit (-DMEMLIM) per model; default 1024
	KeepDir  string        // if set, keep each model's work dir under it; else temp dirs are removed
}

// TrailStep is one statement executed by a process of the model in a
// counterexample. Statements of init and moves of the never claim are left
// out; the statements of one d_step are one step.
type TrailStep struct {
	Step     int    // step number in spin's replay
	Proc     int    // process number as spin -p prints it
	ProcName string // proctype name, e.g. "t1"
	Line     int    // line in the .pml file
	Stmt     string // statement text; a d_step's statements joined with "; "
}

// ClaimResult is the verdict of one claim.
type ClaimResult struct {
	Claim        string
	Violated     bool
	Trail        []TrailStep // the counterexample, if Violated
	StatesStored int64       // pan's "states, stored"
	Depth        int         // pan's "depth reached"
}

// Result is the outcome of checking one model.
type Result struct {
	Model   string
	Claims  []ClaimResult // in Model.Claims order; on error, the claims finished before it
	Elapsed time.Duration
	Dir     string // the kept work dir, if Options.KeepDir is set
}

// Runner checks models with one set of tools and options. It is safe for
// concurrent use.
type Runner struct {
	tools Tools
	opts  Options
	// never: the never claims of the formulas translated so far.
	never neverClaims

	// Test hooks, unset in production.
	onStage   func(model, stage string) // called before each command
	depth     int                       // if > 0, replaces the computed -m
	tmpParent string                    // parent of temp work dirs; "" = os.TempDir()
	ltlBlocks bool                      // leave the ltl blocks to spin -a (no inlineClaims)
}

// New returns a Runner that uses the given tools and options.
func New(t Tools, o Options) *Runner {
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	if o.MemoryMB <= 0 {
		o.MemoryMB = 1024
	}
	r := &Runner{tools: t, opts: o}
	r.never.builtin = func() map[string]string { return builtinClaimsFor(t.Spin) }
	return r
}

const (
	// minDepth is pan's own default -m. Models are small; the bound is
	// raised with the number of statements (see searchDepth).
	minDepth = 10000
	// hashBits is pan's initial hash table size (-w). pan's default, -w24,
	// zeroes 128 MB per run, which costs ~0.1 s of a run that otherwise
	// takes milliseconds; pan.c is compiled with AUTO_RESIZE so the table
	// still grows for big state spaces.
	hashBits = 18
	// panMaxLine is the largest .pml line pan reports correctly.
	panMaxLine = 32767
	// killGrace bounds how long a killed tool may keep its output pipes open.
	killGrace = 2 * time.Second
)

// searchDepth is the -m bound for a model with the given number of
// statements. A step of the product moves a process and the claim, and the
// nested search of -a can go as deep again, so four times the statements,
// plus room for init and process ends, cannot be exceeded.
func searchDepth(steps int) int {
	return max(minDepth, 4*steps+1000)
}

// check is the state of one model's check.
type check struct {
	r      *Runner
	m      Model
	src    []byte          // m.Source with its ltl blocks as never claims (inlineClaims)
	parent context.Context // the caller's context
	ctx    context.Context // parent plus the timeout
	dir    string
	env    []string
	stage  string
	claim  string
}

// Check checks every claim of m: one spin -a, one gcc compile, one pan run
// per claim and one replay per violated claim. On error the Result holds the
// claims checked before it. If ctx is cancelled, Check kills the running
// tool and returns ctx.Err(); if Options.Timeout expires, a *TimeoutError.
func (r *Runner) Check(ctx context.Context, m Model) (res Result, err error) {
	start := time.Now()
	m = withDefaults(m)
	res.Model = m.Name
	defer func() { res.Elapsed = time.Since(start) }()

	if err := validate(m); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	c := &check{r: r, m: m, parent: ctx, ctx: ctx}
	if r.opts.Timeout > 0 {
		var cancel context.CancelFunc
		c.ctx, cancel = context.WithTimeout(ctx, r.opts.Timeout)
		defer cancel()
	}

	dir, kept, err := r.workDir(m.Name)
	if err != nil {
		return res, fmt.Errorf("model %q: %w", m.Name, err)
	}
	if kept {
		res.Dir = dir
	} else {
		defer func() {
			if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
				err = fmt.Errorf("model %q: removing work dir: %w", m.Name, rmErr)
			}
		}()
	}
	c.dir = dir
	// LC_ALL=C keeps the tools' messages parseable; TMPDIR makes gcc put
	// its temporaries in the work dir, so a killed compile leaves nothing
	// behind once the dir is removed.
	c.env = append(os.Environ(), "LC_ALL=C", "TMPDIR="+dir)

	c.src = m.Source
	if !r.ltlBlocks {
		c.src = r.never.inlineClaims(m.Source, r.opts.Jobs, c.translate)
	}
	if err := os.WriteFile(filepath.Join(dir, m.File), c.src, 0o644); err != nil {
		return res, fmt.Errorf("model %q: writing %s: %w", m.Name, m.File, err)
	}
	if err := c.generate(); err != nil {
		return res, err
	}
	if err := c.compile(); err != nil {
		return res, err
	}
	for _, claim := range m.Claims {
		cr, err := c.checkClaim(claim)
		if err != nil {
			return res, err
		}
		res.Claims = append(res.Claims, cr)
	}
	return res, nil
}

// withDefaults fills in the default file name, and names an unnamed model
// after its file.
func withDefaults(m Model) Model {
	if m.File == "" {
		m.File = "model.pml"
	}
	if m.Name == "" {
		m.Name = m.File
	}
	return m
}

func validate(m Model) error {
	if filepath.Base(m.File) != m.File || m.File == "." || m.File == ".." || strings.ContainsAny(m.File, " \t\n\"'") {
		return fmt.Errorf("model %q: file name %q must be a plain base name", m.Name, m.File)
	}
	if len(m.Claims) == 0 {
		return fmt.Errorf("model %q: no claims to check", m.Name)
	}
	for _, c := range m.Claims {
		if c == "" || strings.HasPrefix(c, "-") || strings.ContainsAny(c, " \t\n") {
			return fmt.Errorf("model %q: bad claim name %q", m.Name, c)
		}
	}
	return nil
}

// workDir creates the directory one model is checked in. Under KeepDir it is
// named after the model, with a numeric suffix when that name is taken.
func (r *Runner) workDir(name string) (dir string, kept bool, err error) {
	if r.opts.KeepDir == "" {
		// The name carries the PID, so that RemoveStale can tell the
		// directories of a killed process from those of a live one.
		dir, err := os.MkdirTemp(r.tmpParent, fmt.Sprintf("%s%d-", workDirPrefix, os.Getpid()))
		if err != nil {
			return "", false, fmt.Errorf("creating work dir: %w", err)
		}
		return dir, false, nil
	}
	if err := os.MkdirAll(r.opts.KeepDir, 0o755); err != nil {
		return "", false, fmt.Errorf("creating keep dir: %w", err)
	}
	base := sanitize(name)
	for i := 1; ; i++ {
		dir := filepath.Join(r.opts.KeepDir, base)
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, true, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", false, fmt.Errorf("creating work dir: %w", err)
		}
	}
}

// sanitize turns a model name into a file name: letters, digits, '.', '_'
// and '-' are kept, runs of anything else become one '_'.
func sanitize(name string) string {
	var b strings.Builder
	under := false
	for _, r := range name {
		ok := r == '.' || r == '_' || r == '-' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if ok {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	s := strings.Trim(b.String(), "_.")
	if s == "" {
		return "model"
	}
	return s
}

// cppFlag tells spin which preprocessor to run: spin calls "gcc" from PATH
// by default, which is not the resolved Tools.CC. spin runs it through the
// shell, hence the quoting.
func (r *Runner) cppFlag() string {
	return "-P" + shellQuote(r.tools.CC) + " -std=gnu99 -E -x c"
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// run runs one tool in the work dir and returns its combined output. Errors
// from cancellation or the timeout are translated here; other failures are
// returned as *ToolError.
func (c *check) run(stage, prog string, args ...string) ([]byte, string, error) {
	c.stage = stage
	cmdline := prog + " " + strings.Join(args, " ")
	if err := c.ctxErr(); err != nil {
		return nil, cmdline, err
	}
	if c.r.onStage != nil {
		c.r.onStage(c.m.Name, stage)
	}
	cmd := exec.CommandContext(c.ctx, prog, args...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	killGroupOnCancel(cmd)
	cmd.WaitDelay = killGrace
	err := cmd.Run()
	if ctxErr := c.ctxErr(); ctxErr != nil {
		return nil, cmdline, ctxErr
	}
	if err != nil {
		return out.Bytes(), cmdline, c.toolErr(cmdline, out.Bytes(), err)
	}
	return out.Bytes(), cmdline, nil
}

// ctxErr reports cancellation by the caller as ctx.Err() and the expiry of
// this model's own timeout as a *TimeoutError.
func (c *check) ctxErr() error {
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.ctx.Err() != nil {
		return &TimeoutError{Model: c.m.Name, Stage: c.stage, Claim: c.claim, Timeout: c.r.opts.Timeout}
	}
	return nil
}

func (c *check) toolErr(cmdline string, out []byte, err error) *ToolError {
	return &ToolError{Model: c.m.Name, Stage: c.stage, Claim: c.claim, Cmd: cmdline, Output: trimOutput(out), Err: err}
}

// translate runs spin -f on an LTL formula: its never claim. It may run
// in parallel with other translations of the check (on a copy of it: run
// records the stage).
func (c *check) translate(formula string) ([]byte, error) {
	cc := *c
	out, _, err := cc.run(StageLTL, c.r.tools.Spin, "-f", formula)
	return out, err
}

// generate runs spin -a and checks that every requested claim exists.
func (c *check) generate() error {
	out, cmdline, err := c.run(StageSpin, c.r.tools.Spin, c.r.cppFlag(), "-a", c.m.File)
	if err != nil {
		return err
	}
	if errs := spinErrors(out); len(errs) > 0 {
		return c.toolErr(cmdline, out, fmt.Errorf("spin reported %d error(s): %s", len(errs), errs[0]))
	}
	if _, statErr := os.Stat(filepath.Join(c.dir, "pan.c")); statErr != nil {
		return c.toolErr(cmdline, out, fmt.Errorf("spin wrote no pan.c: %w", statErr))
	}
	defined := definedClaims(out, c.src)
	for _, claim := range c.m.Claims {
		if !defined[claim] {
			c.claim = claim
			return c.toolErr(cmdline, out, fmt.Errorf("%w: %s", ErrUnknownClaim, claim))
		}
	}
	return nil
}

// compile builds pan once for all claims. -w silences the warnings gcc
// always has for pan.c; AUTO_RESIZE lets the small initial hash table grow.
//
// -O0, not the -O1 of DESIGN §6: the searches of these models take
// milliseconds, while optimizing pan.c with ten never claims costs gcc
// 5-7 s per model here (1.3 s at -O0), and gcc's -O1 time grows faster than
// linearly with the model.
func (c *check) compile() error {
	_, _, err := c.run(StageCC, c.r.tools.CC, "-O0", fmt.Sprintf("-DMEMLIM=%d", c.r.opts.MemoryMB),
		"-DAUTO_RESIZE", "-w", "-o", "pan", "pan.c")
	return err
}

// checkClaim runs pan for one claim and replays its counterexample.
func (c *check) checkClaim(claim string) (ClaimResult, error) {
	c.claim = claim
	defer func() { c.claim = "" }()
	cr := ClaimResult{Claim: claim}
	depth := searchDepth(c.m.Steps)
	if c.r.depth > 0 {
		depth = c.r.depth
	}
	// -n: no listing of unreached states, which nobody reads here.
	out, cmdline, err := c.run(StagePan, filepath.Join(c.dir, "pan"), "-a", "-N", claim,
		fmt.Sprintf("-m%d", depth), fmt.Sprintf("-w%d", hashBits), "-n")
	if err != nil {
		return cr, err
	}
	rep, err := parsePan(out)
	if err != nil {
		return cr, c.toolErr(cmdline, out, err)
	}
	cr.StatesStored, cr.Depth = rep.stored, rep.depth
	switch {
	case !rep.haveErrors:
		return cr, c.toolErr(cmdline, out, errors.New("no \"errors:\" line in pan's output"))
	case rep.truncated:
		return cr, c.toolErr(cmdline, out, fmt.Errorf("%w (-m%d)", ErrDepthTooSmall, depth))
	case rep.outOfMemory:
		return cr, c.toolErr(cmdline, out, fmt.Errorf("%w (%d MB)", ErrMemoryLimit, c.r.opts.MemoryMB))
	case rep.errors == 0 && rep.notComplete:
		return cr, c.toolErr(cmdline, out, ErrIncomplete)
	case rep.errors == 0:
		return cr, nil
	case !isClaimViolation(rep.errMsg):
		return cr, c.toolErr(cmdline, out, fmt.Errorf("pan: %s", rep.errMsg))
	}
	cr.Violated = true
	cr.Trail, err = c.replay()
	return cr, err
}

// replay turns the trail pan just wrote into steps, then removes it so that
// a later claim can never be replayed from a stale trail.
func (c *check) replay() ([]TrailStep, error) {
	trailFile := filepath.Join(c.dir, c.m.File+".trail")
	if _, err := os.Stat(trailFile); err != nil {
		return nil, c.toolErr("", nil, fmt.Errorf("pan reported a violation but wrote no trail: %w", err))
	}
	// pan replays its own trail in a fraction of a second, where
	// `spin -t -p` interprets the model and takes minutes on models of
	// tens of thousands of statements. But pan keeps line numbers in 16
	// bits: beyond that, only spin's replay maps steps to lines. (No -N for
	// spin: there it names a claim file; the trail records its claim.)
	var out []byte
	var cmdline string
	var err error
	if bytes.Count(c.m.Source, []byte("\n")) < panMaxLine {
		// -w: the replay, too, would zero pan's default 128 MB table
		// (60 ms of a 3 ms replay).
		out, cmdline, err = c.run(StageReplay, "./pan", "-r", "-v", "-n", "-N", c.claim, fmt.Sprintf("-w%d", hashBits))
	} else {
		out, cmdline, err = c.run(StageReplay, c.r.tools.Spin, c.r.cppFlag(), "-t", "-p", c.m.File)
	}
	if err != nil {
		return nil, err
	}
	t, err := parseTrail(out, c.m.File, c.claim)
	if err != nil {
		return nil, c.toolErr(cmdline, out, err)
	}
	if !t.ended {
		return nil, c.toolErr(cmdline, out, errors.New("replay did not reach the end of the trail"))
	}
	if t.modelFail != "" {
		return nil, c.toolErr(cmdline, out, fmt.Errorf("%w: %s", ErrModelAssertion, t.modelFail))
	}
	if err := os.Remove(trailFile); err != nil {
		return nil, fmt.Errorf("model %q: %w", c.m.Name, err)
	}
	return t.steps, nil
}

// CheckAll checks the models on a pool of Options.Jobs workers and calls
// each exactly once per model, with the model's index. Calls to each are
// serialized (never concurrent), in completion order. Once ctx is
// cancelled, running checks are killed and models not yet started are
// reported with ctx.Err() without running anything. CheckAll returns after
// the last call to each.
func (r *Runner) CheckAll(ctx context.Context, models []Model, each func(i int, res Result, err error)) {
	var mu sync.Mutex
	report := func(i int, res Result, err error) {
		if each == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		each(i, res, err)
	}
	p := pool.New().WithMaxGoroutines(r.opts.Jobs)
	for i := range models {
		p.Go(func() {
			if err := ctx.Err(); err != nil {
				report(i, Result{Model: withDefaults(models[i]).Name}, err)
				return
			}
			res, err := r.Check(ctx, models[i])
			report(i, res, err)
		})
	}
	p.Wait()
}
