package commitnode_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/commitnode"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/units"
	"github.com/mcpredict/mcpredict/analysis/lockset"
	"github.com/mcpredict/mcpredict/analysis/reduction"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// This file checks the accuracy relations of Wang's dissertation (spec
// S6; §6.4.1, §7.7) on random traces, against a brute-force oracle that
// enumerates every feasible interleaving of the worker threads (program
// order and locks) and builds its serialization graph (ch. 2): the
// transactions are its nodes, every event of non-transactional code a node
// of its own, edges for program order and for every conflicting pair in
// the interleaving's order. An interleaving is conflict-serializable iff
// the graph is acyclic; the transactions of a cycle are "guilty".
//
//   - reduction is conservative: every cycle has a transaction that
//     reduction reports (Theorem 4.3.1, Lipton);
//   - the commit-node conflict test is sufficient: every cycle has a
//     transaction that it reports (Theorem 6.3.3);
//   - Theorem 6.4.1: a transaction that commitnode (conflict) reports is
//     reported by reduction;
//   - the view-forest's edges are a subset of the conflict-forest's: a
//     transaction reported for view-atomicity is reported for
//     conflict-atomicity;
//   - with exactly two transactions and no other code, the commit-node
//     tests are exact: Theorem 6.3.2 (conflict) and Theorem 6.3.5 (view,
//     against a brute-force view-serializability check).

// genTrace writes a random trace: main creates the workers, each runs a
// mix of Begin/End transactions, critical sections and unlocked accesses
// on a few variables (locks taken in increasing order, some re-entrantly:
// no potential deadlock), one after the other; main joins them and may
// read a variable. With twoTxn, two workers run one transaction each.
func genTrace(r *rand.Rand, twoTxn bool) string {
	var b strings.Builder
	n := 0
	line := 0
	// Half of the traces give every event its own source location, the
	// other half one per action and object: repeated code then makes
	// identical trees, which commitnode keeps twice per period.
	shared := r.Intn(2) == 0
	emit := func(th, act, obj string) {
		n++
		line++
		loc := line
		if shared {
			loc = len(act)*100 + int(obj[0])
		}
		fmt.Fprintf(&b, "%s, %d, g.c-%d, %s, %s\n", th, n, loc, act, obj)
	}
	workers := 2 + r.Intn(2)
	budget := 4
	if workers == 2 {
		budget = 6
	}
	if twoTxn {
		workers, budget = 2, 3+r.Intn(3)
	}
	vars := []string{"x", "y", "z", "v"}[:2+r.Intn(3)]
	locks := []string{"a", "b", "c"}
	if r.Intn(3) == 0 {
		emit("main", "Write", vars[0])
	}
	for w := 1; w <= workers; w++ {
		emit("main", "Create", fmt.Sprintf("w%d", w))
	}
	access := func(th string) {
		act := "Read"
		if r.Intn(3) == 0 {
			act = "Write"
		}
		emit(th, act, vars[r.Intn(len(vars))])
	}
	// body emits up to *left accesses with nested critical sections on
	// locks above held (an index), and occasionally a re-entrant one.
	var body func(th string, held, depth int, left *int)
	body = func(th string, held, depth int, left *int) {
		items := 1 + r.Intn(3)
		for i := 0; i < items && *left > 0; i++ {
			switch k := r.Intn(10); {
			case k < 3 && depth < 2 && held < len(locks)-1:
				l := held + 1 + r.Intn(len(locks)-1-held)
				emit(th, "Lock", locks[l])
				body(th, l, depth+1, left)
				emit(th, "Unlock", locks[l])
			case k == 3 && held >= 0:
				emit(th, "Lock", locks[held])
				*left--
				access(th)
				emit(th, "Unlock", locks[held])
			default:
				*left--
				access(th)
			}
		}
	}
	for w := 1; w <= workers; w++ {
		th := fmt.Sprintf("w%d", w)
		left := budget
		if twoTxn {
			emit(th, "Begin", "t")
			for left > 0 {
				body(th, -1, 0, &left)
			}
			emit(th, "End", "t")
			continue
		}
		for left > 0 {
			switch k := r.Intn(10); {
			case k < 5:
				emit(th, "Begin", "t")
				body(th, -1, 0, &left)
				emit(th, "End", "t")
			case k < 7:
				l := r.Intn(len(locks))
				emit(th, "Lock", locks[l])
				body(th, l, 1, &left)
				emit(th, "Unlock", locks[l])
			default:
				left--
				access(th)
			}
		}
	}
	for w := 1; w <= workers; w++ {
		emit("main", "Join", fmt.Sprintf("w%d", w))
	}
	if r.Intn(3) == 0 {
		emit("main", "Read", vars[r.Intn(len(vars))])
	}
	return b.String()
}

