package recorder

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// The raw log format; rt/mcprec.h is the reference and must agree.
const (
	rawVersion = 2
	rawMagic   = "MCPRT002"
	headerSize = 128
	recSize    = 32
	seqMask    = 1<<56 - 1
)

// kind is the type of a raw event (enum mcprec_kind).
type kind uint8

const (
	kRead      kind = 1
	kWrite     kind = 2
	kRead8     kind = 3 // an 8-byte read; Extra is the value read
	kLock      kind = 4
	kTryLock   kind = 5
	kUnlock    kind = 6
	kRdLock    kind = 7
	kWrLock    kind = 8
	kRwUnlock  kind = 9
	kWait      kind = 10 // Extra is the mutex
	kSignal    kind = 11
	kBroadcast kind = 12
	kBarrier   kind = 13
	kCreate    kind = 14 // Addr is the child's token
	kJoin      kind = 15 // Addr is the child's token, or a pthread_t if Extra == 1
	kSemPost   kind = 16
	kSemWait   kind = 17
	kAlloc     kind = 18 // Extra is the size
	kFree      kind = 19
	kEnter     kind = 20 // PC is the call site, Addr a pc inside the function
	kExit      kind = 21
	kAtomicAcq kind = 22 // __tsan_acquire annotation
	kAtomicRel kind = 23 // __tsan_release annotation
	kAtomic    kind = 24 // Extra is atom* flags | size
	kFrame     kind = 25 // PC is in the function, Addr its CFA
	kUAlloc    kind = 26 // Extra: size (48 bits, unknownSize: none) | function index << 48
	kUFree     kind = 27
	kThrStart  kind = 28 // Addr is the start routine
	kThrEnd    kind = 29
	kProcExit  kind = 30
	kLockWait  kind = 31 // Extra is the kind of the acquisition that waits
	kDRead     kind = 32 // a kRead whose value decided nothing (read back as kRead, Data set)
	kDRead8    kind = 33 // a kRead8 whose value decided nothing (likewise)
	kCRead     kind = 34 // a kDRead whose value no comparison had at all (Copy set too)
	kCRead8    kind = 35 // a kDRead8 likewise
	kindMax         = 35
)

// Flags of kAtomic (MCPREC_ATOM_* in rt/mcprec.h).
const (
	atomSizeMask = 0xff
	atomRead     = 1 << 8
	atomWrite    = 1 << 9
	atomAcq      = 1 << 10
	atomRel      = 1 << 11
)

// The allocator of a kAlloc, in the top byte of Extra (MCPREC_FN_*).
const (
	allocMalloc = iota
	allocCalloc
	allocRealloc
	allocMemalign
	allocNew
	allocNewArray
	allocMmap
)

// sizeOf returns the size of a kAlloc or kUAlloc; ok is false when it is
// not known.
func (ev *rawEvent) allocSize() (size uint64, ok bool) {
	if ev.Kind == kUAlloc {
		s := ev.Extra & (1<<48 - 1)
		return s, s != unknownSize
	}
	return ev.Extra & (1<<56 - 1), true
}

// unknownSize marks a kUAlloc whose function does not take the size.
const unknownSize = 1<<48 - 1

// rawEvent is one record of a thread log.
type rawEvent struct {
	Seq    uint64
	Kind   kind
	Thread *rawThread
	PC     uint64
	Addr   uint64
	Extra  uint64
	// Data: a read whose value the runtime saw decide no comparison,
	// switch or address (MCPREC_DREAD): written as a DataRead, unless
	// the converter finds its value used as an array index (indexUse).
	// Val is the value it read. Copy: no comparison had its value at
	// all, not even one whose operands differed (MCPREC_CREAD): written
	// as a CopyRead.
	Data bool
	Copy bool
	Val  uint64
}

