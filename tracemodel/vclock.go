package tracemodel

// vclock is a persistent vector clock: component i (thread i+1) is the
// number of that thread's events known to happen before. It is a 32-way
// trie with path copying, so that a snapshot costs one pointer and joining
// two clocks that share most of their structure (a child's clock and its
// creator's, a joiner's and its child's) costs only the parts that differ.
// Dense per-thread vectors made memory and time quadratic in the number of
// threads: a main thread that creates and joins 20,000 workers kept 20,000
// snapshots of 20,000 components.
//
// The zero vclock is all zeros. A vclock is never modified after it is
// returned: set and join return new clocks.
type vclock struct {
	root  *vcNode
	depth uint8 // levels of inner nodes above the leaves
}

const (
	vcBits  = 5
	vcWidth = 1 << vcBits
	vcMask  = vcWidth - 1
)

// vcNode is an inner node (kid) or a leaf (val).
type vcNode struct {
	kid *[vcWidth]*vcNode
	val *[vcWidth]int32
}

// capacity is the number of components the clock can hold at its depth.
func (c vclock) capacity() int { return 1 << (vcBits * (int(c.depth) + 1)) }

// get returns component i (0-based).
func (c vclock) get(i int) int32 {
	if c.root == nil || i >= c.capacity() {
		return 0
	}
	n := c.root
	for d := int(c.depth); d > 0; d-- {
		n = n.kid[(i>>(vcBits*d))&vcMask]
		if n == nil {
			return 0
		}
	}
	return n.val[i&vcMask]
}

// deepen returns c with at least depth d (the same components).
func (c vclock) deepen(d uint8) vclock {
	for c.depth < d {
		if c.root != nil {
			kids := new([vcWidth]*vcNode)
			kids[0] = c.root
			c.root = &vcNode{kid: kids}
		}
		c.depth++
	}
	return c
}

// set returns c with component i raised to x if it is lower, and whether it
// changed.
func (c vclock) set(i int, x int32) (vclock, bool) {
	if c.get(i) >= x {
		return c, false
	}
	for i >= c.capacity() {
		c = c.deepen(c.depth + 1)
	}
	c.root = setNode(c.root, int(c.depth), i, x)
	return c, true
}

func setNode(n *vcNode, d, i int, x int32) *vcNode {
	if d == 0 {
		vals := new([vcWidth]int32)
		if n != nil {
			*vals = *n.val
		}
		vals[i&vcMask] = x
		return &vcNode{val: vals}
	}
	kids := new([vcWidth]*vcNode)
	if n != nil {
		*kids = *n.kid
	}
	k := (i >> (vcBits * d)) & vcMask
	kids[k] = setNode(kids[k], d-1, i, x)
	return &vcNode{kid: kids}
}

// join returns the component-wise maximum of a and b and whether it differs
// from a. Subtrees that a and b share are not visited.
func (a vclock) join(b vclock) (vclock, bool) {
	if b.root == nil || a.root == b.root && a.depth == b.depth {
		return a, false
	}
	d := max(a.depth, b.depth)
	a, b = a.deepen(d), b.deepen(d)
	root := joinNode(a.root, b.root, int(d))
	if root == a.root {
		return a, false
	}
	return vclock{root: root, depth: d}, true
}

// joinNode returns the maximum of a and b, a itself when b adds nothing.
func joinNode(a, b *vcNode, d int) *vcNode {
	switch {
	case b == nil || a == b:
		return a
	case a == nil:
		return b
	}
	if d == 0 {
		var vals *[vcWidth]int32
		for i, x := range b.val {
			if x > a.val[i] {
				if vals == nil {
					vals = new([vcWidth]int32)
					*vals = *a.val
				}
				vals[i] = x
			}
		}
		if vals == nil {
			return a
		}
		return &vcNode{val: vals}
	}
	var kids *[vcWidth]*vcNode
	for i, bk := range b.kid {
		ak := a.kid[i]
		if k := joinNode(ak, bk, d-1); k != ak {
			if kids == nil {
				kids = new([vcWidth]*vcNode)
				*kids = *a.kid
			}
			kids[i] = k
		}
	}
	if kids == nil {
		return a
	}
	return &vcNode{kid: kids}
}

// fill sets dst[i] to component i of c.
func (c vclock) fill(dst []int32) {
	if c.root != nil && c.depth == 0 && len(dst) <= vcWidth {
		copy(dst, c.root.val[:len(dst)])
		return
	}
	for i := range dst {
		dst[i] = c.get(i)
	}
}

// joinDense returns the component-wise maximum of c and the clock whose
// component i is row[i], and whether it differs from c.
func (c vclock) joinDense(row []int32) (vclock, bool) {
	if c.depth == 0 && len(row) <= vcWidth {
		var vals *[vcWidth]int32
		for i, x := range row {
			cur := int32(0)
			if c.root != nil {
				cur = c.root.val[i]
			}
			if x > cur {
				if vals == nil {
					vals = new([vcWidth]int32)
					if c.root != nil {
						*vals = *c.root.val
					}
				}
				vals[i] = x
			}
		}
		if vals == nil {
			return c, false
		}
		return vclock{root: &vcNode{val: vals}}, true
	}
	changed := false
	for i, x := range row {
		var ch bool
		c, ch = c.set(i, x)
		changed = changed || ch
	}
	return c, changed
}
