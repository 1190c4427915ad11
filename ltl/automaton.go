package ltl

import "fmt"

// Obs is the observable part of one model state: what the claim of any
// pattern can see.
type Obs struct {
	// V is 0 initially; t after a read by model thread t, 64+t after a
	// write; VarBit more for an access of a set model's second variable.
	V    int16
	Brk1 bool // thread 1 passed a region boundary since its last access
	Brk2 bool // same for thread 2
	// Pub1 is set when thread 1 released a lock whose critical section
	// accessed the variable, since its last access; Pub2 likewise.
	Pub1, Pub2 bool
	// Atomic is set when the last access is the write of an atomic
	// read-modify-write (a compare-and-swap that succeeded, a
	// fetch-and-add): only the last term of a pattern with PlainLast
	// tells it from a plain write.
	Atomic bool
}

// StateSet is a state of the pattern automaton: the set of pending
// obligations of the nondeterministic automaton, as a bitset, so that a
// native model checker can store it in its state vector and compare states
// with ==. The zero value is the initial state.
//
// Bit i (0 ≤ i < n-1) is U_{i+1}: "C_{i+1} U T(i+2)" must hold from the next
// state on. Bit 63 means accepted; an accepted set is always exactly that bit,
// so that all accepted product states collapse into one.
type StateSet uint64

const accepted StateSet = 1 << 63

// Automaton decides <>T(1) (the negation of a claim's body) for one pattern
// and one view, reading model states one at a time. It is immutable and safe
// for concurrent use.
type Automaton struct {
	n     int
	local int
	pub   bool   // the pattern's chains also break at a published write (see Pattern.PublishBreaks)
	plain bool   // the last term does not hold at an atomic write (Pattern.PlainLast)
	star  uint32 // bit i: term i+1 is quantified with *
	// sat[c] has bit i set iff C_{i+1} holds in a state of observation class
	// c (see class); precomputed because Step is on the native checker's hot
	// path.
	sat [numClasses]uint32
}

// Observation classes: the only distinctions any predicate of a view makes.
// The classes of an access of the second variable (VarBit) follow those of
// the first, in the same order.
const (
	clsNone = iota // v matches no access, or the local brk flag is set
	clsLocalRead
	clsLocalWrite
	clsRemoteRead
	clsRemoteWrite
	clsLocalReadY
	clsLocalWriteY
	clsRemoteReadY
	clsRemoteWriteY
	numClasses
	clsY = clsLocalReadY - clsLocalRead // offset of the second variable's classes
)

// Automaton compiles the pattern for the view where model thread local (1 or
// 2) is the local thread. It panics on a pattern that Parse would reject for
// its length, since its states would not fit a StateSet.
func (p Pattern) Automaton(local int) *Automaton {
	checkLocal(local)
	n := len(p.Terms)
	if n == 0 || n > MaxTerms {
		panic(fmt.Sprintf("ltl: pattern %s has %d terms; want 1..%d", p.ID, n, MaxTerms))
	}
	a := &Automaton{n: n, local: local, pub: p.PublishBreaks(), plain: p.PlainLast}
	two := p.TwoVariable()
	for i, t := range p.Terms {
		if t.Quant == Star {
			a.star |= 1 << i
		}
		for c := clsLocalRead; c < numClasses; c++ {
			// A single-variable pattern's predicates compare the whole
			// value: an access with VarBit matches none of its terms.
			if c >= clsLocalReadY && !two {
				break
			}
			if termHolds(t, c) {
				a.sat[c] |= 1 << i
			}
		}
	}
	return a
}

// termHolds is C (without the brk conjunct, folded into clsNone) for a class.
// A term without a variable holds for accesses of either variable.
func termHolds(t Term, c int) bool {
	if c >= clsLocalReadY {
		if t.Var == VarX {
			return false
		}
		c -= clsY
	} else if t.Var == VarY {
		return false
	}
	side, write := Local, false
	switch c {
	case clsLocalRead:
	case clsLocalWrite:
		write = true
	case clsRemoteRead:
		side = Remote
	case clsRemoteWrite:
		side, write = Remote, true
	default:
		return false
	}
	if t.Side != side {
		return false
	}
	switch t.Access {
	case Read:
		return !write
	case Write:
		return write
	case Any:
		return true
	}
	return false
}

func (a *Automaton) class(o Obs) int {
	if (a.local == 1 && o.Brk1) || (a.local == 2 && o.Brk2) {
		return clsNone
	}
	if a.pub && ((a.local == 1 && o.Pub1) || (a.local == 2 && o.Pub2)) {
		return clsNone
	}
	remote := 3 - a.local
	y := 0
	v := int(o.V)
	if v&VarBit != 0 {
		y, v = clsY, v&^VarBit
	}
	switch v {
	case a.local:
		return clsLocalRead + y
	case 64 + a.local:
		return clsLocalWrite + y
	case remote:
		return clsRemoteRead + y
	case 64 + remote:
		return clsRemoteWrite + y
	}
	return clsNone
}

