// Command precision measures mcpredict on annotated C programs: it
// compiles, records and checks every program of the given directories (or
// files) and prints a Markdown table of expected and found bugs,
// unexpected reports and times. See package precision for the
// annotations.
//
//	go run ./internal/precision/cmd/precision [-engine native|auto|spin[,…]] [-bin bin/mcpredict]
//	    [-extra '--flag …'] [-keep DIR | -from DIR] [-jobs N] [-survey LIST] [-v] [DIR|FILE.c …]
//
// -survey also runs the analyses of LIST (e.g. all) on every recording and
// prints what each reported per program: a table without expectations (it
// does not change the exit status), the README's "What each analysis
// reports on the examples".
// Each program is recorded once and checked with each engine (one table
// per engine). -keep keeps the traces, and -from checks kept traces again
// (the same input for a changed analysis). The exit status is 0 if every program is as expected, 1 if
// an expected bug is missing, something unexpected is reported or a
// program fails to build, record or check, 2 for bad usage or a bad
// annotation.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpredict/mcpredict/internal/precision"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("precision", flag.ContinueOnError)
	fs.SetOutput(stderr)
	engines := fs.String("engine", "native", "mcpredict run `engines`, comma-separated: native, auto, spin, or default (the CLI's default)")
	bin := fs.String("bin", "bin/mcpredict", "the mcpredict `binary`")
	extra := fs.String("extra", "", "more `flags` for mcpredict run, split at spaces")
	cflags := fs.String("cflags", "-O1", "compiler `flags` for mcpredict cc, split at spaces (-O2: inlined, as many users build)")
	keep := fs.String("keep", "", "copy each trace to `DIR`/<program>.csv")
	from := fs.String("from", "", "check the traces `DIR`/<program>.csv (kept with -keep) instead of compiling and recording")
	jobs := fs.Int("jobs", 2, "programs recorded and checked in parallel")
	timeout := fs.Duration("timeout", 10*time.Minute, "time limit per program")
	spinCC := fs.String("spin-cc", defaultSpinCC(), "C `compiler` for Spin's verifiers (MCPREDICT_CC of mcpredict run only; \"\": the CLI's default)")
	cache := fs.Bool("cache", false, "let mcpredict run use its verdict cache (default: --no-cache)")
	survey := fs.String("survey", "", "also run the analyses of `LIST` (comma-separated, or all) on every recording and print what each reported, per program")
	reproduce := fs.Bool("reproduce", false, "also run mcpredict reproduce on every recording and print a table of reproduced and failed bugs")
	reproduceOnly := fs.Bool("reproduce-only", false, "only mcpredict reproduce (no prediction tables): for programs that checks their own result, such as examples/c/prove")
	serial := fs.String("serial", "", "record with mcpredict record --serial `ORDER` (first or last): the threads one after the other")
	verbose := fs.Bool("v", false, "progress on standard error, and the missing and unexpected bugs of each program after the table")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: precision [flags] [DIR|FILE.c ...]   (default examples/c)\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *jobs < 1 {
		fmt.Fprintln(stderr, "precision: -jobs must be at least 1")
		return 2
	}
	exe, err := filepath.Abs(*bin)
	if err == nil {
		_, err = os.Stat(exe)
	}
	if err != nil {
		fmt.Fprintf(stderr, "precision: -bin: %v (build it with: go build -o bin/mcpredict ./cmd/mcpredict)\n", err)
		return 2
	}
	var engineList []string
	for _, e := range strings.Split(*engines, ",") {
		switch e = strings.TrimSpace(e); e {
		case "native", "auto", "spin":
			engineList = append(engineList, e)
		case "default":
			engineList = append(engineList, "")
		default:
			fmt.Fprintf(stderr, "precision: -engine: unknown engine %q\n", e)
			return 2
		}
	}

	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"examples/c"}
	}
	progs, err := load(paths)
	if err != nil {
		fmt.Fprintf(stderr, "precision: %v\n", err)
		return 2
	}

	opts := precision.Options{Extra: strings.Fields(*extra), CFlags: strings.Fields(*cflags), Cache: *cache, KeepDir: *keep, Serial: *serial}
	if *spinCC != "" {
		opts.RunEnv = []string{"MCPREDICT_CC=" + *spinCC}
	}
	var surveyList []string
	if *survey != "" {
		surveyList, err = analysesOf(ctx, exe, *survey)
		if err != nil {
			fmt.Fprintf(stderr, "precision: -survey: %v\n", err)
			return 2
		}
	}
	if *reproduceOnly {
		engineList, *reproduce = nil, true
	}
	if *reproduce && *from != "" {
		fmt.Fprintln(stderr, "precision: -reproduce needs the programs: not with -from")
		return 2
	}
	surveys := make([]precision.Survey, len(progs))
	repros := make([]precision.Reproduction, len(progs))
	rows := make([][]precision.Row, len(engineList)) // [engine][program]
	for i := range rows {
		rows[i] = make([]precision.Row, len(progs))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex // serialises progress lines
	sem := make(chan struct{}, *jobs)
	for pi, p := range progs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, sv, rp := checkOne(ctx, exe, p, engineList, opts, *from, *timeout, surveyList, *reproduce)
			surveys[pi], repros[pi] = sv, rp
			for ei := range engineList {
				rows[ei][pi] = res[ei]
			}
			if *verbose {
				mu.Lock()
				for ei, r := range res {
					fmt.Fprintf(stderr, "%s [%s]: %s\n", p.Name, engineName(engineList[ei]), summary(r))
				}
				if *reproduce {
					fmt.Fprintf(stderr, "%s [reproduce]: %d of %d reproduced, %d failed, %d runs, %v\n", p.Name, rp.Reproduced, rp.Expected, len(rp.Failed), rp.Runs, rp.Err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	ok := true
	for ei, e := range engineList {
		if len(engineList) > 1 || e != "native" {
			if ei > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "### engine %s\n\n", engineName(e))
		}
		precision.WriteTable(stdout, rows[ei])
		if *verbose {
			precision.WriteDetails(stdout, rows[ei])
		} else {
			for _, r := range rows[ei] {
				if r.Err != nil {
					fmt.Fprintf(stderr, "precision: %v\n", r.Err)
				}
			}
		}
		ok = ok && precision.AllOK(rows[ei])
	}
	for _, s := range surveys {
		for _, p := range s.Problems {
			fmt.Fprintf(stderr, "precision: %s\n", p)
			ok = false
		}
	}
	if *reproduce {
		fmt.Fprintf(stdout, "\n### directed runs (mcpredict reproduce)\n\n")
		precision.WriteReproductions(stdout, repros)
		for _, r := range repros {
			if r.Err != nil {
				fmt.Fprintf(stderr, "precision: %v\n", r.Err)
			}
			for _, p := range r.Problems {
				fmt.Fprintf(stderr, "precision: %s\n", p)
			}
			ok = ok && r.OK()
		}
	}
	if len(surveyList) > 0 {
		fmt.Fprintf(stdout, "\n### what each analysis reports (--engine native)\n\n")
		precision.WriteSurvey(stdout, surveyList, surveys)
		for _, s := range surveys {
			if s.Err != nil {
				fmt.Fprintf(stderr, "precision: %v\n", s.Err)
			}
		}
	}
	if !ok {
		return 1
	}
	return 0
}

// checkOne records p once (or takes its trace from the directory from),
// predicts with each engine, surveys the analyses of survey, and runs
// mcpredict reproduce if asked.
func checkOne(ctx context.Context, bin string, p *precision.Program, engines []string, opts precision.Options, from string, timeout time.Duration, survey []string, reproduce bool) ([]precision.Row, precision.Survey, precision.Reproduction) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := make([]precision.Row, len(engines))
	for i := range out {
		out[i].Program = p
	}
	var rec *precision.Recording
	var err error
	if from != "" {
		rec, err = precision.FromTrace(p, filepath.Join(from, precision.TraceName(p)))
	} else {
		var dir string
		dir, err = os.MkdirTemp("", "precision-")
		if err == nil {
			defer os.RemoveAll(dir)
			rec, err = precision.Record(ctx, bin, p, dir, opts)
		}
	}
	for i, e := range engines {
		if err != nil {
			out[i].Err = err
			continue
		}
		o := opts
		o.Engine = e
		out[i].Result, out[i].Err = precision.Predict(ctx, bin, rec, o)
	}
	sv := precision.Survey{Program: p}
	switch {
	case err != nil:
		sv.Err = err
	case len(survey) > 0:
		sv = precision.SurveyTrace(ctx, bin, rec, survey, opts)
	}
	if err == nil {
		// The opt-in analyses' mcpredict:reports lines.
		missing, unexpected, rerr := precision.CheckReports(ctx, bin, rec, opts)
		if rerr != nil {
			missing = append(missing, rerr.Error())
		}
		sv.Problems = append(missing, unexpected...)
	}
	rp := precision.Reproduction{Program: p, Err: err}
	if err == nil && reproduce {
		rp = precision.Reproduce(ctx, bin, rec, opts)
	}
	return out, sv, rp
}

// analysesOf expands a -survey list: "all" is every analysis that
// `mcpredict analyses` lists.
func analysesOf(ctx context.Context, bin, list string) ([]string, error) {
	if strings.TrimSpace(list) != "all" {
		var out []string
		for _, a := range strings.Split(list, ",") {
			if a = strings.TrimSpace(a); a != "" {
				out = append(out, a)
			}
		}
		return out, nil
	}
	b, err := exec.CommandContext(ctx, bin, "analyses", "--names").Output()
	if err != nil {
		return nil, fmt.Errorf("%s analyses --names: %w", bin, err)
	}
	return strings.Fields(string(b)), nil
}

func load(paths []string) ([]*precision.Program, error) {
	var progs []*precision.Program
	for _, path := range paths {
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			ps, err := precision.Load(path)
			if err != nil {
				return nil, err
			}
			progs = append(progs, ps...)
			continue
		}
		p, err := precision.ParseFile(path)
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	return progs, nil
}

// defaultSpinCC is tcc when it is installed (it compiles Spin's verifiers
// about 20 times faster than gcc), else "" (mcpredict run's default).
func defaultSpinCC() string {
	if _, err := exec.LookPath("tcc"); err == nil {
		return "tcc"
	}
	return ""
}

func engineName(e string) string {
	if e == "" {
		return "default"
	}
	return e
}

func summary(r precision.Row) string {
	if r.Err != nil {
		return "error: " + strings.SplitN(r.Err.Error(), "\n", 2)[0]
	}
	res := r.Result
	status := "ok"
	if !res.OK() {
		status = "FAIL"
	}
	return fmt.Sprintf("%s: found %d of %d, %d unexpected; recorded in %s (%d run(s)), checked in %s",
		status, res.Found(), res.Expected(), len(res.Unexpected), res.Record.Round(time.Millisecond), res.Attempts, res.Check.Round(time.Millisecond))
}
