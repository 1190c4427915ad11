package native

import "github.com/mcpredict/mcpredict/tracemodel"

// Scratch is the memory of a checker's tables and searches, handed from
// one checker to the next (NewWith, Checker.Scratch): a server's run
// checks thousands of models, a few searches each, and these tables were a
// fifth of what it allocated. A Scratch serves one checker at a time.
type Scratch struct {
	progAt       [2][]int32
	brkAt, pubAt [2][]bool
	reach        [2][2][]int
	byRank       []int
	// The breadth-first searches' nodes (search, checkJoint) and their
	// tables of the states of a layer and of automaton steps.
	keys    []uint64
	parents []int32
	moved   []int8
	seen    *keySet
	next    *keyMap
}

// NewWith is New on the memory of s, which the checker owns until its
// Scratch is taken back; nil: new memory.
func NewWith(pm *tracemodel.PairModel, s *Scratch) *Checker {
	if s == nil {
		s = &Scratch{}
	}
	return newChecker(pm, s)
}

// Scratch returns the checker's memory for another checker: c must not
// be used after. The witnesses and instances it returned are not in it.
func (c *Checker) Scratch() *Scratch {
	s := c.sc
	c.sc = nil
	for l := range 2 {
		for x := range 2 {
			if c.reach[l][x] != nil { // else s keeps its own
				s.reach[l][x] = c.reach[l][x]
			}
		}
	}
	return s
}

// grow returns xs emptied, with room for n elements.
func grow[T any](xs []T, n int) []T {
	if cap(xs) < n {
		return make([]T, 0, n)
	}
	return xs[:0]
}

// nodes returns the search's node lists, emptied, with room for hint
// nodes.
func (s *Scratch) nodes(hint int) ([]uint64, []int32, []int8) {
	return grow(s.keys, hint), grow(s.parents, hint), grow(s.moved, hint)
}

// keepNodes keeps the node lists of a search for the next.
func (s *Scratch) keepNodes(keys []uint64, parents []int32, moved []int8) {
	s.keys, s.parents, s.moved = keys[:0], parents[:0], moved[:0]
}

// seenSet returns the search's set of layer states, empty, sized for about
// hint keys at least.
func (s *Scratch) seenSet(hint int) *keySet {
	if s.seen == nil || s.seen.maxLoad < hint {
		s.seen = newKeySet(hint)
	} else {
		s.seen.reset()
	}
	return s.seen
}

// stepMap returns the joint search's map of automaton steps, empty.
func (s *Scratch) stepMap() *keyMap {
	if s.next == nil {
		s.next = newKeyMap(256)
	} else {
		s.next.reset()
	}
	return s.next
}
