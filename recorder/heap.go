package recorder

import "debug/dwarf"

// block is one heap allocation: of malloc and friends, or of a function
// named with --alloc-func (user).
type block struct {
	base, size uint64
	sizeKnown  bool   // false: a user block whose function takes no size
	id         uint64 // sequence number of its Alloc: identifies the lifetime
	user       bool
	fn         string // the allocator: malloc, calloc, new, apr_palloc …
	site       uint64 // the pc of the allocation call
	thread     uint64 // the allocating thread's token
	ordinal    int    // its number among the thread's blocks of that site

	// The first pass names the block; the second finds the name here.
	name  string
	typ   dwarf.Type // the pointee type of a pointer it was reached by
	depth int        // pointer hops from a global or stack root (path names)
	path  bool       // named after a pointer (buf->x), not the site
	// reach is the pointer path a block not named after it was first
	// reached through (head->next->next), kept as a detail; tname the
	// name of its struct type when its variables are named by type and
	// site (node.count(calloc@list.c:50#4)).
	reach string
	tname string

	// The first pass notes the accesses' shapes (acc[off]: the largest
	// access that started at off, up to maxFitBytes) until the block
	// ends; checkFit then keeps in learned.misfit the leaves of its type
	// they do not fit, which the last pass finds here.
	acc     []uint8
	fitDone bool
	misfit  []leafKey
}

// end is the first address past the block (a zero-sized block still owns
// its first byte, so that it can be found).
func (b *block) end() uint64 {
	if b.size == 0 {
		return b.base + 1
	}
	return b.base + b.size
}

// blockMap is an ordered map of live blocks by base address: a treap, so
// that the block containing an interior address is found in O(log n)
// however many blocks are live.
type blockMap struct {
	root *tnode
	rnd  uint64 // xorshift state for priorities
	n    int
}

type tnode struct {
	b           *block
	prio        uint64
	left, right *tnode
}

func (m *blockMap) nextPrio() uint64 {
	if m.rnd == 0 {
		m.rnd = 0x9e3779b97f4a7c15
	}
	m.rnd ^= m.rnd << 13
	m.rnd ^= m.rnd >> 7
	m.rnd ^= m.rnd << 17
	return m.rnd
}

// split divides t into keys < k and keys >= k.
func split(t *tnode, k uint64) (l, r *tnode) {
	if t == nil {
		return nil, nil
	}
	if t.b.base < k {
		t.right, r = split(t.right, k)
		return t, r
	}
	l, t.left = split(t.left, k)
	return l, t
}

func merge(l, r *tnode) *tnode {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.prio > r.prio:
		l.right = merge(l.right, r)
		return l
	default:
		r.left = merge(l, r.left)
		return r
	}
}

// insert adds b; the caller has removed any block at the same base.
func (m *blockMap) insert(b *block) {
	l, r := split(m.root, b.base)
	m.root = merge(merge(l, &tnode{b: b, prio: m.nextPrio()}), r)
	m.n++
}

// remove deletes the block at base and returns it, or nil.
func (m *blockMap) remove(base uint64) *block {
	l, r := split(m.root, base)
	mid, r := split(r, base+1)
	m.root = merge(l, r)
	if mid == nil {
		return nil
	}
	m.n--
	return mid.b
}

// floor returns the block with the greatest base <= a.
func (m *blockMap) floor(a uint64) *block {
	var best *block
	for t := m.root; t != nil; {
		if t.b.base <= a {
			best = t.b
			t = t.right
		} else {
			t = t.left
		}
	}
	return best
}

// ceil returns the block with the least base >= a.
func (m *blockMap) ceil(a uint64) *block {
	var best *block
	for t := m.root; t != nil; {
		if t.b.base >= a {
			best = t.b
			t = t.left
		} else {
			t = t.right
		}
	}
	return best
}

// at returns the block starting exactly at a.
func (m *blockMap) at(a uint64) *block {
	if b := m.floor(a); b != nil && b.base == a {
		return b
	}
	return nil
}

// containing returns the block that contains address a.
func (m *blockMap) containing(a uint64) *block {
	if b := m.floor(a); b != nil && a < b.end() {
		return b
	}
	return nil
}

// maxUnknownExtent bounds a user block of unknown size: it extends to the
// next user block, the end of the malloc block holding it, or this many
// bytes.
const maxUnknownExtent = 64 << 10

