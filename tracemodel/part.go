package tracemodel

import (
	"fmt"
	"sort"
	"sync"
)

// A Projection holds what every model of one variable (or atomic set) and
// one thread pair shares: each thread's accesses, the writes its reads
// observed, the common locks. Model builds the PairModel of the whole pair
// or of one of its Parts; building the parts of a long pair one at a time
// keeps only one part's steps in memory.
type Projection struct {
	m      *Model
	vars   []int32
	tids   [2]int
	opts   ProjectOptions
	ord    *Order
	name   string
	common []int32
	// commonOps, per thread, its operations of each lock of common.
	commonOps [2][][]lockOp
	// Per thread, per access: position, event, index in vars of its
	// variable, position of a read's observed write in the other thread
	// (0: none), the other thread's last write of the variable before a
	// read (set models), and whether it is the read of a read-modify-write
	// (set models); whether it is a write (the events' kinds, read where
	// the accesses are gathered in trace order rather than looked up).
	// acc, accEv, accVar, accWrite and rmw may be shared with the
	// thread's other pairs (threadAccesses): read only.
	acc, accEv [2][]int32
	accVar     [2][]int8
	accWrite   [2][]bool
	src, pin   [2][]int32
	rmw        [2][]bool

	once   sync.Once
	stores [2][2]bool
	// steps is opts.Steps, or the projection's own cache when it is nil
	// (shared with WithOrder's projections).
	steps *StepCache
}

// A StepCache holds what the projections of one variable (or atomic set)
// compute per thread and share across its thread pairs: the thread's
// accesses (threadAccesses) and region breaks (a server's variable is
// projected once per pair, and every pair of a thread found the same ones
// again). It is safe for concurrent use, and must serve one variable (or
// set) and one ProjectOptions only.
type StepCache struct {
	mu       sync.Mutex
	breaks   map[int]*threadBreaks
	accesses sharedAccesses
}

type threadBreaks struct {
	once sync.Once
	list []regionBreak
}

// NewStepCache returns an empty StepCache.
func NewStepCache() *StepCache { return &StepCache{breaks: map[int]*threadBreaks{}} }

// breaksOf returns the region breaks of thread x of the projection over all
// its accesses, computed once per thread.
func (p *Projection) breaksOf(x int) []regionBreak {
	compute := func() []regionBreak {
		return p.m.breaks(p.tids[x], p.vars, p.acc[x], p.accVar[x], p.accWrite[x], p.opts)
	}
	c := p.steps
	c.mu.Lock()
	tb := c.breaks[p.tids[x]]
	if tb == nil {
		tb = &threadBreaks{}
		c.breaks[p.tids[x]] = tb
	}
	c.mu.Unlock()
	tb.once.Do(func() { tb.list = compute() })
	return tb.list
}

// appendBreaks appends to raw the region breaks of thread x in the gaps
// between the part's accesses. A part's breaks are those of the whole
// projection: the update-return rule sees the thread's last write before
// the part, too.
func (p *Projection) appendBreaks(raw []rawStep, x int, part Part) []rawStep {
	all := p.breaksOf(x)
	lo, hi := int32(part.From[x]), int32(part.To[x]-1) // gaps lo..hi-1
	i := sort.Search(len(all), func(i int) bool { return all[i].gap >= lo })
	for ; i < len(all) && all[i].gap < hi; i++ {
		b := &all[i]
		rs := rawStep{Kind: b.kind, pos: b.pos, guardPos: b.pos, order: b.order, ev: b.shown}
		if b.kind == StepBoundary {
			rs.guardPos = b.pos - 1
		}
		raw = append(raw, rs)
	}
	return raw
}

// NewProjection returns the projection of variable v (with w > 0: of the
// atomic set {v, w}, as ProjectSet) onto threads t1 and t2. Both threads
// must access v (or w).
func (m *Model) NewProjection(v, w, t1, t2 int, opts ProjectOptions) (*Projection, error) {
	vars := []int32{int32(v)}
	if w > 0 {
		vars = append(vars, int32(w))
	}
	for _, x := range vars {
		if x <= 0 || int(x) >= len(m.Vars) {
			return nil, fmt.Errorf("trace %s: no variable #%d", m.Name, x)
		}
	}
	if v == w {
		return nil, fmt.Errorf("trace %s: an atomic set needs two variables, got %s twice", m.Name, m.Vars[v].Name)
	}
	return m.newProjection(vars, t1, t2, opts)
}

