package ltl

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// states reads a compact notation for a sequence of model states: each
// space-separated word is the value of v, optionally followed by /b1 and/or
// /b2 for a set brk flag and /a for an atomic write, e.g. "0 1 66/b1 65/a".
func states(t *testing.T, s string) []Obs {
	t.Helper()
	var out []Obs
	for _, w := range strings.Fields(s) {
		parts := strings.Split(w, "/")
		v, err := strconv.Atoi(parts[0])
		if err != nil {
			t.Fatalf("bad state %q", w)
		}
		o := Obs{V: int16(v)}
		for _, f := range parts[1:] {
			switch f {
			case "b1":
				o.Brk1 = true
			case "b2":
				o.Brk2 = true
			case "a":
				o.Atomic = true
			default:
				t.Fatalf("bad flag in %q", w)
			}
		}
		out = append(out, o)
	}
	return out
}

// builtinByID returns the built-in pattern id, or its precise form for
// id "precise " + id.
func builtinByID(t *testing.T, id string) Pattern {
	t.Helper()
	name, precise := strings.CutPrefix(id, "precise ")
	for _, p := range Builtin() {
		if p.ID == name {
			if precise {
				return p.Precise()
			}
			return p
		}
	}
	t.Fatalf("no built-in %s", id)
	return Pattern{}
}

func TestMatchTable(t *testing.T) {
	tests := []struct {
		pattern    string // built-in id or a pattern source
		local      int
		seq        string
		start, end int // -1: no match
	}{
		// P1 unrepeatable read: R1 A2* W2 A2* R1
		{"P1", 1, "0 1 66 1", 1, 3},
		{"P1", 1, "0 1 2 1", -1, -1},
		{"P1", 1, "0 1 66 66/b1 1", -1, -1}, // a region boundary breaks the chain
		{"P1", 1, "0 1 66/b2 1", 1, 3},      // the remote thread's flag is irrelevant to view 1
		{"P1", 1, "0 1/b1 66 1", -1, -1},
		{"P1", 1, "0 1 1 66 66 1 1", 2, 5}, // stutter: latest start, earliest end
		{"P1", 1, "0 1 2 66 2 1", 1, 5},
		{"P1", 1, "0 1 66 65 1", -1, -1}, // a local write is not part of the remote block
		{"P1", 1, "0 1 66 1 66 1", 1, 3},
		{"P1", 2, "0 2 65 2", 1, 3},
		{"P1", 2, "0 1 66 1", -1, -1},
		{"P1", 2, "0 2 65/b2 2", -1, -1},
		// P2 stale read after local write: W1 R1* A2* W2 A2* R1
		{"P2", 1, "0 65 66 1", 1, 3},
		{"P2", 1, "0 65 1 2 66 2 1", 1, 6},
		{"P2", 1, "0 65 66 65 1", -1, -1},
		{"P2", 1, "0 65 1 66 0 1", -1, -1}, // any state matching no term breaks the chain
		// P3 lost update: R1 A2* W2 A2* R1* W1
		{"P3", 1, "0 1 66 65", 1, 3},
		{"P3", 1, "0 1 66 1 65", 1, 4},
		{"P3", 1, "0 1 65", -1, -1},
		{"P3", 2, "0 2 2 65 1 66", 2, 5},
		{"P3", 1, "0 1 66 65/a", 1, 3}, // McPatom's P3 knows no atomic write
		// The precise lost update: R1 A2* W2 A2* W1, a plain W1.
		{"precise P3", 1, "0 1 66 65", 1, 3},
		{"precise P3", 1, "0 1 66 2 66 65", 1, 5},
		{"precise P3", 1, "0 1 66 1 65", -1, -1}, // re-read after the remote write
		{"precise P3", 1, "0 1 1 66 65", 2, 4},   // a read before it is the one
		{"precise P3", 1, "0 1 66 1 66 65", 3, 5},
		{"precise P3", 1, "0 1 66 65/a", -1, -1}, // an atomic read-modify-write
		{"precise P3", 1, "0 1 66/a 65", 1, 3},   // the remote write may be one
		{"precise P3", 1, "0 1 66 65/a 1 66 65", 4, 6},
		{"precise P3", 2, "0 2 65 66", 1, 3},
		{"precise P3", 2, "0 2 65 66/a", -1, -1},
		{"precise P3", 2, "0 2 65/b2 66", -1, -1},
		// P4 dirty read: W1 R1* R2+ R1* W1
		{"P4", 1, "0 65 1 2 1 65", 1, 5},
		{"P4", 1, "0 65 2 2 65", 1, 4},
		{"P4", 1, "0 65 66 65", -1, -1},
		{"P4", 1, "0 65 2 66 65", -1, -1},
		// P5 overwritten write: W1 R1* A2* W2 A2* R1* W1
		{"P5", 1, "0 65 66 65", 1, 3},
		{"P5", 1, "0 65 2 65", -1, -1},
		{"P5", 1, "0 65 65 1 2 66 2 1 65", 2, 8},
		// Overlap: the right side of U may hold where its left side does, so
		// one W2 state serves both A2 and W2.
		{"R1 A2+ W2 R1", 1, "0 1 66 1", 1, 3},
		{"R1 A2+ W2 R1", 1, "0 1 2 1", -1, -1},
		{"R1 R2+ W2 R1", 1, "0 1 66 1", -1, -1}, // here the two blocks cannot share a state
		{"R1 R2+ W2 R1", 1, "0 1 2 66 1", 1, 4},
	}
	for _, tc := range tests {
		var p Pattern
		if strings.HasPrefix(tc.pattern, "P") || strings.HasPrefix(tc.pattern, "precise ") {
			p = builtinByID(t, tc.pattern)
		} else {
			var err error
			if p, err = User("T", tc.pattern); err != nil {
				t.Fatal(err)
			}
		}
		seq := states(t, tc.seq)
		start, end, ok := p.Match(tc.local, seq)
		if !ok {
			start, end = -1, -1
		}
		if start != tc.start || end != tc.end {
			t.Errorf("%s local=%d on %q: match (%d, %d), want (%d, %d)", tc.pattern, tc.local, tc.seq, start, end, tc.start, tc.end)
		}
		// The automaton agrees with Match on every prefix.
		a := p.Automaton(tc.local)
		s := a.Init()
		for i, o := range seq {
			s = a.Step(s, o)
			want := tc.end >= 0 && i >= tc.end
			if a.Accepts(s) != want {
				t.Errorf("%s local=%d on %q: Accepts after %d = %v, want %v", tc.pattern, tc.local, tc.seq, i, a.Accepts(s), want)
			}
		}
	}
}

