package tracemodel

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Spilling: the events of a large trace live in a memory-mapped temporary
// file instead of the Go heap (Options.Spill), and so do what is made of
// them in proportion at the end of the parse — each thread's events, each
// variable's accesses and their copies (Access), the region-scope trees —
// in a second file, the arena (Model.int32s), and the lock operations in a
// third, as they are parsed (appendLockOp). All are unlinked as
// soon as they are made, so nothing is left on disk whatever happens to
// the process; their blocks are reserved (fallocate) before they are
// written, so a full disk is an error of the parse, never a fault of a
// later write. The mappings are shared: the kernel writes their pages back
// to the files and may drop them from memory, and a goroutine (the
// trimmer, spillStore.startTrimmer) unmaps the pages the process touched
// whenever their resident size passes Options.MaxResident; so do the long
// scans and the reads of the events, about every millisecond
// (Model.Pace, Pacer), which would outrun it. Reading a dropped page
// faults it back from the page cache or the file. The files are written
// under MADV_RANDOM, so that their pages are small folios and a read maps
// the kernel's fault-around (64 KB), not a large folio (up to 2 MB).
//
// The causal orders of a spilled model (the synchronization order, and
// each data-flow order that replays more events than Options.SpillAfter)
// keep their snapshots in temporary files of their own (snaplog.go),
// trimmed with the others, and given back when the order is released
// (Order.Release), collected, or the model closed. The rest of the model
// — the region boundaries, the positions of blocking events and handoffs —
// stays in the heap: it grows with the synchronization events, not with
// the accesses, and is a few bytes a synchronization event.

// SpillMode says where a trace's events are kept.
type SpillMode string

// The spill modes.
const (
	// SpillAuto keeps the events in memory up to Options.SpillAfter events
	// and moves them to a temporary file past it (the default).
	SpillAuto SpillMode = "auto"
	// SpillAlways keeps the events in a temporary file from the first.
	SpillAlways SpillMode = "always"
	// SpillNever keeps every event in memory.
	SpillNever SpillMode = "never"
)

// ParseSpillMode checks a spill mode ("" is SpillAuto).
func ParseSpillMode(s string) (SpillMode, error) {
	switch m := SpillMode(s); m {
	case "":
		return SpillAuto, nil
	case SpillAuto, SpillAlways, SpillNever:
		return m, nil
	}
	return "", fmt.Errorf("unknown spill mode %q: want auto, always or never", s)
}

// DefaultSpillAfter is the default of Options.SpillAfter: 1 M events, 32
// MB in memory (and up to twice that while the slice grows); the traces
// of the examples and of most tests never touch the disk.
const DefaultSpillAfter = 1_000_000

// DefaultMaxResident is the default of Options.MaxResident. At 256 MiB a
// 10 M-event server trace's working set did not fit: every trim dropped
// pages the next scan faulted back, 5.8 M faults and a third of the CPU in
// the kernel; at 512 MiB, 1.3 M and a tenth, for 0.7× the time and a peak
// of 770 MB instead of 540.
const DefaultMaxResident = 512 << 20

// spillChunk is how many events' worth of file is reserved at a time.
const spillChunk = 1 << 20

// maxIndex is the most events a model holds: events are indexed by int32.
const maxIndex = 1<<31 - 1

// eventSize is the size of an Event in the store.
const eventSize = int64(unsafe.Sizeof(Event{}))

// ErrSpillUnsupported is returned for SpillAlways where memory-mapped
// files are not available.
var ErrSpillUnsupported = errors.New("spilling the trace to a temporary file is not supported on this system (--spill never)")

// spillStore is the on-disk store of one model: a file for the events,
// reserved as the parse goes, and the arena, made at its end.
type spillStore struct {
	dir         string
	maxResident int64
	events      *mappedFile
	// arena holds what is made at the end of the parse, in proportion to
	// the events: the indexes, the accesses by variable and the
	// region-scope trees (Model.int32s).
	arena atomic.Pointer[mappedFile]
	used  int64 // bytes of the arena handed out
	// locks holds the lock operations parsed after the events were spilled
	// (appendLockOp); locksUsed bytes of it are handed out.
	locks     atomic.Pointer[mappedFile]
	locksUsed int64
	maxEvents int           // the most events the parse accepts
	stop      chan struct{} // closes the trimmer
	done      chan struct{}
	statm     *os.File // /proc/self/statm, read by trimIfOver; nil: not measured
	statmMu   sync.Mutex
	lastLook  atomic.Int64 // when a scan last looked (pace), in Unix nanoseconds
	statmBuf  [128]byte
	// snaps are the files of the orders' snapshots (snaplog.go): the
	// trimmer releases them, Model.Close closes those still open.
	snapAfter           int // the fewest events an order replays for its rows to go to a file
	snapMu              sync.Mutex
	snaps               map[*snapArena]bool
	snapBytes, snapPeak int64 // their disk now, and at most
}