// rawThread is the header of one thread log.
type rawThread struct {
	Token, Parent, Pthread uint64
	StackLo, StackHi       uint64
	TLSLo, TLSHi           uint64
	path                   string
	idx                    int // its index in rawLog.Threads
}

// module is one ELF object loaded in the recorded process.
type module struct {
	Path string // empty for the main executable in the runtime's view; filled from Exe
	Bias uint64 // load bias: run-time address minus link-time address
	Segs [][2]uint64
	// ReadOnly are the run-time ranges the program cannot write: loaded
	// segments without write permission, and the RELRO range.
	ReadOnly [][2]uint64
}

// rawLog is the raw log of one recorded process.
type rawLog struct {
	Dir     string
	PID     int
	Exe     string
	Funcs   bool // Enter/Exit were recorded
	Modules []module
	Threads []*rawThread
	// UFuncs are the --alloc-func/--free-func wrappers by index (the
	// runtime appends "ufn INDEX 0xADDR" lines to the meta file).
	UFuncs map[uint64]uint64
	// Lost are the thread logs the runtime could not write (it appends
	// "lost TOKEN OFFSET ERRNO STEP PATH" lines to the meta file).
	Lost []lostLog
	// drop makes scans free the thread logs as they read them (the last
	// pass over a log that is removed afterwards: ConvertOptions.Consume).
	drop bool
}

// lostLog is a thread log that the runtime could not create (Offset 0: the
// thread's events are all missing) or grow past Offset bytes (its later
// events are missing).
type lostLog struct {
	Token, Offset uint64
	Err           syscall.Errno
	Step          string // open, grow (ftruncate) or map (mmap)
	Path          string
}

// rawPIDs lists the processes that left a log in dir, in increasing pid
// order.
func rawPIDs(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "p") || !strings.HasSuffix(name, ".meta") {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSuffix(name[1:], ".meta")); err == nil {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids, nil
}

// openRawLog reads the meta file and thread headers of process pid in dir.
// pid 0 means the only process there.
func openRawLog(dir string, pid int) (*rawLog, error) {
	if pid == 0 {
		pids, err := rawPIDs(dir)
		if err != nil {
			return nil, err
		}
		switch len(pids) {
		case 0:
			return nil, fmt.Errorf("%s: no raw log (was the program compiled with mcpredict cc, and did it start?)", dir)
		case 1:
			pid = pids[0]
		default:
			return nil, fmt.Errorf("%s: logs of several processes %v: choose one with -pid", dir, pids)
		}
	}
	l := &rawLog{Dir: dir, PID: pid, Funcs: true, UFuncs: map[uint64]uint64{}}
	metaPath := filepath.Join(dir, fmt.Sprintf("p%d.meta", pid))
	if err := l.readMeta(metaPath); err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("p%d.t*.bin", pid)))
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		// The runtime writes regular files only; the directory may be
		// writable by every user (a program that switches user), so
		// anything else there is not a log (and not to be followed).
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			continue
		}
		t, err := readThreadHeader(p)
		if err != nil {
			return nil, err
		}
		if t != nil {
			l.Threads = append(l.Threads, t)
		}
	}
	sort.Slice(l.Threads, func(i, j int) bool { return l.Threads[i].Token < l.Threads[j].Token })
	for i, t := range l.Threads {
		t.idx = i
	}
	return l, nil
}

