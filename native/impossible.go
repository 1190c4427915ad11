package native

import (
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
// pattern's unstarred terms need, and — for patterns that start and end with
// the local thread around an unstarred remote term — some remote access must
// be able to fall, as far as causality allows, between two local accesses of
// one region. The second one prunes the barrier- and join-ordered models of
// SPLASH-like traces, where every remote access is forced.
func (c *Checker) Impossible(p ltl.Pattern, local int) bool {
	l, r := local-1, 2-local
	count := func(x int) (reads, writes int) {
		for _, s := range c.pm.Steps[x] {
			switch s.Kind {
			case tracemodel.StepRead:
				reads++
			case tracemodel.StepWrite:
				writes++
			}
		}
		return
	}
	var have [3][3]int // [side][access]
	have[ltl.Local][ltl.Read], have[ltl.Local][ltl.Write] = count(l)
	have[ltl.Remote][ltl.Read], have[ltl.Remote][ltl.Write] = count(r)
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
	remoteKinds := map[ltl.Access]bool{}
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
		if t.Side == ltl.Remote {
			remoteKinds[t.Access] = true
		}
	}
	for s := ltl.Local; s <= ltl.Remote; s++ {
		for a := 0; a < 3; a++ {
			if need[s][a] > have[s][a] {
				return true
			}
		}
	}
	first, last := p.Terms[0], p.Terms[len(p.Terms)-1]
	if first.Side != ltl.Local || last.Side != ltl.Local || len(remoteKinds) == 0 {
		return false
	}
	want := tracemodel.StepKind(0) // any access
	if len(remoteKinds) == 1 {
		switch {
		case remoteKinds[ltl.Write]:
			want = tracemodel.StepWrite
		case remoteKinds[ltl.Read]:
			want = tracemodel.StepRead
		}
	}
	return !c.remoteCanInterleave(l, r, want, p.PublishBreaks())
}

// remoteCanInterleave reports whether, by causality alone (ignoring locks), a
// remote access of kind want (0: any) can run between two consecutive
// accesses of thread l with no region break between them.
func (c *Checker) remoteCanInterleave(l, r int, want tracemodel.StepKind, pub bool) bool {
	// reach[x][i]: index of the other thread's step that thread x's step i
	// needs done first (its guard), -1 if none.
	var reach [2][]int
	for x := 0; x < 2; x++ {
		byRank := map[int]int{}
		for i, s := range c.pm.Steps[1-x] {
			if s.Progress > 0 {
				byRank[s.Progress] = i
			}
		}
		g := -1
		for _, s := range c.pm.Steps[x] {
			if s.Guard > 0 {
				g = byRank[s.Guard]
			}
			reach[x] = append(reach[x], g)
		}
	}
	// Remote accesses of the wanted kind, in order.
	var remote []int
	for j, s := range c.pm.Steps[r] {
		if s.Kind.IsAccess() && (want == 0 || s.Kind == want) {
			remote = append(remote, j)
		}
	}
	prev := -1 // previous local access, -1 if none or a break since
	for k, s := range c.pm.Steps[l] {
		switch {
		case s.Kind == tracemodel.StepBoundary, pub && s.Kind == tracemodel.StepPublish:
			prev = -1
		case s.Kind.IsAccess():
			if prev >= 0 {
				// Remote step j fits between local steps prev and k if
				// prev does not need j (reach[l][prev] < j) and j does
				// not need k (reach[r][j] < k).
				i := sort.SearchInts(remote, reach[l][prev]+1)
				for ; i < len(remote); i++ {
					if reach[r][remote[i]] < k {
						return true
					}
					break // reach is monotone: later remote steps need even more
				}
			}
			prev = k
		}
	}
	return false
}
