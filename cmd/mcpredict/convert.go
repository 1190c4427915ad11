package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/mcpredict/mcpredict/analysis/txn"
	traceformats "github.com/mcpredict/mcpredict/formats"
)

const convertDescription = `
Converts a trace to another format: csv, std (RAPID's format) or jsonl.
TRACE is read in any format mcpredict reads (--input-format, or detected)
and checked as for run, so the output is a valid trace: a synchronization
oddity is a warning on standard error and written as the model absorbs it
(an Unlock of a lock not held and a Join of an unknown thread are not
written; docs/trace-format.md), or with --strict-sync exit 2.

By default every event keeps its trace line (blank lines fill the gaps of
comments and skipped lines): reports of the converted trace name the same
trace lines. --compact writes one event per line.

--to std writes mcpredict's STD: RAPID's operations (r, w, acq, rel, fork,
join, begin, end) and extension operations for the rest (signal, wait,
barrier, ...; docs/trace-format.md), so that nothing is lost.
--rapid writes only what RAPID's own tools read: every lock kind as acq/rel,
a cond Wait as rel and acq of its mutex, the transactions of sidetrack,
block and conflict (Begin/End labels, else function invocations; --atomic,
--not-atomic) as begin and end, and drops the events RAPID has no
operation for (counted on standard error). Locations become numbers, as
RAPID wants: the table "N file:line" goes to --locs FILE (default: the -o
file with .locs added; none on standard output without --locs).

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
	rapid := fs.Bool("rapid", false, "with --to std: only RAPID's operations, transactions as begin/end, numbered locations (see above)")
	locsPath := fs.String("locs", "", "with --rapid: the location table `FILE` (default: the -o file + .locs)")
	var atomic, notAtomic listFlag
	fs.Var(&atomic, "atomic", "with --rapid: only these functions or Begin/End labels are transactions (comma-separated)")
	fs.Var(&notAtomic, "not-atomic", "with --rapid: these functions or labels are never transactions (comma-separated)")
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
	wo := traceformats.WriteOptions{Compact: *compact, RAPID: *rapid}
	var locs bytes.Buffer
	if *rapid {
		ts, err := txn.Extract(ctx, m, txn.Options{Atomic: atomic, NotAtomic: notAtomic})
		if err != nil {
			return fail(stderr, "convert", err)
		}
		wo.Boundaries = func(ev int) (begin, end bool) {
			x := ts.TxnOf(int32(ev))
			return x >= 0 && ts.Txns[x].First == int32(ev), x >= 0 && ts.Txns[x].Last == int32(ev)
		}
		wo.Locs = &locs
		if *locsPath == "" && *out != "" && *out != "-" {
			*locsPath = *out + ".locs" // none for standard output: give --locs
		}
	}
	var st traceformats.WriteStats
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		var werr error
		st, werr = traceformats.Write(w, m, *to, wo)
		return werr
	})
	if err == nil && *rapid && *locsPath != "" {
		err = writeOutput(*locsPath, stdout, func(w io.Writer) error {
			_, werr := w.Write(locs.Bytes())
			return werr
		})
	}
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
