package recorder

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// maxExpand bounds the number of trace events one access expands to: a
// memcpy over an array touches one variable per element. It is large
// enough for a copy of 64 KiB of one-byte fields, and a larger copy is
// said in a warning (Stats.Warnings), never cut silently.
const maxExpand = 1 << 16

// ConvertOptions control Convert.
type ConvertOptions struct {
	// PID selects the process whose log is converted when the directory
	// holds several (a program that runs others); 0 means the only one.
	PID int
	// FullPaths writes source files as the DWARF names them instead of
	// their base names (DESIGN §2's examples use base names, as Pin did).
	FullPaths bool
	// NoFuncs leaves out the Enter and Exit events.
	NoFuncs bool
	// Comments are written first, each as a "# " line.
	Comments []string
	// Warn receives problems that do not stop the conversion (a module
	// without readable symbols). Nil discards them.
	Warn func(string)
	// Consume says that the raw log is removed after the conversion (a
	// temporary one): its last pass frees each part of the thread logs
	// once it has read it, so that the trace written meanwhile takes the
	// memory (page cache) and disk space they held rather than more. The
	// log is unusable afterwards, even if the conversion fails.
	Consume bool
}

// Stats summarise a converted trace.
type Stats struct {
	PID     int
	Exe     string
	Threads int // threads that recorded at least their header
	Events  int // trace lines written
	// Warnings say what makes the trace partial: threads that never ran,
	// threads still running when the program exited (see liveness.go).
	// They are also written into the trace as "# warning: " lines.
	Warnings []string
	// Unfinished are the threads (trace ids) that still ran when the
	// recording ended; NeverRan those that were created but never ran.
	Unfinished, NeverRan []uint64
	// Lost counts the threads whose log the runtime could not write, in
	// full or past some point (a program that switched user, a full
	// disk): their events are missing from the trace. Warnings[0] then
	// says which and why (lostWarning).
	Lost int
}

// Convert reads the raw log in dir (written by a program built with
// mcpredict cc and run with MCPREDICT_TRACE_DIR=dir) and writes it to w as
// a trace in the CSV format of DESIGN §2, in the recorded total order.
//
// It makes two or three passes over the log. The first replays the heap
// to name each block after the first pointer the program reached it
// through (or, failing that, after its allocation site), so that every
// access to the block, even those before that read, gets the same name;
// it also collects the stack frames threads described, which stack
// locations several threads access, the atomic locations and the threads'
// lives. The second, only when the program used atomics, finds the
// atomic locations that are also accessed plainly. The last writes the
// lines. Each pass reads the log in a goroutine of its own (scanBatches),
// and the last writes the trace through another (asyncWriter).
func Convert(dir string, w io.Writer, opts ConvertOptions) (Stats, error) {
	l, err := openRawLog(dir, opts.PID)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{PID: l.PID, Exe: l.Exe, Threads: len(l.Threads)}
	syms := newProcSyms(l.Modules, opts.FullPaths, opts.Warn)

	lr := newLearned()
	learner := newNamer(syms, l, lr)
	live := newLiveness(l)
	if err := l.scan(func(ev *rawEvent) error {
		learner.learn(ev)
		live.note(ev)
		return nil
	}); err != nil {
		return st, err
	}
	learner.finishFit()
	if len(lr.atomics) > 0 {
		mixer := newNamer(syms, l, lr)
		if err := l.scan(func(ev *rawEvent) error {
			mixer.learnMixed(ev)
			return nil
		}); err != nil {
			return st, err
		}
	}
	st.Warnings, st.Unfinished, st.NeverRan = live.warnings(syms)
	if len(l.Lost) > 0 {
		st.Lost = len(l.Lost)
		st.Warnings = append([]string{lostWarning(l.Lost)}, st.Warnings...)
	}

	n := newNamer(syms, l, lr)
	// The lines are formatted into large chunks that a goroutine of their
	// own writes, while the next ones are named.
	bw := newAsyncWriter(w)
	for _, c := range opts.Comments {
		for _, line := range strings.Split(c, "\n") {
			bw.WriteString("# " + line + "\n")
		}
	}
	// The objects whose code the trace's locations are in: mcpredict
	// reproduce maps the locations back to code addresses in them.
	bw.WriteString("# exe: " + l.Exe + "\n")
	if id := BuildID(l.Exe); id != "" {
		bw.WriteString("# build: " + id + "\n")
	}
	for _, m := range l.Modules {
		if m.Path != "" && m.Path != l.Exe && !strings.HasPrefix(filepath.Base(m.Path), "linux-vdso") {
			bw.WriteString("# module: " + m.Path + "\n")
		}
	}
	for _, wn := range st.Warnings {
		bw.WriteString("# warning: " + wn + "\n")
	}
	cw := &csvWriter{w: bw}
	tw := &traceWriter{c: cw, syms: syms, n: n, noFuncs: opts.NoFuncs || !l.Funcs, threads: make([]thrState, len(l.Threads)), blocked: live.blocked(),
		reached: map[string]string{}}
	l.drop = opts.Consume // the last pass
	err = l.scan(func(ev *rawEvent) error {
		tw.event(ev)
		return cw.err
	})
	st.Events = cw.lines
	if tw.truncated > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d accesses (memcpy, memset or memmove) covered more than %d variables, the first at %s: only their first %d variables are in the trace", tw.truncated, maxExpand, tw.truncLoc, maxExpand))
	}
	if err != nil {
		bw.abort()
		return st, err
	}
	writeReached(bw, tw.reached)
	syms.writeLibraries(bw)
	syms.writeSources(bw)
	fmt.Fprintf(bw, "# end: %d events, %d threads\n", cw.lines, st.Threads)
	return st, bw.Close()
}