// addSnapBytes counts n more bytes of snapshot files.
func (s *spillStore) addSnapBytes(n int64) {
	s.snapMu.Lock()
	s.snapBytes += n
	s.snapPeak = max(s.snapPeak, s.snapBytes)
	s.snapMu.Unlock()
}

// paceEvents is how many steps of a scan pass between two looks at the
// clock (Model.Pace), and paceEvery how long between two looks at the
// resident size. Steps alone do not measure what a scan makes resident:
// one that skips through the events (a variable's accesses, the critical
// sections) maps 64 KB at each of them (the kernel's fault-around over
// the small folios of newMappedFile; a large folio's 2 MB without them),
// so 65,536 steps are 4 GB; time does, at the speed of page faults.
// A scan looks at least every paceSteps steps (2 MB of events read in
// order) even within paceEvery.
const (
	paceEvents = 1 << 10
	paceSteps  = 1 << 16
	paceEvery  = time.Millisecond
)

// Pace keeps the resident pages of a spilled model within
// Options.MaxResident during a long scan of its events or accesses: call
// it at every step with the step's number. Every paceEvents steps (not at
// step 0: a scan that restarts its count per thread or variable, over a
// million of them, would look a million times), if paceEvery has passed
// since the store last looked, or every paceSteps steps, it looks at the
// resident size and releases the pages if it is over. The store's trimmer
// looks every 5 ms too, but a scan outruns it: reading the page cache, it
// faults in hundreds of megabytes while the trimmer waits for the
// scheduler. A model kept in memory has nothing to trim. A scan whose
// index restarts (per variable, per lock) paces with a Pacer.
func (m *Model) Pace(step int) {
	if step&(paceEvents-1) == 0 && step > 0 && m.spill != nil {
		m.spill.pace(step&(paceSteps-1) == 0)
	}
}

// A Pacer paces one scan (Model.Pace) by its own count of steps: for a
// scan whose loop index restarts, per variable or per lock, which Pace by
// that index would never reach a look with over 16,384 variables of a few
// hundred accesses each.
type Pacer struct {
	m *Model
	n int
}

// Pacer returns a Pacer of a new scan.
func (m *Model) Pacer() Pacer { return Pacer{m: m} }

// Step paces the scan's next step.
func (p *Pacer) Step() {
	p.n++
	p.m.Pace(p.n)
}

// paceIndex is Pace for the reads of the events by index (EventAt,
// Position): the loops that call them jump through the events by strides
// that may never meet a multiple of paceEvents (a variable accessed every
// 24th event, from an odd index), so a multiplicative (Fibonacci) hash
// picks about one index in paceEvents whatever the stride.
func (m *Model) paceIndex(i int32) {
	if m.spill != nil && pacedIndex(i) {
		m.spill.pace(false)
	}
}

// pacedIndex says whether a read of index i may look (paceIndex).
func pacedIndex(i int32) bool { return uint32(i)*0x9E3779B9 < 1<<32/paceEvents }

// pace looks at the resident size if always, or if paceEvery has passed
// since the last look of any goroutine.
func (s *spillStore) pace(always bool) {
	now := time.Now().UnixNano()
	if always {
		s.lastLook.Store(now)
	} else if last := s.lastLook.Load(); now-last < int64(paceEvery) || !s.lastLook.CompareAndSwap(last, now) {
		return // looked lately, or another goroutine looks now
	}
	s.trimIfOver()
}

// SpillStats describes the on-disk store of a model.
type SpillStats struct {
	Spilled   bool
	DiskBytes int64 // bytes reserved in the temporary directory
	Dir       string
}

// Spill returns the state of the model's on-disk store.
func (m *Model) Spill() SpillStats {
	s := m.spill
	if s == nil {
		return SpillStats{}
	}
	st := SpillStats{Spilled: true, Dir: s.dir}
	if s.events != nil {
		st.DiskBytes += s.events.size.Load()
	}
	if a := s.arena.Load(); a != nil {
		st.DiskBytes += a.size.Load()
	}
	if l := s.locks.Load(); l != nil {
		st.DiskBytes += l.size.Load()
	}
	s.snapMu.Lock()
	st.DiskBytes += s.snapPeak
	s.snapMu.Unlock()
	return st
}

