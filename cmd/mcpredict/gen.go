package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/predict"
)

const genDescription = `
Writes a synthetic trace in mcpredict's trace format, for benchmarks and
tests. The same flags always give the same trace. Output is streamed, so
--events can be tens of millions; with -o FILE ending in .gz it is gzip
compressed.

Kinds:
  fft     SPLASH-2 FFT-like barrier phases: --threads workers each write
          their slice of a double-buffered array of --vars elements and
          read a partner's slice of the other buffer, phases separated by
          a barrier, then a reduction under a lock. No atomicity violation
          by construction (with region boundaries; --no-boundaries in
          "mcpredict run" reports the phase-ordered accesses), unless
          --bugs N adds N counters that every worker increments without
          a lock in every phase (fft.c lines 50, 51, ...: a P3 lost
          update in every pair of workers).
  server  a main thread hands requests to --threads workers through a
          queue (mutex + condition variable, while (count == 0) wait) in
          epochs separated by a barrier; workers update statistics under
          locks. --bugs seeded bugs at server.c lines 100, 110, ...:
          a split critical section (P3), an unlocked check-then-use (P1),
          an unlocked flag written twice (P4, P5), an unlocked write read
          back (P2), in turn. The seeded bugs are listed on standard error
          when -o is given; they are the only ones "mcpredict run" should
          predict.
  random  a small random valid trace (2-4 threads, 1-3 variables, every
          synchronization action), as the differential tests use.

--phases sets the number of barrier phases (fft) or epochs (server);
--events, if set, chooses them to write about that many events instead.

Examples:
  mcpredict gen --kind server --bugs 4 | mcpredict run -
  mcpredict gen --kind fft --threads 8 --events 10000000 -o fft.csv.gz`

func cmdGen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("gen", "--kind fft|server|random [flags]", genDescription, stderr)
	var c gen.Config
	fs.StringVar(&c.Kind, "kind", "", "workload: fft, server or random (required)")
	fs.Int64Var(&c.Seed, "seed", 1, "random seed of the interleaving (and of the random program)")
	fs.IntVar(&c.Threads, "threads", 0, "worker threads for fft and server (default 4), threads for random (2-4)")
	fs.IntVar(&c.Vars, "vars", 0, "elements per buffer for fft (default 16), variables for random (1-3)")
	fs.IntVar(&c.Phases, "phases", 0, "barrier phases (fft) or request epochs (server) (default 4)")
	fs.Int64Var(&c.Events, "events", 0, "write about this many events (overrides --phases)")
	fs.IntVar(&c.Bugs, "bugs", -1, "seeded atomicity bugs: server (default 4), or fft racy counters (default 0)")
	out := fs.String("o", "", "write the trace to `FILE` (gzip if it ends in .gz) instead of standard output")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if c.Bugs < 0 {
		c.Bugs = 0
		if c.Kind == gen.KindServer {
			c.Bugs = 4
		}
	}
	var err error
	if len(pos) > 0 {
		fmt.Fprintln(stderr, "mcpredict gen: no arguments expected (see mcpredict gen -h)")
		return exitUsage
	}
	if c.Kind == "" {
		fmt.Fprintf(stderr, "mcpredict gen: --kind is required: one of %s\n", strings.Join(gen.Kinds(), ", "))
		return exitUsage
	}
	var st gen.Stats
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		if strings.HasSuffix(*out, ".gz") {
			zw := gzip.NewWriter(w)
			var err error
			if st, err = gen.Write(ctx, zw, c); err != nil {
				return err
			}
			return zw.Close()
		}
		var err error
		st, err = gen.Write(ctx, w, c)
		return err
	})
	if err != nil {
		var ce *gen.ConfigError
		if errors.As(err, &ce) {
			return fail(stderr, "gen", &predict.UsageError{Msg: ce.Msg})
		}
		return fail(stderr, "gen", err)
	}
	if *out != "" && *out != "-" {
		fmt.Fprintf(stderr, "%s: %d events, %d threads\n", *out, st.Events, st.Threads)
		for _, b := range st.Bugs {
			fmt.Fprintf(stderr, "  seeded %s on %s at %s: %s\n", b.Pattern, b.Var, strings.Join(b.Locs(), " "), b.Kind)
		}
	}
	return exitOK
}