func (l *rawLog) readMeta(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		bad := func(what string) error {
			return fmt.Errorf("%s:%d: %s in %q", path, i+1, what, line)
		}
		switch key {
		case "mcprec":
			if val != strconv.Itoa(rawVersion) {
				return bad(fmt.Sprintf("raw log version %s, this mcpredict reads %d (rebuild the program with this mcpredict cc)", val, rawVersion))
			}
		case "pid":
			// Already known from the file name.
		case "exe":
			l.Exe = val
		case "funcs":
			l.Funcs = val != "0"
		case "ufn":
			idx, addr, _ := strings.Cut(val, " ")
			i, err1 := strconv.ParseUint(idx, 10, 64)
			a, err2 := strconv.ParseUint(addr, 0, 64)
			if err1 != nil || err2 != nil {
				return bad("bad allocation function")
			}
			l.UFuncs[i] = a
		case "lost":
			f := strings.SplitN(val, " ", 5)
			if len(f) < 5 {
				return bad("bad lost log")
			}
			tok, err1 := strconv.ParseUint(f[0], 10, 64)
			off, err2 := strconv.ParseUint(f[1], 10, 64)
			e, err3 := strconv.ParseUint(f[2], 10, 32)
			if err1 != nil || err2 != nil || err3 != nil {
				return bad("bad lost log")
			}
			l.Lost = append(l.Lost, lostLog{Token: tok, Offset: off, Err: syscall.Errno(e), Step: f[3], Path: f[4]})
		case "relro":
			lo, hi, _ := strings.Cut(val, " ")
			a, err1 := strconv.ParseUint(lo, 0, 64)
			b, err2 := strconv.ParseUint(hi, 0, 64)
			if err1 != nil || err2 != nil || len(l.Modules) == 0 {
				return bad("bad RELRO range")
			}
			m := &l.Modules[len(l.Modules)-1]
			m.ReadOnly = append(m.ReadOnly, [2]uint64{a, b})
		case "module":
			addr, name, _ := strings.Cut(val, " ")
			bias, err := strconv.ParseUint(addr, 0, 64)
			if err != nil {
				return bad("bad load bias")
			}
			l.Modules = append(l.Modules, module{Path: name, Bias: bias})
		case "seg":
			f := strings.Fields(val)
			if len(f) < 2 || len(l.Modules) == 0 {
				return bad("bad segment")
			}
			a, err1 := strconv.ParseUint(f[0], 0, 64)
			b, err2 := strconv.ParseUint(f[1], 0, 64)
			if err1 != nil || err2 != nil {
				return bad("bad segment")
			}
			m := &l.Modules[len(l.Modules)-1]
			m.Segs = append(m.Segs, [2]uint64{a, b})
			if len(f) > 2 && !strings.Contains(f[2], "w") {
				m.ReadOnly = append(m.ReadOnly, [2]uint64{a, b})
			}
		default:
			// Unknown keys are for later versions of the runtime.
		}
	}
	// The runtime names the main executable "" (as dl_iterate_phdr does).
	for i := range l.Modules {
		if l.Modules[i].Path == "" && i == 0 {
			l.Modules[i].Path = l.Exe
		}
	}
	return nil
}

// readThreadHeader reads the header of a thread log. A log whose thread
// died before writing its header (a kill during start-up) gives nil.
func readThreadHeader(path string) (*rawThread, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var h [headerSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil
		}
		return nil, err
	}
	if bytes.Equal(h[:8], make([]byte, 8)) {
		return nil, nil
	}
	if string(h[:8]) != rawMagic {
		return nil, fmt.Errorf("%s: not a thread log of this mcpredict (magic %q)", path, h[:8])
	}
	le := binary.LittleEndian
	if v := le.Uint32(h[8:]); v != rawVersion {
		return nil, fmt.Errorf("%s: raw log version %d, this mcpredict reads %d", path, v, rawVersion)
	}
	if s := le.Uint32(h[12:]); s != recSize {
		return nil, fmt.Errorf("%s: record size %d, want %d", path, s, recSize)
	}
	return &rawThread{
		Token:   le.Uint64(h[16:]),
		Parent:  le.Uint64(h[24:]),
		Pthread: le.Uint64(h[32:]),
		StackLo: le.Uint64(h[40:]),
		StackHi: le.Uint64(h[48:]),
		TLSLo:   le.Uint64(h[56:]),
		TLSHi:   le.Uint64(h[64:]),
		path:    path,
	}, nil
}