// Close releases the model's temporary file, if its events were spilled
// (Options.Spill); the model and every slice of it must not be used after.
// A model kept in memory needs no Close, and Close of it does nothing.
func (m *Model) Close() error {
	s := m.spill
	if s == nil {
		return nil
	}
	m.spill = nil
	if s.stop != nil {
		close(s.stop)
		<-s.done
	}
	if s.statm != nil {
		s.statm.Close()
	}
	m.Events = nil
	for i := range m.Threads {
		m.Threads[i].Events = nil
	}
	for i := range m.Vars {
		m.Vars[i].Accesses, m.Vars[i].access = nil, nil
	}
	m.scope = nil                         // its trees were in the arena
	m.lockOps, m.threadLockOps = nil, nil // and so were these
	m.sync, m.flowCk = nil, nil
	s.snapMu.Lock()
	snaps := slices.Collect(maps.Keys(s.snaps))
	s.snapMu.Unlock()
	for _, a := range snaps {
		a.close()
	}
	return errors.Join(s.events.close(), s.arena.Load().close(), s.locks.Load().close())
}

// build runs read, the loop that feeds the builder its lines or records,
// and finishes the model; on any failure the spill files made so far are
// closed.
func (b *builder) build(name string, read func() error) (*Model, error) {
	if err := b.spillPlan(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			b.m.Close()
		}
	}()
	if err := read(); err != nil {
		if !errors.Is(err, errStopped) {
			return nil, err
		}
		m, err := b.finishPrefix()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		ok = true
		return m, nil
	}
	if b.eventLines == 0 && !b.opts.AllowEmpty && b.m.Skipped == 0 {
		// A broken recording step must not pass as a clean program.
		return nil, &ParseError{File: name, Msg: noEventsMsg}
	}
	if b.recorded && !b.ended && !b.opts.Lenient {
		return nil, &ParseError{File: name, Line: b.lastLine, Msg: "truncated after this line: a trace of mcpredict record ends with a \"# end:\" line, and this one has none (the file was cut short: copy or record it again, or read what there is with --lenient)"}
	}
	m, err := b.finish()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ok = true
	return m, nil
}

// spillPlan sets the number of events at which the parse moves its events
// to a file (b.spillAt; -1: never).
func (b *builder) spillPlan() error {
	b.spillAt = -1
	switch b.opts.Spill {
	case SpillAlways:
		if !spillSupported {
			return ErrSpillUnsupported
		}
		b.spillAt = 0
	case SpillAuto, "":
		if spillSupported {
			b.spillAt = b.opts.SpillAfter
			if b.spillAt <= 0 {
				b.spillAt = DefaultSpillAfter
			}
		}
	case SpillNever:
	default:
		_, err := ParseSpillMode(string(b.opts.Spill))
		return err
	}
	return nil
}

// makeRoom is called before each line: it moves the events to a file at
// b.spillAt, and reserves the file's next chunk when the reserved part is
// full.
func (b *builder) makeRoom(maxEvents int) error {
	if b.m.spill == nil {
		if len(b.m.Events) != b.spillAt {
			return nil
		}
		return b.startSpill(maxEvents)
	}
	mf := b.m.spill.events
	need := int64(len(b.m.Events)+1) * eventSize
	if need <= mf.size.Load() {
		return nil
	}
	return mf.reserve(need + spillChunk*eventSize)
}

// startSpill moves the events parsed so far to a new temporary file,
// reserved for up to maxEvents events, and makes b.m.Events a slice of it.
func (b *builder) startSpill(maxEvents int) error {
	if maxEvents <= 0 || maxEvents > maxIndex {
		maxEvents = maxIndex
	}
	dir := b.opts.SpillDir
	mf, err := newMappedFile(dir, int64(maxEvents+1)*eventSize)
	if err != nil {
		return err
	}
	n := len(b.m.Events)
	if err := mf.reserve(int64(n+spillChunk) * eventSize); err != nil {
		mf.close()
		return err
	}
	evs := unsafe.Slice((*Event)(unsafe.Pointer(&mf.data[0])), maxEvents+1)
	copy(evs, b.m.Events)
	b.m.Events = evs[:n]
	res := b.opts.MaxResident
	if res <= 0 {
		res = DefaultMaxResident
	}
	b.m.spill = &spillStore{dir: mf.dir, maxResident: res, events: mf, snapAfter: b.spillAt, maxEvents: maxEvents}
	b.m.spill.startTrimmer()
	return b.spillLockOps()
}

