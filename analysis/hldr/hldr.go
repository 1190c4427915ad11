// Package hldr checks high-level data races: view consistency (Artho,
// Havelund and Biere) extended with the kind of each access and refined
// with causal dependencies, as Pessanha, Dias and Lourenço define it
// (seeds/001 §5.1, Definitions 5-9), over the dynamic atomic blocks of
// one trace (the spec's trace mapping, B7).
//
// # What it reports
//
// A high-level data race is one logical operation split into several
// atomic blocks, so that another thread's block slips in between: a
// reader that takes pair.a in one critical section and pair.b in the
// next, while a writer sets both in one (`areEqual` and `setPair`, the
// paper's Fig. 1(a)), can see a from one update and b from another.
// Every access may be perfectly locked: the lock regions are in the wrong
// place.
//
//   - Atomic blocks are the dynamic instances of lock-protected regions,
//     Begin/End regions and invocations of --atomic functions (package
//     analysis/internal/blocks).
//   - The view of a block is the set of its accesses, each a (kind,
//     variable) pair; variables are the trace's (addresses or the
//     recorder's names: finer than the paper's (class, field)). A
//     process is a thread; its views V(p) are the distinct views of its
//     blocks; V_r(p) and V_w(p) keep the reads and the writes; the
//     maximal views M_r(p), M_w(p) are those in no other.
//   - For two threads p1 ≠ p2 that run at the same time (neither ends,
//     in the synchronization order, before the other starts), every
//     maximal write view m of p1 must be compatible with p2's reads:
//     the non-empty intersections of m with p2's read views must form a
//     chain under inclusion, or two that do not must not be commonly
//     correlated (kind `read`: p2 reads in separate blocks what p1
//     writes in one). Every maximal read view m of p1 must be compatible
//     with p2's writes: their intersections with m form a chain (kind
//     `write`: p2 writes in separate blocks what p1 reads in one; the
//     paper has no correlation filter here).
//   - Intersections are taken on variables, not on (kind, variable)
//     pairs (spec B3 [interp]: otherwise a read view and a write view
//     never intersect). Threads with the same views are one process:
//     two worker threads of one kind are p1 and p2 (the paper's p1 = p2).
//
// # Common correlation
//
// Two reads of x and y (x ≠ y) are commonly correlated when both reach a
// common write of a third variable z ∉ {x, y}, a branch, or a returned
// value (Definition 2). The trace records no value flow: package
// analysis/internal/flow infers it, and the report's summary says how.
// Here the reads must be made in two different blocks of p2 and be live
// together at a sink: a write of z or a return (Exit: what the returning
// invocation read, and its arguments). With the default mode (update)
// and with invocation, a read stays live in its invocation's loop
// iteration and in its callers after it returns — the reader's `return
// a == b` in areEqual correlates its two reads; in statement mode only
// reads combined in one statement are. Reads in two different iterations
// of a loop, or in two invocations that return to different iterations
// of their caller, are not correlated: that is where the refinement
// removes reports of plain view consistency. Branches are not sinks: a
// comparison leaves no event, and a recording's `Read` (a value that a
// comparison with equal operands used) is too often a coincidence of
// small values to stand for one. So a reader that only compares the two
// values (`if (h - l != 10) torn++`, the branch not taken in the run) is
// not correlated in the default mode; in mode invocation every two reads
// live together in an iteration are (the spec's coarsest fallback, close
// to plain view consistency with kinds).
//
// # The write side
//
// The paper checks comp_w without a refinement. Over a trace that
// reports every pair of unrelated updates of one thread — a producer that
// adds work (count) and, at the end, closes the queue (closed), against a
// consumer that waits for `count == 0 && !closed` under one lock. So
// (a departure) p2's two writing blocks must belong to one operation: an
// invocation below the thread's start routine or main ran both in one
// iteration of its loop (`set_range` calling setLo and setHi); in a trace
// without Enter/Exit, one iteration of the thread's loop. Split writes
// made directly in a start routine or main, or inlined into it, are
// therefore not reported.
//
// # Variables
//
// The paper names a global by (class, field), merging all instances; the
// trace names every element and heap block apart. Views here use the
// variable names without array indices and heap-block numbers
// (`buckets[3]#2->key` is `buckets[]->key`), so that the blocks of one
// code path over different objects have one view; reports name the
// accesses' own variables.
//
// # What it does not do
//
// It judges views, not interleavings: a split that no other thread's
// block can enter in practice (the two blocks always run under an outer
// lock that the trace does not show, a phase structure that does) is
// reported when the threads overlap at all. It does not find stale
// values (a value read in one block and written back in another: package
// stale), nor races outside atomic blocks (the paper assumes none). It
// only sees what the trace shows: a view the recorded run never took
// does not exist. At most MaxViews distinct views per thread are kept
// (the summary says when more were dropped).
package hldr

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mcpredict/mcpredict/analysis/internal/blocks"
	"github.com/mcpredict/mcpredict/analysis/internal/flow"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Kinds of findings.
