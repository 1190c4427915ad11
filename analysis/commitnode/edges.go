package commitnode

import (
	"context"
	"slices"
)

// edge is an inter-edge between nodes x and y of trees of concurrent
// units, with the two accesses that first caused it (ex in x's subtree).
type edge struct {
	x, y   int32
	ex, ey int32
}

// edges is the set of inter-edges of one forest.
type edges struct {
	list  []edge
	index map[uint64]int32
	deg   []int32 // by node: incident inter-edges
}

func newEdges(nodes int) *edges {
	return &edges{index: map[uint64]int32{}, deg: make([]int32, nodes)}
}

func (es *edges) add(x, y, ex, ey int32) {
	if x > y {
		x, y, ex, ey = y, x, ey, ex
	}
	k := uint64(x)<<32 | uint64(uint32(y))
	if _, ok := es.index[k]; ok {
		return
	}
	es.index[k] = int32(len(es.list))
	es.list = append(es.list, edge{x: x, y: y, ex: ex, ey: ey})
	es.deg[x]++
	es.deg[y]++
}

// linker adds the inter-edges of one forest (Figures 6.2 and 6.4).
type linker struct {
	f        *forest
	es       *edges
	pathBuf  []int32
	pairs    int // pairs of accesses examined
	maxPairs int
}

// addInterEdge is Figure 6.2's procedure for accesses a and b (leaves) of
// concurrent units, on one variable: an edge between the leaves if no
// lock held at both excludes them; otherwise between the nodes of the
// outermost such lock in both trees — unless a is a read that a write of
// its own unit inside that node precedes (it cannot observe b). It
// reports whether it added (or found) an edge.
func (k *linker) addInterEdge(a, b int32) bool {
	f := k.f
	la, lb := &f.leaves[a], &f.leaves[b]
	na, nb := la.node, lb.node
	ea, eb := f.nodes[na].ev, f.nodes[nb].ev
	if f.nodes[f.nodes[na].parent].kind == kRoot || f.nodes[f.nodes[nb].parent].kind == kRoot {
		k.es.add(na, nb, ea, eb) // one of them holds no lock
		return true
	}
	k.pathBuf = f.path(na, k.pathBuf[:0])
	for _, n := range k.pathBuf {
		sn := &f.nodes[n]
		m, shared := f.syncOf(nb, sn.lock)
		if m < 0 || (shared && sn.shared) {
			continue
		}
		if !la.write && la.wdepth >= sn.depth {
			return false
		}
		k.es.add(n, m, ea, eb)
		return true
	}
	k.es.add(na, nb, ea, eb)
	return true
}

// concurrentPairs calls fn for every pair of leaves of v of different
// threads in concurrent segments with at least one write,
// the leaf of the lower thread first; it stops early when fn returns
// false or the pair budget is spent.
func (k *linker) concurrentPairs(ctx context.Context, v int32, fn func(a, b int32) bool) error {
	f := k.f
	ls := f.byVar[v]
	if len(ls) < 2 {
		return nil
	}
	// Groups of one thread, in thread order; segments increase in a group.
	type group struct{ thread, lo, hi int }
	var groups []group
	for i := 0; i < len(ls); {
		t := int(f.trees[f.nodes[f.leaves[ls[i]].node].unit].thread)
		j := i
		for j < len(ls) && int(f.trees[f.nodes[f.leaves[ls[j]].node].unit].thread) == t {
			j++
		}
		groups = append(groups, group{t, i, j})
		i = j
	}
	if len(groups) < 2 {
		return nil
	}
	segIndex := func(l int32) int32 { return k.f.conc.Index(f.leaves[l].seg) }
	for gi, ga := range groups {
		for _, a := range ls[ga.lo:ga.hi] {
			pa := f.leaves[a].seg
			for _, gb := range groups[gi+1:] {
				lo, hi := f.conc.Range(pa, int32(gb.thread))
				if lo == hi {
					continue
				}
				bs := ls[gb.lo:gb.hi]
				start, _ := slices.BinarySearchFunc(bs, int32(lo), func(l int32, lo int32) int {
					return int(segIndex(l) - lo)
				})
				for _, b := range bs[start:] {
					if segIndex(b) >= int32(hi) {
						break
					}
					if !f.leaves[a].write && !f.leaves[b].write {
						continue
					}
					if k.pairs++; k.pairs > k.maxPairs {
						return errBudget
					}
					if k.pairs&0xffff == 0 {
						if err := ctx.Err(); err != nil {
							return err
						}
					}
					if !fn(a, b) {
						return nil
					}
				}
			}
		}
	}
	return nil
}

// conflictForest adds the inter-edges of the conflict-forest (§6.1.3,
// Figure 6.2): between every read and write, and every two writes, of
// concurrent units.
func (k *linker) conflictForest(ctx context.Context) error {
	f := k.f
	for v := range f.byVar {
		err := k.concurrentPairs(ctx, int32(v), func(a, b int32) bool {
			la, lb := &f.leaves[a], &f.leaves[b]
			switch {
			case la.write && lb.write:
				k.addInterEdge(a, b)
				k.addInterEdge(b, a)
			case la.write:
				k.addInterEdge(b, a)
			default:
				k.addInterEdge(a, b)
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// viewForest adds the inter-edges of the view-forest (§6.1.4, Figure
// 6.4): between a read and each write of a concurrent unit it can observe,
// between every two potential write-predecessors of one read (the read's
// own unit's earlier write among them), and between unit-final writes.
func (k *linker) viewForest(ctx context.Context) error {
	f := k.f
	preds := map[int32][]int32{} // read -> its potential write-predecessors in other units
	for v := range f.byVar {
		clear(preds)
		var reads []int32
		err := k.concurrentPairs(ctx, int32(v), func(a, b int32) bool {
			la, lb := &f.leaves[a], &f.leaves[b]
			switch {
			case la.write && lb.write:
				if la.final && lb.final {
					k.addInterEdge(a, b)
					k.addInterEdge(b, a)
				}
			case la.write:
				if k.addInterEdge(b, a) {
					if preds[b] == nil {
						reads = append(reads, b)
					}
					preds[b] = append(preds[b], a)
				}
			default:
				if k.addInterEdge(a, b) {
					if preds[a] == nil {
						reads = append(reads, a)
					}
					preds[a] = append(preds[a], b)
				}
			}
			return true
		})
		if err != nil {
			return err
		}
		// Every two potential write-predecessors of a read, of concurrent
		// units, are linked: S(r) of Figure 6.4.
		slices.Sort(reads)
		for _, r := range reads {
			s := preds[r]
			if w := f.leaves[r].prevW; w >= 0 {
				s = append([]int32{w}, s...)
			}
			for i := 1; i < len(s); i++ {
				for j := 0; j < i; j++ {
					if k.pairs++; k.pairs > k.maxPairs {
						return errBudget
					}
					if k.concurrentLeaves(s[i], s[j]) {
						k.addInterEdge(s[i], s[j])
					}
				}
			}
		}
	}
	return nil
}

// concurrentLeaves reports whether two leaves are concurrent accesses.
func (k *linker) concurrentLeaves(a, b int32) bool {
	return k.f.conc.Concurrent(k.f.leaves[a].seg, k.f.leaves[b].seg)
}
