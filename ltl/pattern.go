package ltl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Pattern is a named pattern: one of the built-ins or a user's.
type Pattern struct {
	ID     string // claim-name prefix, e.g. "P1"; a Promela identifier
	Name   string // short human name, e.g. "unrepeatable read"
	Source string // the pattern in the pattern language
	Help   string // a paragraph for `mcpredict patterns` and SARIF rule help
	Terms  []Term
	// Family, when set, is the id under which the pattern's bugs are
	// grouped with those of its sibling (M1 and M2 are both "M1"): the
	// two orders of the remote accesses are one scenario, and one
	// interleaving often has instances of both.
	Family string
	// Swapped marks the second assignment of a two-variable pattern: the
	// model's second variable plays x (see Swap). ID and Source are those
	// of the pattern as written; only the claims differ.
	Swapped bool
	// PlainLast: the last term does not hold at the write of an atomic
	// read-modify-write (Obs.Atomic), which writes from the value it reads
	// at that instant: a local read right before the write. The precise
	// lost update has it (Precise).
	PlainLast bool
}

// TwoVariable reports whether the pattern is about an atomic set of two
// variables: whether its terms name variables.
func (p Pattern) TwoVariable() bool {
	for _, t := range p.Terms {
		if t.Var != VarAny {
			return true
		}
	}
	return false
}

// Interleaved reports whether every match of the pattern has a remote
// access between two local ones, with a write in each of the two pairs: a
// remote term that must match an access (not repeated with *) has, before
// and after it, local terms that must too, and a write in each pair, as
// all built-in patterns do (M1: W2(x) between R1(x) and R1(y); M5: R2(x)
// between W1(x) and W1(y)).
func (p Pattern) Interleaved() bool {
	var occurs []Term
	for _, t := range p.Terms {
		if t.Quant != Star {
			occurs = append(occurs, t)
		}
	}
	conflict := func(a, b Term) bool { return a.Access == Write || b.Access == Write }
	for j, r := range occurs {
		if r.Side != Remote {
			continue
		}
		before := slices.ContainsFunc(occurs[:j], func(t Term) bool { return t.Side == Local && conflict(t, r) })
		after := slices.ContainsFunc(occurs[j+1:], func(t Term) bool { return t.Side == Local && conflict(r, t) })
		if before && after {
			return true
		}
	}
	return false
}

// OnlyWrites reports whether the terms of a two-variable pattern that name
// variable v and must match an access (not repeated with *) are writes of
// both threads and nothing else, as x and y in M3 and M4: the pattern
// orders the two threads' writes of v and no read of it. On a set whose
// writes of v are all commutative updates (tracemodel.PairModel.OnlyUpdates)
// the order of those writes cannot be observed, so the checker does not
// report the pattern there: two threads that each add to both counters of
// a pair leave the same sums in any order.
func (p Pattern) OnlyWrites(v Variable) bool {
	var sides [3]bool
	for _, t := range p.Terms {
		if t.Var != v || t.Quant == Star {
			continue
		}
		if t.Access != Write {
			return false
		}
		sides[t.Side] = true
	}
	return sides[Local] && sides[Remote]
}

// Swap returns the pattern with x and y exchanged: the claims in which a
// set model's second variable plays x. Swapping twice gives p back.
func (p Pattern) Swap() Pattern {
	q := p
	q.Swapped = !p.Swapped
	q.Terms = make([]Term, len(p.Terms))
	for i, t := range p.Terms {
		switch t.Var {
		case VarX:
			t.Var = VarY
		case VarY:
			t.Var = VarX
		}
		q.Terms[i] = t
	}
	return q
}

type builtinDef struct{ id, name, src, help, family string }

// preciseSources are the sources of the built-in patterns whose form in
// the precise semantics differs (Pattern.Precise), by id.
var preciseSources = map[string]string{"P3": "R1 A2* W2 A2* W1"}