const (
	// KindRead: p2 reads in separate blocks variables that p1 writes in
	// one block, and combines them.
	KindRead = "read"
	// KindWrite: p2 writes in separate blocks variables that p1 reads in
	// one block.
	KindWrite = "write"
)

// MaxViews bounds the distinct views kept per thread.
const MaxViews = 4096

// Options configure the check.
type Options struct {
	// Atomic names functions whose invocations are atomic blocks, besides
	// the critical sections and Begin/End regions.
	Atomic []string
	// ValueFlow is the flow mode of the correlation: statement, update
	// (default) or invocation (package analysis/internal/flow).
	ValueFlow string
}

// An Access is one event of a race, by trace line.
//
// Its Role is "atomic" (p1's block) or "split" (p2's blocks).
type Access = flow.Access

// A Race is one high-level data race.
type Race struct {
	Kind    string
	Vars    []string // the variables of the two overlaps, by name
	Message string
	// Events: p2's accesses in its first block, in its second, then p1's
	// accesses in its block.
	Events []Access
	// Schedule: the accesses in the order of an interleaving that shows
	// the race (p2's first block, p1's block, p2's second block).
	Schedule []Access
	Count    int // dynamic thread pairs and views that gave the same race
}

// Result is what Check found.
type Result struct {
	Races   []Race
	Blocks  int // dynamic atomic blocks
	Views   int // distinct views, summed over threads
	Dropped int // views not kept past MaxViews
	Mode    flow.Mode
	Traits  flow.Traits
}

// Summary is the one-line account of the work.
func (r *Result) Summary() string {
	s := fmt.Sprintf("%d high-level data races; %d atomic blocks, %d distinct views", len(r.Races), r.Blocks, r.Views)
	if r.Dropped > 0 {
		s += fmt.Sprintf(" (%d views past %d per thread not checked)", r.Dropped, MaxViews)
	}
	return s + "; correlation by " + flow.Describe(r.Mode, r.Traits)
}

// varset is a sorted set of variable ids.
type varset []int32

func (s varset) key() string {
	var b strings.Builder
	for _, v := range s {
		fmt.Fprintf(&b, "%d,", v)
	}
	return b.String()
}

func (s varset) subset(t varset) bool {
	i := 0
	for _, v := range s {
		for i < len(t) && t[i] < v {
			i++
		}
		if i == len(t) || t[i] != v {
			return false
		}
	}
	return true
}

func (s varset) intersect(t varset) varset {
	var out varset
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		switch {
		case s[i] < t[j]:
			i++
		case s[i] > t[j]:
			j++
		default:
			out = append(out, s[i])
			i++
			j++
		}
	}
	return out
}

// view is one distinct read or write projection of a thread's views,
// with the first block that had it.
type view struct {
	vars  varset
	block int32
	id    int32 // index in its thread's list
}

// thread is what the check keeps of one thread.
type thread struct {
	id           int32
	reads        []view // V_r, distinct
	writes       []view // V_w, distinct
	seenR, seenW map[string]int32
	sig          string // identical views: one process
	// together holds the pairs of write views (ids) of blocks made in
	// one operation (package doc: the write side).
	together map[[2]int32]bool
}