// refHolds is the textbook semantics of T(i) at position j, with the witness
// required to lie within seq[j..end]; it is exponential and independent of
// the automaton on purpose.
func refHolds(p Pattern, local int, seq []Obs, i, j, end int) bool {
	c := func(i, k int) bool { return refPred(p.Terms[i], local, seq[k], p.PublishBreaks(), p.TwoVariable()) }
	if i == len(p.Terms)-1 {
		return c(i, j) && !(p.PlainLast && seq[j].Atomic)
	}
	if p.Terms[i].Quant != Star && !c(i, j) {
		return false
	}
	// C_i U T(i+1): T(i+1) at some k ≥ j, C_i on j..k-1.
	for k := j; k <= end; k++ {
		if refHolds(p, local, seq, i+1, k, end) {
			return true
		}
		if !c(i, k) {
			return false
		}
	}
	return false
}

func refPred(t Term, local int, o Obs, pub, twoVar bool) bool {
	if (local == 1 && o.Brk1) || (local == 2 && o.Brk2) {
		return false
	}
	if pub && ((local == 1 && o.Pub1) || (local == 2 && o.Pub2)) {
		return false
	}
	tid := threadOf(t.Side, local)
	v := int(o.V)
	if twoVar {
		// Which variable the access is of: x without VarBit, y with it.
		y := v&VarBit != 0
		if t.Var == VarX && y || t.Var == VarY && !y {
			return false
		}
		v &^= VarBit
	}
	switch t.Access {
	case Read:
		return v == tid
	case Write:
		return v == 64+tid
	default:
		return v == tid || v == 64+tid
	}
}

