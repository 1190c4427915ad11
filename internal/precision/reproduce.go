package precision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Reproduction is what `mcpredict reproduce` made of one program's
// recording.
type Reproduction struct {
	Program *Program
	// Expected counts the program's expected bugs, Reproduced those a
	// reproduced bug matched.
	Expected, Reproduced int
	Failed               []Bug // bugs whose directed run failed
	Relaxed              int   // of them, bugs only a relaxed model predicts
	// Failures are the report's failing runs that no bug accounts for
	// (the exploration's, or outside a window), by id.
	Failures []string
	Runs     int // directed runs in all
	Elapsed  time.Duration
	Problems []string // what the program's annotations wanted and did not get
	Err      error
}

// OK reports whether the program met its annotations.
func (r Reproduction) OK() bool { return r.Err == nil && len(r.Problems) == 0 }

// Reproduce runs `bin reproduce` on the recording (whose program must still
// be where it was recorded; with --stdin for a program with
// mcpredict:stdin) and checks it against the annotations: every
// expected bug reproduced, a failed run for mcpredict:reproduce failed, none
// for a correct program (mcpredict:expect none or mcpredict:reproduce clean).
func Reproduce(ctx context.Context, bin string, rec *Recording, opts Options) Reproduction {
	p := rec.Program
	r := Reproduction{Program: p, Expected: len(p.Expect)}
	start := time.Now()
	args := []string{"reproduce", "--format", "json", "--quiet", "--no-cache", "--engine", "native"}
	if p.Stdin != "" {
		// The directed runs read the input the recorded run read.
		stdin, err := filepath.Abs(p.Stdin)
		if err != nil {
			r.Err = fmt.Errorf("%s: reproducing: %w", p.Path, err)
			return r
		}
		args = append(args, "--stdin", stdin)
	}
	args = append(args, rec.Trace)
	out, err := run(ctx, bin, opts.Env, args...)
	r.Elapsed = time.Since(start)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		r.Err = fmt.Errorf("%s: reproducing: %w", p.Path, err)
		return r
	}
	var report struct {
		Bugs []struct {
			Bug
			Reproduction *struct {
				Status  string `json:"status"`
				Failed  bool   `json:"failed"`
				Runs    int    `json:"runs"`
				Relaxed bool   `json:"relaxed"`
			} `json:"reproduction"`
		} `json:"bugs"`
		Failures []struct {
			ID          string `json:"id"`
			Source      string `json:"source"`
			Attribution string `json:"attribution"`
		} `json:"failures"`
		Reproduce *struct {
			Runs int `json:"runs"`
		} `json:"reproduce"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		r.Err = fmt.Errorf("%s: mcpredict reproduce: bad JSON report: %w", p.Path, err)
		return r
	}
	var reproduced []Bug
	for _, b := range report.Bugs {
		rp := b.Reproduction
		if rp == nil {
			continue
		}
		r.Runs += rp.Runs
		// A failed run in the bug's window exposes it, its pattern
		// observed in order or not (the program may abort before the
		// local thread's second access).
		if rp.Status == "reproduced" || rp.Failed {
			reproduced = append(reproduced, b.Bug)
		}
		if rp.Failed {
			r.Failed = append(r.Failed, b.Bug)
			if rp.Relaxed {
				r.Relaxed++
			}
		}
	}
	for _, f := range report.Failures {
		r.Failures = append(r.Failures, fmt.Sprintf("%s (%s, %s)", f.ID, f.Source, f.Attribution))
	}
	if report.Reproduce != nil {
		r.Runs = report.Reproduce.Runs // the exploration's runs too
	}
	missing, _, _ := Match(p, reproduced)
	r.Reproduced = r.Expected - len(missing)
	if p.ReproduceWant() == "missed" {
		missing = nil // a known miss: its reason is in the source
	}
	for _, e := range missing {
		r.Problems = append(r.Problems, fmt.Sprintf("%s:%d: expected bug not reproduced: %s", p.Path, e.Line, e))
	}
	switch want := p.ReproduceWant(); {
	case want == "failed" && len(r.Failed) == 0 && len(r.Failures) == 0:
		r.Problems = append(r.Problems, fmt.Sprintf("%s: no directed run failed (mcpredict:reproduce failed)", p.Path))
	case want == "clean" && len(r.Failed) > 0:
		r.Problems = append(r.Problems, fmt.Sprintf("%s: a correct program's directed run failed: %s", p.Path, r.Failed[0]))
	case want == "clean" && len(r.Failures) > 0:
		r.Problems = append(r.Problems, fmt.Sprintf("%s: a correct program's run failed: %s", p.Path, r.Failures[0]))
	case want == "missed" && len(r.Failed)+len(r.Failures) > 0:
		r.Problems = append(r.Problems, fmt.Sprintf("%s: a known miss is now exposed (%v %v): make it mcpredict:reproduce failed", p.Path, r.Failed, r.Failures))
	}
	return r
}

// WriteReproductions writes the reproductions as a Markdown table with a
// line of totals.
func WriteReproductions(w io.Writer, rs []Reproduction) error {
	var b strings.Builder
	b.WriteString("| program | kind | want | expected bugs reproduced | failed bugs (relaxed) | other failing runs | directed runs | time | ok |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|---|\n")
	var exp, repro, failed, others, runs, bad int
	var total time.Duration
	for _, r := range rs {
		ok := "yes"
		if !r.OK() {
			ok, bad = "**no**", bad+1
		}
		if r.Err != nil {
			fmt.Fprintf(&b, "| %s | %s | %s | error | error | - | - | - | %s |\n", r.Program.Name, r.Program.Kind(), r.Program.ReproduceWant(), ok)
			continue
		}
		exp += r.Expected
		repro += r.Reproduced
		failed += len(r.Failed)
		runs += r.Runs
		total += r.Elapsed
		others += len(r.Failures)
		fmt.Fprintf(&b, "| %s | %s | %s | %d of %d | %d (%d) | %d | %d | %.1fs | %s |\n", r.Program.Name, r.Program.Kind(), r.Program.ReproduceWant(),
			r.Reproduced, r.Expected, len(r.Failed), r.Relaxed, len(r.Failures), r.Runs, r.Elapsed.Seconds(), ok)
	}
	fmt.Fprintf(&b, "| **%d programs** | | | %d of %d | %d | %d | %d | %.1fs | %d not ok |\n", len(rs), repro, exp, failed, others, runs, total.Seconds(), bad)
	_, err := io.WriteString(w, b.String())
	return err
}
