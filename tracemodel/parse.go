package tracemodel

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// Options control parsing.
type Options struct {
	// AllowEmpty accepts a trace without events (by default, a ParseError:
	// an empty recording means a broken recording step, not a correct
	// program). A lenient parse that skipped lines accepts it too: the
	// report counts what was skipped.
	AllowEmpty bool
	// Lenient skips malformed lines and inconsistent events (counting them
	// in Model.Skipped) instead of failing.
	Lenient bool
	// StrictSync makes a synchronization oddity (an Unlock of a lock the
	// thread does not hold, a Join of an unknown thread, a Wait whose mutex
	// the thread does not hold, an acquisition of a lock another thread
	// holds, an event of a thread after its Join) bad input, as a malformed
	// line is. By default each is absorbed as README "Trace format" says
	// and reported in Model.Warnings: real programs have them.
	StrictSync bool
	// MaxLineBytes bounds one line of the trace (0: DefaultMaxLineBytes),
	// so that a file without newlines (or a decompression bomb of zeros)
	// is an error, not an unbounded buffer.
	MaxLineBytes int
	// MaxBytes bounds the trace's size after decompression (0: no bound).
	MaxBytes int64
	// MaxEvents bounds the events kept (0: DefaultMaxEvents; negative: no
	// bound, but at most 2^31-1, the events' index type): a decompression
	// bomb of valid lines is an error, not all of the machine's memory or
	// temporary disk.
	MaxEvents int
	// Spill says where the events are kept (spill.go): in memory, or in a
	// memory-mapped temporary file under SpillDir (os.TempDir() if "")
	// once there are more than SpillAfter (0: DefaultSpillAfter), of which
	// about MaxResident bytes (0: DefaultMaxResident) stay resident. ""
	// is SpillAuto. A spilled model must be closed (Model.Close).
	Spill       SpillMode
	SpillDir    string
	SpillAfter  int
	MaxResident int64
	// bucketAccesses overrides the bucket size of fillAccesses (tests).
	bucketAccesses int
	// shares bounds the shares of the threads' scans (shares.go; tests).
	shares int
	// Progress, if set, is called with the bytes of the input read so far
	// (before decompression), about every 256 KiB and at the end, from the
	// goroutine that reads the input (not the caller's): a progress bar
	// of a long read.
	Progress func(read int64)
	// Visit, if set, is called with each event as the parse adds it to
	// the model, from the caller's goroutine, before the next line is
	// read; true stops the read there. The model it is given, and the
	// one a stopped parse returns, holds the events read so far (see
	// stream.go for what of it may be used).
	Visit Visitor
}

// progressReader counts the bytes read through it for Options.Progress.
type progressReader struct {
	r         io.Reader
	read, rep int64
	progress  func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.read += int64(n)
	if p.read-p.rep >= 256<<10 || err != nil {
		p.rep = p.read
		p.progress(p.read)
	}
	return n, err
}

// DefaultMaxEvents is the default of Options.MaxEvents: 500 million events,
// about 20 GB of temporary disk when spilled (32 bytes an event, and up to
// 32 more for the indexes and scope trees; see spill.go), and a parse of a
// few minutes before a decompression bomb of valid lines is refused.
const DefaultMaxEvents = 500_000_000

// maxEvents is the bound of Options.MaxEvents, 0 for none.
func (o Options) maxEvents() int {
	switch {
	case o.MaxEvents == 0:
		return DefaultMaxEvents
	case o.MaxEvents < 0:
		return maxIndex
	}
	return min(o.MaxEvents, maxIndex)
}

// overEvents is the error of a trace with more than max events at line.
func overEvents(file string, line, events, max int) error {
	if max <= 0 || events <= max {
		return nil
	}
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf("more than %d events (--max-events raises the limit)", max)}
}

// DefaultMaxLineBytes is the default bound of one trace line: real lines
// are under 200 bytes.
const DefaultMaxLineBytes = 1 << 20

// ParseError is a problem in the trace text, with its location.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 && e.Msg == noEventsMsg {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// noEventsMsg is the message of a trace without events, which has no line
// to name.
const noEventsMsg = "no events: the trace is empty or only comments (record the program first: mcpredict cc ... && mcpredict record -o TRACE -- ./PROG)"

// overLimit is the error of a trace over one of the Options' bounds: bad
// input, naming the flag that raises the bound.
func overLimit(file string, line int, what string, limit int64, flag string) error {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf("%s over the limit of %d bytes (%s raises it)", what, limit, flag)}
}

// maxProblems bounds the skipped-line messages kept in lenient mode.
const maxProblems = 20