// buildIndexes fills Thread.Events and Var.Accesses from the events: in
// one allocation (of the heap, or of the spill file), two passes.
func (m *Model) buildIndexes(bucket int) error {
	perThread := make([]int, len(m.Threads))
	perVar := make([]int, len(m.Vars))
	accesses := 0
	for i := range m.Events {
		m.Pace(i)
		e := &m.Events[i]
		perThread[e.Thread-1]++
		if e.Kind.IsAccess() {
			perVar[e.Obj]++
			accesses++
		}
	}
	total := len(m.Events) + accesses
	flat, err := m.int32s(total)
	if err != nil {
		return err
	}
	words, err := m.int32s(accesses * accessWords)
	if err != nil {
		return err
	}
	var infos []Access
	if accesses > 0 {
		infos = unsafe.Slice((*Access)(unsafe.Pointer(&words[0])), accesses)
	}
	off := 0
	for i, n := range perThread {
		m.Threads[i].Events = flat[off : off : off+n]
		off += n
	}
	for i := range m.Events {
		m.Pace(i)
		th := &m.Threads[m.Events[i].Thread-1]
		th.Events = append(th.Events, int32(i))
	}
	if bucket <= 0 {
		bucket = bucketAccesses
	}
	m.fillAccesses(perVar, flat[off:], infos, bucket)
	return nil
}

// bucketAccesses is the default of the most accesses of one bucket of
// fillAccesses (32 MB of Access): a window of the output that stays in
// memory.
const bucketAccesses = 2 << 20

// fillAccesses fills Vars[v].Accesses (from evIdx) and Vars[v].access
// (from infos), both laid out by variable, perVar[v] each. It is a
// two-pass distribution: a direct one would write, event after event, at
// as many places of the output as there are variables (32,768 pages for
// 16,384 variables), which a spilled store would fault in again and
// again. First, buckets of consecutive variables of at most
// bucket accesses each get their accesses in trace order, each
// bucket in its own part of the output (a cursor per bucket), the
// variable in evIdx; then each bucket, copied aside, is spread over its
// variables, within its own part.
func (m *Model) fillAccesses(perVar []int, evIdx []int32, infos []Access, bucket int) {
	// Buckets: bucketOf[v], and each bucket's start in the output.
	bucketOf := make([]int32, len(perVar))
	var starts []int
	n, size := 0, 0
	for v, c := range perVar {
		if c == 0 {
			continue
		}
		if len(starts) == 0 || size > 0 && size+c > bucket {
			starts = append(starts, n)
			size = 0
		}
		bucketOf[v] = int32(len(starts) - 1)
		size += c
		n += c
	}
	starts = append(starts, n)
	cursor := append([]int(nil), starts[:len(starts)-1]...)
	for i := range m.Events {
		m.Pace(i)
		e := &m.Events[i]
		if !e.Kind.IsAccess() {
			continue
		}
		b := bucketOf[e.Obj]
		k := cursor[b]
		cursor[b]++
		infos[k] = Access{Ev: int32(i), Thread: e.Thread, Pos: e.Pos, Kind: e.Kind, Data: e.Data}
		evIdx[k] = e.Obj
	}
	// Each bucket: the variables' slices, in order, over its part.
	off := 0
	var (
		tmp  []Access
		vars []int32
	)
	v := 0
	for b := 0; b+1 < len(starts); b++ {
		lo, hi := starts[b], starts[b+1]
		for v < len(perVar) && perVar[v] == 0 {
			v++
		}
		if perVar[v] == hi-lo {
			// One variable (one larger than a bucket, in a server trace
			// tens of millions of accesses): already in order in place,
			// with no copy of them aside.
			for k := lo; k < hi; k++ {
				m.Pace(k)
				evIdx[k] = infos[k].Ev
			}
			m.Vars[v].Accesses, m.Vars[v].access = evIdx[lo:hi], infos[lo:hi]
			off = hi
			v++
			continue
		}
		tmp = append(tmp[:0], infos[lo:hi]...)
		vars = append(vars[:0], evIdx[lo:hi]...)
		for ; v < len(perVar) && (perVar[v] == 0 || int(bucketOf[v]) == b); v++ {
			if c := perVar[v]; c > 0 {
				m.Vars[v].Accesses = evIdx[off : off : off+c]
				m.Vars[v].access = infos[off : off : off+c]
				off += c
			}
		}
		for k := range tmp {
			m.Pace(k)
			x := &m.Vars[vars[k]]
			x.Accesses = append(x.Accesses, tmp[k].Ev)
			x.access = append(x.access, tmp[k])
		}
	}
}