// vars abstracts the trace's variables as the paper's (class, field):
// array indices and the numbers of heap blocks are dropped, so that the
// blocks of one code path over different elements have one view.
type vars struct {
	of    []int32  // by model variable: abstract id
	names []string // by abstract id
}

var instanceRE = regexp.MustCompile(`\[[0-9]+\]|#t?[0-9]+(\.[0-9]+)?`)

func abstract(m *tracemodel.Model) *vars {
	a := &vars{of: make([]int32, len(m.Vars))}
	ids := map[string]int32{}
	for v := 1; v < len(m.Vars); v++ {
		name := instanceRE.ReplaceAllStringFunc(m.Vars[v].Name, func(s string) string {
			if s[0] == '[' {
				return "[]"
			}
			return ""
		})
		id, ok := ids[name]
		if !ok {
			id = int32(len(a.names))
			ids[name] = id
			a.names = append(a.names, name)
		}
		a.of[v] = id
	}
	return a
}

// Check finds the high-level data races of m. order is the
// synchronization order (Model.SyncOrder), used to skip threads that
// never run at the same time.
func Check(ctx context.Context, m *tracemodel.Model, order *tracemodel.Order, opts Options) (*Result, error) {
	mode, err := flow.ParseMode(opts.ValueFlow)
	if err != nil {
		return nil, err
	}
	res := &Result{Mode: mode, Traits: flow.TraitsOf(m)}
	bs := blocks.Find(m, blocks.Options{Atomic: opts.Atomic})
	res.Blocks = len(bs.Blocks)
	av := abstract(m)
	threads, err := collectViews(ctx, m, bs, av, res)
	if err != nil {
		return nil, err
	}
	c := &checker{m: m, bs: bs, av: av, order: order, mode: mode, traits: res.Traits, byKey: map[string]int{}, corr: map[int32]map[[2]int32]bool{}}
	groups := group(threads)
	for _, g1 := range groups {
		for _, g2 := range groups {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("hldr: %w", err)
			}
			p1, p2, ok := c.pair(g1, g2)
			if !ok {
				continue
			}
			c.compatible(p1, p2, p1.writes, p2.reads, KindRead)
			c.compatible(p1, p2, p1.reads, p2.writes, KindWrite)
		}
	}
	res.Races = c.races
	return res, nil
}

// outermost returns the depth of the invocations that can make one
// operation of thread th: below its start routine or main (the first
// invocation, entered at an unknown location or named main), or the
// whole thread's loop iterations when the trace has no invocations.
func outermost(m *tracemodel.Model, th *tracemodel.Thread, funcs bool) int {
	if !funcs {
		return 0
	}
	for _, ev := range th.Events {
		e := &m.Events[ev]
		if e.Kind == tracemodel.Enter {
			if e.Loc == 0 || m.Objects[e.Obj] == "main" {
				return 2
			}
			return 1
		}
	}
	return 1
}