func refMatch(p Pattern, local int, seq []Obs) (int, int, bool) {
	for end := range seq {
		for j := end; j >= 0; j-- {
			if refHolds(p, local, seq, 0, j, end) {
				return j, end, true
			}
		}
	}
	return 0, 0, false
}

// randomPattern returns a valid pattern of at most maxLen terms; with
// twoVar, a two-variable one.
func randomPattern(r *rand.Rand, id string, maxLen int, twoVar bool) Pattern {
	for {
		n := 2 + r.IntN(maxLen-1)
		terms := make([]Term, n)
		for i := range terms {
			terms[i] = Term{Access(1 + r.IntN(3)), Side(1 + r.IntN(2)), Quantifier(r.IntN(3)), VarAny}
		}
		if twoVar {
			// Name a variable in about half the terms, and both x and y.
			for i := range terms {
				terms[i].Var = Variable(r.IntN(3))
			}
			i, j := r.IntN(n), r.IntN(n-1)
			if j >= i {
				j++
			}
			terms[i].Var, terms[j].Var = VarX, VarY
		}
		if p, err := User(id, FormatTerms(terms)); err == nil {
			return p
		}
	}
}

var obsValues = []int16{0, 1, 2, 65, 66, 3, 17, 18, 81, 82}

func randomSeq(r *rand.Rand, maxLen int) []Obs {
	seq := []Obs{{}}
	cur := Obs{}
	for range r.IntN(maxLen) {
		switch r.IntN(8) {
		case 0:
			cur.Brk1 = !cur.Brk1
		case 1:
			cur.Brk2 = !cur.Brk2
		case 6:
			cur.Pub1 = !cur.Pub1
		case 7:
			cur.Pub2 = !cur.Pub2
		case 2:
			// stutter: the same state again
		default:
			cur.V = obsValues[r.IntN(len(obsValues))]
			cur.Atomic = randomAtomic(r, cur.V)
		}
		seq = append(seq, cur)
	}
	return seq
}

// randomAtomic tells, at random, whether an access of value v is an
// atomic write: a write, one in three.
func randomAtomic(r *rand.Rand, v int16) bool {
	return v&^VarBit > 64 && r.IntN(3) == 0
}

// plantedSeq builds a sequence that contains an instance of p in the given
// view and then perturbs it a little, so that about half of such sequences
// still match: purely random sequences rarely contain a long pattern.
func plantedSeq(r *rand.Rand, p Pattern, local int, maxLen int) []Obs {
	seq := []Obs{{}}
	for range r.IntN(2) {
		v := obsValues[r.IntN(len(obsValues))]
		seq = append(seq, Obs{V: v, Atomic: randomAtomic(r, v)})
	}
	for _, t := range p.Terms {
		n := 1 + r.IntN(2)
		if t.Quant == Star {
			n = r.IntN(3)
		}
		for range n {
			tid := threadOf(t.Side, local)
			v := tid
			if t.Access == Write || (t.Access == Any && r.IntN(2) == 0) {
				v += 64
			}
			if t.Var == VarY || t.Var == VarAny && p.TwoVariable() && r.IntN(2) == 0 {
				v += VarBit
			}
			seq = append(seq, Obs{V: int16(v), Atomic: randomAtomic(r, int16(v))})
		}
	}
	for len(seq) > maxLen {
		i := 1 + r.IntN(len(seq)-1)
		seq = append(seq[:i], seq[i+1:]...)
	}
	if r.IntN(2) == 0 {
		i := 1 + r.IntN(len(seq)-1)
		switch r.IntN(3) {
		case 0:
			seq[i].Brk1 = !seq[i].Brk1
		case 1:
			seq[i].Brk2 = !seq[i].Brk2
		default:
			seq[i].V = obsValues[r.IntN(len(obsValues))]
			seq[i].Atomic = randomAtomic(r, seq[i].V)
		}
	}
	return seq
}