// outChunk is how many bytes of the trace asyncWriter hands over at a time.
const outChunk = 1 << 20

// asyncWriter collects what is written to it and passes it on to w in
// chunks of outChunk bytes, written by a goroutine of its own: the
// conversion formats the next lines while the last ones go to the disk.
// Close writes the rest and waits.
type asyncWriter struct {
	w      io.Writer
	buf    []byte
	full   chan []byte
	free   chan []byte
	done   chan struct{}
	err    error       // the first error of w, set once, before failed
	failed atomic.Bool // err is set
}

func newAsyncWriter(w io.Writer) *asyncWriter {
	a := &asyncWriter{
		w:    w,
		buf:  make([]byte, 0, outChunk+64<<10),
		full: make(chan []byte, 2),
		free: make(chan []byte, 4),
		done: make(chan struct{}),
	}
	go func() {
		defer close(a.done)
		for b := range a.full {
			if a.err == nil {
				if _, err := a.w.Write(b); err != nil {
					a.err = err
					a.failed.Store(true)
				}
			}
			select {
			case a.free <- b[:0]:
			default:
			}
		}
	}()
	return a
}

// spill hands the buffer to the writing goroutine once it holds a chunk.
func (a *asyncWriter) spill() {
	if len(a.buf) < outChunk {
		return
	}
	a.full <- a.buf
	select {
	case a.buf = <-a.free:
	default:
		a.buf = make([]byte, 0, cap(a.buf))
	}
}

// failure is the error w returned, if it has returned one yet (err is
// set once, before failed).
func (a *asyncWriter) failure() error {
	if a.failed.Load() {
		return a.err
	}
	return nil
}

func (a *asyncWriter) Write(p []byte) (int, error) {
	a.buf = append(a.buf, p...)
	a.spill()
	return len(p), a.failure()
}

func (a *asyncWriter) WriteString(s string) (int, error) {
	a.buf = append(a.buf, s...)
	a.spill()
	return len(s), a.failure()
}

// Close writes what is left and returns the first error of w.
func (a *asyncWriter) Close() error {
	if len(a.buf) > 0 {
		a.full <- a.buf
		a.buf = nil
	}
	close(a.full)
	<-a.done
	return a.err
}

// abort stops the writing goroutine, dropping what it has not written.
func (a *asyncWriter) abort() {
	a.buf = nil
	close(a.full)
	<-a.done
}

// writeReached writes the details of variables named by type and site,
// "# reached: node.count(calloc@list.c:50#4) as head->next->next->next->count",
// sorted by name (tracemodel reads them into Model.Reached).
func writeReached(w io.Writer, reached map[string]string) {
	names := make([]string, 0, len(reached))
	for name, path := range reached {
		if path != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "# reached: %s as %s\n", name, reached[name])
	}
}

