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
	"sort"

	"github.com/klauspost/compress/zstd"
)

// Options control parsing.
type Options struct {
	// Lenient skips malformed lines and inconsistent events (counting them
	// in Model.Skipped) instead of failing.
	Lenient bool
	// MaxLineBytes bounds one line of the trace (0: DefaultMaxLineBytes),
	// so that a file without newlines (or a decompression bomb of zeros)
	// is an error, not an unbounded buffer.
	MaxLineBytes int
	// MaxBytes bounds the trace's size after decompression (0: no bound).
	MaxBytes int64
	// MaxEvents bounds the events kept (0: DefaultMaxEvents; negative: no
	// bound): the model costs about 50 bytes per event and 150 at peak,
	// so a decompression bomb of valid lines is an error, not all of the
	// machine's memory.
	MaxEvents int
}

// DefaultMaxEvents is the default of Options.MaxEvents: about 5 GB of model
// and 15 GB at peak.
const DefaultMaxEvents = 100_000_000

// maxEvents is the bound of Options.MaxEvents, 0 for none.
func (o Options) maxEvents() int {
	switch {
	case o.MaxEvents == 0:
		return DefaultMaxEvents
	case o.MaxEvents < 0:
		return 0
	}
	return o.MaxEvents
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

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

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
	var long []byte
	lineNo := 0
	var total int64
	maxEvents := opts.maxEvents()
	for {
		line, err := lr.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				if len(long) > maxLine {
					return nil, overLimit(name, lineNo+1, "line", int64(maxLine), "--max-line-bytes")
				}
				line, err = lr.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > maxLine {
			return nil, overLimit(name, lineNo+1, "line", int64(maxLine), "--max-line-bytes")
		}
		if total += int64(len(line)); opts.MaxBytes > 0 && total > opts.MaxBytes {
			return nil, overLimit(name, lineNo+1, "trace (decompressed)", opts.MaxBytes, "--max-trace-bytes")
		}
		if len(line) > 0 {
			lineNo++
			if lineNo&0xffff == 0 {
				if cerr := ctx.Err(); cerr != nil {
					return nil, cerr
				}
			}
			if perr := b.line(lineNo, line); perr != nil {
				return nil, perr
			}
			if err := overEvents(name, lineNo, len(b.m.Events), maxEvents); err != nil {
				return nil, err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ParseError{File: name, Line: lineNo + 1, Msg: "reading trace: " + readErrText(err)}
		}
	}
	return b.finish(), nil
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
		return zr, func() { zr.Close() }, nil
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, &ParseError{File: name, Line: 1, Msg: "reading zstd: " + err.Error()}
		}
		return zr, zr.Close, nil
	}
	return br, func() {}, nil
}

// builder holds the state of one parse.
type builder struct {
	m    *Model
	opts Options

	objIndex    map[string]int32
	fileIndex   map[string]int32   // file name -> small id, for locIndex
	locIndex    map[[2]int32]int32 // (file id, line) -> location id
	threadIndex map[string]int32
	varOf       []int32 // by object: current variable id, 0 if none
	genOf       []int32 // by object: generation of the next variable
	threads     []*tstate
	locks       map[int32]*lockState
	lockKind    map[int32]StepKind // object -> Lock or RdLock (mutex vs rwlock)
}

type tstate struct {
	n        int32   // events so far
	joinedAt int     // trace line of the Join of this thread, 0 if not joined
	funcs    []int32 // Enter/Exit stack
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
	// suspended maps each thread whose hold was taken over to the position
	// where its hold began.
	suspended map[int32]int32
	takenAt   int   // trace line of the latest take-over
	taker     int32 // thread of that take-over
}

// takeOver suspends the current holder, which must be blocked in a cond Wait
// that the trace records later, so that thread tid can acquire the mutex.
func (b *builder) takeOver(ls *lockState, lock, tid int32, line int) {
	if ls.holder == 0 || ls.holder == tid {
		return
	}
	if ls.suspended == nil {
		ls.suspended = map[int32]int32{}
	}
	ls.suspended[ls.holder] = ls.start
	ls.takenAt, ls.taker = line, tid
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
	return s, ok
}

type readHold struct {
	depth int32
	start int32
}

