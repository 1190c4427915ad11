package native_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// The oracle of diff_test.go, extended to the models of atomic sets
// (Model.ProjectSet): its functions take the model's variables (oVars),
// and with two of them the steps of a thread are its accesses of both,
// with the region boundaries, lock steps, read sources and data-flow order
// of the single-variable model computed over the set (the update-return
// rule counts a write of either variable, a read's source is the write of
// its own variable, the data-flow order leaves out both). Two rules are
// the set model's own, read from tracemodel/project.go (as of this test)
// and reimplemented here from the trace text: a read-modify-write is one
// write step (setRules), and a read that its thread follows with another
// access in its region is pinned after the other thread's last write of
// its variable (setRules.pinReads).
// Two-variable patterns are matched with the oracle's own reading of the
// claim formula (oMatch), not with ltl.Automaton.

// setRules are a thread's read-modify-writes of a set and the stores of
// the other thread of the pair.
type setRules struct {
	vs oVars
	// rmw: the reads (event indexes) whose thread's next access of the
	// set is a write of the same variable, with no synchronization event
	// (nor Create, Join) and no other write of the thread between.
	rmw map[int]bool
	// otherStores[k]: the other thread writes vs[k] other than as the
	// write of such a read-modify-write, and not before this thread's
	// first access of the set in the model's order (an initialization
	// falls in no view of it).
	otherStores [2]bool
}

// syncActs are the actions after which a read and a write are no
// read-modify-write: synchronization, thread creation and join.
var syncActs = map[string]bool{
	"Lock": true, "TryLock": true, "Unlock": true, "RdLock": true, "WrLock": true, "RwUnlock": true,
	"Signal": true, "Broadcast": true, "Wait": true, "BarrierWait": true, "SemPost": true, "SemWait": true,
	"Blocked": true, "Create": true, "Join": true,
}

// updatesOf returns the read-modify-writes of thread t on the set vs (the
// event indexes of their reads), and which variables of vs it stores
// after its first before events (those that happen before the other
// thread's first access of the set).
func (tr *oTrace) updatesOf(vs oVars, t, before int) (rmw map[int]bool, stores [2]bool) {
	evs := tr.events[t]
	var acc []int
	for i, e := range evs {
		if (e.act == "Read" || e.act == "Write") && vs.has(e.obj) {
			acc = append(acc, i)
		}
	}
	rmw = map[int]bool{}
	for k, i := range acc {
		if k+1 < len(acc) {
			j := acc[k+1]
			ok := evs[i].act == "Read" && evs[j].act == "Write" && evs[i].obj == evs[j].obj
			for p := i + 1; ok && p < j; p++ {
				ok = !syncActs[evs[p].act] && evs[p].act != "Write"
			}
			if ok {
				rmw[i] = true
				continue
			}
		}
		if evs[i].act == "Write" && (k == 0 || !rmw[acc[k-1]]) && i >= before {
			stores[slices.Index(vs, evs[i].obj)] = true
		}
	}
	return rmw, stores
}

// setStepRules returns the set rules of thread t paired with other; vcs
// are the clocks of t's events in the model's order, first the index of
// its first access of the set.
func (tr *oTrace) setStepRules(vs oVars, t, other int, vcs [][]int, first int) *setRules {
	s := &setRules{vs: vs}
	s.rmw, _ = tr.updatesOf(vs, t, 0)
	before := 0
	if other < len(vcs[first]) {
		before = vcs[first][other]
	}
	_, s.otherStores = tr.updatesOf(vs, other, before)
	return s
}

// mergedRead reports whether the read at event index i (of the second
// variable or not), with the thread's steps so far, is the read of a
// read-modify-write that is one step with its write: always, unless the
// thread's latest access step is a plain read of the other variable and
// the other thread stores this one (the update may then build on the
// value read first, while two updates commute).
func (s *setRules) mergedRead(i int, second bool, steps []oStep) bool {
	if !s.rmw[i] {
		return false
	}
	k := 0
	if second {
		k = 1
	}
	if !s.otherStores[k] {
		return true
	}
	for j := len(steps) - 1; j >= 0; j-- {
		switch steps[j].kind {
		case oRead:
			return steps[j].second == second // a read of the other variable keeps it apart
		case oWrite:
			return true
		}
	}
	return true
}

// oraclePins counts the reads that pinReads pinned, for the statistics of
// TestNativeMatchesTraceOracleSets.
var oraclePins int

