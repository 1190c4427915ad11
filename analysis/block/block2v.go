package block

import (
	"context"
	"fmt"
	"slices"

	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// 2v-blocks (§5.2).
//
// A unit's candidate operations are its transaction-initial reads IR(t)
// and transaction-final writes FW(t) (§5.2), recorded during the pass with
// a snapshot of the locks held (with their acquisitions) and the unit's
// log of lock releases. After the pass, only the variables that some
// candidate of another thread can conflict with are kept (accessed by
// candidates of two threads and written by one), and every ordered pair
// of candidates on two different kept variables is a 2v-block
// ⟨v1, v2, op1, op2, pid, held1, held2, held12, heldmid12⟩.

// DefaultMax2vOps is the default of Options.Max2vOps.
const DefaultMax2vOps = 64

type cand struct {
	ev   int32
	v    int32
	op   uint8 // opR (an initial read) or opW (a final write)
	held int32
	snap int32 // index in builder.snaps
}

type snap struct{ off, n int32 }

type rel struct {
	lock    int32
	read    bool
	acq, ev int32
}

type unit2 struct {
	unit, per        int32
	candOff, candEnd int32
	relOff, relEnd   int32
}

type block2Key struct {
	v1, v2     int32
	op1, op2   uint8
	loc1, loc2 int32
	h1, h2     int32 // held(e1), held(e2)
	h12, hmid  int32 // held continuously from e1 to e2; heldmid(e1, e2)
}

func (b *builder) snapshot(holds []hold) {
	off := int32(len(b.snapArena))
	b.snapArena = append(b.snapArena, holds...)
	b.snaps = append(b.snaps, snap{off: off, n: int32(len(holds))})
	b.curSnap = int32(len(b.snaps) - 1)
}

func (b *builder) beginUnit2(holds []hold) {
	b.unitCand = int32(len(b.cands))
	b.unitRel = int32(len(b.rels))
	b.snapshot(holds)
}

// initialRead2 records the initial read ev of v as a candidate, unless an
// earlier initial read of the unit at the same location with the same
// locks held has no lock release since (the optimisation of §5.6:
// heldmid is then empty and the two give the same blocks).
func (b *builder) initialRead2(vs *varState, e *tracemodel.Event, ev, v, held int32) {
	nrel := int32(len(b.rels))
	for i, c := range vs.ir2 {
		cc := &b.cands[c]
		if cc.held == held && vs.ir2Rel[i] == nrel && b.m.Events[cc.ev].Loc == e.Loc {
			return
		}
	}
	vs.ir2 = append(vs.ir2, int32(len(b.cands)))
	vs.ir2Rel = append(vs.ir2Rel, nrel)
	b.cands = append(b.cands, cand{ev: ev, v: v, op: opR, held: held, snap: b.curSnap})
}

// endUnit2 keeps the candidates of the unit that just ended if they
// concern at least two variables.
func (b *builder) endUnit2(unit, per int32) {
	cs := b.cands[b.unitCand:]
	two := false
	for _, c := range cs {
		if c.v != cs[0].v {
			two = true
			break
		}
	}
	if !two {
		b.cands = b.cands[:b.unitCand]
		b.rels = b.rels[:b.unitRel]
		return
	}
	slices.SortFunc(cs, func(x, y cand) int { return int(x.ev - y.ev) })
	b.units2 = append(b.units2, unit2{unit: unit, per: per,
		candOff: b.unitCand, candEnd: int32(len(b.cands)), relOff: b.unitRel, relEnd: int32(len(b.rels))})
	b.unitCand = int32(len(b.cands))
	b.unitRel = int32(len(b.rels))
}

func (b *builder) holdsOf(c *cand) []hold {
	s := b.snaps[c.snap]
	return b.snapArena[s.off : s.off+s.n]
}

func (b *builder) inSet(id, lock int32) bool {
	for _, x := range b.sets.Set(id) {
		if x/2 == lock {
			return true
		}
	}
	return false
}

// build2v builds the 2v-blocks of every recorded unit.
func (b *builder) build2v(ctx context.Context, maxOps int) error {
	if maxOps == 0 {
		maxOps = DefaultMax2vOps
	}
	if maxOps < 0 {
		return nil
	}
	b.blocks2 = map[block2Key]*occ{}
	// Variables some candidate of another thread conflicts with.
	first := make(map[int32]int32)
	multi := make(map[int32]bool)
	written := make(map[int32]bool)
	for _, u := range b.units2 {
		th := b.periods[u.per].thread
		for _, c := range b.cands[u.candOff:u.candEnd] {
			if t, ok := first[c.v]; !ok {
				first[c.v] = th
			} else if t != th {
				multi[c.v] = true
			}
			if c.op == opW {
				written[c.v] = true
			}
		}
	}
	var keep []cand
	var tmp []hold
	for n, u := range b.units2 {
		if n&0xff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		keep = keep[:0]
		for _, c := range b.cands[u.candOff:u.candEnd] {
			if multi[c.v] && written[c.v] {
				keep = append(keep, c)
			}
		}
		if len(keep) < 2 || len(keep) > maxOps {
			continue
		}
		rels := b.rels[u.relOff:u.relEnd]
		for i := range keep {
			c1 := &keep[i]
			e1 := &b.m.Events[c1.ev]
			s1 := b.holdsOf(c1)
			for j := i + 1; j < len(keep); j++ {
				c2 := &keep[j]
				if c2.v == c1.v {
					continue
				}
				s2 := b.holdsOf(c2)
				tmp = tmp[:0]
				for _, h := range s1 {
					for _, h2 := range s2 {
						if h2.lock == h.lock && h2.acq == h.acq {
							tmp = append(tmp, h)
							break
						}
					}
				}
				h12 := b.intern(tmp, nil)
				tmp = tmp[:0]
				for _, r := range rels {
					if r.acq > c1.ev && r.ev < c2.ev && !b.inSet(c1.held, r.lock) && !b.inSet(c2.held, r.lock) {
						tmp = append(tmp, hold{lock: r.lock, read: r.read})
					}
				}
				hmid := b.intern(tmp, nil)
				k := block2Key{v1: c1.v, v2: c2.v, op1: c1.op, op2: c2.op, loc1: e1.Loc, loc2: b.m.Events[c2.ev].Loc,
					h1: c1.held, h2: c2.held, h12: h12, hmid: hmid}
				o := b.blocks2[k]
				if o == nil {
					o = &occ{}
					b.blocks2[k] = o
					b.b2Order = append(b.b2Order, k)
				}
				o.add(u.per, c1.ev, c2.ev, u.unit)
			}
		}
	}
	return nil
}

func conflicts(a, b uint8) bool { return a == opW || b == opW }

// check2v compares every 2v-block b (of transaction t) with every 2v-block
// b' (of a transaction t' of another thread, in a concurrent period) over
// the same two variables, and reports the feasible interleavings of their
// four operations that order t before t' on one variable and t' before t
// on the other (two pairs of conflicting operations, §5.2). Writing b =
// e1 e2 (e1 on x) and b' = f1 f2, the interleavings considered, as seen
// from b (the others are seen from b'):
//
//   - e1 f1 f2 e2 (b' inside b), if f1, f2 conflict with the operations of
//     b on their variables in opposite orders: each of f1, f2 can occur
//     between e1 and e2 (locks disjoint from held12(b)) and held12(b) ∩
//     heldmid(b') = ∅ (§5.2);
//   - e1 f1 e2 f2 (crossing), when f1 is on y and f2 on x: f1 can occur
//     between e1 and e2 and e2 between f1 and f2.
func (b *builder) check2v(ctx context.Context, add func(Violation)) error {
	m := b.m
	type pair struct{ x, y int32 }
	groups := map[pair][]int{}
	var order []pair
	for i, k := range b.b2Order {
		p := pair{min(k.v1, k.v2), max(k.v1, k.v2)}
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], i)
	}
	n := 0
	for _, p := range order {
		g := groups[p]
		for _, i := range g {
			k := b.b2Order[i]
			bo := b.blocks2[k]
			for _, j := range g {
				if n++; n&0xfff == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				k2 := b.b2Order[j]
				var shape string // order of e1 e2 f1 f2 as "e1 f1 f2 e2" positions
				switch {
				case k2.v1 == k.v1: // f1 on x, f2 on y
					if conflicts(k.op1, k2.op1) && conflicts(k.op2, k2.op2) && b.nested(k, k2) {
						shape = "nested"
					}
				default: // f1 on y, f2 on x
					if !conflicts(k.op1, k2.op2) || !conflicts(k.op2, k2.op1) {
						break
					}
					if b.nested(k, k2) {
						shape = "nested"
					} else if !b.excludes(k2.h1, k.h12) && !b.excludes(k.h2, k2.h12) {
						shape = "crossing"
					}
				}
				if shape == "" {
					continue
				}
				bo2 := b.blocks2[k2]
				x, y := b.findConcurrent(bo, bo2)
				if x < 0 {
					continue
				}
				e1, e2 := bo.ex[x][0], bo.ex[x][1]
				f1, f2 := bo2.ex[y][0], bo2.ex[y][1]
				xv, yv := m.Vars[k.v1].Name, m.Vars[k.v2].Name
				name := func(op uint8, v int32, other bool) string {
					s := opName(op)
					if other {
						s += "'"
					}
					if v == k.v1 {
						return s + "(x)"
					}
					return s + "(y)"
				}
				seq := []struct {
					ev    int32
					op    uint8
					v     int32
					other bool
					role  string
				}{
					{e1, k.op1, k.v1, false, RoleFirst},
					{f1, k2.op1, k2.v1, true, RoleOtherFirst},
					{f2, k2.op2, k2.v2, true, RoleOtherLast},
					{e2, k.op2, k.v2, false, RoleLast},
				}
				if shape == "crossing" {
					seq[2], seq[3] = seq[3], seq[2]
				}
				pattern := ""
				var evs []EventRef
				for i, s := range seq {
					if i > 0 {
						pattern += " "
					}
					pattern += name(s.op, s.v, s.other)
					evs = append(evs, txn.Ref(m, s.ev, s.role))
				}
				info := b.units[bo.unit[x]]
				oinfo := b.units[bo2.unit[y]]
				add(Violation{
					Kind: View2v, Pattern: pattern, Var: xv, Var2: yv, Txn: info, Other: &oinfo, Events: evs, Count: 1,
					Message: fmt.Sprintf("view-atomicity violation on %s and %s (%s, x = %s, y = %s): %s %s by thread %s and %s %s by thread %s can be interleaved as %s",
						xv, yv, pattern, xv, yv, info.Kind, info.Name, info.Thread, oinfo.Kind, oinfo.Name, oinfo.Thread, describe(evs)),
				})
			}
		}
	}
	return nil
}

// nested reports whether both operations of b' can occur between those of
// b (§5.2).
func (b *builder) nested(k, k2 block2Key) bool {
	return !b.excludes(k2.h1, k.h12) && !b.excludes(k2.h2, k.h12) && !b.excludes(k.h12, k2.hmid)
}

func describe(evs []EventRef) string {
	s := ""
	for i, r := range evs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s of %s by %s at %s (line %d)", r.Action, r.Object, r.Thread, r.Where(), r.Line)
	}
	return s
}