// Open parses the trace in the named file ("-" is standard input). Gzip and
// zstd input are detected by their magic bytes.
func Open(ctx context.Context, path string, opts Options) (*Model, error) {
	if path == "-" {
		return Parse(ctx, os.Stdin, "<stdin>", opts)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(ctx, f, path, opts)
}

// Parse reads a trace from r. name is used in messages.
func Parse(ctx context.Context, r io.Reader, name string, opts Options) (*Model, error) {
	if opts.Progress != nil {
		r = &progressReader{r: r, progress: opts.Progress}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	in, closeIn, err := decompress(br, name)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	b := newBuilder(name, opts)
	lr := bufio.NewReaderSize(in, 1<<16)
	maxLine := opts.MaxLineBytes
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	maxEvents := opts.maxEvents()
	return b.build(name, func() error {
		lines := readLines(ctx, lr, name, maxLine, opts.MaxBytes)
		defer lines.stop()
		for {
			batch := lines.next()
			for i := range batch.turns {
				turn := &batch.turns[i]
				if err := b.makeRoom(maxEvents); err != nil {
					return fmt.Errorf("%s:%d: %w", name, turn.at, err)
				}
				if turn.hasLine {
					n := len(b.m.Events)
					if err := b.take(&turn.line); err != nil {
						return err
					}
					if err := overEvents(name, turn.line.n, len(b.m.Events), maxEvents); err != nil {
						return err
					}
					if b.visit(n) {
						return errStopped
					}
				}
				if turn.err != nil {
					return turn.err
				}
			}
			if batch.last {
				return nil
			}
			lines.release(batch)
		}
	})
}

func readErrText(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "truncated input (unexpected end of compressed data)"
	}
	return err.Error()
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

func decompress(br *bufio.Reader, name string) (io.Reader, func(), error) {
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, &ParseError{File: name, Line: 1, Msg: "reading gzip: " + readErrText(err)}
		}
		ar := newAheadReader(zr)
		return ar, func() { ar.Close(); zr.Close() }, nil
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, &ParseError{File: name, Line: 1, Msg: "reading zstd: " + err.Error()}
		}
		ar := newAheadReader(zr)
		return ar, func() { ar.Close(); zr.Close() }, nil
	}
	return br, func() {}, nil
}

// builder holds the state of one parse.
type builder struct {
	// eventLines counts the event lines applied, dropped ones too: a
	// trace without any is refused (Options.AllowEmpty).
	eventLines int
	// recorded is set by the header mcpredict record writes, ended by
	// the trailer it writes last ("# end: N events, ..."): a recorded
	// trace without it was cut short (a disk full, a copy stopped).
	recorded, ended bool
	lastLine        int // the number of the last line taken
	m               *Model
	opts            Options

	objIndex    map[string]int32
	fileIndex   map[string]int32   // file name -> small id, for locIndex
	locIndex    map[[2]int32]int32 // (file id, line) -> location id
	threadIndex map[string]int32
	varOf       []int32 // by object: current variable id, 0 if none
	genOf       []int32 // by object: generation of the next variable
	threads     []*tstate
	locks       map[int32]*lockState
	lockKind    map[int32]StepKind // object -> Lock or RdLock (mutex vs rwlock)

	// odds are the synchronization oddities absorbed so far, one per kind
	// and source location (see oddity); pending are those of the event
	// being parsed, kept only if the event is applied or dropped, not
	// when it turns out to be a malformed line.
	odds    map[oddKey]*oddity
	pending []pendingOdd
	curLoc  int32 // source location of the event being applied
	// curFile and curLine are the source location of the event being
	// checked, not yet interned (a malformed line leaves no trace).
	curFile []byte
	curLine int
	spillAt int // events at which the store moves to a file (spillPlan); -1: never
	// lockErr is the first failure to grow the lock operations' file
	// (appendLockOp), returned before the next line is read.
	lockErr error
}

type tstate struct {
	n        int32   // events so far
	joinedAt int     // trace line of the Join of this thread, 0 if not joined
	funcs    []int32 // Enter/Exit stack
	entered  bool    // has had an Enter event (the scope index keeps its invocations)
	waitFor  int32   // mutex a Wait must release next (see lockState.suspended), 0 if none
	seen     bool    // has had an event of its own
	// blockedAt is the trace line of the thread's Blocked event, 0 if none:
	// a blocked thread has no later event.
	blockedAt int
}

type lockState struct {
	holder  int32 // thread holding it exclusively, 0 if none
	depth   int32
	since   int // trace line where the outermost hold began
	start   int32
	readers map[int32]*readHold
	// A Wait is recorded when it returns, so a mutex that another thread
	// locks while its holder is blocked in pthread_cond_wait looks held.
	// The holder's hold is then suspended until its next event, which must
	// be that Wait.
	// suspended maps each thread whose hold was taken over to that hold.
	suspended map[int32]suspHold
	// ended counts, per thread, the depth of holds that another thread's
	// acquisition ended unseen (oddHeld): that many of the thread's later
	// releases of the lock, while it does not hold it, release nothing.
	ended map[int32]int32
}

// suspHold is a hold suspended by a take-over, and the take-over.
type suspHold struct {
	start    int32 // position where the hold began
	depth    int32 // its recursion depth
	since    int   // trace line where it began
	takenAt  int   // trace line of the take-over
	taker    int32 // thread of the take-over
	takenLoc int32 // source location of the take-over
	// takenKind is the action of the take-over (Lock, TryLock or Wait),
	// takenCond the cond of a Wait: the oddHeld warning names them when
	// the holder's next event is not the Wait.
	takenKind Kind
	takenCond int32
}

// takeOver suspends the current holder, which must be blocked in a cond Wait
// that the trace records later, so that thread tid can acquire the mutex
// (kind: the action of tid, cond the cond of a Wait).
func (b *builder) takeOver(ls *lockState, lock, tid int32, line int, kind Kind, cond int32) {
	if ls.holder == 0 || ls.holder == tid {
		return
	}
	if ls.suspended == nil {
		ls.suspended = map[int32]suspHold{}
	}
	ls.suspended[ls.holder] = suspHold{start: ls.start, depth: ls.depth, since: ls.since,
		takenAt: line, taker: tid, takenLoc: b.curLoc, takenKind: kind, takenCond: cond}
	b.threads[ls.holder-1].waitFor = lock
	ls.holder = 0
}

// canTakeOver reports whether the holder of ls may be blocked in a cond Wait
// not yet recorded: it is not already waiting to report another one.
func (b *builder) canTakeOver(ls *lockState) bool {
	return ls.holder != 0 && b.threads[ls.holder-1].waitFor == 0
}

// suspendedHold returns the start of thread tid's suspended hold.
func (ls *lockState) suspendedHold(tid int32) (int32, bool) {
	if ls == nil {
		return 0, false
	}
	s, ok := ls.suspended[tid]
	return s.start, ok
}