// lostWarning says which threads' logs the runtime could not write and
// why, grouped by cause, e.g. "3 threads' events could not be written:
// permission denied on /tmp/raw/p812.t2.bin (creating the log of thread 2;
// also threads 3, 4); the trace lacks them (recorder/README.md ...)".
func lostWarning(lost []lostLog) string {
	type cause struct {
		err  syscall.Errno
		step string
		grow bool
	}
	lost = slices.Clone(lost)
	slices.SortFunc(lost, func(a, b lostLog) int { return cmp.Compare(a.Token, b.Token) })
	var order []cause
	byCause := map[cause][]lostLog{}
	for _, lg := range lost {
		c := cause{lg.Err, lg.Step, lg.Offset > 0}
		if _, ok := byCause[c]; !ok {
			order = append(order, c)
		}
		byCause[c] = append(byCause[c], lg)
	}
	thread := func(lg lostLog) string {
		if lg.Offset <= headerSize {
			return strconv.FormatUint(lg.Token, 10)
		}
		return fmt.Sprintf("%d after its first %d events", lg.Token, (lg.Offset-headerSize)/recSize)
	}
	var parts []string
	for _, c := range order {
		lgs := byCause[c]
		what := map[string]string{"open": "creating", "grow": "growing", "map": "mapping"}[c.step]
		if what == "" {
			what = c.step
		}
		if c.grow && c.step == "open" {
			what = "reopening"
		}
		p := fmt.Sprintf("%v on %s (%s the log of thread %s", c.err, lgs[0].Path, what, thread(lgs[0]))
		if len(lgs) > 1 {
			var also []string
			for _, lg := range lgs[1:] {
				also = append(also, thread(lg))
			}
			if len(also) == 1 {
				p += "; also thread " + also[0]
			} else {
				p += "; also threads " + strings.Join(also, ", ")
			}
		}
		parts = append(parts, p+")")
	}
	n := fmt.Sprintf("%d threads'", len(lost))
	if len(lost) == 1 {
		n = "1 thread's"
	}
	return fmt.Sprintf("%s events could not be written: %s; the trace lacks them (docs/recorder.md, \"Programs that switch user, and lost thread logs\")",
		n, strings.Join(parts, "; "))
}

// csvWriter writes trace lines.
type csvWriter struct {
	w     *asyncWriter
	lines int
	err   error
	// seq is the sequence number of the last line, in decimal in
	// seqText[seqAt:]: the next line's is usually a few more.
	seq     uint64
	seqAt   int
	seqText [20]byte
}

// appendSeq appends seq in decimal, counting up from the last one.
func (c *csvWriter) appendSeq(b []byte, seq uint64) []byte {
	if d := seq - c.seq; seq >= c.seq && d < 10 && c.seqAt > 0 {
		// Add d to the last digit, carrying.
		i := len(c.seqText) - 1
		for carry := byte(d); carry != 0; i-- {
			if i < c.seqAt {
				c.seqAt--
				c.seqText[i] = '0'
			}
			v := c.seqText[i] - '0' + carry
			c.seqText[i], carry = '0'+v%10, v/10
		}
	} else {
		n := len(strconv.AppendUint(c.seqText[:0], seq, 10))
		c.seqAt = len(c.seqText) - n
		copy(c.seqText[c.seqAt:], c.seqText[:n])
	}
	c.seq = seq
	return append(b, c.seqText[c.seqAt:]...)
}

func (c *csvWriter) line(t *rawThread, seq uint64, loc, action string, objs ...string) {
	if c.err != nil {
		return
	}
	b := c.w.buf
	b = strconv.AppendUint(b, t.Token, 10)
	b = append(b, ", "...)
	b = c.appendSeq(b, seq)
	b = append(b, ", "...)
	b = append(b, loc...)
	b = append(b, ", "...)
	b = append(b, action...)
	for _, o := range objs {
		b = append(b, ", "...)
		b = appendField(b, o)
	}
	b = append(b, '\n')
	c.w.buf = b
	c.lines++
	if len(b) >= outChunk {
		c.w.spill()
		c.err = c.w.failure()
	}
}

// appendField appends a name, replacing the characters that would break
// the line format (C++ template names contain commas).
func appendField(b []byte, s string) []byte {
	i := 0
	for i < len(s) && s[i] != ',' && s[i] != '\n' && s[i] != '\r' {
		i++
	}
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		switch ch := s[i]; ch {
		case ',':
			b = append(b, ';')
		case '\n', '\r':
			b = append(b, ' ')
		default:
			b = append(b, ch)
		}
	}
	return b
}

// syncAction is the trace action of a synchronisation event, or "".
func syncAction(k kind) string {
	switch k {
	case kLock:
		return "Lock"
	case kTryLock:
		return "TryLock"
	case kUnlock:
		return "Unlock"
	case kRdLock:
		return "RdLock"
	case kWrLock:
		return "WrLock"
	case kRwUnlock:
		return "RwUnlock"
	case kSignal:
		return "Signal"
	case kBroadcast:
		return "Broadcast"
	case kBarrier:
		return "BarrierWait"
	case kSemPost:
		return "SemPost"
	case kSemWait:
		return "SemWait"
	}
	return ""
}

