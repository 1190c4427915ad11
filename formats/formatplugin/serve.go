package formatplugin

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/klauspost/compress/zstd"
)

// Format is what a plugin implements.
type Format interface {
	// Info describes the format.
	Info() Info
	// Detect reports whether head, the first bytes of a trace (at most
	// DetectBytes, decompressed, possibly cut mid-line), looks like this
	// format. Answer true only when sure: two formats that both say yes
	// make the input ambiguous.
	Detect(head []byte) bool
	// Read reads the trace in.Reader() and emits its events in trace order
	// with in.Emit; a malformed line is reported with in.Problem (mcpredict
	// stops there, or skips it with --lenient). An error ends the read: a
	// *LineError names the line, any other error is reported as is.
	Read(ctx context.Context, in *Input) error
}

// Event is one event of a trace, in the terms of the CSV trace format
// (README "Trace format").
type Event struct {
	TraceLine int    // the event's line in its trace file (>= 1, never decreasing)
	Thread    string // thread handle
	Action    string // a CSV action name, case-insensitive: Read, Write, Lock, Wait, Create, ...
	Object    string // variable, lock, cond, thread handle (Create, Join), ...
	Object2   string // the mutex of a Wait; "" otherwise
	File      string // source file; "" (with Line 0) if unknown
	Line      int    // source line
}

// LineError is a Read error at a line of the trace.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Input is the trace a Read reads and where its events go.
type Input struct {
	r       io.Reader
	maxLine int
	out     chan<- Batch
	ctx     context.Context

	strings map[string]int32
	actions map[string]int32
	names   []string // Actions()
	batch   Batch
	next    int32 // id of the next new string
	last    int   // trace line of the last record
}

// Reader returns the trace, decompressed.
func (in *Input) Reader() io.Reader { return in.r }

// Lines calls fn with every line of the trace (without its line end),
// numbered from 1, and stops at fn's first error. Lines longer than the
// limit mcpredict set (--max-line-bytes) and read errors are *LineErrors.
func (in *Input) Lines(fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(in.r, 1<<16)
	var long []byte
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				if in.maxLine > 0 && len(long) > in.maxLine {
					return &LineError{Line: n + 1, Msg: fmt.Sprintf("line over the limit of %d bytes (--max-line-bytes raises it)", in.maxLine)}
				}
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if in.maxLine > 0 && len(line) > in.maxLine {
			return &LineError{Line: n + 1, Msg: fmt.Sprintf("line over the limit of %d bytes (--max-line-bytes raises it)", in.maxLine)}
		}
		if len(line) > 0 {
			n++
			if n&0xffff == 0 {
				if cerr := in.ctx.Err(); cerr != nil {
					return cerr
				}
			}
			if ferr := fn(n, bytes.TrimRight(line, "\r\n")); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &LineError{Line: n + 1, Msg: "reading trace: " + readErrText(err)}
		}
	}
}

func readErrText(err error) string {
	var le *LineError
	if errors.As(err, &le) {
		return le.Msg
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "truncated input (unexpected end of compressed data)"
	}
	return err.Error()
}

// Emit sends one event. An event that is not one of mcpredict's (unknown
// action, empty thread or object, a second object on anything but a Wait,
// negative line) is sent as a Problem of its line. Emit fails when
// trace lines decrease (a bug of the plugin) or reading was cancelled.
func (in *Input) Emit(e Event) error {
	if err := in.order(e.TraceLine); err != nil {
		return err
	}
	code, ok := in.actions[e.Action]
	if !ok {
		code = ActionCode(e.Action)
		in.actions[e.Action] = code
	}
	switch {
	case code == ActionProblem:
		return in.Problem(e.TraceLine, fmt.Sprintf("unknown action %q", e.Action))
	case e.Thread == "":
		return in.Problem(e.TraceLine, "empty thread")
	case e.Object == "":
		return in.Problem(e.TraceLine, fmt.Sprintf("%s without object", in.names[code]))
	case e.Object2 != "" && in.names[code] != "Wait":
		return in.Problem(e.TraceLine, fmt.Sprintf("second object %q on %s (only a Wait has one: its mutex)", e.Object2, in.names[code]))
	case e.Line < 0 || (e.File == "" && e.Line != 0):
		return in.Problem(e.TraceLine, fmt.Sprintf("bad location %q line %d", e.File, e.Line))
	}
	return in.add(in.id(e.Thread), code, in.id(e.Object), in.id(e.Object2), in.id(e.File), int32(e.Line), int32(e.TraceLine))
}

