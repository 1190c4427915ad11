package native

import (
	"context"

	"github.com/mcpredict/mcpredict/ltl"
)

// Joint search: every claim of a model in one breadth-first search over the
// product of the model with all the claims' automata. The model part of the
// state space is the same for every claim, so exploring it once instead of
// once per claim is the main saving; the automata's states are correlated
// (they all read the same observations), so the product stays close to the
// largest single one.
//
// The first time a claim accepts in breadth-first order is on a shortest
// path, as in Check. A claim that has accepted is frozen (its component no
// longer changes), so it does not split states any more.

const (
	jointPCBits    = 24
	jointTupleBits = 64 - 2*jointPCBits - vBits // 12
	maxJointClaims = 16
	maxJointTuples = 1<<jointTupleBits - 1
	maxJointPC     = 1<<jointPCBits - 1
)

type tuple [maxJointClaims]uint8 // per claim, the id of its automaton state

// obsKeyBits is the width of obsKey.
const obsKeyBits = 21

// obsKey packs an observation into obsKeyBits bits.
func obsKey(o ltl.Obs) uint64 {
	k := uint64(uint16(o.V))
	for i, b := range [5]bool{o.Brk1, o.Brk2, o.Pub1, o.Pub2, o.Atomic} {
		if b {
			k |= 1 << (16 + i)
		}
	}
	return k
}

// errJointTooBig makes CheckAll fall back to one search per claim.
type errJointTooBig struct{}

func (errJointTooBig) Error() string { return "joint search too big" }

// local is the claims' local thread when the model has read sources, else 0.
func (c *Checker) checkJoint(ctx context.Context, claims []Verdict, local int) error {
	k := len(claims)
	auts := make([]*ltl.Automaton, k)
	sets := make([][]ltl.StateSet, k) // per claim: automaton states by id
	ids := make([]map[ltl.StateSet]uint8, k)
	for i := range claims {
		auts[i] = claims[i].Pattern.Automaton(claims[i].Local)
		ids[i] = map[ltl.StateSet]uint8{}
	}
	id := func(i int, s ltl.StateSet) (uint8, bool) {
		if v, ok := ids[i][s]; ok {
			return v, true
		}
		if len(sets[i]) == 255 {
			return 0, false
		}
		ids[i][s] = uint8(len(sets[i]))
		sets[i] = append(sets[i], s)
		return uint8(len(sets[i]) - 1), true
	}
	var tuples []tuple
	tupleIDs := map[tuple]uint64{}
	tupleID := func(t tuple) (uint64, bool) {
		if v, ok := tupleIDs[t]; ok {
			return v, true
		}
		if len(tuples) == maxJointTuples {
			return 0, false
		}
		tupleIDs[t] = uint64(len(tuples))
		tuples = append(tuples, t)
		return uint64(len(tuples) - 1), true
	}
	packJ := func(pc [2]int32, v uint64, t uint64) uint64 {
		return uint64(pc[0])<<(jointPCBits+vBits+jointTupleBits) | uint64(pc[1])<<(vBits+jointTupleBits) | v<<jointTupleBits | t
	}
	unpackJ := func(key uint64) ([2]int32, int16, uint64) {
		var pc [2]int32
		pc[0] = int32(key >> (jointPCBits + vBits + jointTupleBits) & maxJointPC)
		pc[1] = int32(key >> (vBits + jointTupleBits) & maxJointPC)
		return pc, valueAt(key >> jointTupleBits & (1<<vBits - 1)), key & maxJointTuples
	}
	limit := c.MaxStates
	if limit <= 0 {
		limit = DefaultMaxStates
	}
	open := k // claims not yet violated
	// step advances every unfrozen claim by one observation. It records
	// the claims that accept at node n.
	var keys []uint64
	var parents []int32
	var moved []int8
	step := func(t tuple, o ltl.Obs, n int) (tuple, bool) {
		var nt tuple
		for i := 0; i < k; i++ {
			if claims[i].Violated {
				nt[i] = 255 // frozen
				continue
			}
			s := auts[i].Step(sets[i][t[i]], o)
			if auts[i].Accepts(s) {
				claims[i].Violated = true
				claims[i].Witness = witness(keys, parents, moved, n, 0, unpackJ)
				claims[i].States = n + 1
				open--
				nt[i] = 255
				continue
			}
			v, ok := id(i, s)
			if !ok {
				return nt, false
			}
			nt[i] = v
		}
		return nt, true
	}
	var t0 tuple
	for i := 0; i < k; i++ {
		t0[i], _ = id(i, auts[i].Init())
	}
	// Sized for a search that visits each step about twice (a model
	// that causality mostly orders), as a server's parts are.
	hint := min(2*(c.n[0]+c.n[1])+16, 1<<18)
	keys, parents, moved = c.sc.nodes(hint)
	defer func() { c.sc.keepNodes(keys, parents, moved) }()
	keys, parents, moved = append(keys, 0), append(parents, -1), append(moved, -1)
	t0, ok := step(t0, c.obs([2]int32{}, 0), 0)
	if !ok {
		return errJointTooBig{}
	}
	tid, ok := tupleID(t0)
	if !ok {
		return errJointTooBig{}
	}
	keys[0] = packJ([2]int32{}, 0, tid)
	seen := c.sc.seenSet(hint)
	// next: the tuple that a tuple and an observation step to, so that
	// the automata run once per (tuple, observation), not once per state.
	next := c.sc.stepMap()
	seen.add(keys[0])
	// Each step moves one thread by one statement, so a state's depth is
	// pc[0]+pc[1] and the breadth-first search meets the states layer by
	// layer: a state can only be met again while its layer is being made,
	// and seen holds that layer only (a server part's millions of states
	// no longer fill a table that every add misses in the cache).
	layer := int32(-1) // the depth of the states being expanded
	for head := 0; head < len(keys) && open > 0 && !(c.AnyViolation && open < k); head++ {
		if head&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		pc, v, t := unpackJ(keys[head])
		if d := pc[0] + pc[1]; d != layer {
			layer = d
			seen.reset()
		}
		for x := 0; x < 2 && open > 0; x++ {
			npc, nv, ok := c.successor(x, pc, v, local)
			if !ok {
				continue
			}
			// Tentatively the new node: its index is len(keys).
			n := len(keys)
			keys = append(keys, packJ(npc, valueIndex(nv), 0))
			parents = append(parents, int32(head))
			moved = append(moved, int8(x))
			o := c.obs(npc, nv)
			tk := t<<obsKeyBits | obsKey(o)
			ntid, known := next.get(tk)
			if !known {
				before := open
				nt, ok := step(tuples[t], o, n)
				if !ok {
					return errJointTooBig{}
				}
				if ntid, ok = tupleID(nt); !ok {
					return errJointTooBig{}
				}
				if open == before {
					// A step where a claim accepts is never taken from
					// the table: it records the witness. A claim that
					// accepted later keeps its states in the steps
					// recorded before: it no longer matters.
					next.put(tk, ntid)
				}
			}
			key := packJ(npc, valueIndex(nv), ntid)
			if !seen.add(key) {
				keys, parents, moved = keys[:n], parents[:n], moved[:n]
				continue
			}
			keys[n] = key
			if len(keys) > limit {
				return &TooLargeError{Model: c.name(), States: limit}
			}
		}
	}
	for i := range claims {
		if !claims[i].Violated {
			claims[i].States = len(keys)
		}
	}
	return nil
}