// AtomicPrefix starts the name of the synchronisation object of an atomic
// variable: the release/acquire order of the atomic operations on v is
// written as Signal and Wait on atomic:v, never on v itself, so that v
// stays a data variable when the program also accesses it plainly.
const AtomicPrefix = "atomic:"

// thrState is the writer's state of one thread.
type thrState struct {
	funcs []string // the functions entered and not exited (Enter/Exit written)
	// root is the thread's start routine, entered by a written Enter at
	// its start; the thread's first recorded Enter of the same function
	// is then not written again.
	root      string
	rootMerge bool
}

// traceWriter writes the events of the last pass.
type traceWriter struct {
	c       *csvWriter
	syms    *procSyms
	n       *namer
	noFuncs bool
	threads []thrState // by rawThread.idx
	// truncated counts the accesses that covered more than maxExpand
	// variables (the first at truncLoc): the rest of each is not in the
	// trace.
	truncated int
	truncLoc  string
	// blocked holds, by thread token, the sequence number of the
	// thread's lock wait (kLockWait) that no event of the thread
	// followed (from the first pass): the acquisition never returned.
	blocked map[uint64]uint64
	// reached holds the detail of each variable of a heap block named by
	// type and site: the path the program first reached it through.
	reached map[string]string
}

func (tw *traceWriter) state(t *rawThread) *thrState {
	return &tw.threads[t.idx]
}

func (tw *traceWriter) event(ev *rawEvent) {
	c, syms, n := tw.c, tw.syms, tw.n
	t := ev.Thread
	ts := tw.state(t)
	merge := ts.rootMerge
	ts.rootMerge = false
	switch ev.Kind {
	case kLockWait:
		// A wait that returned is its acquisition's event; one that
		// never did is written where it began, in sequence order
		// (other threads ran on, and perhaps exited the program, while
		// it waited).
		if seq, ok := tw.blocked[t.Token]; ok && seq == ev.Seq {
			c.line(t, ev.Seq, syms.location(ev.PC), "Blocked", n.syncName(ev.Addr, ev.Seq), syncAction(kind(ev.Extra)))
		}
	case kRead, kWrite, kRead8:
		action, size := "Read", ev.Extra
		if ev.Data && !n.l.indexUsed.has(ev.Seq) {
			action = "DataRead"
			if ev.Copy {
				action = "CopyRead"
			}
		}
		switch ev.Kind {
		case kWrite:
			action = "Write"
		case kRead8:
			size = 8
		}
		tw.access(ev, action, size)
	case kAtomic:
		// The acquire and the release first, then the access: the
		// order they give to the thread's accesses of other variables
		// is exact (those before the operation are before the Signal,
		// those after it after the Wait), and the accesses of the
		// atomic variable itself are what the predictor reorders
		// anyway. An acquire that orders nothing (the latest release
		// on the location was the thread's own, or there was none)
		// and a release no other thread acquires are left out: they
		// would only end regions.
		size := ev.Extra & atomSizeMask
		name := n.syncName(ev.Addr, ev.Seq)
		loc := syms.location(ev.PC)
		if ev.Extra&atomAcq != 0 && n.l.needAcq.has(ev.Seq) {
			c.line(t, ev.Seq, loc, "Wait", AtomicPrefix+name)
		}
		for _, from := range n.l.extraAcq[ev.Seq] {
			c.line(t, ev.Seq, loc, "Wait", AtomicPrefix+name+"@"+strconv.FormatUint(from, 10))
		}
		if ev.Extra&atomRel != 0 && n.l.needRel.has(ev.Seq) {
			c.line(t, ev.Seq, loc, "Signal", AtomicPrefix+name)
		}
		if ev.Extra&atomRel != 0 && n.l.needRelT.has(ev.Seq) {
			c.line(t, ev.Seq, loc, "Signal", AtomicPrefix+name+"@"+strconv.FormatUint(t.Token, 10))
		}
		if tw.mixed(ev.Addr, size) {
			action := "Read"
			switch {
			case ev.Extra&atomWrite != 0 && ev.Extra&atomRead != 0:
				// A read-modify-write is one event: as a Read and a
				// Write, the predictor would put another thread's
				// write between them, which the atomic forbids. Its
				// action says it wrote from what it read at once (a
				// compare-and-swap loop is no lost update).
				action = "AtomicWrite"
			case ev.Extra&atomWrite != 0:
				action = "Write"
			}
			tw.access(ev, action, size)
		}
	case kAtomicAcq:
		c.line(t, ev.Seq, syms.location(ev.PC), "Wait", AtomicPrefix+n.syncName(ev.Addr, ev.Seq))
	case kAtomicRel:
		c.line(t, ev.Seq, syms.location(ev.PC), "Signal", AtomicPrefix+n.syncName(ev.Addr, ev.Seq))
	case kWait:
		if ev.Extra != 0 {
			c.line(t, ev.Seq, syms.location(ev.PC), "Wait", n.syncName(ev.Addr, ev.Seq), n.syncName(ev.Extra, ev.Seq))
		} else {
			c.line(t, ev.Seq, syms.location(ev.PC), "Wait", n.syncName(ev.Addr, ev.Seq))
		}
	case kCreate:
		c.line(t, ev.Seq, syms.location(ev.PC), "Create", strconv.FormatUint(ev.Addr, 10))
	case kJoin:
		obj := strconv.FormatUint(ev.Addr, 10)
		if ev.Extra == 1 {
			// A thread the recorder did not see created.
			obj = fmt.Sprintf("pthread:0x%x", ev.Addr)
		}
		c.line(t, ev.Seq, syms.location(ev.PC), "Join", obj)
	case kAlloc, kUAlloc:
		b := n.replay(ev)
		if b != nil && b.id == ev.Seq {
			c.line(t, ev.Seq, syms.location(ev.PC), "Alloc", blockObject(b))
		}
	case kFree, kUFree:
		b := n.replay(ev)
		if b != nil {
			c.line(t, ev.Seq, syms.location(ev.PC), "Free", blockObject(b))
		}
	case kEnter:
		if tw.noFuncs {
			return
		}
		name := syms.function(ev.Addr)
		if merge && name == ts.root || generatedFunc(name) {
			return // the start routine, entered already; or no code of the program
		}
		ts.funcs = append(ts.funcs, name)
		c.line(t, ev.Seq, syms.location(ev.PC), "Enter", name)
	case kExit:
		if tw.noFuncs {
			return
		}
		name := syms.function(ev.PC)
		if generatedFunc(name) {
			return
		}
		if len(ts.funcs) > 0 {
			ts.funcs = ts.funcs[:len(ts.funcs)-1]
		}
		c.line(t, ev.Seq, syms.location(ev.PC), "Exit", name)
	case kThrStart:
		// The thread's start routine is entered, with function events
		// or without: a thread whose start routine never exits (no
		// Exit before the end of the trace) still ran at the end.
		ts.root = syms.function(ev.Addr)
		ts.rootMerge = true
		ts.funcs = append(ts.funcs, ts.root)
		c.line(t, ev.Seq, "?", "Enter", ts.root)
	case kThrEnd:
		// The thread ended: the functions it had not exited (all of
		// them after pthread_exit) are exited.
		for i := len(ts.funcs) - 1; i >= 0; i-- {
			c.line(t, ev.Seq, "?", "Exit", ts.funcs[i])
		}
		ts.funcs = nil
	case kFrame, kProcExit:
	default:
		if action := syncAction(ev.Kind); action != "" {
			c.line(t, ev.Seq, syms.location(ev.PC), action, n.syncName(ev.Addr, ev.Seq))
		}
	}
}

