package main

import (
	"context"
	"fmt"
	"io"

	traceformats "github.com/mcpredict/mcpredict/formats"
)

const convertDescription = `
Converts a trace to another format: csv, std (RAPID's format) or jsonl.
TRACE is read in any format mcpredict reads (--input-format, or detected)
and checked as for run, so the output is a valid trace: a synchronization
oddity is a warning on standard error and written as the model absorbs it
(an Unlock of a lock not held and a Join of an unknown thread are not
written; README "Trace format"), or with --strict-sync exit 2.

By default every event keeps its trace line (blank lines fill the gaps of
comments and skipped lines): reports of the converted trace name the same
trace lines. --compact writes one event per line.

--to std writes mcpredict's STD: RAPID's operations (r, w, acq, rel, fork,
join, begin, end) and extension operations for the rest (signal, wait,
barrier, ...; README "Trace formats and plugins"), so that nothing is lost.
--rapid writes only what RAPID's own tools read: every lock kind as acq/rel,
a cond Wait as rel and acq of its mutex, and drops the events RAPID has no
operation for (counted on standard error).

Exit status: 0, 2 bad usage or input, 3 a broken plugin.`

func cmdConvert(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("convert", "--to csv|std|jsonl [flags] TRACE", convertDescription, stderr)
	var inf inputFlags
	inf.register(fs)
	var cf checkFlags
	fs.BoolVar(&cf.lenient, "lenient", false, "skip malformed trace lines instead of failing (they are not written)")
	cf.registerStrictSync(fs)
	fs.IntVar(&cf.maxLineBytes, "max-line-bytes", 1<<20, "longest trace line accepted, in bytes")
	fs.Int64Var(&cf.maxTraceBytes, "max-trace-bytes", 0, "largest trace accepted after decompression, in bytes (0: no limit)")
	to := fs.String("to", "", "output format: csv, std or jsonl (required)")
	out := fs.String("o", "", "output `FILE` (default standard output)")
	compact := fs.Bool("compact", false, "one event per line (trace lines are not kept)")
	rapid := fs.Bool("rapid", false, "with --to std: only RAPID's operations (see above)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || *to == "" {
		fmt.Fprintln(stderr, "mcpredict convert: want --to FORMAT and exactly one TRACE argument (see mcpredict convert -h)")
		return exitUsage
	}
	m, err := inf.open(ctx, pos[0], cf.traceOptions(), stderr, "convert")
	if err != nil {
		return fail(stderr, "convert", err)
	}
	var st traceformats.WriteStats
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		var werr error
		st, werr = traceformats.Write(w, m, *to, traceformats.WriteOptions{Compact: *compact, RAPID: *rapid})
		return werr
	})
	if err != nil {
		return fail(stderr, "convert", err)
	}
	if st.Dropped > 0 {
		fmt.Fprintf(stderr, "mcpredict convert: %d events without a RAPID operation were dropped\n", st.Dropped)
	}
	if m.Skipped > 0 {
		fmt.Fprintf(stderr, "mcpredict convert: skipped %d malformed lines\n", m.Skipped)
	}
	// The oddities say which events were dropped (not written).
	for _, w := range m.Warnings {
		fmt.Fprintf(stderr, "mcpredict convert: warning: %s\n", w)
	}
	return exitOK
}