type readHold struct {
	depth int32
	start int32
	since int // trace line where the hold began
}

func newBuilder(name string, opts Options) *builder {
	return &builder{
		m: &Model{
			Name:      name,
			Objects:   []string{""},
			Locs:      []Loc{{}},
			Vars:      []Var{{}},
			lockOps:   map[lockThread][]lockOp{},
			maxShares: opts.shares,
		},
		opts:        opts,
		objIndex:    map[string]int32{"": 0},
		fileIndex:   map[string]int32{"": 0},
		locIndex:    map[[2]int32]int32{{0, 0}: 0},
		threadIndex: map[string]int32{},
		varOf:       []int32{0},
		genOf:       []int32{0},
		locks:       map[int32]*lockState{},
		lockKind:    map[int32]StepKind{},
	}
}

func (b *builder) obj(name []byte) int32 {
	if id, ok := b.objIndex[string(name)]; ok {
		return id
	}
	s := string(name)
	id := int32(len(b.m.Objects))
	b.m.Objects = append(b.m.Objects, s)
	b.objIndex[s] = id
	b.varOf = append(b.varOf, 0)
	b.genOf = append(b.genOf, 1)
	return id
}

func (b *builder) loc(file []byte, line int) int32 {
	f, ok := b.fileIndex[string(file)] // no allocation on a hit
	if !ok {
		f = int32(len(b.fileIndex))
		b.fileIndex[string(file)] = f
	}
	key := [2]int32{f, int32(line)}
	if id, ok := b.locIndex[key]; ok {
		return id
	}
	id := int32(len(b.m.Locs))
	b.m.Locs = append(b.m.Locs, Loc{File: string(file), Line: line})
	b.locIndex[key] = id
	return id
}

func (b *builder) thread(handle []byte) int32 {
	if id, ok := b.threadIndex[string(handle)]; ok {
		return id
	}
	h := string(handle)
	id := int32(len(b.m.Threads) + 1)
	b.m.Threads = append(b.m.Threads, Thread{ID: int(id), Handle: h})
	b.m.blocking = append(b.m.blocking, nil)
	b.m.handoffs = append(b.m.handoffs, nil)

	b.threads = append(b.threads, &tstate{})
	b.threadIndex[h] = id
	return id
}

// reachedPrefix starts the comment line in which the recorder keeps the
// detail of a variable it names by type and allocation site: the pointer
// path the program first reached it through.
const reachedPrefix = "# reached: "

// recordedPrefix starts the first line of a trace mcpredict record wrote,
// endPrefix its last.
const (
	recordedPrefix = "# mcpredict trace (CSV"
	endPrefix      = "# end: "
)

// sourcePrefix starts the comment line in which the recorder keeps the
// source text of a location: "# source: FILE-LINE<TAB>TEXT".
const sourcePrefix = "# source: "

// comment keeps what a comment line tells about the trace's variables and
// locations: "# reached: NAME as PATH" (Model.Reached), "# source:
// FILE-LINE<TAB>TEXT" (Model.Sources). Other comments are ignored.
func (b *builder) comment(t []byte) {
	switch {
	case bytes.HasPrefix(t, []byte(recordedPrefix)):
		b.recorded = true
	case bytes.HasPrefix(t, []byte(endPrefix)):
		b.ended = true
	}
	if b.libraryComment(t) {
		return
	}
	if rest, ok := bytes.CutPrefix(t, []byte(sourcePrefix)); ok {
		loc, text, ok := bytes.Cut(rest, []byte("\t"))
		file, line, msg := parseLoc(loc)
		if ok && msg == "" && line > 0 {
			if b.m.Sources == nil {
				b.m.Sources = map[Loc]string{}
			}
			b.m.Sources[Loc{File: string(file), Line: line}] = string(bytes.TrimSpace(text))
		}
		return
	}
	rest, ok := bytes.CutPrefix(t, []byte(reachedPrefix))
	if !ok {
		return
	}
	name, path, ok := bytes.Cut(rest, []byte(" as "))
	if !ok || len(name) == 0 || len(path) == 0 {
		return
	}
	if b.m.Reached == nil {
		b.m.Reached = map[string]string{}
	}
	b.m.Reached[string(name)] = string(bytes.TrimSpace(path))
}

// A preLine is one line of the text trace, split and checked on its own:
// the part of the parse that needs no state of the trace, which the
// reader goroutine does (readlines.go) while the builder applies the
// lines before it.
type preLine struct {
	n       int    // line number
	blank   bool   // nothing but spaces
	comment []byte // a comment line's text (non-nil: a comment)
	msg     string // what is wrong with the line, found without the trace's state
	ev      rawEvent
}

// parse splits and checks line n of the trace.
func (p *preLine) parse(n int, text []byte) {
	*p = preLine{n: n}
	t := bytes.TrimSpace(text) // also drops the line end
	switch {
	case len(t) == 0:
		p.blank = true
	case t[0] == '#':
		p.comment = t
	default:
		if i := bytes.IndexByte(t, 0); i >= 0 {
			// A name with a NUL byte would be a variable no source has:
			// the input is binary or corrupt.
			p.msg = fmt.Sprintf("NUL byte at column %d: not a text trace (binary or corrupt input)", i+1)
			return
		}
		var buf [8][]byte
		p.msg = p.ev.parse(fields(buf[:0], t))
	}
}