// builtinDefs are the five unserializable interleavings of the paper's
// Fig. 6 / Theorem 1, with the remote block generalised to any accesses
// around a write (DESIGN.md §9.2).
func builtinDefs() []builtinDef {
	return []builtinDef{
		{"P1", "unrepeatable read", "R1 A2* W2 A2* R1",
			"The local thread reads the shared variable twice inside what it treats as one " +
				"atomic region, and the remote thread writes it in between, so the two reads see " +
				"different values. Code that checks a value and then uses it again (check-then-act, " +
				"double reads of a flag or pointer) acts on a state that no longer exists; no serial " +
				"order of the two regions produces this outcome. Typical fix: read the variable once " +
				"into a local, or hold the same lock as the writer across both reads.", ""},
		{"P2", "stale read after local write", "W1 R1* A2* W2 A2* R1",
			"The local thread writes the shared variable and later reads it back in the same " +
				"region, expecting its own value, but the remote thread writes in between, so the " +
				"read returns the remote value. The local thread then continues from a state it did " +
				"not create, which no serial execution allows. Typical fix: keep the written value in " +
				"a local instead of re-reading the shared one, or protect the write and the read " +
				"with one lock that the remote writer also takes.", ""},
		{"P3", "lost update", "R1 A2* W2 A2* R1* W1",
			"The local thread reads the shared variable and later writes a value computed from " +
				"that read (a read-modify-write such as counter++), while the remote thread writes the " +
				"variable in between. The local write overwrites the remote update with a value based " +
				"on stale data, so the remote update is lost. In the precise semantics the local thread " +
				"reads nothing between the remote write and its own write, which is no atomic " +
				"read-modify-write: a write that follows a later read comes from that read (P1 reports " +
				"the check that acted on the first). Typical fix: make the read-modify-write " +
				"atomic (an atomic instruction, compare-and-swap loop, or a lock held across the read " +
				"and the write, taken by every writer).", ""},
		{"P4", "dirty (intermediate) read", "W1 R1* R2+ R1* W1",
			"The local thread writes the shared variable twice in one region, the first value " +
				"being an intermediate state, and the remote thread reads it in between. The remote " +
				"thread observes a value that no serial execution ever exposes (a half-updated state). " +
				"Typical fix: compute the final value in a local and publish it with a single write, " +
				"or make the reader take the lock that the writer holds across both writes.", ""},
		{"P5", "overwritten write", "W1 R1* A2* W2 A2* R1* W1",
			"The local thread writes the shared variable twice in one region and the remote thread " +
				"writes it in between, so the remote write is silently overwritten by the second local " +
				"write (and any local read in between sees the remote value). The final state " +
				"matches no serial order of the two regions. Typical fix: protect the whole local " +
				"region and the remote write with the same lock, or restructure the local region to " +
				"write once.", ""},
	}
}