// collectViews computes each thread's distinct read and write views, and
// which write views its blocks had in one operation.
func collectViews(ctx context.Context, m *tracemodel.Model, bs *blocks.Set, av *vars, res *Result) ([]*thread, error) {
	threads := make([]*thread, len(m.Threads))
	for i := range threads {
		threads[i] = &thread{id: int32(i + 1), seenR: map[string]int32{}, seenW: map[string]int32{}, together: map[[2]int32]bool{}}
	}
	type state struct {
		r, w    varset
		block   int32
		ops     []uint64
		tr      flow.Tracker
		from    int
		opViews map[uint64][]int32 // operation → write views of its blocks (at most 16)
	}
	st := make([]state, len(m.Threads))
	for i := range st {
		st[i].block = -1
		st[i].from = outermost(m, &m.Threads[i], res.Traits.Funcs)
		st[i].opViews = map[uint64][]int32{}
	}
	add := func(th *thread, vs varset, into *[]view, seen map[string]int32, b int32) int32 {
		if len(vs) == 0 {
			return -1
		}
		vs = slices.Clone(vs)
		slices.Sort(vs)
		vs = slices.Compact(vs)
		k := vs.key()
		if id, ok := seen[k]; ok {
			return id
		}
		if len(*into) >= MaxViews {
			res.Dropped++
			return -1
		}
		id := int32(len(*into))
		seen[k] = id
		*into = append(*into, view{vars: vs, block: b, id: id})
		return id
	}
	flush := func(t int32) {
		th, s := threads[t-1], &st[t-1]
		if s.block < 0 {
			return
		}
		add(th, s.r, &th.reads, th.seenR, s.block)
		if w := add(th, s.w, &th.writes, th.seenW, s.block); w >= 0 {
			for _, op := range s.ops {
				list := s.opViews[op]
				if slices.Contains(list, w) {
					continue
				}
				for _, v := range list {
					th.together[[2]int32{min(v, w), max(v, w)}] = true
				}
				if len(list) < 16 {
					s.opViews[op] = append(list, w)
				}
			}
		}
		s.r, s.w, s.block = s.r[:0], s.w[:0], -1
	}
	for i := range m.Events {
		m.Pace(i)
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("hldr: %w", err)
			}
		}
		e := &m.Events[i]
		s := &st[e.Thread-1]
		s.tr.Step(e)
		b := bs.Of(int32(i))
		if b != s.block {
			flush(e.Thread)
			s.block = b
			s.ops = s.ops[:0]
			if b >= 0 {
				s.ops = s.tr.Ops(s.from, s.ops)
			}
		}
		if b < 0 || !e.Kind.IsAccess() || m.IsSyncVar(int(e.Obj)) {
			continue
		}
		if e.Kind == tracemodel.Read {
			s.r = append(s.r, av.of[e.Obj])
		} else {
			s.w = append(s.w, av.of[e.Obj])
		}
	}
	for t := range threads {
		flush(int32(t + 1))
	}
	for _, th := range threads {
		res.Views += len(th.reads) + len(th.writes)
		var b strings.Builder
		for _, vs := range [][]view{th.reads, th.writes} {
			keys := make([]string, len(vs))
			for i, v := range vs {
				keys[i] = v.vars.key()
			}
			sort.Strings(keys)
			b.WriteString(strings.Join(keys, ";"))
			b.WriteString("|")
		}
		th.sig = b.String()
	}
	return threads, nil
}

// group gathers the threads with identical views (one process each), in
// order of their first thread; threads without views are left out.
func group(threads []*thread) [][]*thread {
	var out [][]*thread
	idx := map[string]int{}
	for _, th := range threads {
		if len(th.reads) == 0 && len(th.writes) == 0 {
			continue
		}
		i, ok := idx[th.sig]
		if !ok {
			i = len(out)
			idx[th.sig] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], th)
	}
	return out
}

type checker struct {
	m      *tracemodel.Model
	bs     *blocks.Set
	av     *vars
	order  *tracemodel.Order
	mode   flow.Mode
	traits flow.Traits
	races  []Race
	byKey  map[string]int              // race key → index in races
	corr   map[int32]map[[2]int32]bool // per thread: commonly correlated variable pairs
}

// pair picks a thread of g1 and another of g2 that run at the same time
// (a process against itself needs two of its threads).
func (c *checker) pair(g1, g2 []*thread) (*thread, *thread, bool) {
	tries := 0
	for _, a := range g1 {
		for _, b := range g2 {
			if a == b {
				continue
			}
			if tries++; tries > 64 {
				return a, b, true // assume some pair overlaps
			}
			if c.overlap(a.id, b.id) {
				return a, b, true
			}
		}
	}
	return nil, nil, false
}

// overlap reports whether neither thread ends before the other starts in
// the synchronization order.
func (c *checker) overlap(a, b int32) bool {
	if c.order == nil {
		return true
	}
	before := func(x, y int32) bool {
		n := int32(len(c.m.Threads[x-1].Events))
		return c.order.Clock(int(y), 1, int(x)) >= n
	}
	return !before(a, b) && !before(b, a)
}

