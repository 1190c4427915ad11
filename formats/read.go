package formats

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcpredict/mcpredict/formats/formatplugin"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Open parses the trace at path ("-": standard input) in the named format,
// or, if format is "", in the format detected from its content (then its
// extension). With no plugin installed every input is CSV. It returns the
// model and the format used.
//
// Errors: *tracemodel.ParseError for bad input (naming path and line, also
// for plugin formats), *InputError for an unknown or ambiguous format,
// *PluginError for a broken plugin, *os.PathError for a missing file.
func (h *Host) Open(ctx context.Context, path, format string, opts tracemodel.Options) (*tracemodel.Model, string, error) {
	name := path
	if path == "-" {
		name = "<stdin>"
	}
	return h.OpenNamed(ctx, path, name, format, opts)
}

// OpenNamed is Open with the trace's name in messages and reports (the
// service stores uploads under names of its own).
func (h *Host) OpenNamed(ctx context.Context, path, name, format string, opts tracemodel.Options) (*tracemodel.Model, string, error) {
	if format == "" && path != "-" {
		if err := notATrace(path, name); err != nil {
			return nil, "", err
		}
	}
	if format == CSV || (format == "" && len(h.plugins) == 0) {
		if path == "-" {
			m, err := tracemodel.Parse(ctx, os.Stdin, name, opts)
			return m, CSV, err
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		m, err := tracemodel.Parse(ctx, f, name, opts)
		return m, CSV, err
	}
	if format != "" && h.plugin(format) == nil {
		return nil, "", &InputError{Msg: fmt.Sprintf("unknown trace format %q (known: %s; see mcpredict formats)", format, joinNames(h.Names()))}
	}
	var in io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		in = f
	}
	br := bufio.NewReaderSize(in, formatplugin.DetectBytes)
	if format == "" {
		var err error
		if format, err = h.detect(ctx, name, head(br)); err != nil {
			return nil, "", err
		}
		if format == CSV {
			m, err := tracemodel.Parse(ctx, br, name, opts)
			return m, CSV, err
		}
	}
	file := path
	if path == "-" {
		// A plugin reads a file: spool standard input to one.
		tmp, err := os.CreateTemp("", "mcpredict-stdin-*")
		if err != nil {
			return nil, "", fmt.Errorf("spooling standard input: %w", err)
		}
		defer os.Remove(tmp.Name())
		_, err = io.Copy(tmp, br)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, "", fmt.Errorf("spooling standard input: %w", err)
		}
		file = tmp.Name()
	} else if abs, err := filepath.Abs(path); err == nil {
		file = abs
	}
	m, err := h.read(ctx, h.plugin(format), file, name, opts)
	return m, format, err
}

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// read parses file with plugin p; name is the trace's name in messages.
func (h *Host) read(ctx context.Context, p *proc, file, name string, opts tracemodel.Options) (*tracemodel.Model, error) {
	var open formatplugin.OpenReply
	if err := p.call(ctx, "Open", formatplugin.OpenArgs{Path: file, MaxLineBytes: maxLine(opts), MaxBytes: opts.MaxBytes}, &open); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src := &source{p: p, name: name, table: [][]byte{nil}, actions: actionBytes(), batches: make(chan fetched, 2)}
	go src.fetch(ctx, open.Session)
	m, err := tracemodel.ParseRecords(ctx, src, name, opts)
	if !src.done {
		// Stopped early (bad input, cancelled, or by opts.Visit with a
		// model of the prefix): end the plugin's read.
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), p.timeout)
		_ = p.call(cctx, "Close", formatplugin.SessionArgs{Session: open.Session}, &formatplugin.Empty{})
		ccancel()
	}
	return m, err
}

func maxLine(o tracemodel.Options) int {
	if o.MaxLineBytes > 0 {
		return o.MaxLineBytes
	}
	return tracemodel.DefaultMaxLineBytes
}

func actionBytes() [][]byte {
	var out [][]byte
	for _, a := range formatplugin.Actions() {
		out = append(out, []byte(a))
	}
	return out
}

type fetched struct {
	b   formatplugin.Batch
	err error
}