// EmitBytes is Emit for fields that are byte slices (of a line being
// parsed): it does not allocate for strings already sent, which makes
// line-based plugins about as fast as mcpredict's own CSV reader. The
// slices are not retained.
func (in *Input) EmitBytes(traceLine int, thread, action, object, object2, file []byte, line int) error {
	code, ok := in.actions[string(action)]
	if !ok || len(thread) == 0 || len(object) == 0 || (len(object2) > 0 && in.names[code] != "Wait") || line < 0 || (len(file) == 0 && line != 0) {
		// The slow path finds the problem.
		return in.Emit(Event{TraceLine: traceLine, Thread: string(thread), Action: string(action), Object: string(object), Object2: string(object2), File: string(file), Line: line})
	}
	if err := in.order(traceLine); err != nil {
		return err
	}
	return in.add(in.idBytes(thread), code, in.idBytes(object), in.idBytes(object2), in.idBytes(file), int32(line), int32(traceLine))
}

func (in *Input) idBytes(b []byte) int32 {
	if len(b) == 0 {
		return 0
	}
	if id, ok := in.strings[string(b)]; ok { // no allocation
		return id
	}
	return in.id(string(b))
}

// Problem reports a malformed line of the trace.
func (in *Input) Problem(traceLine int, msg string) error {
	if err := in.order(traceLine); err != nil {
		return err
	}
	return in.add(0, ActionProblem, in.id(msg), 0, 0, 0, int32(traceLine))
}

func (in *Input) order(traceLine int) error {
	if traceLine < 1 || traceLine < in.last || traceLine > 1<<31-1 {
		return fmt.Errorf("plugin bug: event at trace line %d after trace line %d (trace lines start at 1 and never decrease)", traceLine, in.last)
	}
	in.last = traceLine
	return nil
}

func (in *Input) id(s string) int32 {
	if s == "" {
		return 0
	}
	if id, ok := in.strings[s]; ok {
		return id
	}
	id := in.next
	in.next++
	in.strings[s] = id
	in.batch.Strings = append(in.batch.Strings, s)
	return id
}

func (in *Input) add(v ...int32) error {
	in.batch.Recs = append(in.batch.Recs, v...)
	if len(in.batch.Recs) >= BatchSize*RecordInts {
		return in.flush()
	}
	return nil
}

func (in *Input) flush() error {
	select {
	case in.out <- in.batch:
	case <-in.ctx.Done():
		return in.ctx.Err()
	}
	in.batch = Batch{Recs: make([]int32, 0, BatchSize*RecordInts)}
	return nil
}

// Serve runs the plugin: call it from main. It returns when mcpredict
// closes the connection; the process also exits when mcpredict is gone.
func Serve(f Format) {
	go exitWithParent()
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake(),
		Plugins:         plugin.PluginSet{PluginName: &Plugin{Impl: f}},
		Logger:          hclog.NewNullLogger(),
	})
}

// exitWithParent ends the plugin when the mcpredict that started it is gone
// (killed before it could stop its plugins): the plugin is reparented.
func exitWithParent() {
	ppid := os.Getppid()
	for range time.Tick(500 * time.Millisecond) {
		if os.Getppid() != ppid {
			os.Exit(1)
		}
	}
}

// Plugin is the go-plugin plugin of a Format: Impl on the plugin side, and
// on the host side the *Client that Dispense returns.
type Plugin struct {
	Impl Format
}

// Server implements plugin.Plugin.
func (p *Plugin) Server(*plugin.MuxBroker) (any, error) {
	return &Server{impl: p.Impl, sessions: map[int]*session{}}, nil
}