// setDefs are the six two-variable scenarios of Vaziri, Tip and Dolby
// ("Associating synchronization constraints with data in an object-oriented
// language", POPL 2006: the problematic interleavings of a unit of work that involve
// two locations of one atomic set), with the remote accesses generalised as in P1..P5:
// other remote accesses may come between the two that make the scenario,
// and the local thread may read x back after writing it. In M5 and M6 the
// local thread may also read y before writing it (an update such as
// total += n), and the remote thread only reads after its read of the
// second variable: a remote update of y there is no half-done read but a
// lost update (P3). M3 and M4 end in a plain store of y: a local update
// that reads y first builds on the remote value, and two counters updated
// one after the other are no torn state.
// Each one's two remote terms conflict with the local terms around them in
// opposite directions, so every instance is a cycle of conflicts: no serial
// order of the two regions produces it.
func setDefs() []builtinDef {
	return []builtinDef{
		{"M1", "torn read", "R1(x) A2* W2(x) A2* W2(y) A2* R1(y)",
			"The local thread reads two variables that belong together (an atomic set: bounds, a " +
				"pointer and its length, a key and its value) in one operation, and the remote thread " +
				"updates both in between, x first: the local thread sees the old x and the new y, a " +
				"combination that never existed. Each variable alone may be well locked; the invariant " +
				"between them is not. Typical fix: read both under one lock that the writer also holds " +
				"across both writes, or read a snapshot of the whole set.", "M1"},
		{"M2", "torn read (writes reversed)", "R1(x) A2* W2(y) A2* W2(x) A2* R1(y)",
			"As torn read, with the remote thread writing y before x: the local thread reads the old " +
				"x and then the new y of one remote update. Typical fix: read both variables under the " +
				"lock the writer holds across its update of the set.", "M1"},
		{"M3", "torn update", "W1(x) R1(x)* A2* W2(x) A2* W2(y) A2* W1(y)",
			"The local thread updates two variables that belong together in one operation, and the " +
				"remote thread updates both in between: x ends with the remote value and y with the " +
				"local one, a mixed state that neither update alone produces (an id from one writer " +
				"and the value of the other). Typical fix: write both under one lock, held across " +
				"both writes by every writer.", "M3"},
		{"M4", "torn update (writes reversed)", "W1(x) R1(x)* A2* W2(y) A2* W2(x) A2* W1(y)",
			"As torn update, with the remote thread writing y before x: the set ends as a mix of the " +
				"two updates. Typical fix: one lock across the whole update of the set, taken by every " +
				"writer.", "M3"},
		{"M5", "half-done update read", "W1(x) R1(x)* A2* R2(x) A2* R2(y) R2* R1(y)* W1(y)",
			"The local thread updates two variables that belong together, and the remote thread reads " +
				"both in between: the new x with the old y, a state the update never meant to show (a " +
				"pointer already changed while its length is still the old one). Typical fix: the " +
				"reader takes the lock that the writer holds across both writes.", "M5"},
		{"M6", "half-done update read (reads reversed)", "W1(x) R1(x)* A2* R2(y) A2* R2(x) R2* R1(y)* W1(y)",
			"As half-done update read, with the remote thread reading y first: it sees the old y and " +
				"then the new x of one local update. Typical fix: the reader takes the lock the writer " +
				"holds across both writes.", "M5"},
	}
}

// Builtin returns the five built-in patterns P1..P5, in that order. They are
// defined by their source text, so the language is the only definition.
func Builtin() []Pattern { return compile(builtinDefs()) }

// BuiltinSets returns the six built-in two-variable patterns M1..M6, in
// that order, as written (x is a set model's first variable); Swap gives
// the other assignment.
func BuiltinSets() []Pattern { return compile(setDefs()) }

func compile(defs []builtinDef) []Pattern {
	out := make([]Pattern, len(defs))
	for i, d := range defs {
		out[i] = compileSource(d, d.src)
	}
	return out
}

// compileSource is the pattern of d with the source src.
func compileSource(d builtinDef, src string) Pattern {
	terms, err := Parse(src)
	if err != nil {
		panic(fmt.Sprintf("ltl: built-in pattern %s %q: %v", d.id, src, err))
	}
	return Pattern{ID: d.id, Name: d.name, Source: src, Help: d.help, Terms: terms, Family: d.family}
}

// Precise returns the pattern as the precise semantics checks it (the
// default of mcpredict; docs/semantics.md). Its lost update, P3, is
// "R1 A2* W2 A2* W1" with PlainLast: the local thread reads nothing
// between the remote write and its own write, and that write is no
// atomic read-modify-write. McPatom's "R1 A2* W2 A2* R1* W1" also
// matches a write that a later read computed, where the root cause is
// the check that acted on the first read (P1), and an atomic write,
// which loses nothing; as a pattern, not a filter of the instances
// found, every interleaving without such a read is searched for. Every
// other pattern is returned as it is.
func (p Pattern) Precise() Pattern {
	for _, d := range builtinDefs() {
		if src, ok := preciseSources[d.id]; ok && d.id == p.ID && p.Source == d.src && !p.PlainLast {
			q := compileSource(d, src)
			q.PlainLast = true
			return q
		}
	}
	return p
}