// logReader reads the records of one thread log in order, decoding them
// straight from a large read buffer.
type logReader struct {
	t    *rawThread
	f    *os.File
	buf  []byte
	p, n int  // the next record is at buf[p:]; buf[:n] holds data
	eof  bool // the file has no more bytes
	seq  uint64
	ok   bool  // there is a next record: its sequence number is seq
	recs int64 // records read, for error messages
	// drop frees the part of the file read so far at each refill (its
	// first punched bytes are gone); off is where the next read starts.
	drop         bool
	off, punched int64
}

// openLogReader opens a thread log. With drop, the reader frees the
// file's blocks as it goes (rawLog.drop), if it may write the file.
func openLogReader(t *rawThread, bufSize int, drop bool) (*logReader, error) {
	var f *os.File
	var err error
	if drop {
		if f, err = os.OpenFile(t.path, os.O_RDWR, 0); err != nil {
			drop = false
		}
	}
	if !drop {
		if f, err = os.Open(t.path); err != nil {
			return nil, err
		}
	}
	if _, err := f.Seek(headerSize, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	r := &logReader{t: t, f: f, buf: make([]byte, bufSize), drop: drop, off: headerSize}
	if err := r.peek(); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *logReader) close() { r.f.Close() }

// punchEvery is how many bytes a dropping reader reads between two
// punches.
const punchEvery = 1 << 20

// fill moves the unread bytes to the front of the buffer and reads as much
// of the file as fits after them.
func (r *logReader) fill() error {
	if r.drop {
		// Whole pages before the unread bytes.
		if done := (r.off - int64(r.n-r.p)) &^ 4095; done >= r.punched+punchEvery {
			if punchHole(r.f, r.punched, done-r.punched) != nil {
				r.drop = false
			}
			r.punched = done
		}
	}
	r.n = copy(r.buf, r.buf[r.p:r.n])
	r.p = 0
	for r.n < len(r.buf) && !r.eof {
		m, err := r.f.Read(r.buf[r.n:])
		r.n += m
		r.off += int64(m)
		if errors.Is(err, io.EOF) || err == nil && m == 0 {
			r.eof = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

// peek finds the next record. The log ends at EOF, at a partial record
// (the file was cut), or at a record whose sequence number is still 0
// (never written, or being written when the process died).
func (r *logReader) peek() error {
	r.ok = false
	if r.n-r.p < recSize && !r.eof {
		if err := r.fill(); err != nil {
			return fmt.Errorf("%s: record %d: %w", r.t.path, r.recs+1, err)
		}
	}
	if r.n-r.p < recSize {
		return nil
	}
	sk := binary.LittleEndian.Uint64(r.buf[r.p:])
	if sk == 0 {
		return nil
	}
	r.recs++
	if k := kind(sk >> 56); k == 0 || k > kindMax {
		return fmt.Errorf("%s: record %d: unknown event kind %d", r.t.path, r.recs, k)
	}
	r.seq = sk & seqMask
	r.ok = true
	return nil
}

// take decodes the record peek found into ev.
func (r *logReader) take(ev *rawEvent) {
	b := r.buf[r.p : r.p+recSize : r.p+recSize]
	r.p += recSize
	le := binary.LittleEndian
	sk, extra := le.Uint64(b[0:]), le.Uint64(b[24:])
	k := kind(sk >> 56)
	ev.Seq = sk & seqMask
	ev.Thread = r.t
	ev.PC = le.Uint64(b[8:])
	ev.Addr = le.Uint64(b[16:])
	ev.Copy = false
	switch k {
	case kDRead, kCRead:
		// extra = size | value << 8
		ev.Kind, ev.Data, ev.Copy, ev.Val, ev.Extra = kRead, true, k == kCRead, extra>>8, extra&0xff
	case kDRead8, kCRead8:
		ev.Kind, ev.Data, ev.Copy, ev.Val, ev.Extra = kRead8, true, k == kCRead8, extra, extra
	default:
		ev.Kind, ev.Data, ev.Val, ev.Extra = k, false, 0, extra
	}
}

// logHeap is a binary min-heap of thread log readers by the sequence
// number of their next record.
type logHeap []*logReader

func (h logHeap) down(i int) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h[c+1].seq < h[c].seq {
			c++
		}
		if h[i].seq <= h[c].seq {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// scanBatch is the number of events scanBatches hands over at a time (a
// variable for the tests).
var scanBatch = 4096

// scanEvents is how scan reads the log: scanBatches (the tests put the
// reference reader here).
var scanEvents = (*rawLog).scanBatches

// scan calls fn for every event of the log in sequence order (see
// scanBatches). fn must not keep ev.
func (l *rawLog) scan(fn func(ev *rawEvent) error) error {
	return scanEvents(l, func(evs []rawEvent) error {
		for i := range evs {
			if err := fn(&evs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// scanBatches calls fn with every event of the log in sequence order, a
// batch at a time: a k-way merge of the thread logs, reading each as a
// stream (memory is one buffer per thread and a few batches, whatever
// the size of the log). The reading, decoding and merging run in a
// goroutine of their own, ahead of fn, so that a conversion pass keeps
// two cores busy. fn must not keep the slice. An unreadable record ends
// the scan with its error after fn has had every event before it.
func (l *rawLog) scanBatches(fn func(evs []rawEvent) error) error {
	type batch struct {
		evs []rawEvent
		err error
	}
	const ahead = 4 // batches decoded ahead of fn
	full := make(chan batch, ahead)
	free := make(chan []rawEvent, ahead+2)
	done := make(chan struct{})
	go func() {
		defer close(full)
		send := func(b batch) bool {
			select {
			case full <- b:
				return true
			case <-done:
				return false
			}
		}
		var h logHeap
		defer func() {
			for _, r := range h {
				r.close()
			}
		}()
		if err := l.openReaders(&h); err != nil {
			send(batch{err: err})
			return
		}
		size := max(scanBatch, 1)
		evs := make([]rawEvent, size)
		n := 0
		for len(h) > 0 {
			r := h[0]
			r.take(&evs[n])
			n++
			err := r.peek()
			if err != nil {
				send(batch{evs[:n], err})
				return
			}
			if !r.ok {
				r.close()
				h[0] = h[len(h)-1]
				h = h[:len(h)-1]
			}
			if len(h) > 1 {
				h.down(0)
			}
			if n == size {
				if !send(batch{evs: evs}) {
					return
				}
				select {
				case evs = <-free:
					evs = evs[:size]
				default:
					evs = make([]rawEvent, size)
				}
				n = 0
			}
		}
		if n > 0 {
			send(batch{evs: evs[:n]})
		}
	}()
	var err error
	for b := range full {
		if err == nil && len(b.evs) > 0 {
			err = fn(b.evs)
		}
		if err == nil {
			err = b.err
		}
		if err != nil {
			close(done)
			for range full {
			}
			return err
		}
		select {
		case free <- b.evs:
		default:
		}
	}
	return nil
}

// openReaders opens a reader on each thread log that has a record, into
// a heap by the sequence number of their first.
func (l *rawLog) openReaders(h *logHeap) error {
	// 64 KiB to 128 KiB a thread: large reads, bounded memory when
	// there are thousands of threads.
	bufSize := min(max((4<<20)/max(len(l.Threads), 1), 64<<10), 128<<10) / recSize * recSize
	for _, t := range l.Threads {
		r, err := openLogReader(t, bufSize, l.drop)
		if err != nil {
			return err
		}
		if !r.ok {
			r.close()
			continue
		}
		*h = append(*h, r)
	}
	for i := len(*h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return nil
}

// RawPIDs lists the processes that left a raw log in dir, in increasing
// pid order.
func RawPIDs(dir string) ([]int, error) { return rawPIDs(dir) }
