package recorder

import "debug/dwarf"

// block is one live heap allocation.
type block struct {
	base, size uint64
	id         uint64 // sequence number of its Alloc: identifies the lifetime
	gen        int    // how many blocks have started at base so far (1, 2, …)

	// Set when the block is named after a pointer it was reached through.
	name  string
	typ   dwarf.Type // the pointee type
	depth int        // pointer hops from a global (1 for buf->x)
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

// heapTracker replays Alloc and Free events.
type heapTracker struct {
	live blockMap
	gens map[uint64]int // base -> number of blocks that started there
}

func newHeapTracker() *heapTracker {
	return &heapTracker{gens: map[uint64]int{}}
}

// alloc starts a block (or resizes it, for a realloc in place) and returns
// it. Blocks it overlaps are dropped: their Free was not recorded (freed
// by uninstrumented code before recording started, for example).
func (h *heapTracker) alloc(base, size, id uint64) *block {
	if b := h.live.at(base); b != nil {
		b.size = size
		return b
	}
	end := base + size
	if size == 0 {
		end = base + 1
	}
	if b := h.live.floor(base); b != nil && b.end() > base {
		h.live.remove(b.base)
	}
	for b := h.live.ceil(base); b != nil && b.base < end; b = h.live.ceil(base) {
		h.live.remove(b.base)
	}
	h.gens[base]++
	b := &block{base: base, size: size, id: id, gen: h.gens[base]}
	h.live.insert(b)
	return b
}

func (h *heapTracker) free(base uint64) *block {
	return h.live.remove(base)
}
