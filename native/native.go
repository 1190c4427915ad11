// Package native decides the atomicity-violation claims of a PairModel with
// an exact explicit-state search in Go: the product of the two threads'
// positions, the last access to the variable and the pattern automaton
// (DESIGN §6). It gives the same verdict as Spin for every claim, and a
// shortest witness interleaving for each violated one.
//
// It does not produce Promela or run Spin; the caller decides whether to
// confirm its verdicts with Spin.
package native

import (
	"context"
	"fmt"
	"slices"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Verdict is the decision of one claim.
type Verdict struct {
	Pattern  ltl.Pattern
	Local    int // 1 or 2
	Violated bool
	// Witness is the interleaving that completes the pattern, as steps of
	// the PairModel, if Violated.
	Witness []tracemodel.StepRef
	States  int // product states explored
}

// Claim returns the Spin claim name of the verdict.
func (v Verdict) Claim() string { return v.Pattern.ClaimName(v.Local) }

// DefaultMaxStates bounds one claim's search.
const DefaultMaxStates = 20_000_000

// TooLargeError is returned when a search exceeds its state bound.
type TooLargeError struct {
	Model  string
	States int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("model %s: native search exceeds %d states", e.Model, e.States)
}

// Checker decides claims on one PairModel. Build it with New; it is not
// safe for concurrent use (Impossible caches per local thread).
type Checker struct {
	pm *tracemodel.PairModel
	n  [2]int
	// progAt[x][pc]: thread x's progress counter after its first pc steps.
	progAt [2][]int32
	// brkAt[x][pc], pubAt[x][pc]: thread x's brk and pub flags after its
	// first pc steps.
	brkAt, pubAt [2][]bool
	// excl[x][l] / shared[x][l]: sorted intervals [from, to) of pcs at which
	// thread x holds lock l exclusively / for reading.
	excl, shared [2][][]interval
	// MaxStates bounds each search; 0 means DefaultMaxStates.
	MaxStates int
	// AnyViolation makes CheckAll stop at the first violated claim, for a
	// caller that only asks whether some claim is violated (the data-flow
	// prefilter of package predict): the other verdicts are then unknown
	// and reported as holding. A joint search of claims that all hold
	// visits every reachable state; one that finds a violation need not go
	// on.
	AnyViolation bool
	// Skip, if set, names claims CheckAll leaves out: their verdicts are
	// then unknown and reported as holding (for a model's later parts,
	// whose claims' instances the earlier parts listed enough of).
	Skip func(p ltl.Pattern, local int) bool
	// reach caches reachOf per local thread (Impossible).
	reach [2][2][]int
	// accesses caches, per thread, the kinds of its accesses and their
	// counts; interleave, remoteCanInterleave's answers (Impossible asks
	// both for every claim, and the claims share them).
	accesses   [2]*accessKinds
	interleave map[interleaveKey]bool
	// sources: some read step has a Source, so the model differs between
	// the claims of the two local threads.
	sources bool
	// sc is where the tables above and the searches' nodes are.
	sc *Scratch
}

type interval struct{ from, to int32 }

// New prepares the search structures of pm.
func New(pm *tracemodel.PairModel) *Checker { return NewWith(pm, nil) }

func newChecker(pm *tracemodel.PairModel, sc *Scratch) *Checker {
	c := &Checker{pm: pm, sc: sc}
	for x := 0; x < 2; x++ {
		steps := pm.Steps[x]
		c.n[x] = len(steps)
		c.progAt[x] = grow(sc.progAt[x], len(steps)+1)[:len(steps)+1]
		c.brkAt[x] = grow(sc.brkAt[x], len(steps)+1)[:len(steps)+1]
		c.pubAt[x] = grow(sc.pubAt[x], len(steps)+1)[:len(steps)+1]
		sc.progAt[x], sc.brkAt[x], sc.pubAt[x] = c.progAt[x], c.brkAt[x], c.pubAt[x]
		c.progAt[x][0], c.brkAt[x][0], c.pubAt[x][0] = 0, pm.Broken, false
		c.excl[x] = make([][]interval, len(pm.Locks))
		c.shared[x] = make([][]interval, len(pm.Locks))
		// open[l]: the step after the acquire of lock l's open hold, 0 if
		// none; reading[l]: it is held for reading.
		open := make([]int32, len(pm.Locks))
		reading := make([]bool, len(pm.Locks))
		for i := range steps {
			s := &steps[i]
			c.sources = c.sources || s.Source > 0
			c.progAt[x][i+1] = c.progAt[x][i]
			if s.Progress > 0 {
				c.progAt[x][i+1] = int32(s.Progress)
			}
			c.brkAt[x][i+1] = c.brkAt[x][i]
			c.pubAt[x][i+1] = c.pubAt[x][i]
			switch {
			case s.Kind.IsAccess():
				c.brkAt[x][i+1] = false
				c.pubAt[x][i+1] = false
			case s.Kind == tracemodel.StepBoundary:
				c.brkAt[x][i+1] = true
			case s.Kind == tracemodel.StepPublish:
				c.pubAt[x][i+1] = true
			case s.Kind.IsAcquire():
				open[s.Lock] = int32(i + 1)
				reading[s.Lock] = s.Kind == tracemodel.StepRdLock
			case s.Kind.IsRelease():
				iv := interval{open[s.Lock], int32(i + 1)}
				if reading[s.Lock] {
					c.shared[x][s.Lock] = append(c.shared[x][s.Lock], iv)
				} else {
					c.excl[x][s.Lock] = append(c.excl[x][s.Lock], iv)
				}
				open[s.Lock] = 0
			}
		}
		for l, from := range open { // held to the end
			if from == 0 {
				continue
			}
			iv := interval{from, int32(len(steps) + 1)}
			if reading[l] {
				c.shared[x][l] = append(c.shared[x][l], iv)
			} else {
				c.excl[x][l] = append(c.excl[x][l], iv)
			}
		}
	}
	return c
}

func holds(ivs []interval, pc int32) bool {
	_, ok := containing(ivs, pc)
	return ok
}

// enabled reports whether thread x can execute its step at pc[x] in the
// claims whose local thread is local (1 or 2; 0: the Source of reads is
// ignored, for models that have none). A local read does not run before the
// write it observed: a run where it does can complete no instance (the
// Spin model sets the thread's early bit, which no claim accepts).
func (c *Checker) enabled(x int, pc [2]int32, local int) bool {
	if int(pc[x]) >= c.n[x] {
		return false
	}
	s := &c.pm.Steps[x][pc[x]]
	o := 1 - x
	if s.Guard > 0 && c.progAt[o][pc[o]] < int32(s.Guard) {
		return false
	}
	if s.Source > 0 && local == x+1 && c.progAt[o][pc[o]] < int32(s.Source) {
		return false
	}
	switch s.Kind {
	case tracemodel.StepLock, tracemodel.StepWrLock:
		return !holds(c.excl[o][s.Lock], pc[o]) && !holds(c.shared[o][s.Lock], pc[o])
	case tracemodel.StepRdLock:
		return !holds(c.excl[o][s.Lock], pc[o])
	}
	return true
}

// successor returns the positions and the variable's value after thread x
// runs its next step from positions pc, if it can.
func (c *Checker) successor(x int, pc [2]int32, v int16, local int) ([2]int32, int16, bool) {
	if !c.enabled(x, pc, local) {
		return pc, v, false
	}
	s := &c.pm.Steps[x][pc[x]]
	switch s.Kind {
	case tracemodel.StepRead:
		v = int16(x + 1)
	case tracemodel.StepWrite:
		v = int16(64 + x + 1)
		if s.Atomic {
			v |= ltl.AtomicBit
		}
	}
	if s.Second && s.Kind.IsAccess() {
		v += ltl.VarBit
	}
	pc[x]++
	return pc, v, true
}

// obs is what the claims see of a state: v is the value of the last
// access, with ltl.AtomicBit for an atomic write.
func (c *Checker) obs(pc [2]int32, v int16) ltl.Obs {
	return ltl.Obs{V: v &^ ltl.AtomicBit, Atomic: v&ltl.AtomicBit != 0, Brk1: c.brkAt[0][pc[0]], Brk2: c.brkAt[1][pc[1]],
		Pub1: c.pubAt[0][pc[0]], Pub2: c.pubAt[1][pc[1]]}
}

// A product state is packed into a uint64 so that the visited set is a map
// with integer keys (the search's hot path): the two threads' positions, the
// index of the variable's value, and the index of the automaton state among
// those met so far in this search.
const (
	pcBits   = 25
	vBits    = 4
	autBits  = 9
	maxPC    = 1<<pcBits - 1
	maxAutID = 1<<autBits - 1
)

// valueAt and valueIndex convert between the variable's possible values (0,
// 1, 2, 65, 66, and the same plus VarBit for the second variable of a set
// model; the writes also with ltl.AtomicBit) and the index that is packed
// into a state.
func valueAt(i uint64) int16 { return values[i] }

var values = [...]int16{0, 1, 2, 65, 66, 1 + ltl.VarBit, 2 + ltl.VarBit, 65 + ltl.VarBit, 66 + ltl.VarBit,
	65 | ltl.AtomicBit, 66 | ltl.AtomicBit, (65 + ltl.VarBit) | ltl.AtomicBit, (66 + ltl.VarBit) | ltl.AtomicBit}

func valueIndex(v int16) uint64 {
	var i uint64
	switch v &^ (ltl.VarBit | ltl.AtomicBit) {
	case 1:
		i = 1
	case 2:
		i = 2
	case 65:
		i = 3
	case 66:
		i = 4
	default:
		return 0
	}
	switch {
	case v&ltl.AtomicBit != 0 && v&ltl.VarBit != 0:
		return i + 8 // 11, 12
	case v&ltl.AtomicBit != 0:
		return i + 6 // 9, 10
	case v&ltl.VarBit != 0:
		return i + 4
	}
	return i
}

func pack(pc [2]int32, v uint64, aut uint64) uint64 {
	return uint64(pc[0])<<(pcBits+vBits+autBits) | uint64(pc[1])<<(vBits+autBits) | v<<autBits | aut
}

func unpack(k uint64) (pc [2]int32, v int16, aut uint64) {
	pc[0] = int32(k >> (pcBits + vBits + autBits) & maxPC)
	pc[1] = int32(k >> (vBits + autBits) & maxPC)
	return pc, valueAt(k >> autBits & (1<<vBits - 1)), k & maxAutID
}

// autStates numbers the automaton states a search meets, so that a product
// state packs the number instead of the set.
type autStates struct {
	sets []ltl.StateSet
	ids  map[ltl.StateSet]uint64
}

// id returns the number of s; false when there are more than maxAutID.
func (a *autStates) id(s ltl.StateSet) (uint64, bool) {
	if id, ok := a.ids[s]; ok {
		return id, true
	}
	if len(a.sets) > maxAutID {
		return 0, false
	}
	if a.ids == nil {
		a.ids = map[ltl.StateSet]uint64{}
	}
	a.ids[s] = uint64(len(a.sets))
	a.sets = append(a.sets, s)
	return uint64(len(a.sets) - 1), true
}

// limit is the state bound of one search.
func (c *Checker) limit() int {
	if c.MaxStates > 0 {
		return c.MaxStates
	}
	return DefaultMaxStates
}

// Check decides the claim of pattern pat with local thread local, by a
// breadth-first search (so the witness is a shortest one): the first
// instance of Instances.
func (c *Checker) Check(ctx context.Context, pat ltl.Pattern, local int) (Verdict, error) {
	verdict := Verdict{Pattern: pat, Local: local}
	ws, states, err := c.search(ctx, pat, local, 1)
	if err != nil {
		return verdict, err
	}
	verdict.States = states
	if len(ws) > 0 {
		verdict.Violated, verdict.Witness = true, ws[0]
	}
	return verdict, nil
}

// CheckAll decides every claim of the patterns, both views (local thread 1
// then 2 for each pattern), with one joint search for the claims that the
// necessary conditions leave (see checkJoint); it falls back to one search
// per claim when the joint state does not fit its encoding.
func (c *Checker) CheckAll(ctx context.Context, pats []ltl.Pattern) ([]Verdict, error) {
	out := make([]Verdict, 0, 2*len(pats))
	var todo []Verdict
	var at []int
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			v := Verdict{Pattern: p, Local: local}
			if (c.Skip == nil || !c.Skip(p, local)) && !c.Impossible(p, local) {
				todo = append(todo, v)
				at = append(at, len(out))
			}
			out = append(out, v)
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	// One joint search for all claims; with read sources, one per local
	// thread (their models differ).
	groups := [][]int{nil}
	if c.sources {
		groups = [][]int{nil, nil}
	}
	for i, v := range todo {
		g := 0
		if c.sources {
			g = v.Local - 1
		}
		groups[g] = append(groups[g], i)
	}
	joint := true
	for g, idx := range groups {
		if len(idx) == 0 {
			continue
		}
		if len(idx) > maxJointClaims || c.n[0] >= maxJointPC || c.n[1] >= maxJointPC {
			joint = false
			break
		}
		claims := make([]Verdict, len(idx))
		for j, i := range idx {
			claims[j] = todo[i]
		}
		local := 0
		if c.sources {
			local = g + 1
		}
		err := c.checkJoint(ctx, claims, local)
		if _, ok := err.(errJointTooBig); ok {
			joint = false
			break
		}
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			todo[i] = claims[j]
		}
		if c.AnyViolation && slices.ContainsFunc(claims, func(v Verdict) bool { return v.Violated }) {
			break
		}
	}
	if joint {
		for i, v := range todo {
			out[at[i]] = v
		}
		return out, nil
	}
	for i, v := range todo {
		r, err := c.Check(ctx, v.Pattern, v.Local)
		if err != nil {
			return nil, err
		}
		out[at[i]] = r
		if c.AnyViolation && r.Violated {
			break
		}
	}
	return out, nil
}

// Model returns the model the checker decides.
func (c *Checker) Model() *tracemodel.PairModel { return c.pm }

func (c *Checker) name() string {
	return fmt.Sprintf("%s threads %s,%s", c.pm.Var, c.pm.Threads[0].Handle, c.pm.Threads[1].Handle)
}

// witness returns the steps from the initial state to state i, with room
// for extra more (the step an instance completes on).
func witness(keys []uint64, parents []int32, moved []int8, i, extra int, unpack func(uint64) ([2]int32, int16, uint64)) []tracemodel.StepRef {
	// Counted first, then filled from its end: a witness of thousands of
	// steps is made once, at its size.
	n := 0
	for j := i; parents[j] >= 0; j = int(parents[j]) {
		n++
	}
	out := make([]tracemodel.StepRef, n, n+extra)
	for ; parents[i] >= 0; i = int(parents[i]) {
		x := int(moved[i])
		pc, _, _ := unpack(keys[i])
		n--
		out[n] = tracemodel.StepRef{Thread: x, Index: int(pc[x]) - 1}
	}
	return out
}