// Init is the state before any model state has been read.
func (a *Automaton) Init() StateSet { return 0 }

// Accepts reports whether the states read so far contain a complete instance
// of the pattern, i.e. whether the Spin claim "!<> T(1)" is violated by every
// run with this prefix.
func (a *Automaton) Accepts(s StateSet) bool { return s&accepted != 0 }

// Step reads the next model state. Reading the same observation twice in a row
// gives the same StateSet as reading it once (the property is stutter
// invariant), which keeps native state spaces small.
//
// Within one state the automaton follows epsilon moves forward: T_i (T(i) must
// hold here) goes to U_i if C_i holds or term i is *, and U_i goes to T_{i+1}
// (the right side of U may hold in the same state as the left). U_i survives to
// the next state if C_i holds here. T_1 is entered at every state: the <> of
// the claim may start anywhere.
func (a *Automaton) Step(s StateSet, o Obs) StateSet {
	if s&accepted != 0 {
		return accepted
	}
	next, acc := a.StepPending(s, o)
	if acc {
		return accepted
	}
	return next
}

// StepPending is Step for a search that goes on after an instance: it
// returns the obligations still pending after the state (never the
// accepted set) and whether an instance completes in it.
func (a *Automaton) StepPending(s StateSet, o Obs) (StateSet, bool) {
	s &^= accepted
	sat := a.sat[a.class(o)]
	var next StateSet
	t := true // T_1
	last := a.n - 1
	for i := 0; i < last; i++ {
		hold := sat>>i&1 != 0
		u := s>>i&1 != 0
		if t && (hold || a.star>>i&1 != 0) {
			u = true
		}
		if u && hold {
			next |= 1 << i
		}
		t = u
		if !t && s>>(i+1) == 0 {
			// Nothing is pending further on, so nothing more can be reached.
			return next, false
		}
	}
	return next, t && a.lastHolds(sat, o)
}

// lastHolds reports whether the last term holds in a state of observation
// o, whose class the terms sat hold in.
func (a *Automaton) lastHolds(sat uint32, o Obs) bool {
	return sat>>(a.n-1)&1 != 0 && !(a.plain && o.Atomic)
}

// Match finds the first complete instance of the pattern in a sequence of
// model states (seq[0] is the initial state): end is the earliest index after
// which the automaton accepts, start the latest index j ≤ end such that T(1)
// holds at seq[j] with its witness inside seq[j..end]. ok is false when the
// sequence contains no instance.
func (p Pattern) Match(local int, seq []Obs) (start, end int, ok bool) {
	m := p.Matcher(local)
	for k, o := range seq {
		if start, ok := m.Next(o); ok {
			return start, k, true
		}
	}
	return 0, 0, false
}

// A Matcher is Match fed one state at a time, for a caller that makes the
// states as it goes (a witness of hundreds of steps per instance, of
// thousands of instances).
type Matcher struct {
	a *Automaton
	k int // the index of the next state
	// best[i] is the latest start index among the runs that carry U_{i+1}
	// into the next state, or -1. Keeping only the latest is exact: what a
	// run can do next depends on its automaton state alone, not on where it
	// started. This is Step with the start index carried along.
	best, next []int
}

// Matcher returns the matcher of the pattern's claim with local thread
// local, before the first state.
func (p Pattern) Matcher(local int) *Matcher {
	a := p.Automaton(local)
	m := &Matcher{a: a, best: make([]int, a.n), next: make([]int, a.n)}
	for i := range m.best {
		m.best[i] = -1
	}
	return m
}

// Next takes the next state: ok when the first instance completes there,
// start its first state (see Match). Once it has, Next must not be called
// again.
func (m *Matcher) Next(o Obs) (start int, ok bool) {
	a, best, next := m.a, m.best, m.next
	k := m.k
	m.k++
	last := a.n - 1
	sat := a.sat[a.class(o)]
	t := k // T_1 entered here; k is the latest start there can be
	for i := 0; i < last; i++ {
		hold := sat>>i&1 != 0
		u := best[i]
		if t >= 0 && (hold || a.star>>i&1 != 0) {
			u = max(u, t)
		}
		next[i] = -1
		if u >= 0 && hold {
			next[i] = u
		}
		t = u
	}
	if t >= 0 && a.lastHolds(sat, o) {
		return t, true
	}
	m.best, m.next = next, best
	return 0, false
}