// take applies a line. It returns an error only when parsing must stop.
func (b *builder) take(p *preLine) error {
	b.lastLine = p.n
	if p.blank {
		return nil
	}
	if p.comment != nil {
		b.comment(p.comment)
		return nil
	}
	msg := p.msg
	if msg == "" {
		msg = b.apply(p.n, &p.ev)
	}
	if msg != "" {
		if !b.opts.Lenient {
			return &ParseError{File: b.m.Name, Line: p.n, Msg: msg}
		}
		b.m.Skipped++
		if len(b.m.Problems) < maxProblems {
			b.m.Problems = append(b.m.Problems, fmt.Sprintf("%s:%d: %s", b.m.Name, p.n, msg))
		}
	}
	return nil
}

// fields splits a line at commas, trimming spaces, into dst.
func fields(dst [][]byte, t []byte) [][]byte {
	dst = dst[:0]
	for {
		i := bytes.IndexByte(t, ',')
		if i < 0 {
			return append(dst, bytes.TrimSpace(t))
		}
		dst = append(dst, bytes.TrimSpace(t[:i]))
		t = t[i+1:]
	}
}

var fieldNames = [...]string{"thread", "timestamp", "location", "action", "object"}

// parseLoc splits "file-line", "file:line" or "?".
func parseLoc(f []byte) (file []byte, line int, msg string) {
	if len(f) == 1 && f[0] == '?' {
		return nil, 0, ""
	}
	i := bytes.LastIndexByte(f, ':')
	if j := bytes.LastIndexByte(f, '-'); i < 0 || (j > i && isDigits(f[j+1:])) {
		i = j
	}
	if i <= 0 || i == len(f)-1 {
		return nil, 0, fmt.Sprintf("bad location %q: want file-line, file:line or ?", f)
	}
	num := f[i+1:]
	if !isDigits(num) || len(num) > 9 {
		return nil, 0, fmt.Sprintf("bad line number %q in location %q", num, f)
	}
	for _, c := range num {
		line = line*10 + int(c-'0')
	}
	return f[:i], line, ""
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// A rawEvent is an event line's fields with what they say on their own.
type rawEvent struct {
	f           [6][]byte
	nf          int
	kind        Kind
	flag        actionFlag
	blockedKind Kind
	file        []byte // source file; nil: unknown location
	line        int
}

// eventFields applies an event already split into its fields (records of
// other trace formats come here, see records.go).
func (b *builder) eventFields(n int, f [][]byte) string {
	var r rawEvent
	if msg := r.parse(f); msg != "" {
		return msg
	}
	return b.apply(n, &r)
}

// parse checks an event's fields on their own, and keeps them in r.
func (r *rawEvent) parse(f [][]byte) string {
	if len(f) < 5 {
		return fmt.Sprintf("missing field %s: want <thread>, <timestamp>, <file>-<line>, <action>, <object>[, <object2>]", fieldNames[len(f)])
	}
	for i := 0; i < 5; i++ {
		if len(f[i]) == 0 {
			return fmt.Sprintf("empty %s field", fieldNames[i])
		}
	}
	kind, flag, ok := parseKindBytes(f[3])
	if !ok {
		return fmt.Sprintf("unknown action %q (want one of Read, DataRead, CopyRead, Write, Lock, TryLock, Unlock, RdLock, WrLock, RwUnlock, Signal, Broadcast, Wait, BarrierWait, Create, Join, SemPost, SemWait, Alloc, Free, Enter, Exit, Begin, End, Blocked)", f[3])
	}
	twoObjects := kind == Wait || kind == Blocked
	if len(f) > 6 || (len(f) == 6 && !twoObjects) {
		return fmt.Sprintf("too many fields for %s: want %d", kind, 5+boolInt(twoObjects))
	}
	if len(f) == 6 && len(f[5]) == 0 {
		return fmt.Sprintf("empty second object field of %s", kind)
	}
	blockedKind := Lock
	if kind == Blocked && len(f) == 6 {
		k, _, ok := parseKindBytes(f[5])
		if !ok || (k != Lock && k != RdLock && k != WrLock) {
			return fmt.Sprintf("Blocked: the blocked acquisition %q is not Lock, RdLock or WrLock", f[5])
		}
		blockedKind = k
	}
	file, lineNo, msg := parseLoc(f[2])
	if msg != "" {
		return msg
	}
	r.nf = copy(r.f[:], f)
	r.kind, r.flag, r.blockedKind, r.file, r.line = kind, flag, blockedKind, file, lineNo
	return ""
}

// apply adds the event r of line n to the model, or returns a problem
// message; nothing is changed when it returns one.
func (b *builder) apply(n int, r *rawEvent) string {
	b.eventLines++
	f, kind, flag, blockedKind, file, lineNo := r.f[:r.nf], r.kind, r.flag, r.blockedKind, r.file, r.line

	// Validate against the current state before changing anything. A
	// synchronization oddity is an error only with StrictSync; otherwise
	// its warning waits in b.pending until the event is applied or dropped.
	b.pending = b.pending[:0]
	b.curFile, b.curLine = file, lineNo
	tid, known := b.threadIndex[string(f[0])]
	var ts *tstate
	if known {
		ts = b.threads[tid-1]
		if ts.joinedAt != 0 {
			msg := fmt.Sprintf("event of thread %s after it was joined at line %d", f[0], ts.joinedAt)
			if b.opts.StrictSync {
				return msg
			}
			b.pend(oddAfterJoin, n, b.where(), fmt.Sprintf("event of thread %s at %s after it was joined at line %d: kept (that Join orders only the events before it)", f[0], b.where(), ts.joinedAt))
		}
		if ts.blockedAt != 0 {
			return fmt.Sprintf("event of thread %s after it blocked for good at line %d (Blocked is a thread's last event)", f[0], ts.blockedAt)
		}
	}
	objName := f[4]
	endSuspended := false // the hold that another thread took over is not resumed by a Wait
	if known && ts.waitFor != 0 {
		mutex := b.m.Objects[ts.waitFor]
		if kind != Wait || len(f) < 6 || string(f[5]) != mutex {
			if b.opts.StrictSync {
				sh := b.locks[ts.waitFor].suspended[tid]
				return fmt.Sprintf("thread %s held %s when thread %s took it at line %d, and its next event is not a Wait with that mutex",
					f[0], mutex, b.m.Threads[sh.taker-1].Handle, sh.takenAt)
			}
			endSuspended = true
		}
	}
	dropJoin := false
	switch kind {
	case Join, Create:
		if bytes.Equal(objName, f[0]) {
			return fmt.Sprintf("thread %s cannot %s itself", f[0], kind)
		}
		if kind == Join {
			id, ok := b.threadIndex[string(objName)]
			switch {
			case !ok && b.opts.StrictSync:
				return fmt.Sprintf("Join of unknown thread %s (it never appeared and was never created)", objName)
			case !ok:
				b.pend(oddJoin, n, b.where(), fmt.Sprintf("Join of unknown thread %s at %s (it never appeared and was never created): dropped (no order)", objName, b.where()))
				dropJoin = true
			case b.threads[id-1].joinedAt != 0:
				return fmt.Sprintf("Join of thread %s, already joined at line %d", objName, b.threads[id-1].joinedAt)
			}
		}
	case Lock, TryLock, Unlock, RdLock, WrLock, RwUnlock, Wait:
		if msg := b.lockMismatch(kind, f); msg != "" {
			return msg
		}
	}
	if endSuspended {
		// Every error is behind us: from here on the event is applied or
		// dropped.
		b.endSuspended(tid, n)
	}
	var plan lockPlan
	switch kind {
	case Lock, TryLock, Unlock, RdLock, WrLock, RwUnlock, Wait:
		var msg string
		if msg, plan = b.planLock(kind, tid, f, n); msg != "" {
			return msg // StrictSync
		}
	}
	b.flushPending()
	if dropJoin || plan.drop {
		return ""
	}
	loc := b.loc(file, lineNo)
	b.curLoc = loc

	// Apply.
	if !known {
		tid = b.thread(f[0])
		ts = b.threads[tid-1]
	}
	ts.seen = true
	ts.n++
	pos := ts.n

	ev := Event{Line: int32(n), Thread: tid, Kind: kind, Loc: loc, Pos: pos, Data: flag == flagData || flag == flagCopy, Copy: flag == flagCopy, RMW: flag == flagRMW}
	if len(ts.funcs) > 0 {
		ev.Func = ts.funcs[len(ts.funcs)-1]
	}
	switch kind {
	case Create, Join:
		other := b.thread(objName)
		ev.Obj = other
		ot := b.threads[other-1]
		if kind == Create {
			if ot.seen {
				b.warn(fmt.Sprintf("%s:%d: Create of thread %s after its first event: no order from the Create", b.m.Name, n, objName))
			}
		} else {
			ot.joinedAt = n
		}
	default:
		obj := b.obj(objName)
		ev.Obj = obj
		if kind.IsSync() {
			b.markSync(obj)
		}
		switch kind {
		case Read, Write:
			v := b.varOf[obj]
			if v == 0 {
				name := string(objName)
				if g := b.genOf[obj]; g > 1 {
					name = fmt.Sprintf("%s#%d", objName, g)
				}
				v = int32(len(b.m.Vars))
				b.m.Vars = append(b.m.Vars, Var{Name: name, Obj: obj})
				b.varOf[obj] = v
			}
			ev.Obj = v
		case Free:
			if b.varOf[obj] != 0 || b.genOf[obj] > 1 {
				b.genOf[obj]++
			} else {
				b.genOf[obj] = 2
			}
			b.varOf[obj] = 0
		case Enter:
			ts.funcs = append(ts.funcs, obj)
			ts.entered = true
			ev.Func = obj
		case Exit:
			if k := len(ts.funcs); k > 0 {
				ts.funcs = ts.funcs[:k-1]
			}
		case Wait:
			if len(f) == 6 {
				ev.Obj2 = b.obj(f[5])
				b.markSync(ev.Obj2)
			}
		case Blocked:
			ev.Obj2 = int32(blockedKind)
			ts.blockedAt = n
		}
		if kind.IsSync() && kind != Signal && kind != Broadcast && kind != SemPost &&
			kind != SemWait && kind != BarrierWait && kind != Blocked {
			b.applyLock(kind, tid, pos, n, ev.Obj, ev.Obj2, plan)
		}
	}
	switch {
	case kind.Blocking():
		b.m.blocking[tid-1] = append(b.m.blocking[tid-1], pos)
	case kind == Create || kind == Signal || kind == Broadcast || kind == SemPost:
		b.m.handoffs[tid-1] = append(b.m.handoffs[tid-1], pos)
	}
	b.m.Events = append(b.m.Events, ev)
	return ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// syncOdd is a kind of synchronization oddity: an event that the lock and
// thread state of the trace does not allow, as real programs (and traces
// with lost events) have them. With Options.StrictSync each is bad input;
// otherwise the model absorbs it as README "Trace format" says, with a
// warning per kind and source location.
type syncOdd uint8

const (
	oddUnlock    syncOdd = iota + 1 // Unlock or RwUnlock of a lock the thread does not hold: dropped
	oddJoin                         // Join of an unknown thread: dropped
	oddWait                         // Wait whose mutex the thread does not hold: acquires it only
	oddHeld                         // acquisition of a lock another thread holds: that hold ends unseen
	oddAfterJoin                    // event of a thread after its Join: kept
)

type oddKey struct {
	kind  syncOdd
	where string // source location (file:line or ?) of the event
}

// oddity is the warning of one kind of oddity at one source location: the
// first occurrence's trace line and message, and how many more there were.
type oddity struct {
	line int
	msg  string
	more int
	seq  int // order of first occurrence
}

type pendingOdd struct {
	key  oddKey
	line int
	msg  string
}

// pend records an oddity of the event being parsed, at trace line line
// and source location where.
func (b *builder) pend(kind syncOdd, line int, where, msg string) {
	b.pending = append(b.pending, pendingOdd{key: oddKey{kind: kind, where: where}, line: line, msg: msg})
}

// flushPending keeps the pending oddities: their event is applied or
// dropped.
func (b *builder) flushPending() {
	for _, p := range b.pending {
		if o, ok := b.odds[p.key]; ok {
			o.more++
			continue
		}
		if b.odds == nil {
			b.odds = map[oddKey]*oddity{}
		}
		b.odds[p.key] = &oddity{line: p.line, msg: p.msg, seq: len(b.odds)}
	}
	b.pending = b.pending[:0]
}

// where is the source location of the event being checked, as messages
// show it.
func (b *builder) where() string {
	return Loc{File: string(b.curFile), Line: b.curLine}.String()
}

// maxOddities bounds the oddity warnings listed; one more line counts the
// rest.
const maxOddities = 20

// oddityWarnings are the warnings of the oddities, by trace line.
func (b *builder) oddityWarnings() []string {
	if len(b.odds) == 0 {
		return nil
	}
	all := make([]*oddity, 0, len(b.odds))
	for _, o := range b.odds {
		all = append(all, o)
	}
	slices.SortFunc(all, func(x, y *oddity) int {
		if x.line != y.line {
			return x.line - y.line
		}
		return x.seq - y.seq
	})
	var out []string
	rest, restEvents := 0, 0
	for i, o := range all {
		if i >= maxOddities {
			rest++
			restEvents += 1 + o.more
			continue
		}
		w := fmt.Sprintf("%s:%d: %s", b.m.Name, o.line, o.msg)
		if o.more > 0 {
			w += fmt.Sprintf(" (%d more like it)", o.more)
		}
		out = append(out, w)
	}
	if rest > 0 {
		out = append(out, fmt.Sprintf("%s: %d more synchronization oddities (%d events) at other source locations, absorbed as README \"Trace format\" says (--strict-sync refuses the trace instead)", b.m.Name, rest, restEvents))
	}
	return out
}

func (b *builder) warn(s string) {
	if len(b.m.Warnings) < maxProblems {
		b.m.Warnings = append(b.m.Warnings, s)
	}
}

func (b *builder) markSync(obj int32) {
	for int(obj) >= len(b.m.syncObj) {
		b.m.syncObj = append(b.m.syncObj, false)
	}
	b.m.syncObj[obj] = true
}

// lockKindOf classifies a lock action as mutex (Lock) or rwlock (RdLock).
func lockKindOf(k Kind) StepKind {
	switch k {
	case RdLock, WrLock, RwUnlock:
		return StepRdLock
	}
	return StepLock
}

// lockMismatch is the error of a lock action on a lock that is used as the
// other kind (mutex or rwlock) elsewhere: always bad input.
func (b *builder) lockMismatch(kind Kind, f [][]byte) string {
	name := f[4]
	if kind == Wait {
		if len(f) < 6 {
			return ""
		}
		name = f[5]
	}
	id, ok := b.objIndex[string(name)]
	if !ok {
		return ""
	}
	if want, used := b.lockKind[id]; used && want != lockKindOf(kind) {
		what := "a mutex"
		if want == StepRdLock {
			what = "a rwlock"
		}
		return fmt.Sprintf("%s on %s, which is used as %s elsewhere", kind, name, what)
	}
	return ""
}

// lockPlan is how applyLock absorbs a lock action that the lock state does
// not allow (README "Trace format"); the zero plan is the ordinary action.
type lockPlan struct {
	drop        bool // an Unlock of a lock the thread does not hold: the event is dropped
	noop        bool // a release of a hold that ended unseen: kept, releases nothing
	endHolder   bool // the exclusive holder's hold ends unseen first
	endReaders  bool // the read holds end unseen first (a WrLock)
	acquireOnly bool // a Wait whose mutex the thread does not hold: no implicit Unlock
}

// planLock checks a lock action against the current lock state. An action
// the state does not allow is a synchronization oddity: with StrictSync its
// message is returned (bad input); otherwise the plan says how the model
// absorbs it, and its warning is pending.
func (b *builder) planLock(kind Kind, tid int32, f [][]byte, line int) (string, lockPlan) {
	var p lockPlan
	name := f[4]
	if kind == Wait {
		if len(f) < 6 {
			return "", p
		}
		name = f[5]
	}
	var ls *lockState
	if id, ok := b.objIndex[string(name)]; ok {
		ls = b.locks[id]
	}
	strict := b.opts.StrictSync
	holds := func() bool {
		if ls == nil || tid == 0 {
			return false
		}
		if ls.holder == tid {
			return true
		}
		_, r := ls.readers[tid]
		return r
	}
	// held is the oddity of an acquisition (what: "Lock of m", ...) of a
	// lock that thread h holds: h's hold ends unseen before it.
	held := func(what string, h int32, since int, how string) {
		hh := b.m.Threads[h-1].Handle
		b.pend(oddHeld, line, b.where(), fmt.Sprintf("%s at %s while thread %s holds it%s (since line %d): %s", what, b.where(), hh, how, since, endedText(hh)))
	}
	switch kind {
	case Unlock, RwUnlock:
		switch {
		case holds():
		case ls != nil && tid != 0 && ls.ended[tid] > 0:
			p.noop = true // the warning of the acquisition that ended the hold says so
		case strict:
			return fmt.Sprintf("%s of %s, which thread %s does not hold", kind, name, f[0]), p
		default:
			b.pend(oddUnlock, line, b.where(), fmt.Sprintf("%s of %s at %s, which thread %s does not hold: dropped", kind, name, b.where(), f[0]))
			p.drop = true
		}
	case Wait:
		_, susp := ls.suspendedHold(tid)
		if ls == nil || tid == 0 || (ls.holder != tid && !susp) {
			if strict {
				return fmt.Sprintf("Wait on %s with mutex %s, which thread %s does not hold", f[4], name, f[0]), p
			}
			// pthread_cond_wait returns holding the mutex whatever it
			// was called with: the thread's later Unlock is its release.
			b.pend(oddWait, line, b.where(), fmt.Sprintf("Wait on %s with mutex %s at %s, which thread %s does not hold: no implicit Unlock; the thread holds %s after the Wait", f[4], name, b.where(), f[0], name))
			p.acquireOnly = true
		}
		if ls != nil && ls.holder != 0 && ls.holder != tid && !b.canTakeOver(ls) {
			if strict {
				return fmt.Sprintf("Wait on %s returns holding %s while thread %s holds it (since line %d)", f[4], name, b.m.Threads[ls.holder-1].Handle, ls.since), p
			}
			held(fmt.Sprintf("Wait on %s returning with %s", f[4], name), ls.holder, ls.since, "")
			p.endHolder = true
		}
	case Lock, TryLock, WrLock:
		// Another holder is allowed if it is blocked in a cond Wait that
		// the trace records when it returns.
		if ls != nil && ls.holder != 0 && ls.holder != tid && (kind == WrLock || !b.canTakeOver(ls)) {
			if strict {
				return fmt.Sprintf("%s of %s while thread %s holds it (since line %d)", kind, name, b.m.Threads[ls.holder-1].Handle, ls.since), p
			}
			held(fmt.Sprintf("%s of %s", kind, name), ls.holder, ls.since, "")
			p.endHolder = true
		}
		if kind == WrLock && ls != nil && len(ls.readers) > 0 {
			readers := make([]int32, 0, len(ls.readers))
			for r := range ls.readers {
				readers = append(readers, r)
			}
			slices.Sort(readers)
			for _, r := range readers {
				switch {
				case strict && r != tid:
					return fmt.Sprintf("WrLock of %s while thread %s holds it for reading", name, b.m.Threads[r-1].Handle), p
				case strict:
					return fmt.Sprintf("WrLock of %s by thread %s, which already holds it for reading", name, f[0]), p
				}
				held(fmt.Sprintf("WrLock of %s", name), r, ls.readers[r].since, " for reading")
			}
			p.endReaders = true
		}
	case RdLock:
		if ls != nil && ls.holder != 0 && ls.holder != tid {
			if strict {
				return fmt.Sprintf("RdLock of %s while thread %s holds it for writing (since line %d)", name, b.m.Threads[ls.holder-1].Handle, ls.since), p
			}
			held(fmt.Sprintf("RdLock of %s", name), ls.holder, ls.since, " for writing")
			p.endHolder = true
		}
	}
	return "", p
}

// endedText says what becomes of a hold that an acquisition ended unseen.
func endedText(holder string) string {
	return fmt.Sprintf("thread %s's hold ended unseen before it (no critical section in the model; its later release is kept and releases nothing)", holder)
}

// endHold ends thread h's hold of lock (recursion depth depth) as if it had
// been released unseen. The acquisition that opened the hold leaves the
// model's lock operations: without a release, the hold would exclude every
// later acquisition. h's later releases of the hold are kept as events that
// release nothing, so that the analyses that replay the events see the
// thread's Lock and Unlock in pairs as the trace has them.
func (b *builder) endHold(lock int32, ls *lockState, h, depth int32) {
	key := lockThread{lock: lock, thread: h}
	// The hold is the thread's latest on the lock: its acquisition is the
	// last operation.
	if ops := b.m.lockOps[key]; len(ops) > 0 && ops[len(ops)-1].Kind.IsAcquire() {
		if ops = ops[:len(ops)-1]; len(ops) == 0 {
			delete(b.m.lockOps, key)
		} else {
			b.m.lockOps[key] = ops
		}
	}
	if ls.ended == nil {
		ls.ended = map[int32]int32{}
	}
	ls.ended[h] += depth
}

// endSuspended ends the suspended hold of thread tid, whose next event is
// not the Wait that a take-over of its mutex expected: the take-over was an
// acquisition of a lock another thread held (oddHeld), and that hold ends
// unseen before it.
func (b *builder) endSuspended(tid int32, line int) {
	ts := b.threads[tid-1]
	lock := ts.waitFor
	ls := b.locks[lock]
	sh := ls.suspended[tid]
	delete(ls.suspended, tid)
	ts.waitFor = 0
	b.endHold(lock, ls, tid, sh.depth)
	what := fmt.Sprintf("%s of %s", sh.takenKind, b.m.Objects[lock])
	if sh.takenKind == Wait {
		what = fmt.Sprintf("Wait on %s returning with %s", b.m.Objects[sh.takenCond], b.m.Objects[lock])
	}
	hh := b.m.Threads[tid-1].Handle
	where := b.m.Locs[sh.takenLoc].String()
	b.pend(oddHeld, sh.takenAt, where, fmt.Sprintf("%s at %s while thread %s holds it (since line %d), and thread %s's next event (line %d) is not a Wait with that mutex: %s",
		what, where, hh, sh.since, hh, line, endedText(hh)))
}

// applyLock updates lock state and records the operations the model keeps
// (outermost acquisitions and final releases); p is planLock's plan.
func (b *builder) applyLock(kind Kind, tid, pos int32, line int, obj, mutex int32, p lockPlan) {
	lock := obj
	if kind == Wait {
		if mutex == 0 {
			return
		}
		lock = mutex
	}
	b.lockKind[lock] = lockKindOf(kind)
	ls := b.locks[lock]
	if ls == nil {
		ls = &lockState{readers: map[int32]*readHold{}}
		b.locks[lock] = ls
	}
	if p.endHolder && ls.holder != 0 && ls.holder != tid {
		b.endHold(lock, ls, ls.holder, ls.depth)
		ls.holder, ls.depth = 0, 0
	}
	if p.endReaders {
		for r, h := range ls.readers {
			b.endHold(lock, ls, r, h.depth)
			delete(ls.readers, r)
		}
	}
	if p.noop {
		if ls.ended[tid]--; ls.ended[tid] == 0 {
			delete(ls.ended, tid)
		}
		return
	}
	key := lockThread{lock: lock, thread: tid}
	add := func(k StepKind, start int32, wait bool) {
		b.appendLockOp(key, lockOp{Pos: pos, Kind: k, Start: start, Wait: wait})
	}
	switch kind {
	case Lock, TryLock, WrLock:
		sk := StepLock
		if kind == WrLock {
			sk = StepWrLock
		}
		if ls.holder == tid {
			ls.depth++
			return
		}
		b.takeOver(ls, lock, tid, line, kind, 0) // the holder is blocked in a cond Wait (checked)
		ls.holder, ls.depth, ls.since, ls.start = tid, 1, line, pos
		add(sk, pos, false)
	case RdLock:
		if h, ok := ls.readers[tid]; ok {
			h.depth++
			return
		}
		if ls.holder == tid { // read lock under own write lock: nested
			ls.depth++
			return
		}
		ls.readers[tid] = &readHold{depth: 1, start: pos, since: line}
		add(StepRdLock, pos, false)
	case Unlock, RwUnlock:
		sk := StepUnlock
		if kind == RwUnlock {
			sk = StepRwUnlock
		}
		if ls.holder == tid {
			ls.depth--
			if ls.depth == 0 {
				add(sk, ls.start, false)
				ls.holder = 0
			}
			return
		}
		h := ls.readers[tid]
		h.depth--
		if h.depth == 0 {
			add(sk, h.start, false)
			delete(ls.readers, tid)
		}
	case Wait:
		if p.acquireOnly {
			// The thread did not hold the mutex: the Wait only
			// acquires it, as a Lock would (after the wait).
			b.takeOver(ls, lock, tid, line, kind, obj)
			ls.holder, ls.depth, ls.since, ls.start = tid, 1, line, pos
			add(StepLock, pos, true)
			return
		}
		// pthread_cond_wait releases the mutex completely and reacquires it.
		start := ls.start
		if s, ok := ls.suspendedHold(tid); ok {
			start = s
			delete(ls.suspended, tid)
			b.threads[tid-1].waitFor = 0
			b.takeOver(ls, lock, tid, line, kind, obj)
			ls.holder, ls.depth = tid, 1
		}
		add(StepUnlock, start, true)
		ls.start = pos
		ls.since = line
		add(StepLock, pos, true)
	}
}

// indexes builds what every model of the events read has, finished or
// stopped (finishPrefix): each thread's events, each variable's accesses,
// and which objects are synchronization objects and rwlocks.
func (b *builder) indexes() error {
	m := b.m
	if err := m.buildIndexes(b.opts.bucketAccesses); err != nil {
		return err
	}
	for len(m.syncObj) < len(m.Objects) {
		m.syncObj = append(m.syncObj, false)
	}
	m.rwObj = make([]bool, len(m.Objects))
	for obj, k := range b.lockKind {
		m.rwObj[obj] = k == StepRdLock
	}
	return b.lockErr
}

// finish builds the derived indexes.
func (b *builder) finish() (*Model, error) {
	m := b.m
	if err := b.indexes(); err != nil {
		return nil, err
	}
	m.threadLocks = make([][]int32, len(m.Threads))
	for k := range m.lockOps {
		m.threadLocks[k.thread-1] = append(m.threadLocks[k.thread-1], k.lock)
	}
	m.threadLockOps = make([][][]lockOp, len(m.Threads))
	for t, ls := range m.threadLocks {
		sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
		m.threadLockOps[t] = make([][]lockOp, len(ls))
		for k, l := range ls {
			m.threadLockOps[t][k] = m.lockOps[lockThread{lock: l, thread: int32(t + 1)}]
		}
	}
	if m.Sources != nil {
		m.locSource = make([]string, len(m.Locs))
		for i, l := range m.Locs {
			m.locSource[i] = m.Sources[l]
		}
	}
	m.attributeLibrary()
	m.share, m.shares = m.dealShares()
	m.findUpdates()
	m.findAtomicLocks()
	m.sync = m.order()
	m.flowCk = &flowCheckpoints{}
	var err error
	entered := make([]bool, len(m.Threads))
	for t, ts := range b.threads {
		entered[t] = ts.entered
	}
	if m.scope, err = m.buildScopes(entered); err != nil {
		return nil, err
	}
	m.waitSites = m.buildWaitSites()
	if s := m.spill; s != nil {
		// Nothing writes the events, the lock operations or the arena
		// after this.
		s.events.written()
		s.locks.Load().written()
		s.arena.Load().written()
	}
	m.Warnings = append(m.Warnings, b.oddityWarnings()...)
	m.Warnings = append(m.Warnings, m.livenessWarnings()...)
	return m, nil
}
