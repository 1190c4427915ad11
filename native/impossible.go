package native

import (
	"slices"
	"sort"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Impossible reports whether a cheap necessary condition shows that the
// claim of pattern p with local thread local cannot be violated, without a
// search. It never returns true for a claim that the search would find
// violated (the differential tests check it against Spin); false means
// "search".
//
// The conditions: the threads must have enough accesses of the kinds the
// pattern's unstarred terms need (the local thread in one region), and,
// for every run of remote terms
// between two local terms that has an unstarred one (a gap), some remote
// access of its kind must be able to fall between two consecutive local
// accesses of one region, of the kinds the local terms around the gap
// allow, as far as causality (guards, observed writes) and mutual exclusion
// allow. The causal part prunes the barrier- and join-ordered models of
// SPLASH-like traces, where every remote access is forced; the lock part
// prunes correctly locked code, where the search would otherwise visit
// every interleaving of the critical sections.
func (c *Checker) Impossible(p ltl.Pattern, local int) bool {
	l, r := local-1, 2-local
	// A term of a two-variable pattern needs an access of its kind of its
	// variable by its side: a set of which the pair writes one variable
	// only before the threads start (a loop bound) is decided here.
	var hasVar [3][3][3]bool // [side][access][variable]
	hasVar[ltl.Local], hasVar[ltl.Remote] = c.accessesOf(l).has, c.accessesOf(r).has
	for _, t := range p.Terms {
		if t.Quant == ltl.Star || t.Var == ltl.VarAny {
			continue
		}
		if t.Access == ltl.Any {
			if !hasVar[t.Side][ltl.Read][t.Var] && !hasVar[t.Side][ltl.Write][t.Var] {
				return true
			}
		} else if !hasVar[t.Side][t.Access][t.Var] {
			return true
		}
	}
	var have [3][3]int // [side][access]
	have[ltl.Local][ltl.Read], have[ltl.Local][ltl.Write] = c.accessesOf(l).reads, c.accessesOf(l).writes
	have[ltl.Remote][ltl.Read], have[ltl.Remote][ltl.Write] = c.accessesOf(r).reads, c.accessesOf(r).writes
	for s := ltl.Local; s <= ltl.Remote; s++ {
		have[s][0] = have[s][ltl.Read] + have[s][ltl.Write] // any
	}
	// Unstarred terms of one side and kind that are separated by an
	// unstarred term of the other side are distinct accesses.
	var need [3][3]int
	var fresh [3][3]bool
	for s := range fresh {
		for a := range fresh[s] {
			fresh[s][a] = true
		}
	}
	for _, t := range p.Terms {
		if t.Quant == ltl.Star {
			continue
		}
		a := int(t.Access)
		if t.Access == ltl.Any {
			a = 0
		}
		if fresh[t.Side][a] {
			need[t.Side][a]++
			fresh[t.Side][a] = false
		}
		other := ltl.Local + ltl.Remote - t.Side
		for k := range fresh[other] {
			fresh[other][k] = true
		}
	}
	for s := ltl.Local; s <= ltl.Remote; s++ {
		for a := 0; a < 3; a++ {
			if need[s][a] > have[s][a] {
				return true
			}
		}
	}
	pub := p.PublishBreaks()
	// A match lies in one region of the local thread: some region must
	// hold the local accesses the pattern needs (P4 and P5 two writes).
	if !c.regionHolds(l, need[ltl.Local], pub) {
		return true
	}
	for _, g := range gaps(p) {
		k := interleaveKey{local: int8(l), g: g, pub: pub}
		can, ok := c.interleave[k]
		if !ok {
			can = c.remoteCanInterleave(l, r, g, pub)
			if c.interleave == nil {
				c.interleave = map[interleaveKey]bool{}
			}
			c.interleave[k] = can
		}
		if !can {
			return true
		}
	}
	return false
}

// accessKinds is what Impossible counts of a thread's accesses: which
// kinds ([access][variable]) it has, and how many reads and writes.
type accessKinds struct {
	has           [3][3]bool
	reads, writes int
}

// accessesOf returns the access kinds of thread x, counted once.
func (c *Checker) accessesOf(x int) *accessKinds {
	if a := c.accesses[x]; a != nil {
		return a
	}
	a := &accessKinds{}
	for _, s := range c.pm.Steps[x] {
		v := ltl.VarX
		if s.Second {
			v = ltl.VarY
		}
		switch s.Kind {
		case tracemodel.StepRead:
			a.has[ltl.Read][v] = true
			a.reads++
		case tracemodel.StepWrite:
			a.has[ltl.Write][v] = true
			a.writes++
		}
	}
	c.accesses[x] = a
	return a
}

// interleaveKey is a question of Impossible to remoteCanInterleave.
type interleaveKey struct {
	local int8
	g     gap
	pub   bool
}

// regionHolds reports whether some region of thread l (the accesses
// between two breaks: Boundary steps, and Publish steps when pub) has at
// least need[ltl.Read] reads, need[ltl.Write] writes and need[0] accesses.
func (c *Checker) regionHolds(l int, need [3]int, pub bool) bool {
	var have [3]int
	fits := func() bool {
		return have[ltl.Read] >= need[ltl.Read] && have[ltl.Write] >= need[ltl.Write] && have[0] >= need[0]
	}
	for _, s := range c.pm.Steps[l] {
		switch {
		case s.Kind == tracemodel.StepBoundary, pub && s.Kind == tracemodel.StepPublish:
			if fits() {
				return true
			}
			have = [3]int{}
		case s.Kind == tracemodel.StepRead:
			have[ltl.Read]++
			have[0]++
		case s.Kind == tracemodel.StepWrite:
			have[ltl.Write]++
			have[0]++
		}
	}
	return fits()
}

// gap is a run of remote terms of a pattern between two local terms, with
// an unstarred remote term in it: in every match, remote accesses of the
// gap's unstarred terms (seq, in order) run between two consecutive local
// accesses, the first of a kind and variable in before and the second of
// one in after (indexed by tracemodel.StepRead and StepWrite, then by the
// variable: x, y).
type gap struct {
	before, after [tracemodel.StepWrite + 1][2]bool
	// seq: the first n unstarred remote terms of the gap (at most
	// maxGapTerms of them: fewer is a weaker condition, still necessary).
	seq [maxGapTerms]remoteTerm
	n   int8
}

// maxGapTerms bounds the remote terms of a gap that Impossible checks.
const maxGapTerms = 4

// remoteTerm is what a remote access must be to match an unstarred term.
type remoteTerm struct {
	kind tracemodel.StepKind // StepRead, StepWrite; 0: either
	vars [2]bool             // x, y
}

func (t remoteTerm) matches(s *tracemodel.Step) bool {
	return s.Kind.IsAccess() && (t.kind == 0 || s.Kind == t.kind) && t.vars[varIndex(s)]
}

// termVars returns the variables (x, y) of the accesses that term t
// matches: a term without a variable matches both in a two-variable
// pattern, and only x (the model's one variable) in a single-variable one
// (ltl.Automaton).
func termVars(t ltl.Term, twoVar bool) [2]bool {
	switch {
	case t.Var == ltl.VarX:
		return [2]bool{true, false}
	case t.Var == ltl.VarY:
		return [2]bool{false, true}
	case twoVar:
		return [2]bool{true, true}
	}
	return [2]bool{true, false}
}

// gaps lists the gaps of p. The local access just before a gap matches the
// local term before it, or an earlier one if that term is starred (it may
// match nothing: remote terms before it then join the gap); likewise
// after. A gap with no unstarred local term on one side is no gap. Terms are blocks of accesses of one side
// and kind (the formulas are stutter invariant), so these are the kinds of
// the local accesses around the remote ones.
func gaps(p ltl.Pattern) []gap {
	two := p.TwoVariable()
	kinds := func(t ltl.Term, k *[tracemodel.StepWrite + 1][2]bool) {
		vs := termVars(t, two)
		for v := range vs {
			if !vs[v] {
				continue
			}
			if t.Access == ltl.Read || t.Access == ltl.Any {
				k[tracemodel.StepRead][v] = true
			}
			if t.Access == ltl.Write || t.Access == ltl.Any {
				k[tracemodel.StepWrite][v] = true
			}
		}
	}
	var out []gap
	ts := p.Terms
	for i := 0; i < len(ts); {
		if ts[i].Side != ltl.Remote {
			i++
			continue
		}
		j := i // the gap is ts[i:j]
		for j < len(ts) && ts[j].Side == ltl.Remote {
			j++
		}
		var g gap
		for _, t := range ts[i:j] {
			if t.Quant == ltl.Star || int(g.n) == maxGapTerms {
				continue
			}
			rt := remoteTerm{vars: termVars(t, two)}
			switch t.Access {
			case ltl.Read:
				rt.kind = tracemodel.StepRead
			case ltl.Write:
				rt.kind = tracemodel.StepWrite
			}
			g.seq[g.n] = rt
			g.n++
		}
		if g.n > 0 && i > 0 && j < len(ts) {
			// Remote terms before or after starred local ones join the
			// gap: the starred terms may match nothing. With no unstarred
			// local term on a side, no local access bounds the gap there.
			bounded := [2]bool{}
			for k := i - 1; k >= 0 && !bounded[0]; k-- {
				if ts[k].Side == ltl.Local {
					kinds(ts[k], &g.before)
					bounded[0] = ts[k].Quant != ltl.Star
				}
			}
			for k := j; k < len(ts) && !bounded[1]; k++ {
				if ts[k].Side == ltl.Local {
					kinds(ts[k], &g.after)
					bounded[1] = ts[k].Quant != ltl.Star
				}
			}
			if bounded[0] && bounded[1] {
				out = append(out, g)
			}
		}
		i = j
	}
	return out
}

// remoteCanInterleave reports whether remote accesses of g's terms, in
// order, can run between two consecutive accesses of thread l of the kinds
// and variables of g, with no region break between them, as far as causality (guards)
// and mutual exclusion allow: a remote access inside a critical section of
// a lock that thread l holds
// from before the first access to after the second (exclusively, or for
// reading when the remote one holds it exclusively) cannot fall between
// them. Lock exclusion is what decides the models of correctly locked
// code, where every access of both threads is under one lock.
func (c *Checker) remoteCanInterleave(l, r int, g gap, pub bool) bool {
	reach := c.reachOf(l)
	// Remote accesses of the first term, in order.
	var remote []int
	rs := c.pm.Steps[r]
	for j := range rs {
		if g.seq[0].matches(&rs[j]) {
			remote = append(remote, j)
		}
	}
	ex := &exclusion{c: c, l: l, r: r, remote: remote}
	prev := -1 // previous local access, -1 if none or a break since
	steps := c.pm.Steps[l]
	for k := range steps {
		s := &steps[k]
		switch {
		case s.Kind == tracemodel.StepBoundary, pub && s.Kind == tracemodel.StepPublish:
			prev = -1
		case s.Kind.IsAccess():
			if prev >= 0 && g.before[steps[prev].Kind][varIndex(&steps[prev])] && g.after[s.Kind][varIndex(s)] {
				// Remote step j fits between local steps prev and k if
				// prev does not need j (reach[l][prev] < j), j does not
				// need k (reach[r][j] < k) and no lock excludes it. reach
				// is monotone, so the j that causality allows are a prefix
				// of the remote steps from the first one prev does not
				// need.
				lo := sort.SearchInts(remote, reach[l][prev]+1)
				hi := lo + sort.Search(len(remote)-lo, func(i int) bool { return reach[r][remote[lo+i]] >= k })
				if lo < hi {
					held := ex.held(int32(prev+1), int32(k))
					if ex.unexcluded(held, lo, hi) && (g.n == 1 || ex.sequenceFits(&g, held, reach[l][prev]+1, reach[r], k)) {
						return true
					}
				}
			}
			prev = k
		}
	}
	return false
}

// varIndex is the index of a step's variable in a gap's variables: 0 for
// x (and the one variable of a single-variable model), 1 for y.
func varIndex(s *tracemodel.Step) int {
	if s.Second {
		return 1
	}
	return 0
}

// reachOf returns, for the claims whose local thread is l, reach[x][i]:
// the index of the other thread's step that thread x's step i or an
// earlier one needs done first, -1 if none — its guard, and for thread l
// the write a read observed (its Source, which binds in the claims of this
// local thread; see enabled). It is computed once per local thread and
// shared by the claims and gaps that ask.
func (c *Checker) reachOf(l int) [2][]int {
	if r := c.reach[l]; r[0] != nil || r[1] != nil {
		return r
	}
	var reach [2][]int
	for x := 0; x < 2; x++ {
		// byRank[r]: the other thread's step that sets progress r (ranks
		// are numbered from 1 along the steps; -1: none).
		byRank := c.sc.byRank[:0]
		for i := range c.pm.Steps[1-x] {
			if s := &c.pm.Steps[1-x][i]; s.Progress > 0 {
				for len(byRank) <= s.Progress {
					byRank = append(byRank, -1)
				}
				byRank[s.Progress] = i
			}
		}
		rankStep := func(r int) (int, bool) {
			if r < len(byRank) && byRank[r] >= 0 {
				return byRank[r], true
			}
			return 0, false
		}
		c.sc.byRank = byRank
		need := -1
		reach[x] = grow(c.sc.reach[l][x], len(c.pm.Steps[x]))
		for i := range c.pm.Steps[x] {
			s := &c.pm.Steps[x][i]
			if s.Guard > 0 {
				i, _ := rankStep(s.Guard) // a guard names a rank of the other thread
				need = max(need, i)
			}
			if x == l && s.Source > 0 {
				if i, ok := rankStep(s.Source); ok {
					need = max(need, i)
				}
			}
			reach[x] = append(reach[x], need)
		}
	}
	c.reach[l] = reach
	return reach
}

// maxExclusionChecks bounds the remote steps one exclusion query looks at
// when the local thread holds several locks; past it the answer is a
// conservative true.
const maxExclusionChecks = 256

// exclusion answers, for one remote thread r and its accesses of one kind
// (remote, sorted step indexes), which of them a lock held by the local
// thread l excludes. free[key] lists the indexes into remote of the steps
// outside every critical section of r that conflicts with l's hold of a
// lock (exclusive or shared), built once per lock and mode.
type exclusion struct {
	c      *Checker
	l, r   int
	remote []int
	free   map[exclKey][]int
}

type exclKey struct {
	lock   int
	shared bool // l holds the lock for reading: only r's exclusive holds conflict
}

// excludes reports whether remote step j runs inside a critical section of
// r that conflicts with l's hold k.
func (x *exclusion) excludes(k exclKey, j int32) bool {
	if holds(x.c.excl[x.r][k.lock], j) {
		return true
	}
	return !k.shared && holds(x.c.shared[x.r][k.lock], j)
}

// freeOf returns the indexes into remote of the steps hold k does not
// exclude.
func (x *exclusion) freeOf(k exclKey) []int {
	if f, ok := x.free[k]; ok {
		return f
	}
	var f []int
	for i, j := range x.remote {
		if !x.excludes(k, int32(j)) {
			f = append(f, i)
		}
	}
	if x.free == nil {
		x.free = map[exclKey][]int{}
	}
	x.free[k] = f
	return f
}

// unexcluded reports whether some remote step remote[lo:hi] can run while
// thread l's position is anywhere between two of its steps: whether it is
// outside the critical sections of r that conflict with the locks l holds
// at all those positions (held). One lock held (the common case) is one
// binary search.
func (x *exclusion) unexcluded(held []exclKey, lo, hi int) bool {
	if lo >= hi {
		return false
	}
	if len(held) == 0 {
		return true
	}
	f := x.freeOf(held[0])
	i := sort.SearchInts(f, lo)
	for checks := 0; i < len(f) && f[i] < hi; i, checks = i+1, checks+1 {
		if checks > maxExclusionChecks {
			return true
		}
		j := int32(x.remote[f[i]])
		if !slices.ContainsFunc(held[1:], func(k exclKey) bool { return x.excludes(k, j) }) {
			return true
		}
	}
	return false
}

// held returns the locks thread l holds at every position of [from, to].
func (x *exclusion) held(from, to int32) []exclKey {
	var held []exclKey
	for lk := range x.c.pm.Locks {
		switch {
		case spans(x.c.excl[x.l][lk], from, to):
			held = append(held, exclKey{lock: lk})
		case spans(x.c.shared[x.l][lk], from, to):
			held = append(held, exclKey{lock: lk, shared: true})
		}
	}
	return held
}

// maxSequenceScan bounds the remote steps one sequenceFits looks at; past
// it the answer is a conservative true.
const maxSequenceScan = 1 << 12

// sequenceFits reports whether remote steps j1 < j2 < ... matching the
// terms of g, in order, can all run while thread l's position is anywhere
// between two of its steps, the second its step k: each from step jlo on
// (the first that l's earlier step does not need), none needing l's step
// k (reachR) or inside a critical section that the locks l hold there
// (held) exclude.
// The earliest match of each term leaves the most room for the next; one
// access may match several consecutive terms.
func (x *exclusion) sequenceFits(g *gap, held []exclKey, jlo int, reachR []int, k int) bool {
	steps := x.c.pm.Steps[x.r]
	i := 0
	for j, n := max(jlo, 0), 0; j < len(steps) && reachR[j] < k; j, n = j+1, n+1 {
		if n > maxSequenceScan {
			return true
		}
		if !g.seq[i].matches(&steps[j]) ||
			slices.ContainsFunc(held, func(h exclKey) bool { return x.excludes(h, int32(j)) }) {
			continue
		}
		// One access may match consecutive terms (a remote write of y,
		// both A2(y)+ and W2): the formulas are stutter invariant.
		for i < int(g.n) && g.seq[i].matches(&steps[j]) {
			i++
		}
		if i == int(g.n) {
			return true
		}
	}
	return false
}

// spans reports whether one interval of ivs contains every position of
// [from, to].
func spans(ivs []interval, from, to int32) bool {
	iv, ok := containing(ivs, from)
	return ok && iv.to > to
}

// containing returns the interval of ivs (sorted, disjoint) that contains
// pc.
func containing(ivs []interval, pc int32) (interval, bool) {
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].to > pc })
	if i < len(ivs) && ivs[i].from <= pc {
		return ivs[i], true
	}
	return interval{}, false
}
