package tracemodel

import (
	"sort"
	"unsafe"
)

// snapLog is one thread's clock snapshots in an Order, by increasing
// position: snapshot i is the thread's clock from position pos(i) until
// the next snapshot.
//
// A trace of few threads (at most denseThreads) keeps each snapshot as a
// row — its position, then one component per thread — in chunks of
// chunkRows rows: a data-flow order of a server changes a thread's clock
// at about one event in five, and a persistent clock per snapshot (a
// 32-component leaf and its node, 168 bytes) made these orders most of
// the heap; a row of 9 threads is 40 bytes and holds no pointer for the
// garbage collector to follow. The chunks of a spilled model's orders are
// in a temporary file (snapArena), so that orders, like the events, do
// not grow the heap with the trace. A trace of more threads keeps the
// persistent clocks (vclock), whose snapshots share all but the path they
// change.
type snapLog struct {
	n      int
	chunks [][]int32 // rows of width+1 int32s: position, then components
	arena  *snapArena
	// Persistent clocks, when width is 0.
	poss  []int32
	vcs   []vclock
	width int // components per row; 0: persistent clocks
}

// denseThreads is the most threads whose snapshots are kept as rows: a
// row then fits the one leaf of their vclock.
const denseThreads = vcWidth

// chunkRows is the number of rows of a chunk (a power of two).
const (
	chunkBits = 12
	chunkRows = 1 << chunkBits
)

// newSnapLogs returns the empty logs of an order of nt threads, their
// rows in arena (nil: the heap).
func newSnapLogs(nt int, arena *snapArena) []snapLog {
	w := 0
	if nt <= denseThreads {
		w = nt
	}
	ls := make([]snapLog, nt)
	for i := range ls {
		ls[i].width = w
		if w > 0 {
			ls[i].arena = arena
		}
	}
	return ls
}

// len returns the number of snapshots.
func (l *snapLog) len() int { return l.n }

// row returns snapshot i's row.
func (l *snapLog) row(i int) []int32 {
	s := l.width + 1
	o := (i & (chunkRows - 1)) * s
	return l.chunks[i>>chunkBits][o : o+s]
}

// pos returns the position of snapshot i.
func (l *snapLog) pos(i int) int32 {
	if l.width == 0 {
		return l.poss[i]
	}
	return l.chunks[i>>chunkBits][(i&(chunkRows-1))*(l.width+1)]
}

// add appends the snapshot of clock vc from position pos.
func (l *snapLog) add(pos int32, vc vclock) {
	l.n++
	if l.width == 0 {
		l.poss = append(l.poss, pos)
		l.vcs = append(l.vcs, vc)
		return
	}
	s := l.width + 1
	k := len(l.chunks)
	if k == 0 || len(l.chunks[k-1]) == chunkRows*s {
		l.chunks = append(l.chunks, l.arena.chunk(chunkRows*s))
		k++
	}
	c := l.chunks[k-1]
	n := len(c)
	if n+s <= cap(c) {
		c = c[:n+s]
	} else {
		c = append(c, make([]int32, s)...)
	}
	c[n] = pos
	vc.fill(c[n+1 : n+s])
	l.chunks[k-1] = c
}

// prefix returns the log of the first n snapshots, sharing l's memory:
// appending to it copies.
func (l *snapLog) prefix(n int) snapLog {
	p := snapLog{n: n, width: l.width, arena: l.arena}
	if l.width == 0 {
		p.poss, p.vcs = l.poss[:n:n], l.vcs[:n:n]
		return p
	}
	full, rest := n>>chunkBits, n&(chunkRows-1)
	p.chunks = append([][]int32(nil), l.chunks[:full]...)
	if rest > 0 {
		k := rest * (l.width + 1)
		p.chunks = append(p.chunks, l.chunks[full][:k:k])
	}
	return p
}

// at returns the index of the latest snapshot at or before pos, -1 if none.
func (l *snapLog) at(pos int32) int {
	return sort.Search(l.n, func(i int) bool { return l.pos(i) > pos }) - 1
}