// AllBuiltin returns the built-in patterns of both kinds: P1..P5, then
// M1..M6.
func AllBuiltin() []Pattern { return append(Builtin(), BuiltinSets()...) }

// IsBuiltin reports whether id is the id of a built-in pattern (P1..P5,
// M1..M6).
func IsBuiltin(id string) bool {
	for _, d := range append(builtinDefs(), setDefs()...) {
		if d.id == id {
			return true
		}
	}
	return false
}

// BothAssignments returns the patterns with, after each two-variable one,
// its swapped assignment (Swap): the claims of a set model.
func BothAssignments(pats []Pattern) []Pattern {
	var out []Pattern
	for _, p := range pats {
		out = append(out, p)
		if p.TwoVariable() {
			out = append(out, p.Swap())
		}
	}
	return out
}

// User makes a pattern from a user's source text. id becomes the prefix of
// the claim names, so it must be a Promela identifier; it is the caller's job
// to keep it distinct from the built-in ids and from names used in the model.
// A bad src gives a *SyntaxError.
func User(id, src string) (Pattern, error) {
	if !isIdent(id) {
		return Pattern{}, fmt.Errorf("pattern id %q is not an identifier (letters, digits, _; not starting with a digit)", id)
	}
	terms, err := Parse(src)
	if err != nil {
		return Pattern{}, err
	}
	return Pattern{
		ID:     id,
		Name:   "user pattern",
		Source: src,
		Help:   "A pattern given by the user: " + FormatTerms(terms) + ".",
		Terms:  terms,
	}, nil
}

// checkLocal guards the view argument: anything but 1 or 2 is a programming
// error that would silently produce a claim about a thread that does not exist.
func checkLocal(local int) {
	if local != 1 && local != 2 {
		panic(fmt.Sprintf("ltl: local thread must be 1 or 2, got %d", local))
	}
}

// ClaimName is the name of the Spin claim for the view where model thread
// local (1 or 2) is the local thread, e.g. "P1_1"; a swapped two-variable
// pattern's claims end in "_yx" ("M1_1_yx").
func (p Pattern) ClaimName(local int) string {
	checkLocal(local)
	name := p.ID + "_" + strconv.Itoa(local)
	if p.Swapped {
		name += "_yx"
	}
	return name
}

// LTL is the complete Spin ltl block, e.g. "ltl P1_1 { !<> (...) }".
func (p Pattern) LTL(local int) string {
	return "ltl " + p.ClaimName(local) + " { " + p.Formula(local) + " }"
}

// Formula is the body of the Spin claim: "!<> T(1)" with
//
//	T(n) = C_n
//	T(i) = C_i && (C_i U T(i+1))   for an unquantified or + term
//	T(i) = C_i U T(i+1)            for a * term
//
// where C_i is the state predicate of term i in this view. The formula uses
// neither X (absent from Debian's Spin, and it would defeat partial-order
// reduction) nor anything that depends on stuttering.
func (p Pattern) Formula(local int) string {
	checkLocal(local)
	var b strings.Builder
	b.WriteString("!<> ")
	closing := 0
	for i, t := range p.Terms {
		c := predicate(t, local, p.PublishBreaks(), p.TwoVariable())
		switch {
		case i == len(p.Terms)-1:
			clear := EarlyBit(local)
			if p.PlainLast {
				clear |= AtomicBit
			}
			b.WriteString(fmt.Sprintf("(%s && ((v & %d) == 0))", c, clear))
		case t.Quant == Star:
			b.WriteString("(" + c + " U ")
			closing++
		default:
			b.WriteString("(" + c + " && (" + c + " U ")
			closing += 2
		}
	}
	b.WriteString(strings.Repeat(")", closing))
	return b.String()
}

// threadOf is the model thread id (1 or 2) that a term's side denotes in the
// view where local is the local thread.
func threadOf(s Side, local int) int {
	if s == Local {
		return local
	}
	return 3 - local
}