// pinReads applies the steering rule of set models to the steps of thread
// t (paired with other): a read of a variable that the other thread wrote
// before it in the trace, and that its thread follows with another access
// before a region boundary (the write of its own read-modify-write does
// not count), runs after the other thread's last such write in both views
// (the write it observed, or one that a third thread's overwrote), and
// loses its source. The last access of a region keeps the ordinary
// semantics: it may read another value, the pattern has then happened.
func (s *setRules) pinReads(tr *oTrace, t, other int, steps []oStep) {
	evs := tr.events[t]
	for i := range steps {
		st := &steps[i]
		if st.kind != oRead {
			continue
		}
		e := evs[st.done-1]
		pin := 0 // 1 + the index of other's last write of the variable before e
		for g := e.g - 1; g >= 0; g-- {
			if w := tr.global[g]; w[0] == other {
				if x := tr.events[other][w[1]]; x.act == "Write" && x.obj == e.obj {
					pin = w[1] + 1
					break
				}
			}
		}
		if pin == 0 {
			continue
		}
		update := s.rmw[st.done-1] // its own write comes next
	next:
		for _, n := range steps[i+1:] {
			switch n.kind {
			case oBoundary:
				break next
			case oWrite:
				if update {
					update = false
					continue
				}
				fallthrough
			case oRead:
				if pin > st.need {
					oraclePins++
				}
				st.need, st.src = max(st.need, pin), 0
				break next
			}
		}
	}
}

// oMatcher reads the observations of a run one state at a time and says
// when they contain an instance of a claim's pattern.
type oMatcher interface {
	Init() uint64
	Step(s uint64, o ltl.Obs) uint64
	Accepts(s uint64) bool
}

// automatonMatcher is ltl.Automaton as an oMatcher (single-variable
// patterns).
type automatonMatcher struct{ a *ltl.Automaton }

func (m automatonMatcher) Init() uint64 { return uint64(m.a.Init()) }
func (m automatonMatcher) Step(s uint64, o ltl.Obs) uint64 {
	return uint64(m.a.Step(ltl.StateSet(s), o))
}
func (m automatonMatcher) Accepts(s uint64) bool { return m.a.Accepts(ltl.StateSet(s)) }

// oMatch is the oracle's own matcher of a pattern in one view, read from
// the claim (ltl.Pattern.Formula): the claim !<> T(1), with T(n) = C_n and
// T(i) = C_i && (C_i U T(i+1)), or C_i U T(i+1) for a * term, is violated
// by a run whose states contain indexes j_1 ≤ ... ≤ j_n such that C_n
// holds at j_n and every other term's C_i on all of [j_i, j_{i+1}), and at
// j_i itself unless the term is starred. C_i is the term's access (R, W or
// A) by the term's thread (1: local) of the term's variable (x: the
// model's Var, y: Var2, none: either) as the last access, while the local
// thread has passed no region boundary since its last access (nor
// published a write, for patterns that start with a local write of one
// variable). With a plain last write (ltl.Pattern.PlainLast), C_n does
// not hold at the write of an atomic read-modify-write.
//
// Its state is a bitset: bit i (i < n-1) is "term i+1 is open", some
// partial instance has its j_1..j_{i+1} fixed before the current state
// and C_{i+1} held from j_{i+1} up to it; bit 63 is "accepted".
type oMatch struct {
	terms []ltl.Term
	local int
	pub   bool
	plain bool // the last term does not hold at an atomic write (ltl.Pattern.PlainLast)
}

const oAccepted = uint64(1) << 63

func newOMatch(p ltl.Pattern, local int) *oMatch {
	pub := p.Terms[0].Side == ltl.Local && p.Terms[0].Access == ltl.Write && !p.TwoVariable()
	return &oMatch{terms: p.Terms, local: local, pub: pub, plain: p.PlainLast}
}

func (m *oMatch) Init() uint64          { return 0 }
func (m *oMatch) Accepts(s uint64) bool { return s&oAccepted != 0 }

// holds is C of term t in a state.
func (m *oMatch) holds(t ltl.Term, o ltl.Obs) bool {
	brk, pub := o.Brk1, o.Pub1
	if m.local == 2 {
		brk, pub = o.Brk2, o.Pub2
	}
	if brk || m.pub && pub || o.V == 0 {
		return false
	}
	v := int(o.V)
	second := v&ltl.VarBit != 0
	v &^= ltl.VarBit
	write := v > 64
	thread := v
	if write {
		thread = v - 64
	}
	switch {
	case t.Side == ltl.Local && thread != m.local, t.Side == ltl.Remote && thread == m.local:
		return false
	case t.Access == ltl.Read && write, t.Access == ltl.Write && !write:
		return false
	case t.Var == ltl.VarX && second, t.Var == ltl.VarY && !second:
		return false
	case t.Var == ltl.VarAny && second && !m.twoVar():
		return false // a single-variable pattern sees one variable
	}
	return true
}

