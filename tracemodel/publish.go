package tracemodel

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Publication sets: a pointer and a field of its target.
//
// The inference leaves out a pointer and what it points to (pointerOf,
// notInferable): what a thread reads through the pointer depends on the
// pointer's value. That is also how double-checked locking goes wrong:
//
//	if (!g) {                       reader: c = g; (no lock)
//		lock(&m);                           ... c->value ...
//		if (!g) {
//			g = calloc(1, sizeof *g);
//			g->value = 42;  the reader can come in before this write
//		}
//		unlock(&m);
//	}
//
// A reader that reads the pointer between its publication and the filling
// of the object reads a field that is still zero — the half-done update
// read M5 over the pointer and the field. With one field there is no
// second field for the inference to pair it with (publish_unfilled.c's
// reader reads four, and those are paired). So a pointer p and a field f
// of its target are a publication set when
//
//   - a thread writes p and later f in one region, in one hold of a lock
//     (exclusive) — the object published, then filled, under the lock;
//   - another thread reads p and then f (its next access of f) in one
//     region, holding none of those locks at either read, not even for
//     reading: it follows the pointer it read without the lock.
//
// An object filled before it is published (a copy-on-write swap, a
// release store) and a reader of f under the lock are no publication. The
// set's models decide the rest: a reader ordered after the fill by
// synchronization gives no instance, and a read of p that steers the read
// of f stays after the write of p it saw (the steering-read rule). A field
// of the target is one the recorder names through the pointer (f named
// p->…, p#k->… or p[i]), or one that a steering read of p directly
// selected (notInferable's addressed pairs), unless p is a field of f's
// object.

// maxPubWriters bounds the distinct writers (thread and locks) that
// publications keeps per pair: one that no reader matches is enough to
// know, a few to cover the threads.
const maxPubWriters = 8

// maxPubReads bounds the readers' matching reads that publications counts
// per pair: the count ranks a pointer's fields, and a hot pointer is read
// millions of times.
const maxPubReads = 64

// pubWriter is a thread that wrote a pair's pointer and then its field in
// one region, and the locks it held across both, in one hold.
type pubWriter struct {
	thread int32
	locks  []int32
}

// publications returns the publication sets among the shared variables
// (isShared), with their correlation: regions counts the writers' regions
// and the readers' matching ones, co their kinds (the writer's writes of
// both, the reader's reads). addressed holds the pairs of which a steering
// read of one directly selected the other (bit i: pair[i] was read).
// At most maxPartners fields of one pointer are kept: those that a reader
// read closest after the pointer, then those read the most, then in
// variable order.
func (m *Model) publications(isShared []bool, addressed map[[2]int32]uint8, maxPartners int) map[[2]int32]*pairStat {
	byName := map[string]int32{}
	for v := range m.Vars {
		if v > 0 && isShared[v] {
			byName[m.Vars[v].Name] = int32(v)
		}
	}
	type cand struct{ ptr, field int32 }
	var cands []cand
	seen := map[cand]bool{}
	add := func(c cand) {
		if c.ptr != c.field && c.ptr > 0 && isShared[c.ptr] && isShared[c.field] && !seen[c] {
			seen[c] = true
			cands = append(cands, c)
		}
	}
	for v := range m.Vars {
		if v == 0 || !isShared[v] {
			continue
		}
		if p, ok := byName[targetPointer(m.Vars[v].Name)]; ok {
			add(cand{p, int32(v)})
		}
	}
	for pair, by := range addressed {
		for i := range 2 {
			// A field that selects a sibling (a length read before the
			// data it bounds) is no pointer to it: such pairs are the
			// inference's own.
			if p, f := pair[i], pair[1-i]; by>>i&1 != 0 && objectOf(m.Vars[p].Name) != objectOf(m.Vars[f].Name) {
				add(cand{p, f})
			}
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.ptr, b.ptr), cmp.Compare(a.field, b.field))
	})
	type found struct {
		field int32
		st    *pairStat
		gap   int32 // the fewest events between a read of the pointer and the field's
	}
	var out map[[2]int32]*pairStat
	pc := m.Pacer()
	for len(cands) > 0 {
		p := cands[0].ptr
		n := 1
		for n < len(cands) && cands[n].ptr == p {
			n++
		}
		fields := cands[:n]
		cands = cands[n:]
		ptrs, written := m.byThread(p, &pc)
		if !written {
			continue
		}
		var fs []found
		for _, c := range fields {
			accs, _ := m.byThread(c.field, &pc)
			writers := m.pubWriters(ptrs, accs)
			if len(writers) == 0 {
				continue
			}
			st := &pairStat{}
			for _, w := range writers {
				st.regions++
				setCo(st, w.thread, 3) // writes of both
			}
			if gap := m.pubReaders(ptrs, accs, writers, st, &pc); gap > 0 {
				fs = append(fs, found{c.field, st, gap})
			}
		}
		// The fields read closest to the pointer first: a read of another
		// field in between, which saw the value the writer stored, would
		// order the reader after that store (the observed data flow).
		slices.SortStableFunc(fs, func(a, b found) int {
			return cmp.Or(cmp.Compare(a.gap, b.gap), cmp.Compare(b.st.regions, a.st.regions))
		})
		for _, f := range fs[:min(maxPartners, len(fs))] {
			if out == nil {
				out = map[[2]int32]*pairStat{}
			}
			out[[2]int32{min(p, f.field), max(p, f.field)}] = f.st
		}
	}
	return out
}

