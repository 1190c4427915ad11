package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/mcpredict/mcpredict/recorder"
)

const ccDescription = `
Runs gcc or clang (g++, clang++ for C++) with the flags that make a
program record its execution: compiles with ThreadSanitizer
instrumentation (-fsanitize=thread, and -g unless a -g level is given)
and links against the mcpredict recorder runtime instead of the
compiler's. Use it as CC and as CXX:

  mcpredict cc -O1 -o bank bank.c
  make CC="mcpredict cc" CXX="mcpredict cc --compiler=g++"
  make CC="mcpredict cc --compiler=clang" CXX="mcpredict cc --compiler=clang++"
  cmake -S . -B build -DCMAKE_C_COMPILER="mcpredict;cc" \
        -DCMAKE_CXX_COMPILER="mcpredict;cc;--compiler=g++"

Without --compiler, C++ sources pick g++. A link whose sources, objects
or static libraries use the C++ library is made by the C++ driver (g++
for gcc, clang++ for clang), so CXX="mcpredict cc" links C++ too. The
program runs normally; it records only under "mcpredict record". The
runtime is C, built from source on first use by the C driver (gcc for
g++, clang for clang++) into the user's cache directory (or given
prebuilt by MCPREDICT_RUNTIME=path/libmcprec.a).

Options of mcpredict cc come first; every other argument goes to the
compiler:
  --compiler=NAME   the compiler driver: gcc, g++, clang, clang++, cc, c++,
                    versioned (clang-14) or prefixed (x86_64-linux-gnu-gcc)
                    (default $MCPREDICT_CC, else gcc or g++)
  --cache-dir=DIR   where the runtime is built (default the user cache dir)
  --print-runtime   build the runtime if needed and print its path
  --show            print each command before running it
  --alloc-func=NAME[:N]
                    NAME is an allocation function of the program (a memory
                    pool, a free list): its calls are recorded as Alloc of
                    the block it returns, so memory it hands out again is a
                    new variable. N is the argument that holds the size (0,
                    the default: none; the block then reaches the next one).
                    Repeatable; also $MCPREDICT_ALLOC_FUNCS (comma-separated).
  --free-func=NAME[:N]
                    NAME gives a block back; N is the argument holding the
                    pointer (default 1). Also $MCPREDICT_FREE_FUNCS.
The file that defines NAME must be compiled with the option (it renames
the definition and adds a recording wrapper); calls the compiler inlined
are not seen. x86-64, up to 6 integer arguments.

Exit status: that of a failing compile is 2; 3 if the compiler or the
runtime build is missing or broken.`

func cmdCC(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	compiler := os.Getenv("MCPREDICT_CC")
	cacheDir := ""
	show, printRuntime := false, false
	var funcs []recorder.AllocFunc
	for _, env := range []struct {
		name string
		free bool
	}{{recorder.AllocFuncsEnv, false}, {recorder.FreeFuncsEnv, true}} {
		fs, err := recorder.ParseAllocFuncList(os.Getenv(env.name), env.free)
		if err != nil {
			fmt.Fprintf(stderr, "mcpredict cc: %s: %v\n", env.name, err)
			return exitUsage
		}
		funcs = append(funcs, fs...)
	}
	for len(args) > 0 {
		a := args[0]
		if free, ok := allocFlag(a); ok {
			_, spec, hasValue := strings.Cut(a, "=")
			if !hasValue {
				if len(args) < 2 {
					fmt.Fprintf(stderr, "mcpredict cc: %s needs a function name\n", a)
					return exitUsage
				}
				spec = args[1]
				args = args[1:]
			}
			f, err := recorder.ParseAllocFunc(spec, free)
			if err != nil {
				fmt.Fprintf(stderr, "mcpredict cc: %v\n", err)
				return exitUsage
			}
			funcs = append(funcs, f)
			args = args[1:]
			continue
		}
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			fmt.Fprintf(stdout, "Usage: mcpredict cc [options] COMPILER-ARGUMENTS...\n\n%s\n", strings.TrimSpace(ccDescription))
			return exitOK
		case strings.HasPrefix(a, "--compiler="):
			compiler = strings.TrimPrefix(a, "--compiler=")
		case strings.HasPrefix(a, "--cache-dir="):
			cacheDir = strings.TrimPrefix(a, "--cache-dir=")
		case a == "--print-runtime":
			printRuntime = true
		case a == "--show":
			show = true
		case a == "--":
			args = args[1:]
			goto done
		default:
			goto done
		}
		args = args[1:]
	}
done:
	if cacheDir == "" {
		cacheDir = recorder.DefaultCacheDir()
	}
	if printRuntime {
		c := compiler
		if c == "" {
			c = "gcc"
		}
		lib, err := recorder.RuntimeLib(ctx, c, cacheDir)
		if err != nil {
			fmt.Fprintf(stderr, "mcpredict cc: %v\n", err)
			return exitInternal
		}
		fmt.Fprintln(stdout, lib)
		return exitOK
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "mcpredict cc: no compiler arguments (see mcpredict cc -h)")
		return exitUsage
	}
	err := recorder.CCWith(ctx, args, recorder.CCOptions{Compiler: compiler, AllocFuncs: funcs}, cacheDir, show, stdout, stderr)
	if err == nil {
		return exitOK
	}
	var ce *recorder.CompileError
	var ee *exec.ExitError
	if errors.As(err, &ce) && errors.As(err, &ee) {
		// The compiler has said why on stderr already.
		return exitUsage
	}
	fmt.Fprintf(stderr, "mcpredict cc: %v\n", err)
	return exitInternal
}