func (m *oMatch) twoVar() bool {
	for _, t := range m.terms {
		if t.Var != ltl.VarAny {
			return true
		}
	}
	return false
}

func (m *oMatch) Step(s uint64, o ltl.Obs) uint64 {
	if s&oAccepted != 0 {
		return oAccepted
	}
	var next uint64
	starts := true // some partial instance may fix j_i here: for i = 1, always
	for i, t := range m.terms {
		c := m.holds(t, o)
		at := s>>i&1 != 0 || starts // j_i ≤ here and C_i held on [j_i, here)
		if i == len(m.terms)-1 {
			if at && c && !(m.plain && o.Atomic) {
				return oAccepted
			}
			break
		}
		if at && c {
			next |= 1 << i // C_i goes on holding: term i stays open
		}
		// j_{i+1} may be here: term i's block [j_i, here) is complete,
		// non-empty (the term was open), or empty with j_i here, which
		// needs C_i here unless the term is starred.
		starts = s>>i&1 != 0 || starts && (t.Quant == ltl.Star || c)
	}
	return next
}

// randomSetPattern returns a random valid two-variable pattern of 2-6
// terms, one that names both x and y. Its remote runs may be bordered by
// starred local terms ("W1 R2 R1* A2 W1"), which native.Impossible's gaps
// once took for bounded.
func randomSetPattern(r *rand.Rand, id string) ltl.Pattern {
	for {
		n := 2 + r.IntN(5)
		terms := make([]ltl.Term, n)
		for i := range terms {
			terms[i] = ltl.Term{Access: ltl.Access(1 + r.IntN(3)), Side: ltl.Side(1 + r.IntN(2)), Quant: ltl.Quantifier(r.IntN(3)), Var: ltl.Variable(r.IntN(3))}
		}
		i, j := r.IntN(n), r.IntN(n-1)
		if j >= i {
			j++
		}
		terms[i].Var, terms[j].Var = ltl.VarX, ltl.VarY
		if p, err := ltl.User(id, ltl.FormatTerms(terms)); err == nil {
			return p
		}
	}
}

// sharedVars are the variables that the oracle expects the models of sets
// to be built for: accessed by two threads or more, written by one, not
// synchronization objects.
func (tr *oTrace) sharedVars() map[string]bool {
	out := map[string]bool{}
	for c := range tr.candidates() {
		out[c[:strings.IndexByte(c, ' ')]] = true
	}
	return out
}

// accesses reports whether thread t (0-based) accesses one of vs.
func (tr *oTrace) accesses(t int, vs oVars) bool {
	for _, e := range tr.events[t] {
		if (e.act == "Read" || e.act == "Write") && vs.has(e.obj) {
			return true
		}
	}
	return false
}

// setStats counts what TestNativeMatchesTraceOracleSets compared.
type setStats struct {
	models, claims, violated, mismatches int
	merged                               int // models with a read-modify-write step
	pinned                               int // models with a pinned read
}

// TestNativeMatchesTraceOracleSets is TestNativeMatchesTraceOracle for
// the models of atomic sets: on random traces of two or three variables
// (every other one rewritten by withLoops, so that the region-scope rule
// and DataRead have something to decide), for every pair of shared
// variables and every pair of threads that both access one of them, each
// claim of the built-in two-variable patterns in both assignments, the
// user pattern U3 and a random two-variable pattern must be decided by the
// native search on Model.ProjectSet's model as the oracle decides it from
// the trace text, under the precise semantics and with region boundaries
// only (and under every semantics of oracleSemantics on a fifth of the
// traces). -short checks 300 traces, the default 2,000;
// $MCPREDICT_ORACLE_SET_TRACES (else $MCPREDICT_ORACLE_TRACES) sets
// another number.
func TestNativeMatchesTraceOracleSets(t *testing.T) {
	env := "MCPREDICT_ORACLE_SET_TRACES"
	if os.Getenv(env) == "" {
		env = "MCPREDICT_ORACLE_TRACES"
	}
	traces := envCount(t, env, 2000, 300)
	base := append(ltl.BuiltinSets(), userSetPattern(t))
	start := time.Now()
	var st setStats
	for seed := int64(0); seed < int64(traces); seed++ {
		c := gen.Config{Kind: gen.KindRandom, Seed: seed, Vars: 2 + int(seed/2%2)}
		switch seed % 5 {
		case 0:
			c.Events = 40
		case 1:
			c.Events = 12
		}
		text := genTrace(t, c)
		name := fmt.Sprintf("random seed %d vars %d events %d", c.Seed, c.Vars, c.Events)
		if seed%2 == 1 {
			text, name = withLoops(text, seed), name+" with loops"
		}
		r := rand.New(rand.NewPCG(uint64(seed), 0x5e75))
		pats := ltl.BothAssignments(append(slices.Clone(base), randomSetPattern(r, "RND")))
		sems := []oSem{oracleSemantics[1], oracleSemantics[len(oracleSemantics)-1]}
		if seed%5 == 0 {
			sems = oracleSemantics
		}
		compareSetsWithOracle(t, name, text, pats, sems, &st)
	}
	if st.mismatches > 0 {
		t.Errorf("%d mismatches in all (the first 5 are shown)", st.mismatches)
	}
	t.Logf("%d traces, %d set models, %d claims compared (%d violated), %d models with a read-modify-write step, %d with a pinned read; %v",
		traces, st.models, st.claims, st.violated, st.merged, st.pinned, time.Since(start).Round(time.Millisecond))
	if st.models == 0 || st.violated == 0 || st.violated == st.claims || st.merged == 0 || st.pinned == 0 {
		t.Errorf("degenerate test: %d set models, %d of %d claims violated, %d with read-modify-writes, %d with pinned reads",
			st.models, st.violated, st.claims, st.merged, st.pinned)
	}
}