// setCo marks, in st, thread t as one that accessed the pair with the
// kinds of co index k (kx*2+ky, 0 read, 1 write).
func setCo(st *pairStat, t int32, k int) {
	if t <= 64 {
		st.co[k] |= 1 << (t - 1)
	} else {
		st.anyLocal = true
	}
}

// targetPointer returns the name of the pointer variable through which
// the recorder named a variable of a heap block: pointerOf's for a field
// ("g" of "g->value" and of "g#2->value"), and for an element of a block
// of scalars ("buf" of "buf[3]" and of "buf#2[3]"); "" for other names.
// An element of a global array has the array's name as its base, which
// names no variable of its own.
func targetPointer(name string) string {
	if p := pointerOf(name); p != "" {
		return p
	}
	if !strings.HasSuffix(name, "]") || strings.ContainsRune(name, '(') {
		return ""
	}
	i := strings.LastIndexByte(name, '[')
	if i <= 0 || strings.IndexFunc(name[i+1:len(name)-1], func(r rune) bool { return !isDigit(byte(r)) }) >= 0 || i+1 == len(name)-1 {
		return ""
	}
	p := name[:i]
	if j := strings.LastIndexByte(p, '#'); j > 0 {
		p = p[:j]
	}
	return p
}

// byThread splits the accesses of v by thread, each list in trace order
// (and so in position order), and reports whether one is a write.
func (m *Model) byThread(v int32, pc *Pacer) (map[int32][]Access, bool) {
	out := map[int32][]Access{}
	written := false
	for _, a := range m.Vars[v].access {
		pc.Step()
		out[a.Thread] = append(out[a.Thread], a)
		written = written || a.Kind == Write
	}
	return out, written
}

// sameRegion reports whether no region boundary of the inference lies
// between the accesses at positions a < b of thread t (a blocking event,
// a hand-off, the end of an operation; w is the thread's last write of
// the pair at or before a, 0 if none), as correlate sees regions.
func (m *Model) sameRegion(t, w, a, b int32) bool {
	return !anyIn(m.blocking[t-1], a+1, b) && !anyIn(m.handoffs[t-1], a+1, b) && m.scopeBreak(int(t), w, a, b) == 0
}