// overlapView is a distinct non-empty intersection of a maximal view with
// the views of p2, with the first block and every view that gives it.
type overlapView struct {
	vars  varset
	block int32
	views []int32
}

// compatible checks p1's maximal views among v1 against p2's views v2
// (Definition 8, comp_r or comp_w by kind) and records the races.
func (c *checker) compatible(p1, p2 *thread, v1, v2 []view, kind string) {
	for _, mv := range maximal(v1) {
		var ovs []overlapView
		idx := map[string]int{}
		for _, v := range v2 {
			o := mv.vars.intersect(v.vars)
			if len(o) == 0 {
				continue
			}
			k := o.key()
			if i, ok := idx[k]; ok {
				ovs[i].views = append(ovs[i].views, v.id)
				continue
			}
			idx[k] = len(ovs)
			ovs = append(ovs, overlapView{vars: o, block: v.block, views: []int32{v.id}})
		}
		for i := range ovs {
			for j := i + 1; j < len(ovs); j++ {
				a, b := ovs[i], ovs[j]
				if a.vars.subset(b.vars) || b.vars.subset(a.vars) {
					continue
				}
				if kind == KindRead && !c.correlated(p2.id, a.vars, b.vars) {
					continue
				}
				if kind == KindWrite && !together(p2, a.views, b.views) {
					continue
				}
				c.report(kind, p1, p2, mv, view{vars: a.vars, block: a.block}, view{vars: b.vars, block: b.block})
			}
		}
	}
}

// together reports whether p2 wrote some view of as and some view of bs
// in blocks of one operation.
func together(p2 *thread, as, bs []int32) bool {
	for _, a := range as {
		for _, b := range bs {
			if p2.together[[2]int32{min(a, b), max(a, b)}] {
				return true
			}
		}
	}
	return false
}

// maximal returns the views in no other view (Definition 6).
func maximal(vs []view) []view {
	idx := make([]int, len(vs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return len(vs[idx[a]].vars) > len(vs[idx[b]].vars) })
	var out []view
	for _, i := range idx {
		in := false
		for _, o := range out {
			if len(o.vars) > len(vs[i].vars) && vs[i].vars.subset(o.vars) {
				in = true
				break
			}
		}
		if !in {
			out = append(out, vs[i])
		}
	}
	slices.SortFunc(out, func(a, b view) int { return cmp.Compare(a.block, b.block) })
	return out
}

// correlated reports whether p2 has commonly correlated reads of some
// x ∈ a and y ∈ b, x ≠ y (spec B3 [interp]), read in different blocks.
func (c *checker) correlated(p2 int32, a, b varset) bool {
	pairs, ok := c.corr[p2]
	if !ok {
		pairs = c.correlations(p2)
		c.corr[p2] = pairs
	}
	for _, x := range a {
		for _, y := range b {
			if x != y && pairs[[2]int32{min(x, y), max(x, y)}] {
				return true
			}
		}
	}
	return false
}

// correlations walks thread tid's events with the flow tracker and
// returns the pairs of (abstract) variables read in different blocks and
// live together at a sink: a write of a third variable or a return.
func (c *checker) correlations(tid int32) map[[2]int32]bool {
	pairs := map[[2]int32]bool{}
	tr := flow.Tracker{}
	var live []flow.Entry
	collect := func(e flow.Entry, strong bool) bool {
		if strong || c.mode != flow.Statement {
			live = append(live, e)
		}
		return len(live) < 32
	}
	sink := func(z int32) {
		for i, x := range live {
			for _, y := range live[i+1:] {
				if x.Tag == y.Tag || x.Var == y.Var || x.Var == z || y.Var == z {
					continue
				}
				pairs[[2]int32{min(x.Var, y.Var), max(x.Var, y.Var)}] = true
			}
		}
		live = live[:0]
	}
	seen := ^uint64(0)
	for i, ev := range c.m.Threads[tid-1].Events {
		c.m.Pace(i)
		e := &c.m.Events[ev]
		if c.mode == flow.Invocation && tr.Version() != seen {
			// The coarsest fallback: reads live together are correlated.
			seen = tr.Version()
			tr.Live(collect)
			sink(-1)
		}
		switch e.Kind {
		case tracemodel.Exit:
			tr.Returned(collect)
			sink(-1)
		case tracemodel.Write:
			tr.Live(collect)
			sink(c.av.of[e.Obj])
		}
		tr.Step(e)
		if e.Kind != tracemodel.Read || c.m.IsSyncVar(int(e.Obj)) {
			continue
		}
		if b := c.bs.Of(ev); b >= 0 {
			tr.Read(c.av.of[e.Obj], b)
		}
	}
	return pairs
}

