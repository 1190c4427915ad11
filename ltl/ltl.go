// Package ltl is mcpredict's atomicity-violation pattern language: it parses
// patterns such as "R1 A2* W2 A2* R1", defines the five built-in patterns of
// the McPatom paper (P1..P5), compiles a pattern to an X-free,
// stutter-invariant LTL claim for Spin, and provides an exact automaton for
// the same property so that a native model checker (and the mapping of Spin
// trails back to accesses) can decide it without Spin.
//
// The formula and the automaton are two encodings of one definition (DESIGN.md
// §4) and must agree claim for claim; a differential test against the real
// Spin binary keeps them honest.
//
// The package knows nothing about traces, Promela models or running Spin: it
// only talks about the observable part of a model state (the value of v and the
// two region-boundary flags brk1, brk2), see Obs.
//
// Patterns over one variable (McPatom's P1..P5) are checked on models of one
// variable; patterns whose terms name variables, (x) and (y), are checked on
// models of an atomic set of two variables (the six two-variable scenarios
// of Vaziri, Tip and Dolby, POPL 2006, M1..M6, and users' patterns), each in
// both assignments of the set's variables to x and y.
package ltl

// The parser in ./parser is generated from Pattern.g4 by antlr-ng (pinned in
// the repository's package.json); generate.sh says how.
//go:generate sh generate.sh

import "strings"

// MaxTerms bounds the length of a pattern so that the automaton's state set
// fits in a StateSet bitset, and so that the nested claim stays readable.
const MaxTerms = 24

// Access is the kind of access a term matches.
type Access uint8

// Access kinds. The zero value is invalid on purpose, so that a Term built by
// hand without an access is caught rather than silently meaning "read".
const (
	Read Access = iota + 1
	Write
	Any
)

// String returns the letter used in the pattern language: R, W or A.
func (a Access) String() string {
	switch a {
	case Read:
		return "R"
	case Write:
		return "W"
	case Any:
		return "A"
	}
	return "?"
}

// Side says which thread of the view a term talks about.
type Side uint8

// The local thread is the one whose atomicity is being checked; the remote
// thread is the one that interferes.
const (
	Local  Side = 1
	Remote Side = 2
)

// String returns the digit used in the pattern language: 1 or 2.
func (s Side) String() string {
	switch s {
	case Local:
		return "1"
	case Remote:
		return "2"
	}
	return "?"
}

// Quantifier says how many consecutive model states a term matches.
type Quantifier uint8

// One and Plus both match a non-empty block of states (the formulas are
// stutter invariant, so "one access" and "one or more accesses" of the same
// kind cannot be told apart); Star also matches the empty block.
const (
	One Quantifier = iota
	Plus
	Star
)

// String returns the suffix used in the pattern language: "", "+" or "*".
func (q Quantifier) String() string {
	switch q {
	case Plus:
		return "+"
	case Star:
		return "*"
	}
	return ""
}

// Variable says which variable of an atomic set {x, y} a term of a
// two-variable pattern talks about.
type Variable uint8

// VarAny, the zero value, is a term without a variable: in a
// single-variable pattern the model's variable, in a two-variable pattern
// either of the set's.
const (
	VarAny Variable = iota
	VarX
	VarY
)

// String returns the suffix used in the pattern language: "", "(x)" or "(y)".
func (v Variable) String() string {
	switch v {
	case VarX:
		return "(x)"
	case VarY:
		return "(y)"
	}
	return ""
}

// Term is one element of a pattern.
type Term struct {
	Access Access
	Side   Side
	Quant  Quantifier
	Var    Variable
}

// String returns the term in the pattern language, e.g. "R1", "A2*", "R2+",
// "W2(y)".
func (t Term) String() string {
	return t.Access.String() + t.Side.String() + t.Var.String() + t.Quant.String()
}

// FormatTerms writes terms back in the pattern language, separated by single
// spaces; Parse(FormatTerms(ts)) gives ts back.
func FormatTerms(terms []Term) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = t.String()
	}
	return strings.Join(parts, " ")
}