// generatedFunc reports whether a function is one the compiler made, not
// the program: clang's module constructor of the coverage instrumentation
// (sancov.module_ctor_trace_pc_guard), which ThreadSanitizer instruments.
func generatedFunc(name string) bool {
	return strings.HasPrefix(name, "sancov.")
}

// access writes a Read or Write of size bytes at ev.Addr: one line per
// variable it covers (the first maxExpand), none for read-only memory or
// stack memory only one thread accesses.
func (tw *traceWriter) access(ev *rawEvent, action string, size uint64) {
	loc := tw.syms.location(ev.PC)
	a, end := ev.Addr, ev.Addr+max(size, 1)
	for i := 0; a < end; i++ {
		if i == maxExpand {
			tw.truncated++
			if tw.truncLoc == "" {
				tw.truncLoc = loc
			}
			break
		}
		name, next := tw.n.nameAt(a, end, ev.Seq)
		if name != "" && tw.n.sharedStack(a, ev.Seq) {
			tw.c.line(ev.Thread, ev.Seq, loc, action, name)
			if tw.n.reached != nil {
				if _, ok := tw.reached[name]; !ok {
					tw.reached[name] = tw.n.reachedAs(a)
				}
			}
		}
		a = next
	}
}

// mixed reports whether the atomic location [a, a+size) is also accessed
// plainly.
func (tw *traceWriter) mixed(a, size uint64) bool {
	for i := uint64(0); i < max(size, 1); i++ {
		if tw.n.l.mixed[tw.n.key(a+i)] {
			return true
		}
	}
	return false
}