// compareSetsWithOracle checks the shared variables of one trace and
// every verdict of every model of a pair of them against the oracle's.
func compareSetsWithOracle(t *testing.T, name string, text []byte, pats []ltl.Pattern, sems []oSem, st *setStats) {
	t.Helper()
	ctx := context.Background()
	tr := oracleParse(text)
	m, err := tracemodel.Parse(ctx, bytes.NewReader(text), name, tracemodel.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	shared := m.SharedVars()
	got := map[string]bool{}
	for _, sv := range shared {
		got[sv.Name] = true
	}
	if want := tr.sharedVars(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: shared variables %v, oracle's %v\n%s", name, got, want, text)
		return
	}
	for i, a := range shared {
		for _, b := range shared[i+1:] {
			vs := oVars{a.Name, b.Name}
			for t1 := 1; t1 <= len(m.Threads); t1++ {
				for t2 := t1 + 1; t2 <= len(m.Threads); t2++ {
					if !tr.accesses(t1-1, vs) || !tr.accesses(t2-1, vs) {
						continue
					}
					for _, sem := range sems {
						pm, err := m.ProjectSet(a.Var, b.Var, t1, t2, sem.options())
						if err != nil {
							t.Fatalf("%s: ProjectSet(%s, %s, %d, %d): %v", name, a.Name, b.Name, t1, t2, err)
						}
						compareSetModel(t, name, text, tr, pm, vs, [2]int{t1 - 1, t2 - 1}, pats, sem, st)
					}
				}
			}
		}
	}
}

// compareSetModel compares the native verdicts of one set model with the
// oracle's.
func compareSetModel(t *testing.T, name string, text []byte, tr *oTrace, pm *tracemodel.PairModel, vs oVars, tids [2]int, pats []ltl.Pattern, sem oSem, st *setStats) {
	t.Helper()
	ctx := context.Background()
	if pm.Var != vs[0] || pm.Var2 != vs[1] {
		t.Fatalf("%s: ProjectSet's model is of {%s, %s}, want {%s, %s}", name, pm.Var, pm.Var2, vs[0], vs[1])
	}
	st.models++
	merged := false
	for _, steps := range pm.Steps {
		for _, s := range steps {
			merged = merged || s.Kind == tracemodel.StepWrite && len(s.Events) == 2
		}
	}
	if merged {
		st.merged++
	}
	pins := oraclePins
	oracle := tr.oracleVerdicts(vs, tids, pats, sem)
	if oraclePins > pins {
		st.pinned++
	}
	checker := native.New(pm)
	i := 0
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			nv, err := checker.Check(ctx, p, local)
			if err != nil {
				t.Fatal(err)
			}
			st.claims++
			if nv.Violated {
				st.violated++
			}
			if nv.Violated != oracle[i] {
				st.mismatches++
				if st.mismatches <= 5 {
					js, _ := json.MarshalIndent(pm, "", "  ")
					t.Errorf("MISMATCH %s set {%s, %s} threads %d,%d semantics %+v claim %s (%s): native violated=%v, oracle violated=%v\nnative witness %v\n--- trace\n%s--- PairModel\n%s",
						name, vs[0], vs[1], tids[0]+1, tids[1]+1, sem, nv.Claim(), p.Source, nv.Violated, oracle[i], nv.Witness, text, js)
				}
			}
			i++
		}
	}
}