// pubWriters returns the threads that wrote the pointer and then the
// field in one region, in one exclusive hold of a lock, with those locks
// (at most maxPubWriters distinct ones); ptrs and fields are the two
// variables' accesses by thread.
func (m *Model) pubWriters(ptrs, fields map[int32][]Access) []pubWriter {
	var out []pubWriter
	for _, t := range slices.Sorted(maps.Keys(ptrs)) {
		fs := fields[t]
		for _, a := range ptrs[t] {
			if a.Kind != Write || len(fs) == 0 {
				continue
			}
			// The thread's first write of the field after the pointer's.
			i := sort.Search(len(fs), func(i int) bool { return fs[i].Pos > a.Pos })
			for i < len(fs) && fs[i].Kind != Write {
				i++
			}
			if i == len(fs) || !m.sameRegion(t, a.Pos, a.Pos, fs[i].Pos) {
				continue
			}
			b := fs[i].Pos
			var locks []int32
			for k, l := range m.threadLocks[t-1] {
				ops := m.threadLockOps[t-1][k]
				if h := holdAt(ops, a.Pos); h >= 0 && h == holdAt(ops, b) {
					locks = append(locks, l)
				}
			}
			if len(locks) == 0 {
				continue
			}
			w := pubWriter{thread: t, locks: locks}
			if !slices.ContainsFunc(out, func(o pubWriter) bool { return o.thread == w.thread && slices.Equal(o.locks, w.locks) }) {
				out = append(out, w)
				if len(out) == maxPubWriters {
					return out
				}
			}
		}
	}
	return out
}

// pubReaders returns the fewest positions from a thread's read of the
// pointer to its read of the field, over the reads of the field that are
// the thread's next access of it after one of the pointer, in the same
// region, holding none of the locks of a writer of another thread at
// either read; 0 if there are none. It adds those reads (up to
// maxPubReads, the threads in order) to st. ptrs and fields are the two
// variables' accesses by thread.
func (m *Model) pubReaders(ptrs, fields map[int32][]Access, writers []pubWriter, st *pairStat, pc *Pacer) int32 {
	n, gap := 0, int32(0)
	for _, t := range slices.Sorted(maps.Keys(ptrs)) {
		fs := fields[t]
		if len(fs) == 0 {
			continue
		}
		j := 0                // fs[:j] are before the current access of ptr
		lastWrite := int32(0) // the thread's last write of the pair before it
		for _, a := range ptrs[t] {
			pc.Step()
			for j < len(fs) && fs[j].Pos < a.Pos {
				if fs[j].Kind == Write {
					lastWrite = max(lastWrite, fs[j].Pos)
				}
				j++
			}
			if a.Kind == Write {
				lastWrite = a.Pos
				continue
			}
			if j == len(fs) {
				break
			}
			f := fs[j]
			if f.Kind != Read || !m.sameRegion(t, lastWrite, a.Pos, f.Pos) || !slices.ContainsFunc(writers, func(wr pubWriter) bool {
				return wr.thread != t && !m.holdsAny(t, wr.locks, a.Pos) && !m.holdsAny(t, wr.locks, f.Pos)
			}) {
				continue
			}
			st.regions++
			setCo(st, t, 0) // reads of both
			if d := f.Pos - a.Pos; gap == 0 || d < gap {
				gap = d
			}
			if n++; n == maxPubReads {
				return gap
			}
		}
	}
	return gap
}

// holdsAny reports whether thread t holds one of locks at position pos,
// exclusively or for reading (a read hold keeps a writer out too).
func (m *Model) holdsAny(t int32, locks []int32, pos int32) bool {
	for k, l := range m.threadLocks[t-1] {
		if !slices.Contains(locks, l) {
			continue
		}
		ops := m.threadLockOps[t-1][k]
		i := sort.Search(len(ops), func(i int) bool { return ops[i].Pos > pos }) - 1
		if i >= 0 && ops[i].Pos < pos && (ops[i].Kind == StepLock || ops[i].Kind == StepWrLock || ops[i].Kind == StepRdLock) {
			return true
		}
	}
	return false
}