// TestAutomatonAgainstReference checks Step/Accepts on every prefix and Match
// against the direct semantics, over random patterns and sequences.
func TestAutomatonAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	patterns := append(Builtin(), BuiltinSets()...)
	patterns = append(patterns, Builtin()[2].Precise())
	for i := range 60 {
		p := randomPattern(r, "R"+strconv.Itoa(i), 7, i%2 == 0)
		p.PlainLast = i%3 == 0
		patterns = append(patterns, p)
	}
	var matches, total int
	for _, p := range patterns {
		for _, local := range []int{1, 2} {
			a := p.Automaton(local)
			for k := range 150 {
				seq := randomSeq(r, 12)
				if k%2 == 0 {
					seq = plantedSeq(r, p, local, 14)
				}
				s := a.Init()
				for end, o := range seq {
					s = a.Step(s, o)
					want := false
					for j := 0; j <= end && !want; j++ {
						want = refHolds(p, local, seq, 0, j, end)
					}
					if a.Accepts(s) != want {
						t.Fatalf("%s (%s) local=%d seq %v: Accepts after %d = %v, reference %v", p.ID, p.Source, local, seq, end, a.Accepts(s), want)
					}
				}
				gs, ge, gok := p.Match(local, seq)
				ws, we, wok := refMatch(p, local, seq)
				if gs != ws || ge != we || gok != wok {
					t.Fatalf("%s (%s) local=%d seq %v: Match = (%d,%d,%v), reference (%d,%d,%v)", p.ID, p.Source, local, seq, gs, ge, gok, ws, we, wok)
				}
				total++
				if gok {
					matches++
				}
			}
		}
	}
	t.Logf("%d sequences, %d with a match", total, matches)
	if matches < total/4 || matches > total*3/4 {
		t.Errorf("unbalanced test data: %d of %d match", matches, total)
	}
}

// TestStutterInvariance: reading a state twice is the same as reading it once,
// both for the verdict and for the StateSet (native state spaces rely on it).
func TestStutterInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 40 {
		p := randomPattern(r, "S"+strconv.Itoa(i), 8, i%2 == 0)
		p.PlainLast = i%3 == 0
		for _, local := range []int{1, 2} {
			a := p.Automaton(local)
			for range 100 {
				seq := randomSeq(r, 10)
				s := a.Init()
				for _, o := range seq {
					once := a.Step(s, o)
					if twice := a.Step(once, o); twice != once {
						t.Fatalf("%s local=%d: Step not idempotent on %v: %b then %b", p.Source, local, o, once, twice)
					}
					s = once
				}
				// Accepted is absorbing and canonical.
				if a.Accepts(s) {
					for _, o := range randomSeq(r, 5) {
						if s2 := a.Step(s, o); s2 != s {
							t.Fatalf("accepted state changed: %b -> %b", s, s2)
						}
					}
				}
			}
		}
	}
}

func TestAutomatonLimits(t *testing.T) {
	long := Pattern{ID: "L", Terms: make([]Term, MaxTerms)}
	for i := range long.Terms {
		long.Terms[i] = Term{Any, Side(1 + i%2), One, VarAny}
	}
	a := long.Automaton(1)
	s := a.Init()
	seq := []Obs{{}}
	for i := range MaxTerms {
		s = a.Step(s, Obs{V: int16(65 + i%2)})
		seq = append(seq, Obs{V: int16(65 + i%2)})
		if a.Accepts(s) != (i == MaxTerms-1) {
			t.Fatalf("after %d alternations: Accepts = %v", i+1, a.Accepts(s))
		}
	}
	if start, end, ok := long.Match(1, seq); !ok || start != 1 || end != MaxTerms {
		t.Errorf("Match = %d %d %v", start, end, ok)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a pattern longer than MaxTerms")
		}
	}()
	long.Terms = append(long.Terms, Term{Read, Local, One, VarAny})
	long.Automaton(1)
}

func BenchmarkStep(b *testing.B) {
	p := Builtin()[4]
	a := p.Automaton(1)
	seq := []Obs{{V: 65}, {V: 1}, {V: 2}, {V: 66}, {V: 2}, {V: 1}, {V: 0}}
	s := a.Init()
	for i := 0; b.Loop(); i++ {
		s = a.Step(s, seq[i%len(seq)])
		if a.Accepts(s) {
			s = a.Init()
		}
	}
}
