package tracemodel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// A Record is one event of a trace read by something other than Parse (a
// trace-format plugin, see package formats). It carries the fields of a CSV
// line, already split: the builder that Parse uses checks and applies it,
// so every check of the trace format (README "Trace format") applies to
// records as well.
//
// The byte slices are read during the call that receives them and never
// retained.
type Record struct {
	Thread  []byte // thread handle
	Action  []byte // a CSV action name, case-insensitive (Read, Lock, Wait, ...)
	Object  []byte
	Object2 []byte // the mutex of a Wait; empty otherwise
	File    []byte // source file; empty (with Line 0) for an unknown location
	Line    int    // source line
	// TraceLine is the line of the record in its own trace file (1, 2, ...;
	// never decreasing): messages and reports name it.
	TraceLine int
	// Problem, if not empty, makes the record a malformed line with this
	// message: an error, or with Options.Lenient a skipped line.
	Problem string
}

// A RecordSource delivers the records of one trace in trace order, in
// batches. Next returns io.EOF after the last batch. The records of a batch
// may be reused by the source after the next call to Next.
type RecordSource interface {
	Next(ctx context.Context) ([]Record, error)
}

// ParseRecords builds the model of the trace that src delivers, exactly as
// Parse does for CSV text. name (the original trace file) is used in
// messages; a *ParseError names it and the record's TraceLine. Errors of
// src are returned as they are (wrapped with nothing).
// Options.MaxLineBytes and MaxBytes are the source's business.
func ParseRecords(ctx context.Context, src RecordSource, name string, opts Options) (*Model, error) {
	b := newBuilder(name, opts)
	maxEvents := opts.maxEvents()
	var (
		f    [6][]byte
		loc  []byte
		last int
		seen int
	)
	ts := []byte("-")
	return b.build(name, func() error {
		for {
			recs, err := src.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			for i := range recs {
				r := &recs[i]
				n := r.TraceLine
				if err := b.makeRoom(maxEvents); err != nil {
					return fmt.Errorf("%s:%d: %w", name, n, err)
				}
				if n < 1 || n < last {
					return &ParseError{File: name, Line: max(n, last), Msg: fmt.Sprintf("record with trace line %d after trace line %d: trace lines must start at 1 and never decrease", n, last)}
				}
				last = n
				if seen++; seen&0xffff == 0 {
					if cerr := ctx.Err(); cerr != nil {
						return cerr
					}
				}
				before := len(b.m.Events)
				msg := r.Problem
				if msg == "" {
					loc, msg = recordLoc(loc[:0], r)
				}
				if msg == "" {
					k := 5
					f[0], f[1], f[2], f[3], f[4] = r.Thread, ts, loc, r.Action, r.Object
					if len(r.Object2) > 0 {
						f[5] = r.Object2
						k = 6
					}
					for _, x := range f[:k] {
						if bytes.IndexByte(x, 0) >= 0 {
							msg = "NUL byte in a field: not a text trace (binary or corrupt input)"
						}
					}
					if msg == "" {
						msg = b.eventFields(n, f[:k])
					}
				}
				if msg != "" {
					if !opts.Lenient {
						return &ParseError{File: name, Line: n, Msg: msg}
					}
					b.m.Skipped++
					if len(b.m.Problems) < maxProblems {
						b.m.Problems = append(b.m.Problems, fmt.Sprintf("%s:%d: %s", name, n, msg))
					}
				}
				if err := overEvents(name, n, len(b.m.Events), maxEvents); err != nil {
					return err
				}
				if b.visit(before) {
					return errStopped
				}
			}
		}
		return nil
	})
}

// recordLoc writes the location field of r, as the CSV reader's parseLoc
// reads it, into dst: "file:line", or "?" for an unknown location.
func recordLoc(dst []byte, r *Record) ([]byte, string) {
	switch {
	case len(r.File) == 0 && r.Line == 0:
		return append(dst, '?'), ""
	case len(r.File) == 0:
		return dst, fmt.Sprintf("location with line %d but no file", r.Line)
	case r.Line < 0 || r.Line > 999_999_999:
		return dst, fmt.Sprintf("bad line number %d in location", r.Line)
	}
	dst = append(dst, r.File...)
	dst = append(dst, ':')
	return strconv.AppendInt(dst, int64(r.Line), 10), ""
}
