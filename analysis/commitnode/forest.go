package commitnode

import (
	"context"
	"encoding/binary"
	"hash/fnv"

	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/units"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Node kinds.
const (
	kRoot uint8 = iota
	kSync
	kLeaf
)

// node is a node of an access tree: the root (the unit), a
// synchronization node (a hold of a lock) or a leaf (an escaped access).
type node struct {
	parent int32 // -1 for a root
	unit   int32 // index in forest.units
	ev     int32 // root: first event; sync: the acquisition; leaf: the access
	lock   int32 // sync: the lock (object id)
	depth  int32
	kind   uint8
	shared bool // sync: a read hold of a rwlock
}

// leaf is an access of the trimmed trees.
type leaf struct {
	node  int32 // its node
	seg   int32 // its segment (units.Conc): accesses are concurrent by segment
	v     int32
	write bool
	// wdepth is the depth of the deepest node that contains both this
	// access and the unit's last earlier write to its variable, -1 if
	// none: a read cannot observe another unit's write through a lock
	// whose node is at most that deep (Figure 6.2).
	wdepth int32
	prevW  int32 // leaf of the unit's last earlier write to v (its kept representative), -1
	final  bool  // the unit-final write to v (its kept representative)
}

// tree is the access tree of a kept unit.
type tree struct {
	src    int   // index of the unit in the units given to build
	lo, hi int32 // its nodes
	seg    int32 // the segment of its first event
	thread int32
	txn    bool // a transaction (not non-transactional code)
}

// forest is the access trees of the units, trimmed (§6.5.1: per parent
// node the first two reads and first two writes of each variable) and with
// at most two copies of identical trees per thread period.
type forest struct {
	m      *tracemodel.Model
	conc   *units.Conc
	nodes  []node
	leaves []leaf
	trees  []tree
	rep    []int32  // by source unit: its tree, or its identical twin's; -1 if none
	sigs   []uint64 // by tree: its signature
	byVar  [][]int32
}

type openNode struct {
	id  int32
	acq int32 // the acquisition event of the hold
	seq int32 // position in the unit when opened
}

// builder builds one unit's tree into scratch slices before it is kept
// or dropped as a third copy.
type builder struct {
	f      *forest
	open   []openNode
	counts map[[2]int32]*trim // (parent node, variable) -> kept accesses
	lastW  map[int32]wInfo    // variable -> the unit's last write so far
	seen   map[uint64]int     // signature -> copies kept
}

type trim struct {
	reads, writes int
	lastKeptW     int32 // leaf
}

type wInfo struct {
	seq  int32 // position in the unit
	leaf int32 // its kept representative
}

// build builds the forest of the units us of m.
func build(ctx context.Context, m *tracemodel.Model, us []units.Unit, esc *escape.Info, conc *units.Conc) (*forest, error) {
	f := &forest{m: m, conc: conc, rep: make([]int32, len(us))}
	b := &builder{f: f, counts: map[[2]int32]*trim{}, lastW: map[int32]wInfo{}, seen: map[uint64]int{}}
	var lastSeg int32 = -1
	for i := range us {
		if i&0xff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		u := &us[i]
		seg := conc.Of(u.Events(m)[0])
		if seg != lastSeg {
			clear(b.seen) // identical trees are merged within a segment only
			lastSeg = seg
		}
		f.rep[i] = b.unit(i, u, seg, esc)
	}
	// Leaves by variable, in tree order (thread, then period, then
	// position).
	counts := make([]int32, len(m.Vars))
	for _, l := range f.leaves {
		counts[l.v]++
	}
	f.byVar = make([][]int32, len(m.Vars))
	for v, c := range counts {
		if c > 0 {
			f.byVar[v] = make([]int32, 0, c)
		}
	}
	for i, l := range f.leaves {
		f.byVar[l.v] = append(f.byVar[l.v], int32(i))
	}
	return f, nil
}

// unit builds the tree of unit u (index i), whose first event is in
// segment seg, and keeps it unless two identical trees starting in the
// same segment are kept already; it returns the index of the kept tree
// that stands for u.
func (b *builder) unit(i int, u *units.Unit, seg int32, esc *escape.Info) int32 {
	f, m := b.f, b.f.m
	nodes0, leaves0 := len(f.nodes), len(f.leaves)
	t := int32(len(f.trees))
	evs := u.Events(m)
	add := func(n node) int32 {
		n.unit = t
		f.nodes = append(f.nodes, n)
		return int32(len(f.nodes) - 1)
	}
	root := add(node{parent: -1, ev: evs[0], kind: kRoot})
	b.open = b.open[:0]
	clear(b.counts)
	clear(b.lastW)
	top := func() int32 {
		if k := len(b.open); k > 0 {
			return b.open[k-1].id
		}
		return root
	}
	openSync := func(h units.Hold, seq int32) {
		p := top()
		id := add(node{parent: p, ev: h.Acq, lock: h.Lock, shared: h.Shared, depth: f.nodes[p].depth + 1, kind: kSync})
		b.open = append(b.open, openNode{id: id, acq: h.Acq, seq: seq})
	}
	// The locks held when the unit starts are synchronization nodes too,
	// opened before its first event.
	for _, h := range u.Held {
		openSync(h, -1)
	}
	var hs units.Holds
	hs.Reset(u.Held)
	segs := f.conc.ThreadSegments(u.Thread)
	si := f.conc.Index(seg)
	for k, ev := range evs {
		m.Pace(k)
		seq := int32(k)
		e := &m.Events[ev]
		for f.conc.All[segs[si]].Last < e.Pos {
			si++
		}
		if e.Kind.IsAccess() {
			if !m.IsSyncVar(int(e.Obj)) && esc.Escaped(ev) {
				b.access(ev, e, seq, root, segs[si])
			}
			continue
		}
		ch, h := hs.Step(m, ev)
		switch ch {
		case units.Acquired:
			openSync(h, seq)
		case units.Released:
			b.release(h, seq, openSync)
		}
	}
	// Unit-final writes: the kept representative of each variable's last
	// write.
	for _, w := range b.lastW {
		f.leaves[w.leaf].final = true
	}
	if len(f.leaves) == leaves0 {
		// No escaped access: no inter-edge can touch it.
		f.nodes = f.nodes[:nodes0]
		return -1
	}
	sig := b.signature(u, seg, nodes0, leaves0)
	if b.seen[sig] >= 2 {
		// A third identical tree of the period adds nothing (§6.5).
		f.nodes, f.leaves = f.nodes[:nodes0], f.leaves[:leaves0]
		for k := len(f.trees) - 1; k >= 0 && f.trees[k].seg == seg; k-- {
			if treeSig(f, k) == sig {
				return int32(k)
			}
		}
		return -1
	}
	b.seen[sig]++
	f.trees = append(f.trees, tree{src: i, lo: int32(nodes0), hi: int32(len(f.nodes)), seg: seg, thread: u.Thread, txn: u.Kind.Transaction()})
	f.sigs = append(f.sigs, sig)
	return t
}

// treeSig returns the signature of kept tree k.
func treeSig(f *forest, k int) uint64 { return f.sigs[k] }

// release closes the node of hold h. Locks released out of order close
// the nodes opened after it too; those whose locks are still held are
// opened again under its parent, so that every node's lock is held over
// its whole subtree.
func (b *builder) release(h units.Hold, seq int32, openSync func(units.Hold, int32)) {
	k := -1
	for i := len(b.open) - 1; i >= 0; i-- {
		if b.open[i].acq == h.Acq {
			k = i
			break
		}
	}
	if k < 0 {
		return
	}
	inner := append([]openNode(nil), b.open[k+1:]...)
	b.open = b.open[:k]
	for _, o := range inner {
		n := &b.f.nodes[o.id]
		openSync(units.Hold{Lock: n.lock, Shared: n.shared, Acq: o.acq}, seq)
	}
}

// access adds the leaf of an escaped access, unless trimmed.
func (b *builder) access(ev int32, e *tracemodel.Event, seq, root, seg int32) {
	f := b.f
	parent := root
	if k := len(b.open); k > 0 {
		parent = b.open[k-1].id
	}
	write := e.Kind == tracemodel.Write
	v := e.Obj
	tr := b.counts[[2]int32{parent, v}]
	if tr == nil {
		tr = &trim{lastKeptW: -1}
		b.counts[[2]int32{parent, v}] = tr
	}
	wdepth, prevW := int32(-1), int32(-1)
	if w, ok := b.lastW[v]; ok {
		prevW = w.leaf
		wdepth = 0 // the root contains both
		for i := len(b.open) - 1; i >= 0; i-- {
			if b.open[i].seq < w.seq {
				wdepth = f.nodes[b.open[i].id].depth
				break
			}
		}
	}
	keep := (write && tr.writes < 2) || (!write && tr.reads < 2)
	l := int32(-1)
	if keep {
		id := int32(len(f.nodes))
		f.nodes = append(f.nodes, node{parent: parent, unit: int32(len(f.trees)), ev: ev, depth: f.nodes[parent].depth + 1, kind: kLeaf})
		l = int32(len(f.leaves))
		f.leaves = append(f.leaves, leaf{node: id, seg: seg, v: v, write: write, wdepth: wdepth, prevW: prevW})
		if write {
			tr.writes++
			tr.lastKeptW = l
		} else {
			tr.reads++
		}
	}
	if write {
		rep := l
		if rep < 0 {
			rep = tr.lastKeptW // the third and later writes of a parent
		}
		b.lastW[v] = wInfo{seq: seq, leaf: rep}
	}
}

// signature hashes what makes two trees starting in segment seg
// interchangeable: the unit's kind, every node with its source location,
// and every leaf with its segment.
func (b *builder) signature(u *units.Unit, seg int32, nodes0, leaves0 int) uint64 {
	f, m := b.f, b.f.m
	h := fnv.New64a()
	var buf [8]byte
	put := func(x int64) {
		binary.LittleEndian.PutUint64(buf[:], uint64(x))
		h.Write(buf[:])
	}
	put(int64(u.Kind))
	for i := nodes0; i < len(f.nodes); i++ {
		n := &f.nodes[i]
		parent := int64(-1)
		if n.parent >= 0 {
			parent = int64(n.parent) - int64(nodes0)
		}
		put(parent)
		put(int64(n.kind)<<40 | int64(n.lock)<<1 | int64(boolInt(n.shared)))
		put(int64(m.Events[n.ev].Loc))
	}
	for i := leaves0; i < len(f.leaves); i++ {
		l := &f.leaves[i]
		put(int64(l.v)<<2 | int64(boolInt(l.write))<<1 | int64(boolInt(l.final)))
		prev := int64(-1)
		if l.prevW >= 0 {
			prev = int64(l.prevW) - int64(leaves0)
		}
		put(int64(l.wdepth)<<32 | prev&0xffffffff)
		put(int64(l.seg - seg))
	}
	return h.Sum64()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// path appends to buf the synchronization nodes above node n, outermost
// first.
func (f *forest) path(n int32, buf []int32) []int32 {
	start := len(buf)
	for p := f.nodes[n].parent; p >= 0; p = f.nodes[p].parent {
		if f.nodes[p].kind == kSync {
			buf = append(buf, p)
		}
	}
	for i, j := start, len(buf)-1; i < j; i, j = i+1, j-1 {
		buf[i], buf[j] = buf[j], buf[i]
	}
	return buf
}

// syncOf returns the synchronization node above node n whose lock is l,
// -1 if none.
func (f *forest) syncOf(n int32, l int32) (int32, bool) {
	for p := f.nodes[n].parent; p >= 0; p = f.nodes[p].parent {
		if f.nodes[p].kind == kSync && f.nodes[p].lock == l {
			return p, f.nodes[p].shared
		}
	}
	return -1, false
}
