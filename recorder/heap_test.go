package recorder

import "testing"

func sysBlock(base, size, id uint64) *block {
	return &block{base: base, size: size, sizeKnown: true, id: id}
}

func userBlock(base, size, id uint64, known bool) *block {
	return &block{base: base, size: size, sizeKnown: known, id: id, user: true}
}

func TestHeapTrackerDropsOverlaps(t *testing.T) {
	h := newHeapTracker()
	h.alloc(sysBlock(100, 50, 1))
	h.alloc(sysBlock(120, 10, 2)) // inside the first: its Free was missed
	if b := h.live.containing(110); b != nil {
		t.Errorf("stale block %+v still live", b)
	}
	if b, _ := h.find(125); b == nil || b.id != 2 {
		t.Errorf("find(125) = %+v, want block 2", b)
	}
	// Realloc in place: the same block, resized.
	if b := h.alloc(sysBlock(120, 20, 3)); b.id != 2 || b.size != 20 {
		t.Errorf("resize gave %+v, want block 2 of size 20", b)
	}
}

func TestHeapTrackerFreedBlocks(t *testing.T) {
	h := newHeapTracker()
	h.alloc(sysBlock(100, 16, 1))
	h.free(100)
	// A use after free is named like the block's accesses before.
	if b, _ := h.find(108); b == nil || b.id != 1 {
		t.Errorf("after the free, find(108) = %+v, want block 1", b)
	}
	// Memory allocated again is the new block only.
	h.alloc(sysBlock(96, 32, 2))
	if b, _ := h.find(108); b == nil || b.id != 2 {
		t.Errorf("after the reuse, find(108) = %+v, want block 2", b)
	}
	if h.dead.n != 0 {
		t.Errorf("%d freed blocks kept under a live one", h.dead.n)
	}
}

func TestHeapTrackerUserBlocks(t *testing.T) {
	h := newHeapTracker()
	h.alloc(sysBlock(1000, 1000, 1)) // the pool's chunk
	h.ualloc(userBlock(1000, 0, 2, false))
	h.ualloc(userBlock(1064, 0, 3, false))
	h.ualloc(userBlock(1200, 100, 4, true))
	for _, c := range []struct {
		a    uint64
		want uint64
	}{
		{1000, 2}, {1063, 2}, // unknown size: up to the next user block
		{1064, 3}, {1199, 3},
		{1250, 4},
		{1300, 1}, // past block 4: the chunk
		{1999, 1},
	} {
		if b, _ := h.find(c.a); b == nil || b.id != c.want {
			t.Errorf("find(%d) = %+v, want block %d", c.a, b, c.want)
		}
	}
	// The pool hands block 3's memory out again without a free: a new
	// lifetime.
	h.ualloc(userBlock(1064, 0, 5, false))
	if b, _ := h.find(1070); b == nil || b.id != 5 {
		t.Errorf("reused: find(1070) = %+v, want block 5", b)
	}
	// --free-func: the block stays findable (use after free) until reused.
	h.ufree(1000)
	if b, _ := h.find(1010); b == nil || b.id != 2 {
		t.Errorf("freed user block: find(1010) = %+v, want block 2", b)
	}
	// Freeing the chunk ends the user blocks in it; a new malloc there
	// is a block of its own.
	h.free(1000)
	h.alloc(sysBlock(1000, 40, 6))
	if b, _ := h.find(1010); b == nil || b.id != 6 {
		t.Errorf("new malloc over the pool: find(1010) = %+v, want block 6", b)
	}
	if b, _ := h.find(1250); b == nil || b.id != 4 {
		t.Errorf("dead user block outside the new malloc: find(1250) = %+v, want block 4", b)
	}
}
