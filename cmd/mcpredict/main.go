// Command mcpredict predicts atomicity violations in multithreaded C/C++
// programs from one recorded execution trace, using the Spin model checker.
//
// Run "mcpredict help" for the list of commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Exit statuses shared by every command (DESIGN §7).
const (
	exitOK        = 0 // no violation
	exitViolation = 1 // violations found (or, for diff, new bugs)
	exitUsage     = 2 // bad usage or bad input
	exitInternal  = 3 // internal or tool failure
	// exitInterrupted: SIGINT/SIGTERM stopped a run; the report so far was
	// written, marked incomplete.
	exitInterrupted = 4
)

// A command is one subcommand of mcpredict. It returns the process exit status.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands lists every subcommand. Each lives in its own file.
func commands() map[string]command {
	return map[string]command{
		"run":       {"predict atomicity violations in a trace", cmdRun},
		"model":     {"print the Promela model of one (variable, thread pair)", cmdModel},
		"patterns":  {"list the atomicity-violation patterns and their LTL", cmdPatterns},
		"analyses":  {"list the analyses of run --analysis (McPatom, deadlock, ...)", cmdAnalyses},
		"batch":     {"check many traces: a report each, a summary, resumable, compared with a previous batch", cmdBatch},
		"serve":     {"run the prediction service (HTTP API, job store, local pool or NATS workers)", cmdServe},
		"worker":    {"check models from the service's NATS JetStream work queue", cmdWorker},
		"submit":    {"submit a trace to the service as a job (optionally reproduced on the server); --wait for its bugs", cmdSubmit},
		"status":    {"show the service's jobs: state, events, bugs, reproduce counts; a job's report", cmdStatus},
		"gen":       {"write a synthetic trace (fft, server with seeded bugs, random)", cmdGen},
		"diff":      {"compare two JSON reports: new, fixed and unchanged bugs", cmdDiff},
		"cc":        {"compile and link a C/C++ program so that it can be recorded", cmdCC},
		"record":    {"run a program built with mcpredict cc and write its trace", cmdRecord},
		"reproduce": {"re-run the recorded program under schedules that force each predicted bug; say which happened and which failed", cmdReproduce},
		"replay":    {"run a schedule of mcpredict reproduce again", cmdReplay},
		"formats":   {"list the trace formats: built-in csv and the format plugins found", cmdFormats},
		"convert":   {"convert a trace to csv, std (RAPID) or jsonl", cmdConvert},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first SIGINT or SIGTERM stops the work and writes what is done;
	// a second one ends the process at once (a phase of a huge trace, such
	// as the planning of 100 M events, may take a while to notice).
	go func() {
		<-ctx.Done()
		stop()
	}()
	endProfile := startProfile(os.Stderr)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	endProfile()
	stop()
	os.Exit(code)
}

// startProfile writes a CPU profile of the whole command to the file
// $MCPREDICT_CPUPROFILE, and a heap profile at the largest heap in use
// seen (sampled every 2 s) to $MCPREDICT_MEMPROFILE, for `go tool pprof`,
// and an execution trace to $MCPREDICT_EXECTRACE, for `go tool trace`
// (where the cores wait). For developers measuring a long run of a real
// trace. It returns the function that ends them.
func startProfile(stderr io.Writer) func() {
	var done []func()
	if path := os.Getenv("MCPREDICT_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "mcpredict: MCPREDICT_CPUPROFILE: %v\n", err)
		} else {
			done = append(done, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv("MCPREDICT_EXECTRACE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "mcpredict: MCPREDICT_EXECTRACE: %v\n", err)
		} else {
			done = append(done, func() { trace.Stop(); f.Close() })
		}
	}
	if path := os.Getenv("MCPREDICT_MEMPROFILE"); path != "" {
		// The profile of the largest heap in use seen, sampled every
		// 2 s and at the end: the end of a run has freed what mattered.
		var (
			mu   sync.Mutex
			peak uint64
		)
		write := func() {
			mu.Lock()
			defer mu.Unlock()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse <= peak {
				return
			}
			peak = ms.HeapInuse
			f, err := os.Create(path)
			if err == nil {
				err = pprof.WriteHeapProfile(f)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(stderr, "mcpredict: MCPREDICT_MEMPROFILE: %v\n", err)
			}
		}
		stop := make(chan struct{})
		go func() {
			t := time.NewTicker(2 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					write()
				case <-stop:
					return
				}
			}
		}()
		done = append(done, func() { close(stop); write() })
	}
	return func() {
		for _, f := range done {
			f()
		}
	}
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := cmds[args[1]]; ok {
				return c.run(ctx, []string{"-h"}, stdout, stderr)
			}
		}
		usage(stdout, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		fmt.Fprintf(stdout, "mcpredict %s\n", version)
		return exitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mcpredict: unknown command %q\n", args[0])
		usage(stderr, cmds)
		return exitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprint(w, `mcpredict predicts atomicity violations in multithreaded C/C++ programs,
including those that did not happen, from one recorded run: it records your
pthread program itself (cc, record) or reads Pin-style traces, checks the
unserializable patterns with the Spin model checker or its native engine
(run), and re-runs the program to prove them (reproduce).

Usage:
  mcpredict <command> [flags] [arguments]
  mcpredict --version

First run on your program:
  mcpredict cc -O1 -o prog prog.c
  mcpredict record -o prog.csv -- ./prog ARGS
  mcpredict run prog.csv
  mcpredict reproduce prog.csv

Commands:
`)
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "version", "print the version")
	fmt.Fprint(w, `
Run "mcpredict <command> -h" for the flags of a command.

Exit status: 0 no violation, 1 violations found, 2 bad usage or input,
3 internal or tool failure (for example spin or gcc missing).
`)
}