// PublishBreaks reports whether the pattern's instances end where the local
// thread publishes a write by releasing a lock: true for patterns whose first
// term is a local write (P2, P4, P5). A write that is the last access of a
// critical section is published at the unlock; a later critical section of
// the same thread starts a new region, so reading it back (P2), a remote read
// of it (P4) or its overwriting (P5) is not an atomicity violation. Patterns
// that start with a read (P1, P3) keep spanning critical sections: a value
// read in one and used in the next is the classic split-lock bug.
//
// Two-variable patterns never break at a publish: an atomic set's invariant
// must hold wherever the set is visible, so writing x in one critical
// section and y in the next is the torn update those patterns are about.
func (p Pattern) PublishBreaks() bool {
	return len(p.Terms) > 0 && p.Terms[0].Side == Local && p.Terms[0].Access == Write && !p.TwoVariable()
}

// The model's variable v packs the last access and the region flags into
// one short, so that an access sets the value and clears its thread's flags
// in a single assignment (Spin allows at most 2047 d_step sequences per
// model, and atomic would let the claim see a half-done step).
const (
	ValueMask = 127 // bits 0-6: 0, t after a read by thread t, 64+t after a write
	// VarBit is added to the value for an access of the second variable
	// of a set model (two-variable patterns): 16+t, 80+t.
	VarBit = 16
)

// BrkBit is the bit of v that is set while thread t (1 or 2) has passed a
// region boundary since its last access.
func BrkBit(t int) int { return 64 << t } // 128, 256

// PubBit is the bit of v that is set while thread t has published a write
// by releasing a lock since its last access.
func PubBit(t int) int { return 256 << t } // 512, 1024

// EarlyBit is the bit of v that is set for good once thread t has read
// the variable before the other thread's write that the read observed in
// the recorded run (tracemodel.Step.Source). The last term of a claim whose
// local thread is t requires it clear: what the local thread did after
// such a read is not known, so no instance may complete after it.
func EarlyBit(t int) int { return 1024 << t } // 2048, 4096

// AtomicBit is the bit of v that is set while the last access is the
// write of an atomic read-modify-write (Obs.Atomic). The last term of a
// claim of a pattern with PlainLast requires it clear.
const AtomicBit = 8192

// Pack returns the value of the packed v for an observation.
func Pack(o Obs) int {
	v := int(o.V)
	if o.Atomic {
		v |= AtomicBit
	}
	for t, set := range map[int]bool{BrkBit(1): o.Brk1, BrkBit(2): o.Brk2, PubBit(1): o.Pub1, PubBit(2): o.Pub2} {
		if set {
			v |= t
		}
	}
	return v
}

// predicate is the Spin text of a term's state predicate C in a view: the
// value of the last access, with the local thread's region-boundary flag
// clear (DESIGN.md §3) so that a blocking point breaks every chain, and for
// patterns that start with a local write its publish flag clear too. Both
// tests are one comparison of v under a mask. In a two-variable pattern a
// term's variable selects VarBit; a term without one leaves it out of the
// mask.
func predicate(t Term, local int, pub, twoVar bool) string {
	tid := threadOf(t.Side, local)
	mask := ValueMask | BrkBit(local)
	if pub {
		mask |= PubBit(local)
	}
	switch {
	case twoVar && t.Var == VarAny:
		mask &^= VarBit
	case t.Var == VarY:
		tid += VarBit
	}
	switch t.Access {
	case Read:
		return fmt.Sprintf("((v & %d) == %d)", mask, tid)
	case Write:
		return fmt.Sprintf("((v & %d) == %d)", mask, 64+tid)
	case Any:
		return fmt.Sprintf("(((v & %d) == %d) || ((v & %d) == %d))", mask, tid, mask, 64+tid)
	}
	panic(fmt.Sprintf("ltl: term with invalid access %d", t.Access))
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		digit := r >= '0' && r <= '9'
		if !letter && !(digit && i > 0) {
			return false
		}
	}
	return true
}