// report records a race: p1's maximal view mv against p2's overlaps a
// and b (blocks a.block and b.block of p2).
func (c *checker) report(kind string, p1, p2 *thread, mv, a, b view) {
	m := c.m
	first, second := a, b
	if c.bs.Blocks[b.block].First < c.bs.Blocks[a.block].First {
		first, second = b, a
	}
	split := slices.Concat(first.vars, second.vars)
	slices.Sort(split)
	split = slices.Compact(split)
	p2Kind, p1Kind := tracemodel.Read, tracemodel.Write
	if kind == KindWrite {
		p2Kind, p1Kind = tracemodel.Write, tracemodel.Read
	}
	s1 := c.accesses(first.block, first.vars, p2Kind, "split")
	s2 := c.accesses(second.block, second.vars, p2Kind, "split")
	at := c.accesses(mv.block, split, p1Kind, "atomic")
	r := Race{Kind: kind, Events: slices.Concat(s1, s2, at), Schedule: slices.Concat(s1, at, s2), Count: 1}
	for _, v := range split {
		r.Vars = append(r.Vars, c.av.names[v])
	}
	sort.Strings(r.Vars)
	var k strings.Builder
	k.WriteString(kind)
	for _, e := range r.Events {
		fmt.Fprintf(&k, "|%s %s %s", e.Role, e.Kind, e.Where)
	}
	if i, ok := c.byKey[k.String()]; ok {
		c.races[i].Count++
		return
	}
	h1, h2 := m.Threads[p1.id-1].Handle, m.Threads[p2.id-1].Handle
	names := func(vs varset) string {
		var out []string
		for _, v := range vs {
			out = append(out, c.av.names[v])
		}
		return strings.Join(out, ", ")
	}
	if kind == KindRead {
		r.Message = fmt.Sprintf("thread %s writes %s in one atomic block, but thread %s reads %s and %s in two blocks and uses them together: it can see values of two different updates (high-level data race)",
			h1, names(split), h2, names(first.vars), names(second.vars))
	} else {
		r.Message = fmt.Sprintf("thread %s reads %s in one atomic block, but thread %s writes %s and %s in two blocks of one operation: the reader can see the update half done (high-level data race)",
			h1, names(split), h2, names(first.vars), names(second.vars))
	}
	c.byKey[k.String()] = len(c.races)
	c.races = append(c.races, r)
}

// accesses returns the first access of each (abstract) variable of vs
// with kind k in block b.
func (c *checker) accesses(b int32, vs varset, k tracemodel.Kind, role string) []Access {
	m := c.m
	blk := c.bs.Blocks[b]
	th := &m.Threads[blk.Thread-1]
	want := map[int32]bool{}
	for _, v := range vs {
		want[v] = true
	}
	var out []Access
	start := sort.Search(len(th.Events), func(i int) bool { return th.Events[i] >= blk.First })
	for _, ev := range th.Events[start:] {
		if ev > blk.Last || len(want) == 0 {
			break
		}
		e := &m.Events[ev]
		if e.Kind != k || !want[c.av.of[e.Obj]] || m.IsSyncVar(int(e.Obj)) {
			continue
		}
		delete(want, c.av.of[e.Obj])
		out = append(out, Access{
			Line: int(e.Line), Thread: th.Handle, Role: role, Var: m.Vars[e.Obj].Name,
			Kind: e.Kind.String(), Where: m.Locs[e.Loc].String(),
		})
	}
	return out
}