// arenaPerEvent bounds the arena's bytes per event: the indexes (8), the
// accesses by variable (16), the scope trees (2 int32s per event rounded
// up to a power of two per thread: up to 16) and invocations (4).
const arenaPerEvent = 48

// lockOpSize is the size of a lockOp in bytes.
const lockOpSize = int64(unsafe.Sizeof(lockOp{}))

// minLockOps is the capacity of a (lock, thread)'s first lock operations
// in the file.
const minLockOps = 64

// appendLockOp appends op to the lock operations of key. Once the events
// are spilled, the operations grow in a file of their own (spillStore.locks)
// instead of the heap, where a server trace's, one per lock operation,
// grew with the trace (350 MB of a 100 M-event one, twice that with the
// collector's headroom). A failure to grow the file is kept in b.lockErr,
// and the operation goes to the heap meanwhile: the parse stops at the
// next line.
func (b *builder) appendLockOp(key lockThread, op lockOp) {
	ops := b.m.lockOps[key]
	if s := b.m.spill; s != nil && len(ops) == cap(ops) && b.lockErr == nil {
		grown, err := s.placeLockOps(ops, max(2*cap(ops), minLockOps))
		if err != nil {
			b.lockErr = err
		} else {
			ops = grown
		}
	}
	b.m.lockOps[key] = append(ops, op)
}

// placeLockOps copies ops to a new part of the lock operations' file with
// room for n, and returns the copy. Past the file's reservation of address
// space it returns ops as they are, for append to grow them in the heap.
func (s *spillStore) placeLockOps(ops []lockOp, n int) ([]lockOp, error) {
	lf := s.locks.Load()
	if lf == nil {
		// Address space: their number is at most the events', the parts
		// left behind by growing one (lock, thread)'s add up to less than
		// its final size, and a million (lock, thread)s may each have
		// room for more than they use.
		mf, err := newMappedFile(s.dir, (int64(s.maxEvents)+1)*2*lockOpSize+(1<<20)*minLockOps*lockOpSize)
		if err != nil {
			return nil, err
		}
		s.locks.Store(mf)
		lf = mf
	}
	start := s.locksUsed
	end := start + int64(n)*lockOpSize
	if end > int64(len(lf.data)) {
		return ops, nil
	}
	if end > lf.size.Load() {
		if err := lf.reserve(end + spillChunk); err != nil {
			return nil, err
		}
	}
	s.locksUsed = end
	dst := unsafe.Slice((*lockOp)(unsafe.Pointer(&lf.data[start])), n)
	copy(dst, ops)
	return dst[:len(ops)], nil
}

// spillLockOps moves the lock operations parsed before the events were
// spilled to the lock operations' file.
func (b *builder) spillLockOps() error {
	for k, ops := range b.m.lockOps {
		placed, err := b.m.spill.placeLockOps(ops, max(2*len(ops), minLockOps))
		if err != nil {
			return err
		}
		b.m.lockOps[k] = placed
	}
	return nil
}

// accessWords is the size of an Access in int32s.
const accessWords = int(unsafe.Sizeof(Access{}) / 4)

// int32s returns a zeroed slice of n int32s: from the heap, or from the
// spill arena when the model is spilled.
func (m *Model) int32s(n int) ([]int32, error) {
	s := m.spill
	if s == nil || n == 0 {
		return make([]int32, n), nil
	}
	a := s.arena.Load()
	if a == nil {
		var err error
		a, err = newMappedFile(s.dir, int64(len(m.Events)+1024)*arenaPerEvent)
		if err != nil {
			return nil, err
		}
		s.arena.Store(a)
	}
	start := s.used // int32s and Access need 4-byte alignment only
	end := start + int64(n)*4
	if end > int64(len(a.data)) {
		// Not by arenaPerEvent's bound; the heap is still correct.
		return make([]int32, n), nil
	}
	if err := a.reserve(end); err != nil {
		return nil, err
	}
	s.used = end
	return unsafe.Slice((*int32)(unsafe.Pointer(&a.data[start])), n), nil
}