// unitVerdicts are the analyses' verdicts by unit.
type unitVerdicts struct {
	m         *tracemodel.Model
	us        []units.Unit
	reduction []bool
	view      []bool
	conflict  []bool
}

func analyse(t *testing.T, src string) *unitVerdicts {
	t.Helper()
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(src), "random.csv", tracemodel.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	tx, esc := txn.New(txn.Options{}), escape.New()
	ls := lockset.New(lockset.Options{}, esc)
	out := &unitVerdicts{m: m}
	probe := &analysis.Analyzer{
		Name: "probe", Doc: "test",
		Requires: []analysis.Requirement{analysis.ThreadPeriods, analysis.LockSets, tx, esc, ls},
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			us, err := units.Split(ctx, m, txn.Of(pass, tx), pass.Periods())
			if err != nil {
				return nil, err
			}
			out.us = us
			vs, _, err := reduction.Check(ctx, m, us, escape.Of(pass, esc), lockset.Of(pass, ls), pass.LockSets())
			if err != nil {
				return nil, err
			}
			out.reduction = make([]bool, len(us))
			for _, v := range vs {
				out.reduction[v.Unit] = true
			}
			res, err := commitnode.Check(ctx, m, us, escape.Of(pass, esc), units.NewConc(m, pass.Periods()), commitnode.Options{})
			if err != nil {
				return nil, err
			}
			out.view, out.conflict = res.View, res.Conflict
			return nil, nil
		},
	}
	if _, err := analysis.Run(context.Background(), m, []*analysis.Analyzer{probe}, analysis.Options{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// step is an event of a worker that matters to the oracle.
type step struct {
	kind  tracemodel.Kind
	obj   int32 // variable or lock
	node  int   // serialization-graph node (accesses)
	write bool
}

// oracle is the brute-force check of one trace.
type oracle struct {
	steps  [][]step // by worker
	txnOf  []int    // by node: unit index if a transaction, -1
	guilty map[uint32]bool
	base   [16]uint32 // program-order edges
	nodes  int
	memo   map[[6]uint64]bool
}

// newOracle numbers the nodes of the workers' events: a transaction unit
// is one node, every other access one node of its own.
func newOracle(t *testing.T, v *unitVerdicts) *oracle {
	m := v.m
	o := &oracle{guilty: map[uint32]bool{}, memo: map[[6]uint64]bool{}}
	unitOf := map[int32]int{}
	for i, u := range v.us {
		for _, ev := range u.Events(m) {
			unitOf[ev] = i
		}
	}
	nodeOfUnit := map[int]int{}
	for ti := range m.Threads {
		if m.Threads[ti].Handle == "main" {
			continue
		}
		var ss []step
		prev := -1
		for _, ev := range m.Threads[ti].Events {
			e := &m.Events[ev]
			s := step{kind: e.Kind, obj: e.Obj, node: -1}
			switch {
			case e.Kind.IsAccess():
				s.write = e.Kind == tracemodel.Write
				u, ok := unitOf[ev]
				if ok && v.us[u].Kind.Transaction() {
					n, seen := nodeOfUnit[u]
					if !seen {
						n = o.nodes
						o.nodes++
						nodeOfUnit[u] = n
						o.txnOf = append(o.txnOf, u)
					}
					s.node = n
				} else {
					s.node = o.nodes
					o.nodes++
					o.txnOf = append(o.txnOf, -1)
				}
				if prev >= 0 && prev != s.node {
					o.base[prev] |= 1 << s.node
				}
				prev = s.node
			case units.Acquires(e.Kind), e.Kind == tracemodel.Unlock:
			default:
				continue
			}
			ss = append(ss, s)
		}
		o.steps = append(o.steps, ss)
	}
	if o.nodes > 16 {
		t.Fatalf("%d nodes", o.nodes)
	}
	for _, ss := range o.steps {
		for _, st := range ss {
			if !st.kind.IsAccess() && st.obj >= 16 {
				t.Fatalf("lock object id %d", st.obj)
			}
		}
	}
	return o
}

// state of the enumeration.
type state struct {
	pos    [3]int
	owner  [16]int8 // by lock object id (small): worker+1, 0 free
	count  [16]int8
	edges  [16]uint32
	placed [][]int // by variable: placed accesses as (worker<<8 | index)
}

// run enumerates every feasible interleaving (memoized on positions, lock
// state and graph) and records the guilty transactions of cyclic ones.
func (o *oracle) run(s *state) {
	done := true
	var key [6]uint64
	for w := range o.steps {
		key[0] |= uint64(s.pos[w]) << (8 * w)
		if s.pos[w] < len(o.steps[w]) {
			done = false
		}
	}
	for l := range s.owner {
		key[1] |= uint64(s.owner[l])<<(4*l) | uint64(s.count[l]&3)<<(4*l+2)
	}
	for i, row := range s.edges {
		key[2+i/4] |= uint64(row&0xffff) << (16 * (i % 4))
	}
	if o.memo[key] {
		return
	}
	o.memo[key] = true
	if done {
		o.leaf(s)
		return
	}
	for w := range o.steps {
		if s.pos[w] >= len(o.steps[w]) {
			continue
		}
		st := o.steps[w][s.pos[w]]
		switch {
		case units.Acquires(st.kind):
			if s.owner[st.obj] != 0 && int(s.owner[st.obj]) != w+1 {
				continue
			}
			s2 := *s
			s2.owner[st.obj] = int8(w + 1)
			s2.count[st.obj]++
			s2.pos[w]++
			o.run(&s2)
		case st.kind == tracemodel.Unlock:
			s2 := *s
			if s2.count[st.obj]--; s2.count[st.obj] == 0 {
				s2.owner[st.obj] = 0
			}
			s2.pos[w]++
			o.run(&s2)
		default:
			s2 := *s
			s2.placed = make([][]int, len(s.placed))
			copy(s2.placed, s.placed)
			for _, p := range s.placed[st.obj] {
				q := o.steps[p>>8][p&0xff]
				if (q.write || st.write) && q.node != st.node {
					s2.edges[q.node] |= 1 << st.node
				}
			}
			s2.placed[st.obj] = append(append([]int(nil), s.placed[st.obj]...), w<<8|s.pos[w])
			s2.pos[w]++
			o.run(&s2)
		}
	}
}

// leaf records the strongly connected components of more than one node.
func (o *oracle) leaf(s *state) {
	adj := s.edges
	for i := 0; i < o.nodes; i++ {
		adj[i] |= o.base[i]
	}
	// Reachability closure (at most 16 nodes).
	reach := adj
	for k := 0; k < o.nodes; k++ {
		for i := 0; i < o.nodes; i++ {
			if reach[i]&(1<<k) != 0 {
				reach[i] |= reach[k]
			}
		}
	}
	for i := 0; i < o.nodes; i++ {
		if reach[i]&(1<<i) == 0 {
			continue
		}
		var scc uint32
		for j := 0; j < o.nodes; j++ {
			if reach[i]&(1<<j) != 0 && reach[j]&(1<<i) != 0 {
				scc |= 1 << j
			}
		}
		o.guilty[scc] = true
	}
}

// unitsOf returns the transaction units of a set of nodes.
func (o *oracle) unitsOf(nodes uint32) []int {
	var out []int
	for n := 0; n < o.nodes; n++ {
		if nodes&(1<<n) != 0 && o.txnOf[n] >= 0 {
			out = append(out, o.txnOf[n])
		}
	}
	return out
}

func newState(m *tracemodel.Model) *state {
	return &state{placed: make([][]int, len(m.Vars))}
}

// TestAccuracyRelations checks the relations on random traces (see the
// top of the file).
func TestAccuracyRelations(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 1000
	}
	r := rand.New(rand.NewSource(4))
	var cyclic, redFlags, cnFlags, viewFlags int
	for i := 0; i < n; i++ {
		src := genTrace(r, false)
		v := analyse(t, src)
		o := newOracle(t, v)
		o.run(newState(v.m))
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("trace %d: "+format+"\n%s", append(append([]any{i}, args...), src)...)
		}
		for u := range v.us {
			if v.conflict[u] && !v.reduction[u] {
				fail("commitnode (conflict) reports unit %d, reduction does not (Theorem 6.4.1)", u)
			}
			if v.view[u] && !v.conflict[u] {
				fail("commitnode reports unit %d for view- but not conflict-atomicity", u)
			}
			redFlags += boolInt(v.reduction[u])
			cnFlags += boolInt(v.conflict[u])
			viewFlags += boolInt(v.view[u])
		}
		if len(o.guilty) > 0 {
			cyclic++
		}
		for g := range o.guilty {
			us := o.unitsOf(g)
			red, cn := false, false
			for _, u := range us {
				red = red || v.reduction[u]
				cn = cn || v.conflict[u]
			}
			if !red {
				fail("a cycle through units %v and no reduction report", us)
			}
			if !cn {
				fail("a cycle through units %v and no commitnode (conflict) report", us)
			}
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d traces, %d with a conflict cycle; reports: reduction %d, commitnode conflict %d, view %d", n, cyclic, redFlags, cnFlags, viewFlags)
	if cyclic < n/10 {
		t.Errorf("only %d of %d traces are not conflict-atomic: the generator is too tame", cyclic, n)
	}
}

// TestTwoTransactionsExact: Theorems 6.3.2 and 6.3.5 — for two
// transactions and no other code the commit-node tests are exact.
func TestTwoTransactionsExact(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 500
	}
	r := rand.New(rand.NewSource(6))
	var notConflict, notView int
	for i := 0; i < n; i++ {
		src := genTrace(r, true)
		v := analyse(t, src)
		var txns []int
		for u := range v.us {
			if v.us[u].Kind.Transaction() {
				txns = append(txns, u)
			} else if v.us[u].Thread != 1 {
				t.Fatalf("trace %d: non-transactional unit %+v\n%s", i, v.us[u], src)
			}
		}
		o := newOracle(t, v)
		o.run(newState(v.m))
		conflictAtomic := len(o.guilty) == 0
		viewAtomic := o.viewAtomic(v.m)
		cn, cv := false, false
		for _, u := range txns {
			cn = cn || v.conflict[u]
			cv = cv || v.view[u]
		}
		if cn == conflictAtomic {
			t.Errorf("trace %d: conflict-atomic %v, commitnode reports %v (Theorem 6.3.2)\n%s", i, conflictAtomic, cn, src)
		}
		if cv == viewAtomic {
			t.Errorf("trace %d: view-atomic %v, commitnode reports %v (Theorem 6.3.5)\n%s", i, viewAtomic, cv, src)
		}
		notConflict += boolInt(!conflictAtomic)
		notView += boolInt(!viewAtomic)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d traces: %d not conflict-atomic, %d not view-atomic", n, notConflict, notView)
	if notView < n/10 || notConflict == notView {
		t.Errorf("too few interesting traces: %d not conflict-atomic, %d not view-atomic", notConflict, notView)
	}
}

// viewAtomic enumerates every feasible interleaving of the two workers
// and compares its reads-from and final writes with those of the two
// serial orders.
func (o *oracle) viewAtomic(m *tracemodel.Model) bool {
	// A view: by step (worker*32 + index) of a read, its writer (step+1,
	// 0 for the initial value); by variable, its final writer.
	type view struct {
		rf    [64]int16
		final [16]int16
	}
	eval := func(order [][2]int) view {
		var vw view
		for _, p := range order {
			st := o.steps[p[0]][p[1]]
			switch {
			case !st.kind.IsAccess():
			case st.write:
				vw.final[st.obj] = int16(p[0]*32 + p[1] + 1)
			default:
				vw.rf[p[0]*32+p[1]] = vw.final[st.obj]
			}
		}
		return vw
	}
	for _, ss := range o.steps {
		for _, st := range ss {
			if len(ss) > 32 || (st.kind.IsAccess() && st.obj >= 16) {
				panic("trace too large for the view oracle")
			}
		}
	}
	serial := func(first int) view {
		var order [][2]int
		for _, w := range []int{first, 1 - first} {
			for i := range o.steps[w] {
				order = append(order, [2]int{w, i})
			}
		}
		return eval(order)
	}
	s01, s10 := serial(0), serial(1)
	atomic := true
	var owner [64]int
	var order [][2]int
	var rec func(p0, p1 int)
	rec = func(p0, p1 int) {
		if !atomic {
			return
		}
		pos := [2]int{p0, p1}
		if p0 == len(o.steps[0]) && p1 == len(o.steps[1]) {
			if vw := eval(order); vw != s01 && vw != s10 {
				atomic = false
			}
			return
		}
		for w := 0; w < 2; w++ {
			if pos[w] == len(o.steps[w]) {
				continue
			}
			st := o.steps[w][pos[w]]
			old := owner[st.obj&63]
			switch {
			case units.Acquires(st.kind):
				if old != 0 && old>>8 != w+1 {
					continue
				}
				owner[st.obj] = (w+1)<<8 | (old&0xff + 1)
			case st.kind == tracemodel.Unlock:
				if c := old&0xff - 1; c == 0 {
					owner[st.obj] = 0
				} else {
					owner[st.obj] = (w+1)<<8 | c
				}
			}
			order = append(order, [2]int{w, pos[w]})
			next := pos
			next[w]++
			rec(next[0], next[1])
			order = order[:len(order)-1]
			if !st.kind.IsAccess() {
				owner[st.obj] = old
			}
		}
	}
	rec(0, 0)
	return atomic
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestOracle checks the oracle on the dissertation's examples with known
// answers (ch. 2): the blind write is not conflict-atomic but
// view-atomic, the deposits are neither, Figure 6.7 is both.
func TestOracle(t *testing.T) {
	for _, tc := range []struct {
		file            string
		conflict, view  bool
		twoTransactions bool
	}{
		{"testdata/blindwrite.csv", false, true, true},
		{"../reduction/testdata/account.csv", false, false, true},
		{"testdata/fig6_7.csv", true, true, false},
		{"testdata/fig6_3_t12.csv", false, true, true},
		{"testdata/fig6_3_t23.csv", false, false, true},
	} {
		src, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		v := analyse(t, string(src))
		o := newOracle(t, v)
		o.run(newState(v.m))
		if got := len(o.guilty) == 0; got != tc.conflict {
			t.Errorf("%s: conflict-atomic %v, want %v", tc.file, got, tc.conflict)
		}
		if tc.twoTransactions {
			if got := o.viewAtomic(v.m); got != tc.view {
				t.Errorf("%s: view-atomic %v, want %v", tc.file, got, tc.view)
			}
		}
	}
}