// source is the tracemodel.RecordSource of a plugin's read. A goroutine
// fetches the next batch while the model is built from the current one.
type source struct {
	p       *proc
	name    string
	batches chan fetched
	table   [][]byte // the session's strings; 0 is ""
	actions [][]byte
	recs    []tracemodel.Record
	last    int
	done    bool
	err     error // the read's error, after the records before it
}

func (s *source) fetch(ctx context.Context, session int) {
	for {
		var f fetched
		f.err = s.p.call(ctx, "Next", formatplugin.SessionArgs{Session: session}, &f.b)
		select {
		case s.batches <- f:
		case <-ctx.Done():
			return
		}
		if f.err != nil || f.b.Done {
			return
		}
	}
}

// Next implements tracemodel.RecordSource.
func (s *source) Next(ctx context.Context) ([]tracemodel.Record, error) {
	if s.done {
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
	var f fetched
	select {
	case f = <-s.batches:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if f.err != nil {
		return nil, f.err
	}
	b := &f.b
	for _, str := range b.Strings {
		s.table = append(s.table, []byte(str))
	}
	if len(b.Recs)%formatplugin.RecordInts != 0 {
		return nil, s.malformed(fmt.Sprintf("a batch of %d integers, not records of %d", len(b.Recs), formatplugin.RecordInts))
	}
	s.recs = s.recs[:0]
	for i := 0; i < len(b.Recs); i += formatplugin.RecordInts {
		r := b.Recs[i : i+formatplugin.RecordInts]
		th, ac, ob, o2, fi, ln, tl := r[0], r[1], r[2], r[3], r[4], int(r[5]), int(r[6])
		if tl < 1 || tl < s.last {
			return nil, s.malformed(fmt.Sprintf("a record at trace line %d after trace line %d", tl, s.last))
		}
		s.last = tl
		for _, id := range [...]int32{th, ob, o2, fi} {
			if id < 0 || int(id) >= len(s.table) {
				return nil, s.malformed(fmt.Sprintf("string id %d (of %d) in the record of %s:%d", id, len(s.table), s.name, tl))
			}
		}
		if ac < 0 || int(ac) >= len(s.actions) {
			return nil, s.malformed(fmt.Sprintf("action code %d in the record of %s:%d", ac, s.name, tl))
		}
		if ac == formatplugin.ActionProblem {
			s.recs = append(s.recs, tracemodel.Record{TraceLine: tl, Problem: string(s.table[ob])})
			continue
		}
		if th == 0 || ob == 0 || ln < 0 {
			return nil, s.malformed(fmt.Sprintf("a record without thread or object, or with line %d, for %s:%d", ln, s.name, tl))
		}
		s.recs = append(s.recs, tracemodel.Record{Thread: s.table[th], Action: s.actions[ac], Object: s.table[ob],
			Object2: s.table[o2], File: s.table[fi], Line: ln, TraceLine: tl})
	}
	if b.Done {
		s.done = true
		if b.Err != nil {
			line := b.Err.Line
			if line <= 0 {
				line = s.last
			}
			s.err = &tracemodel.ParseError{File: s.name, Line: line, Msg: b.Err.Msg}
		}
	}
	return s.recs, nil
}

func (s *source) malformed(what string) error {
	return s.p.kill("sent malformed events: " + what)
}

// recordFirst is the hint for an input that is a program, not its trace.
const recordFirst = "record it first: mcpredict cc -O1 -o prog prog.c && mcpredict record -o prog.csv -- ./prog ARGS && mcpredict run prog.csv"

// notATrace recognises the inputs a new user gives instead of a trace: a
// directory, a C or C++ source file, an executable.
func notATrace(path, name string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil // the open reports it
	}
	if fi.IsDir() {
		return &InputError{Msg: fmt.Sprintf("%s: a directory, not a trace (mcpredict batch checks a directory of traces); to check a program, %s", name, recordFirst)}
	}
	switch extension(name) {
	case "c", "cc", "cpp", "cxx", "c++", "h", "hpp":
		return &InputError{Msg: fmt.Sprintf("%s: a source file, not a trace; %s", name, recordFirst)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	magic := make([]byte, 4)
	if n, _ := io.ReadFull(f, magic); n == 4 && string(magic) == "\x7fELF" {
		return &InputError{Msg: fmt.Sprintf("%s: an executable, not a trace; %s", name, recordFirst)}
	}
	return nil
}
