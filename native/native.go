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
	"sort"

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

// Checker decides claims on one PairModel. Build it with New.
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
}

type interval struct{ from, to int32 }

// New prepares the search structures of pm.
func New(pm *tracemodel.PairModel) *Checker {
	c := &Checker{pm: pm}
	for x := 0; x < 2; x++ {
		steps := pm.Steps[x]
		c.n[x] = len(steps)
		c.progAt[x] = make([]int32, len(steps)+1)
		c.brkAt[x] = make([]bool, len(steps)+1)
		c.pubAt[x] = make([]bool, len(steps)+1)
		c.excl[x] = make([][]interval, len(pm.Locks))
		c.shared[x] = make([][]interval, len(pm.Locks))
		open := map[int]int32{}
		reading := map[int]bool{}
		for i, s := range steps {
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
				delete(open, s.Lock)
			}
		}
		for l, from := range open { // held to the end
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
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].to > pc })
	return i < len(ivs) && ivs[i].from <= pc
}

// enabled reports whether thread x can execute its step at pc[x].
func (c *Checker) enabled(x int, pc [2]int32) bool {
	if int(pc[x]) >= c.n[x] {
		return false
	}
	s := &c.pm.Steps[x][pc[x]]
	o := 1 - x
	if s.Guard > 0 && c.progAt[o][pc[o]] < int32(s.Guard) {
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

// state is a product state. v is the variable's value (0, t, 64+t).
type state struct {
	pc [2]int32
	v  int16
	a  ltl.StateSet
}

type node struct {
	st     state
	parent int32
	moved  int8 // thread that moved into this state
}

// Check decides the claim of pattern pat with local thread local.
func (c *Checker) Check(ctx context.Context, pat ltl.Pattern, local int) (Verdict, error) {
	verdict := Verdict{Pattern: pat, Local: local}
	if c.Impossible(pat, local) {
		return verdict, nil
	}
	aut := pat.Automaton(local)
	limit := c.MaxStates
	if limit <= 0 {
		limit = DefaultMaxStates
	}
	obs := func(st state) ltl.Obs {
		return ltl.Obs{V: st.v, Brk1: c.brkAt[0][st.pc[0]], Brk2: c.brkAt[1][st.pc[1]],
			Pub1: c.pubAt[0][st.pc[0]], Pub2: c.pubAt[1][st.pc[1]]}
	}
	init := state{}
	init.a = aut.Step(aut.Init(), obs(init))
	nodes := []node{{st: init, parent: -1, moved: -1}}
	seen := map[state]struct{}{init: {}}
	for head := 0; head < len(nodes); head++ {
		if head&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return verdict, err
			}
		}
		cur := nodes[head].st
		for x := 0; x < 2; x++ {
			if !c.enabled(x, cur.pc) {
				continue
			}
			nx := cur
			nx.pc[x]++
			switch c.pm.Steps[x][cur.pc[x]].Kind {
			case tracemodel.StepRead:
				nx.v = int16(x + 1)
			case tracemodel.StepWrite:
				nx.v = int16(64 + x + 1)
			}
			nx.a = aut.Step(cur.a, obs(nx))
			if _, ok := seen[nx]; ok {
				continue
			}
			seen[nx] = struct{}{}
			nodes = append(nodes, node{st: nx, parent: int32(head), moved: int8(x)})
			if aut.Accepts(nx.a) {
				verdict.Violated = true
				verdict.Witness = witness(nodes, len(nodes)-1)
				verdict.States = len(nodes)
				return verdict, nil
			}
			if len(nodes) > limit {
				return verdict, &TooLargeError{Model: c.name(), States: limit}
			}
		}
	}
	verdict.States = len(nodes)
	return verdict, nil
}

// CheckAll decides every claim of the patterns, both views.
func (c *Checker) CheckAll(ctx context.Context, pats []ltl.Pattern) ([]Verdict, error) {
	var out []Verdict
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			v, err := c.Check(ctx, p, local)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}

func (c *Checker) name() string {
	return fmt.Sprintf("%s threads %s,%s", c.pm.Var, c.pm.Threads[0].Handle, c.pm.Threads[1].Handle)
}

func witness(nodes []node, i int) []tracemodel.StepRef {
	var rev []tracemodel.StepRef
	for ; nodes[i].parent >= 0; i = int(nodes[i].parent) {
		x := int(nodes[i].moved)
		rev = append(rev, tracemodel.StepRef{Thread: x, Index: int(nodes[i].st.pc[x]) - 1})
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev
}