// heapTracker replays Alloc and Free events. Blocks of --alloc-func
// functions (user blocks) usually lie inside malloc blocks (the pool's
// chunks): they are kept apart and found first. Freed blocks are kept
// until memory is allocated over them, so that an access after the free
// (a use after free) is named like the accesses before it.
type heapTracker struct {
	live, dead   blockMap // malloc blocks
	ulive, udead blockMap // user blocks
	// [lo, hi) holds every block ever tracked: find looks no further for
	// an address outside (a global, a stack).
	lo, hi uint64
}

// cover widens [lo, hi) to [lo, hi) of a block.
func (h *heapTracker) cover(lo, hi uint64) {
	if h.lo >= h.hi {
		h.lo, h.hi = lo, hi
		return
	}
	h.lo, h.hi = min(h.lo, lo), max(h.hi, hi)
}

func newHeapTracker() *heapTracker { return &heapTracker{} }

// removeOverlaps drops the blocks of m that overlap [lo, hi) and returns
// them.
func removeOverlaps(m *blockMap, lo, hi uint64) []*block {
	var out []*block
	if b := m.floor(lo); b != nil && b.base < lo && b.end() > lo {
		out = append(out, m.remove(b.base))
	}
	for b := m.ceil(lo); b != nil && b.base < hi; b = m.ceil(lo) {
		out = append(out, m.remove(b.base))
	}
	return out
}

// alloc starts a malloc block (or resizes one, for a realloc in place)
// and returns it. Blocks it overlaps are dropped: their Free was not
// recorded (freed by uninstrumented code before recording started, for
// example), or they were freed. User blocks inside it belonged to memory
// that has been given back.
func (h *heapTracker) alloc(b *block) *block {
	if old := h.live.at(b.base); old != nil {
		old.size = b.size
		h.cover(old.base, old.end())
		return old
	}
	end := b.end()
	h.cover(b.base, end)
	removeOverlaps(&h.live, b.base, end)
	removeOverlaps(&h.dead, b.base, end)
	removeOverlaps(&h.ulive, b.base, end)
	removeOverlaps(&h.udead, b.base, end)
	h.live.insert(b)
	return b
}

// ualloc starts a user block. One at the same address as a live one ends
// that one's lifetime: the pool reused the memory.
func (h *heapTracker) ualloc(b *block) *block {
	end := b.end()
	if !b.sizeKnown {
		end = b.base + 1
	}
	h.cover(b.base, max(b.end(), b.base+maxUnknownExtent))
	removeOverlaps(&h.ulive, b.base, end)
	removeOverlaps(&h.udead, b.base, end)
	h.ulive.insert(b)
	return b
}

// free ends a malloc block, and the user blocks inside it.
func (h *heapTracker) free(base uint64) *block {
	b := h.live.remove(base)
	if b == nil {
		return nil
	}
	for _, u := range removeOverlaps(&h.ulive, b.base, b.end()) {
		removeOverlaps(&h.udead, u.base, u.base+1)
		h.udead.insert(u)
	}
	removeOverlaps(&h.dead, b.base, b.end())
	h.dead.insert(b)
	return b
}

// ufree ends a user block.
func (h *heapTracker) ufree(base uint64) *block {
	b := h.ulive.remove(base)
	if b == nil {
		return nil
	}
	removeOverlaps(&h.udead, b.base, b.base+1)
	h.udead.insert(b)
	return b
}

// userEnd is where a user block ends: its size, or for one of unknown
// size the next user block, the end of the malloc block holding it, or
// maxUnknownExtent.
func (h *heapTracker) userEnd(m *blockMap, b *block) uint64 {
	if b.sizeKnown {
		return b.end()
	}
	end := b.base + maxUnknownExtent
	if n := m.ceil(b.base + 1); n != nil && n.base < end {
		end = n.base
	}
	if c := h.live.containing(b.base); c != nil && c.end() < end {
		end = c.end()
	}
	return end
}

// find returns the block holding address a and where it ends: a live
// user block, a freed one, a live malloc block, a freed one.
func (h *heapTracker) find(a uint64) (*block, uint64) {
	if a < h.lo || a >= h.hi {
		return nil, 0
	}
	for _, m := range []*blockMap{&h.ulive, &h.udead} {
		if b := m.floor(a); b != nil {
			if end := h.userEnd(m, b); a < end {
				return b, end
			}
		}
	}
	for _, m := range []*blockMap{&h.live, &h.dead} {
		if b := m.containing(a); b != nil {
			return b, b.end()
		}
	}
	return nil, 0
}

// liveAt returns the live block that starts at a, a user block first.
func (h *heapTracker) liveAt(a uint64) *block {
	if a < h.lo || a >= h.hi {
		return nil
	}
	if b := h.ulive.at(a); b != nil {
		return b
	}
	return h.live.at(a)
}