// atFrom is at, given the index of an earlier query's answer (h; -1:
// none): the steps of a model ask in the order of their positions, and the
// answer is then the same snapshot or one of the next few.
func (l *snapLog) atFrom(pos int32, h int) int {
	if h < 0 || h >= l.n || l.pos(h) > pos {
		return l.at(pos)
	}
	for range 8 {
		if h+1 >= l.n || l.pos(h+1) > pos {
			return h
		}
		h++
	}
	return h + sort.Search(l.n-h, func(i int) bool { return l.pos(h+i) > pos }) - 1
}

// get returns component c (0-based) of snapshot i.
func (l *snapLog) get(i, c int) int32 {
	if l.width == 0 {
		return l.vcs[i].get(c)
	}
	if c >= l.width {
		return 0
	}
	return l.row(i)[1+c]
}

// joinInto returns vc joined with snapshot i, and whether it changed.
func (l *snapLog) joinInto(vc vclock, i int) (vclock, bool) {
	if l.width == 0 {
		return vc.join(l.vcs[i])
	}
	return vc.joinDense(l.row(i)[1:])
}

// snapArena hands out the chunks of the snapshot logs of one order (or of
// the orders a model keeps) from a temporary file, as the spill arena does
// the indexes. A nil *snapArena is the heap. Chunks past the file's
// reservation, or after a write to it failed (a full temporary
// directory), come from the heap: the order is the same, only larger in
// memory.
type snapArena struct {
	store  *spillStore
	bound  int64 // the most bytes of rows
	mf     *mappedFile
	used   int64
	failed bool // making the file failed: the heap
}

// chunk returns an empty chunk of capacity n.
func (a *snapArena) chunk(n int) []int32 {
	if a == nil || a.failed {
		return nil // append grows it in the heap
	}
	if a.mf == nil {
		mf, err := newMappedFile(a.store.dir, a.bound)
		a.store.snapMu.Lock()
		a.mf, a.failed = mf, err != nil || !a.store.snaps[a]
		a.store.snapMu.Unlock()
		if a.failed {
			if mf != nil {
				mf.close()
			}
			a.mf = nil
			return nil
		}
	}
	end := a.used + int64(n)*4
	before := a.mf.size.Load()
	if end > int64(len(a.mf.data)) || a.mf.reserve(end) != nil {
		return nil
	}
	a.store.addSnapBytes(a.mf.size.Load() - before)
	c := unsafe.Slice((*int32)(unsafe.Pointer(&a.mf.data[a.used])), n)
	a.used = end
	return c[:0]
}

// newSnapArena returns an arena for an order of model m that replays
// events events, nil (the heap) when the model is in memory, has too many
// threads for rows, or the replay is shorter than the trace before it
// was spilled (Options.SpillAfter: a short order is small in the heap, and
// a model of many variables makes one order per variable). Its file
// is made at the first chunk. It is registered with the spill store, whose trimmer drops
// its pages as it does the events', and which closes it with the model.
func (m *Model) newSnapArena(events int) *snapArena {
	s, nt := m.spill, len(m.Threads)
	if s == nil || nt > denseThreads || events < s.snapAfter {
		return nil
	}
	return s.newArena(int64(events+nt*chunkRows) * int64(nt+1) * 4)
}

// newArena returns an arena of at most bound bytes, registered with the
// store.
func (s *spillStore) newArena(bound int64) *snapArena {
	a := &snapArena{store: s, bound: bound}
	s.snapMu.Lock()
	if s.snaps == nil {
		s.snaps = map[*snapArena]bool{}
	}
	s.snaps[a] = true
	s.snapMu.Unlock()
	return a
}

// Scratch returns a zeroed slice of n int32s for what an analysis derives
// from the model in proportion to its events (the locks held at each
// event): from a temporary file of its own when the model is spilled —
// its pages trimmed with the events', the file given back by Model.Close
// — else, or when no file can be made, from the heap. Like the model's
// other slices, it must not be used after Close.
func (m *Model) Scratch(n int) []int32 {
	if m.spill != nil && n > 0 {
		if c := m.spill.newArena(int64(n) * 4).chunk(n); c != nil {
			return c[:n]
		}
	}
	return make([]int32, n)
}

// close releases the arena's file; every chunk of it must be unused.
func (a *snapArena) close() {
	s := a.store
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	delete(s.snaps, a)
	if a.mf == nil {
		return
	}
	s.snapBytes -= a.mf.size.Load()
	a.mf.close()
	a.mf = nil
}
