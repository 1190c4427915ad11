package commitnode

import (
	"slices"
)

// verdict of one transaction in one forest.
type verdict struct {
	tree    int32
	commits []int32 // its commit nodes
	n1, n2  int32   // two communication nodes, neither containing the other, on a cycle
	path    []step  // the cycle outside the transaction's tree, from n1 to n2
}

// step is an inter-edge of a witness path, crossed from the event on the
// side it is entered from (from) to the event on the other side (to), of
// node.
type step struct{ from, to, node int32 }

// checker runs Figure 6.8 on one forest.
type checker struct {
	f       *forest
	es      *edges
	adj     [][]int32 // by node: indexes of its inter-edges
	commOf  [][]int32 // by thread: its communication nodes (built on first use)
	uf      []int32
	work    int
	maxWork int
}

func newChecker(f *forest, es *edges, maxWork int) *checker {
	c := &checker{f: f, es: es, adj: make([][]int32, len(f.nodes)), maxWork: maxWork}
	for i, e := range es.list {
		c.adj[e.x] = append(c.adj[e.x], int32(i))
		c.adj[e.y] = append(c.adj[e.y], int32(i))
	}
	return c
}

// commitNodes returns the communication nodes of tree t and, among them,
// its commit nodes: those with no communication node below them.
func (c *checker) commitNodes(t int32) (comm, commits []int32) {
	f := c.f
	tr := &f.trees[t]
	for n := tr.lo; n < tr.hi; n++ {
		if c.es.deg[n] > 0 {
			comm = append(comm, n)
		}
	}
	if len(comm) < 2 {
		return comm, comm
	}
	inner := map[int32]bool{} // nodes with a communication node below
	for _, n := range comm {
		for p := f.nodes[n].parent; p >= 0 && !inner[p]; p = f.nodes[p].parent {
			inner[p] = true
		}
	}
	for _, n := range comm {
		if !inner[n] {
			commits = append(commits, n)
		}
	}
	return comm, commits
}

// contains reports whether node a is an ancestor of node b (or b itself).
// Nodes are numbered in pre-order: an ancestor has a smaller number.
func (c *checker) contains(a, b int32) bool {
	for ; b >= 0; b = c.f.nodes[b].parent {
		if b == a {
			return true
		}
	}
	return false
}

// vertex is the vertex of node n in the graph of transaction t's check.
// Every thread is one vertex: each tree is connected by its tree edges,
// and the trees of one thread by its program order (a departure: the
// dissertation's forest has no edge for the order of two units of one
// thread, so its cycle test misses a serialization cycle that closes
// through it — u reads z before another thread's unit writes z, and a
// later unit of that thread reads y before u writes y; such an edge is
// undirected here, which is conservative). The nodes of t are vertices
// of their own: t's tree edges are removed.
func (c *checker) vertex(t, n int32) int32 {
	f := c.f
	u := f.nodes[n].unit
	if u != t {
		return f.trees[u].thread - 1
	}
	return int32(len(f.m.Threads)) + n - f.trees[t].lo
}

func (c *checker) find(x int32) int32 {
	for c.uf[x] != x {
		c.uf[x] = c.uf[c.uf[x]]
		x = c.uf[x]
	}
	return x
}

// check checks transaction tree t (Figure 6.8): at most one commit node
// (Theorems 6.3.1, 6.3.4), else no two communication nodes, neither
// containing the other, on a cycle of the forest (Theorems 6.3.3, 6.3.6):
// a cycle through both leaves t through one of them and comes back
// through the other, so n2 is reachable from n1 without t's tree edges.
// ok is false with the verdict when t is reported; budget is false when
// the work bound was reached.
func (c *checker) check(t int32) (v verdict, ok, budget bool) {
	f := c.f
	comm, commits := c.commitNodes(t)
	if len(commits) < 2 {
		return v, true, true
	}
	tr := &f.trees[t]
	nv := len(f.m.Threads) + int(tr.hi-tr.lo)
	if c.work += nv + len(c.es.list); c.work > c.maxWork {
		return v, true, false
	}
	if cap(c.uf) < nv {
		c.uf = make([]int32, nv)
	}
	c.uf = c.uf[:nv]
	for i := range c.uf {
		c.uf[i] = int32(i)
	}
	for _, e := range c.es.list {
		a, b := c.find(c.vertex(t, e.x)), c.find(c.vertex(t, e.y))
		if a != b {
			c.uf[a] = b
		}
	}
	// Communication nodes by component, in node order (a pre-order of the
	// tree: an ancestor comes before its descendants). A component's nodes
	// are pairwise nested iff each contains the next one.
	byComp := map[int32][]int32{}
	var roots []int32
	for _, n := range comm {
		r := c.find(c.vertex(t, n))
		if byComp[r] == nil {
			roots = append(roots, r)
		}
		byComp[r] = append(byComp[r], n)
	}
	for _, r := range roots {
		ns := byComp[r]
		for i := 0; i+1 < len(ns); i++ {
			if n1, n2 := ns[i], ns[i+1]; !c.contains(n1, n2) {
				return verdict{tree: t, commits: commits, n1: n1, n2: n2, path: c.path(t, n1, n2)}, false, true
			}
		}
	}
	return v, true, true
}

// path returns the inter-edges of a shortest path from n1 to n2 in the
// graph of t's check.
func (c *checker) path(t, n1, n2 int32) []step {
	f := c.f
	threads := int32(len(f.m.Threads))
	if c.commOf == nil {
		c.commOf = make([][]int32, threads)
		for n := range f.nodes {
			if c.es.deg[n] > 0 {
				th := f.trees[f.nodes[n].unit].thread - 1
				c.commOf[th] = append(c.commOf[th], int32(n))
			}
		}
	}
	src, dst := c.vertex(t, n1), c.vertex(t, n2)
	seen := map[int32]bfsPrev{src: {v: -1}}
	queue := []int32{src}
	nodesOf := func(v int32) []int32 {
		if v >= threads {
			return []int32{v - threads + f.trees[t].lo}
		}
		return c.commOf[v]
	}
	for len(queue) > 0 && !has(seen, dst) {
		v := queue[0]
		queue = queue[1:]
		for _, n := range nodesOf(v) {
			if v < threads && f.nodes[n].unit == t {
				continue // t's nodes are vertices of their own
			}
			for _, ei := range c.adj[n] {
				e := &c.es.list[ei]
				other := e.y
				if other == n {
					other = e.x
				}
				w := c.vertex(t, other)
				if has(seen, w) {
					continue
				}
				seen[w] = bfsPrev{v: v, e: ei, from: n}
				queue = append(queue, w)
			}
		}
	}
	var out []step
	for v := dst; v != src; {
		p := seen[v]
		e := &c.es.list[p.e]
		s := step{from: e.ex, to: e.ey, node: e.y}
		if p.from != e.x {
			s.from, s.to, s.node = e.ey, e.ex, e.x
		}
		out = append(out, s)
		v = p.v
	}
	slices.Reverse(out)
	return out
}

// bfsPrev is how the path search reached a vertex: from vertex v over
// inter-edge e, leaving v at its node from.
type bfsPrev struct{ v, e, from int32 }

func has(m map[int32]bfsPrev, k int32) bool {
	_, ok := m[k]
	return ok
}