// WithOrder returns the projection under another causal order (the
// data-flow order of its variable), sharing its accesses.
func (p *Projection) WithOrder(ord *Order) *Projection {
	q := &Projection{m: p.m, vars: p.vars, tids: p.tids, opts: p.opts, ord: ord, name: p.name, common: p.common, commonOps: p.commonOps,
		acc: p.acc, accEv: p.accEv, accVar: p.accVar, accWrite: p.accWrite, src: p.src, pin: p.pin, rmw: p.rmw}
	q.steps = p.steps
	q.opts.Order = ord
	return q
}

// A Part is a piece of a projection: the accesses From[x] ≤ i < To[x] of
// each thread x (indexes among the thread's accesses of the variables),
// with the synchronization and locks around them. Index numbers the parts
// of a projection from 0, and Of is their number (0 for Whole).
type Part struct {
	Index, Of int
	From, To  [2]int
}

// Whole is the part that is all of the projection.
func (p *Projection) Whole() Part {
	return Part{To: [2]int{len(p.acc[0]), len(p.acc[1])}}
}

// DefaultPartAccesses is the size, in accesses of both threads, past which
// Parts cuts a projection at the next cut.
const DefaultPartAccesses = 2048

// Parts cuts the projection into parts of about size accesses (0:
// DefaultPartAccesses; negative: one part). A cut separates two parts
// such that, in each thread, a blocking event (a region boundary) lies
// between the last access before it and the first after it, no critical
// section of a common lock spans it, and everything of both threads
// before it happens before everything after it in the synchronization
// order: every run of the model passes through it with both threads past
// a region boundary, so no instance of any pattern spans it and the
// checker's state there depends on no access before it (the model of a
// later part starts Broken). Models of barrier-phased programs (servers
// in epochs, SPLASH-2 kernels) are cut at their barriers; a pair with no
// cut, or a projection with region boundaries off, is one part.
func (p *Projection) Parts(size int) []Part {
	whole := p.Whole()
	whole.Of = 1
	if size < 0 || p.opts.NoBoundaries {
		return []Part{whole}
	}
	if size == 0 {
		size = DefaultPartAccesses
	}
	n := whole.To
	if n[0]+n[1] < 2*size {
		return []Part{whole}
	}
	ord, tids := p.m.sync, p.tids
	ops := p.commonOps
	var parts []Part
	cur := Part{}
	j := 0 // thread 1's accesses whose critical sections end before thread 0's start
	close1 := holdScan{ops: ops[1], from: make([]int, len(ops[1]))}
	for i := 1; i < n[0]; i++ {
		if i-cur.From[0]+j-cur.From[1] < size {
			continue
		}
		s0 := openAt(ops[0], p.acc[0][i])
		c := ord.Clock(tids[0], s0, tids[1])
		for j < n[1] && close1.closeAfter(p.acc[1][j]) <= c {
			j++
		}
		if j <= cur.From[1] || j >= n[1] {
			continue
		}
		// The cheapest condition first: a server's racy pair has a cut
		// at its barriers only.
		if !p.blockedBetween(0, i) || !p.blockedBetween(1, j) {
			continue
		}
		e0 := closeAfter(ops[0], p.acc[0][i-1])
		s1 := openAt(ops[1], p.acc[1][j])
		e1 := closeAfter(ops[1], p.acc[1][j-1])
		if e0 >= s0 || e1 >= s1 || ord.Clock(tids[1], s1, tids[0]) < e0 {
			continue
		}
		cur.To = [2]int{i, j}
		parts = append(parts, cur)
		cur = Part{Index: len(parts), From: [2]int{i, j}}
	}
	cur.To = n
	parts = append(parts, cur)
	for k := range parts {
		parts[k].Of = len(parts)
	}
	return parts
}

// blockedBetween reports whether thread x blocks between its accesses i-1
// and i.
func (p *Projection) blockedBetween(x, i int) bool {
	bl := p.m.blocking[p.tids[x]-1]
	a, b := p.acc[x][i-1], p.acc[x][i]
	k := sort.Search(len(bl), func(k int) bool { return bl[k] > a })
	return k < len(bl) && bl[k] < b
}

// storesOf returns, in set models, whether thread x writes variable v other
// than by a read-modify-write, leaving out a store that happens before
// every access of the other thread (an initialization falls in no view of
// it).
func (p *Projection) storesOf() [2][2]bool {
	if len(p.vars) != 2 {
		return [2][2]bool{}
	}
	p.once.Do(func() {
		m, ord, tids := p.m, p.ord, p.tids
		for x := 0; x < 2; x++ {
			first := ord.Clock(tids[1-x], p.acc[1-x][0], tids[x])
			for i := range p.acc[x] {
				m.Pace(i)
				if !p.rmw[x][i] && p.accWrite[x][i] && (i == 0 || !p.rmw[x][i-1]) && first < p.acc[x][i] {
					p.stores[x][p.accVar[x][i]] = true
				}
			}
		}
	})
	return p.stores
}