func newBuilder(name string, opts Options) *builder {
	return &builder{
		m: &Model{
			Name:    name,
			Objects: []string{""},
			Locs:    []Loc{{}},
			Vars:    []Var{{}},
			lockOps: map[lockThread][]lockOp{},
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

// line handles one line of text. It returns an error only when parsing
// must stop.
func (b *builder) line(n int, text []byte) error {
	t := bytes.TrimSpace(text) // also drops the line end
	if len(t) == 0 || t[0] == '#' {
		return nil
	}
	msg := ""
	if i := bytes.IndexByte(t, 0); i >= 0 {
		// A name with a NUL byte would be a variable no source has: the
		// input is binary or corrupt.
		msg = fmt.Sprintf("NUL byte at column %d: not a text trace (binary or corrupt input)", i+1)
	} else {
		msg = b.event(n, t)
	}
	if msg != "" {
		if !b.opts.Lenient {
			return &ParseError{File: b.m.Name, Line: n, Msg: msg}
		}
		b.m.Skipped++
		if len(b.m.Problems) < maxProblems {
			b.m.Problems = append(b.m.Problems, fmt.Sprintf("%s:%d: %s", b.m.Name, n, msg))
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

// event validates and applies one event line; it returns a problem message
// or "". Nothing is changed when a problem is returned.
func (b *builder) event(n int, t []byte) string {
	var buf [8][]byte
	return b.eventFields(n, fields(buf[:0], t))
}

// eventFields is event on a line already split into its fields (records
// of other trace formats come here too, see records.go).
func (b *builder) eventFields(n int, f [][]byte) string {
	if len(f) < 5 {
		return fmt.Sprintf("missing field %s: want <thread>, <timestamp>, <file>-<line>, <action>, <object>[, <object2>]", fieldNames[len(f)])
	}
	for i := 0; i < 5; i++ {
		if len(f[i]) == 0 {
			return fmt.Sprintf("empty %s field", fieldNames[i])
		}
	}
	kind, data, ok := parseKindBytes(f[3])
	if !ok {
		return fmt.Sprintf("unknown action %q (want one of Read, DataRead, Write, Lock, TryLock, Unlock, RdLock, WrLock, RwUnlock, Signal, Broadcast, Wait, BarrierWait, Create, Join, SemPost, SemWait, Alloc, Free, Enter, Exit, Begin, End, Blocked)", f[3])
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

	// Validate against the current state before changing anything.
	tid, known := b.threadIndex[string(f[0])]
	var ts *tstate
	if known {
		ts = b.threads[tid-1]
		if ts.joinedAt != 0 {
			return fmt.Sprintf("event of thread %s after it was joined at line %d", f[0], ts.joinedAt)
		}
		if ts.blockedAt != 0 {
			return fmt.Sprintf("event of thread %s after it blocked for good at line %d (Blocked is a thread's last event)", f[0], ts.blockedAt)
		}
	}
	objName := f[4]
	if known && ts.waitFor != 0 {
		mutex := b.m.Objects[ts.waitFor]
		if kind != Wait || len(f) < 6 || string(f[5]) != mutex {
			ls := b.locks[ts.waitFor]
			return fmt.Sprintf("thread %s held %s when thread %s took it at line %d, and its next event is not a Wait with that mutex",
				f[0], mutex, b.m.Threads[ls.taker-1].Handle, ls.takenAt)
		}
	}
	switch kind {
	case Join, Create:
		if bytes.Equal(objName, f[0]) {
			return fmt.Sprintf("thread %s cannot %s itself", f[0], kind)
		}
		if kind == Join {
			id, ok := b.threadIndex[string(objName)]
			if !ok {
				return fmt.Sprintf("Join of unknown thread %s (it never appeared and was never created)", objName)
			}
			if b.threads[id-1].joinedAt != 0 {
				return fmt.Sprintf("Join of thread %s, already joined at line %d", objName, b.threads[id-1].joinedAt)
			}
		}
	case Lock, TryLock, Unlock, RdLock, WrLock, RwUnlock, Wait:
		if msg := b.checkLock(kind, tid, f); msg != "" {
			return msg
		}
	}

	// Apply.
	if !known {
		tid = b.thread(f[0])
		ts = b.threads[tid-1]
	}
	ts.seen = true
	ts.n++
	pos := ts.n

	ev := Event{Line: int32(n), Thread: tid, Kind: kind, Loc: b.loc(file, lineNo), Pos: pos, Data: data}
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
			b.m.Vars[v].Accesses = append(b.m.Vars[v].Accesses, int32(len(b.m.Events)))
		case Free:
			if b.varOf[obj] != 0 || b.genOf[obj] > 1 {
				b.genOf[obj]++
			} else {
				b.genOf[obj] = 2
			}
			b.varOf[obj] = 0
		case Enter:
			ts.funcs = append(ts.funcs, obj)
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
			b.applyLock(kind, tid, pos, n, ev.Obj, ev.Obj2)
		}
	}
	switch {
	case kind.Blocking():
		b.m.blocking[tid-1] = append(b.m.blocking[tid-1], pos)
	case kind == Create || kind == Signal || kind == Broadcast || kind == SemPost:
		b.m.handoffs[tid-1] = append(b.m.handoffs[tid-1], pos)
	}
	th := &b.m.Threads[tid-1] // only now: b.thread above may grow m.Threads
	th.Events = append(th.Events, int32(len(b.m.Events)))
	b.m.Events = append(b.m.Events, ev)
	return ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
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

// checkLock validates a lock action against the current lock state.
func (b *builder) checkLock(kind Kind, tid int32, f [][]byte) string {
	name := f[4]
	if kind == Wait {
		if len(f) < 6 {
			return ""
		}
		name = f[5]
	}
	id, ok := b.objIndex[string(name)]
	var ls *lockState
	if ok {
		ls = b.locks[id]
		if want, used := b.lockKind[id]; used && want != lockKindOf(kind) {
			what := "a mutex"
			if want == StepRdLock {
				what = "a rwlock"
			}
			return fmt.Sprintf("%s on %s, which is used as %s elsewhere", kind, name, what)
		}
	}
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
	switch kind {
	case Unlock, RwUnlock:
		if !holds() {
			return fmt.Sprintf("%s of %s, which thread %s does not hold", kind, name, f[0])
		}
	case Wait:
		_, susp := ls.suspendedHold(tid)
		switch {
		case ls == nil || tid == 0 || (ls.holder != tid && !susp):
			return fmt.Sprintf("Wait on %s with mutex %s, which thread %s does not hold", f[4], name, f[0])
		case ls.holder != tid && ls.holder != 0 && !b.canTakeOver(ls):
			return fmt.Sprintf("Wait on %s returns holding %s while thread %s holds it (since line %d)", f[4], name, b.m.Threads[ls.holder-1].Handle, ls.since)
		}
	case Lock, TryLock, WrLock:
		// Another holder is allowed if it is blocked in a cond Wait that
		// the trace records when it returns.
		if ls != nil && ls.holder != 0 && ls.holder != tid && (kind == WrLock || !b.canTakeOver(ls)) {
			return fmt.Sprintf("%s of %s while thread %s holds it (since line %d)", kind, name, b.m.Threads[ls.holder-1].Handle, ls.since)
		}
		if kind == WrLock && ls != nil {
			for r := range ls.readers {
				if r != tid {
					return fmt.Sprintf("WrLock of %s while thread %s holds it for reading", name, b.m.Threads[r-1].Handle)
				}
			}
			if _, r := ls.readers[tid]; r && tid != 0 {
				return fmt.Sprintf("WrLock of %s by thread %s, which already holds it for reading", name, f[0])
			}
		}
	case RdLock:
		if ls != nil && ls.holder != 0 && ls.holder != tid {
			return fmt.Sprintf("RdLock of %s while thread %s holds it for writing (since line %d)", name, b.m.Threads[ls.holder-1].Handle, ls.since)
		}
	}
	return ""
}

// applyLock updates lock state and records the operations the model keeps
// (outermost acquisitions and final releases).
func (b *builder) applyLock(kind Kind, tid, pos int32, line int, obj, mutex int32) {
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
	key := lockThread{lock: lock, thread: tid}
	add := func(k StepKind, start int32, wait bool) {
		b.m.lockOps[key] = append(b.m.lockOps[key], lockOp{Pos: pos, Kind: k, Start: start, Wait: wait})
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
		b.takeOver(ls, lock, tid, line) // the holder is blocked in a cond Wait (checked)
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
		ls.readers[tid] = &readHold{depth: 1, start: pos}
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
		// pthread_cond_wait releases the mutex completely and reacquires it.
		start := ls.start
		if s, ok := ls.suspendedHold(tid); ok {
			start = s
			delete(ls.suspended, tid)
			b.threads[tid-1].waitFor = 0
			b.takeOver(ls, lock, tid, line)
			ls.holder, ls.depth = tid, 1
		}
		add(StepUnlock, start, true)
		ls.start = pos
		ls.since = line
		add(StepLock, pos, true)
	}
}

// finish builds the derived indexes.
func (b *builder) finish() *Model {
	m := b.m
	for len(m.syncObj) < len(m.Objects) {
		m.syncObj = append(m.syncObj, false)
	}
	m.rwObj = make([]bool, len(m.Objects))
	for obj, k := range b.lockKind {
		m.rwObj[obj] = k == StepRdLock
	}
	m.threadLocks = make([][]int32, len(m.Threads))
	for k := range m.lockOps {
		m.threadLocks[k.thread-1] = append(m.threadLocks[k.thread-1], k.lock)
	}
	for _, ls := range m.threadLocks {
		sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
	}
	m.findUpdates()
	m.findAtomicLocks()
	m.sync = m.order(-1)
	m.scope = make([]*scopeIndex, len(m.Threads))
	for i := range m.Threads {
		m.scope[i] = m.buildScope(i + 1)
	}
	m.waitSites = m.buildWaitSites()
	m.Warnings = append(m.Warnings, m.livenessWarnings()...)
	return m
}