const recordDescription = `
Runs PROGRAM (built with "mcpredict cc") with recording on and writes the
trace of its execution, in the observed order, to the -o file (CSV, one
event per line; check it with "mcpredict run"). The program's input and output pass
through. A program that fails, crashes or is killed still leaves the trace
of what it did until then.

With -serial first (or last), the threads run one after the other, each
held at its start until no other thread can run: a prediction must not
depend on the recorded threads having overlapped, and this records the run
in which they did not.

With -from-raw DIR, no program is run: the raw log that a program wrote
into DIR (run with MCPREDICT_TRACE_DIR=DIR) is converted.

Variables are named from the program's DWARF, the same in every run
(balance, buf->outcnt, main::ctx.count, node.n(malloc@pool.c:120#2)); see
docs/recorder.md. Threads that never ran, or still ran when the program
exited (main returned without joining them), are named in warnings on
standard error and in "# warning:" lines of the trace; so, first and
loudly, are the threads whose log the runtime could not write (a program
that switched user; docs/recorder.md, "Programs that switch user, and
lost thread logs").

Exit status: 0 when the trace was written, whatever the program's own
status (it is printed); 2 for bad usage or when the program left no log;
3 when the log cannot be read.`

func cmdRecord(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("record", "[flags] [--] PROGRAM [ARGS...]", recordDescription, stderr)
	out := fs.String("o", "trace.csv", "write the trace to `FILE` (- for standard output)")
	rawDir := fs.String("raw", "", "keep the raw log in `DIR` (default: a temporary directory, removed)")
	fromRaw := fs.String("from-raw", "", "convert the raw log in `DIR` instead of running a program")
	pid := fs.Int("pid", 0, "with -from-raw: the process to convert, when DIR holds several")
	timeout := fs.Duration("timeout", 0, "stop the program after this long (the trace is kept; 0: no limit)")
	noFuncs := fs.Bool("no-funcs", false, "do not record function Enter/Exit events")
	fullPaths := fs.Bool("full-paths", false, "write source files with their DWARF paths, not base names")
	serial := fs.String("serial", "", "run the threads one after the other, in `ORDER` first (the first created first) or last (the last created first): the run in which they did not overlap")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if helpRequested(fs) {
		return exitOK
	}
	rest := fs.Args()
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	warn := func(s string) { fmt.Fprintf(stderr, "mcpredict record: warning: %s\n", s) }
	copts := recorder.ConvertOptions{PID: *pid, FullPaths: *fullPaths, NoFuncs: *noFuncs, Warn: warn}

	if *fromRaw != "" {
		if len(rest) > 0 {
			fmt.Fprintln(stderr, "mcpredict record: -from-raw takes no PROGRAM")
			return exitUsage
		}
		var st recorder.Stats
		err := writeOutput(*out, stdout, func(w io.Writer) error {
			var err error
			st, err = recorder.Convert(*fromRaw, w, copts)
			return err
		})
		if err != nil {
			fmt.Fprintf(stderr, "mcpredict record: %v\n", err)
			return exitInternal
		}
		fmt.Fprintf(stderr, "mcpredict record: %d events of %d threads written to %s\n", st.Events, st.Threads, outName(*out))
		recordWarnings(stderr, st)
		return exitOK
	}
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "mcpredict record: no PROGRAM (see mcpredict record -h)")
		return exitUsage
	}
	if *serial != "" && *serial != "first" && *serial != "last" {
		fmt.Fprintf(stderr, "mcpredict record: -serial %q: want first or last\n", *serial)
		return exitUsage
	}
	progOut := stdout
	if *out == "-" {
		// The trace owns standard output; the program's goes to stderr.
		progOut = stderr
	}
	opts := recorder.RecordOptions{
		Program: rest[0], Args: rest[1:],
		Stdin: os.Stdin, Stdout: progOut, Stderr: stderr,
		RawDir: *rawDir, Timeout: *timeout, NoFuncs: *noFuncs, Serial: *serial,
		Convert: copts,
	}
	// Input from a file or a pipe is kept beside the trace (TRACE.stdin),
	// for reproduce's directed runs; a terminal's is not.
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 && *out != "-" {
		opts.StdinCopy = *out + ".stdin"
	}
	var res recorder.RecordResult
	started := false
	err := writeOutput(*out, stdout, func(w io.Writer) error {
		var err error
		res, err = recorder.Record(ctx, w, opts)
		started = res.Exit != ""
		return err
	})
	if err != nil {
		fmt.Fprintf(stderr, "mcpredict record: %v\n", err)
		if !started || strings.Contains(err.Error(), "left no trace log") {
			return exitUsage
		}
		return exitInternal
	}
	fmt.Fprintf(stderr, "mcpredict record: %s %s; %d events of %d threads written to %s\n",
		rest[0], res.Exit, res.Events, res.Threads, outName(*out))
	recordWarnings(stderr, res.Stats)
	if res.RawDir != "" {
		fmt.Fprintf(stderr, "mcpredict record: raw log kept in %s\n", res.RawDir)
	}
	return exitOK
}

// recordWarnings prints the warnings of a conversion: first, loudly, the
// threads whose events the runtime could not write (Stats.Lost).
func recordWarnings(stderr io.Writer, st recorder.Stats) {
	for i, w := range st.Warnings {
		if i == 0 && st.Lost > 0 {
			fmt.Fprintf(stderr, "mcpredict record: WARNING: EVENTS LOST: %s\n", w)
			continue
		}
		fmt.Fprintf(stderr, "mcpredict record: warning: %s\n", w)
	}
}

// allocFlag reports whether a is --alloc-func or --free-func (with or
// without =VALUE, one or two dashes), and which.
func allocFlag(a string) (free, ok bool) {
	name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
	switch name {
	case "-alloc-func":
		return false, true
	case "-free-func":
		return true, true
	}
	return false, false
}

func outName(path string) string {
	if path == "-" || path == "" {
		return "standard output"
	}
	return path
}