// Client implements plugin.Plugin.
func (p *Plugin) Client(_ *plugin.MuxBroker, c *rpc.Client) (any, error) {
	return &Client{RPC: c}, nil
}

// Server is the net/rpc service of a Format on the plugin side. Its
// methods are the protocol; they are exported for net/rpc only.
type Server struct {
	impl Format

	mu       sync.Mutex
	last     int
	sessions map[int]*session
}

type session struct {
	ctx    context.Context
	cancel context.CancelFunc
	out    chan Batch
}

// Info answers Info.
func (s *Server) Info(_ Empty, reply *Info) error {
	*reply = s.impl.Info()
	return nil
}

// Detect answers Detect.
func (s *Server) Detect(args DetectArgs, reply *DetectReply) error {
	reply.Match = s.impl.Detect(args.Head)
	return nil
}

// Open starts reading args.Path in a goroutine that prepares batches
// ahead of Next.
func (s *Server) Open(args OpenArgs, reply *OpenReply) error {
	f, err := os.Open(args.Path)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Batch, 4)
	s.mu.Lock()
	s.last++
	id := s.last
	s.sessions[id] = &session{ctx: ctx, cancel: cancel, out: out}
	s.mu.Unlock()
	reply.Session = id
	go func() {
		defer f.Close()
		in := &Input{maxLine: args.MaxLineBytes, out: out, ctx: ctx, strings: map[string]int32{}, actions: map[string]int32{}, names: Actions(), next: 1,
			batch: Batch{Recs: make([]int32, 0, BatchSize*RecordInts)}}
		final := Batch{Done: true}
		r, closeR, err := decompress(f)
		if err == nil {
			defer closeR()
			in.r = r
			if args.MaxBytes > 0 {
				in.r = &limitReader{r: r, left: args.MaxBytes, max: args.MaxBytes}
			}
			err = s.impl.Read(ctx, in)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var le *LineError
			if errors.As(err, &le) {
				final.Err = &ReadError{Line: le.Line, Msg: le.Msg}
			} else {
				final.Err = &ReadError{Line: in.last, Msg: readErrText(err)}
			}
		}
		final.Strings, final.Recs = in.batch.Strings, in.batch.Recs
		select {
		case out <- final:
		case <-ctx.Done():
		}
	}()
	return nil
}

// Next answers the next batch of a session.
func (s *Server) Next(args SessionArgs, reply *Batch) error {
	s.mu.Lock()
	ss := s.sessions[args.Session]
	s.mu.Unlock()
	if ss == nil {
		return fmt.Errorf("no session %d", args.Session)
	}
	var b Batch
	select {
	case b = <-ss.out:
	case <-ss.ctx.Done():
		return fmt.Errorf("session %d closed", args.Session)
	}
	if b.Done {
		s.Close(args, nil)
	}
	*reply = b
	return nil
}

// Close ends a session.
func (s *Server) Close(args SessionArgs, _ *Empty) error {
	s.mu.Lock()
	ss := s.sessions[args.Session]
	delete(s.sessions, args.Session)
	s.mu.Unlock()
	if ss != nil {
		ss.cancel()
	}
	return nil
}

// limitReader fails once more than max bytes were read.
type limitReader struct {
	r         io.Reader
	left, max int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, fmt.Errorf("trace (decompressed) over the limit of %d bytes (--max-trace-bytes raises it)", l.max)
	}
	return n, err
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// decompress returns r decompressed when it starts with gzip or zstd
// magic bytes.
func decompress(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, &LineError{Line: 1, Msg: "reading gzip: " + readErrText(err)}
		}
		return zr, func() { zr.Close() }, nil
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, &LineError{Line: 1, Msg: "reading zstd: " + err.Error()}
		}
		return zr, zr.Close, nil
	}
	return br, func() {}, nil
}

// Decompress returns r decompressed when it starts with gzip or zstd magic
// bytes (as mcpredict and Serve do).
func Decompress(r io.Reader) (io.Reader, func(), error) { return decompress(r) }
