package native

import (
	"context"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// DefaultMaxInstances bounds Instances when its max is 0.
const DefaultMaxInstances = 64

// Instances lists the distinct instances of one claim: for each step of
// the model at which the pattern can complete, a shortest interleaving that
// completes it there, in breadth-first order (so the first is a shortest
// witness of the claim, as Check gives). One witness per completing step is
// what tells the claim's bugs apart: a bug is the pattern at its source
// locations, and the locations of an instance end at its completing access
// (racy_counter.c: the increments at three lines are three completing
// writes of one claim). At most max instances are returned (0:
// DefaultMaxInstances).
//
// The list depends only on the model, never on the engine that decided the
// claim, so bug ids are the same whoever checked the model.
func (c *Checker) Instances(ctx context.Context, pat ltl.Pattern, local, max int) ([][]tracemodel.StepRef, error) {
	if max <= 0 {
		max = DefaultMaxInstances
	}
	ws, _, err := c.search(ctx, pat, local, max)
	return ws, err
}

// search is the breadth-first search of Check and Instances: it stops after
// max instances and also returns the number of product states it stored.
func (c *Checker) search(ctx context.Context, pat ltl.Pattern, local, max int) ([][]tracemodel.StepRef, int, error) {
	if c.Impossible(pat, local) {
		return nil, 0, nil
	}
	if c.n[0] >= maxPC || c.n[1] >= maxPC {
		return nil, 0, &TooLargeError{Model: c.name(), States: maxPC}
	}
	aut := pat.Automaton(local)
	limit := c.limit()
	var as autStates
	var out [][]tracemodel.StepRef
	done := map[tracemodel.StepRef]bool{} // completing steps with an instance
	// The search goes on past a completed instance with the obligations
	// that are still pending, so that instances completing later are found.
	s0, acc := aut.StepPending(aut.Init(), c.obs([2]int32{}, 0))
	if acc {
		return nil, 1, nil // an instance before any step: not a model instance
	}
	a0, _ := as.id(s0)
	keys, parents, moved := c.sc.nodes(1024)
	defer func() { c.sc.keepNodes(keys, parents, moved) }()
	keys, parents, moved = append(keys, pack([2]int32{}, 0, a0)), append(parents, -1), append(moved, -1)
	seen := c.sc.seenSet(1024)
	seen.add(keys[0])
	layer := int32(-1) // seen holds the next layer only (checkJoint)
	for head := 0; head < len(keys); head++ {
		if head&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, len(keys), err
			}
		}
		pc, v, a := unpack(keys[head])
		if d := pc[0] + pc[1]; d != layer {
			layer = d
			seen.reset()
		}
		for x := 0; x < 2; x++ {
			npc, nv, ok := c.successor(x, pc, v, local)
			if !ok {
				continue
			}
			ns, acc := aut.StepPending(as.sets[a], c.obs(npc, nv))
			if ref := (tracemodel.StepRef{Thread: x, Index: int(npc[x]) - 1}); acc && !done[ref] {
				done[ref] = true
				w := witness(keys, parents, moved, head, 1, unpack)
				out = append(out, append(w, ref))
				if len(out) >= max {
					return out, len(keys), nil
				}
			}
			na, ok := as.id(ns)
			if !ok {
				return nil, len(keys), &TooLargeError{Model: c.name() + " (pattern automaton)", States: maxAutID}
			}
			k := pack(npc, valueIndex(nv), na)
			if !seen.add(k) {
				continue
			}
			keys = append(keys, k)
			parents = append(parents, int32(head))
			moved = append(moved, int8(x))
			if len(keys) > limit {
				return nil, len(keys), &TooLargeError{Model: c.name(), States: limit}
			}
		}
	}
	return out, len(keys), nil
}
