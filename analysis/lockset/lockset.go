// Package lockset is the multi-lockset data race detector of Wang's
// dissertation (seeds/004, §4.5, Figure 4.1; implementation notes
// ../shared/specs/wang-dissertation.md S4.1). The reduction-based
// atomicity checker (package reduction) uses its verdicts to classify
// accesses as both-movers (race-free) or non-movers (racy); selected by
// itself (--analysis lockset) it reports the racy variables.
//
// # What it checks
//
// Only escaped accesses count (package escape, §3.1): the accesses of a
// variable's first thread that happen before every other thread's first
// access are its initialisation. For each variable x it keeps, as the
// dissertation does,
//
//   - ReadSets(x): the ⊆-minimal sets of locks held at the reads;
//   - WriteSet(x): the locks held at every write (uninitialised until the
//     first write); a rwlock held for reading does not protect a write
//     (two threads can hold it at once), so only exclusive holds count;
//   - the thread periods of the reads and of the writes (§3.2: threads
//     split at Create, Join and BarrierWait, the fact thread-periods of
//     package analysis), with their concurrency. The periods are split
//     further at condition variables and semaphores (Signal, Broadcast,
//     Wait, SemPost, SemWait; package analysis/internal/units), which the
//     dissertation ignores: data handed over with a signal or a semaphore
//     is then ordered, as the causal order of the trace says.
//
// Figure 4.1's test (Options.Paper) applies to the variable as a whole:
// with no write there is no race; with an empty WriteSet there is one when
// two write periods, or a write period and a read period, are concurrent;
// otherwise when some read lockset misses every lock of WriteSet and some
// write period is concurrent with some read period. The dissertation says
// it is conservative (the accesses that miss a lock need not be the
// concurrent ones): for the threads t2, t3, t4 of its Figure 4.2 it reports
// a race that cannot happen (t4's own unprotected read against its own
// protected write), and so does the very common C idiom of reading a
// result without a lock after joining the threads that updated it under
// one.
//
// By default the same sets are kept per period and the test is applied
// to each pair of concurrent periods of two threads, one of them writing:
// the
// WriteSets of two writing periods must share a lock, and every read
// lockset of one period must share a lock with the WriteSet of the other.
// This removes those two false alarms and reports a subset of Figure
// 4.1's races; it still never misses a pair of concurrent conflicting
// accesses that hold no common lock (an access pair that Figure 4.1 or the
// conflict-forest of the commit-node algorithm, §6.1.3, sees as racy).
//
// Each racy variable is one finding of kind "race" with two witness
// accesses of different threads in concurrent periods: two that hold no
// common lock when there are such, otherwise (a conservative verdict) a
// write and a conflicting access that the test pairs.
//
// # What it does not check
//
//   - Happens-before through locks: two accesses ordered only by a lock
//     hand-off (a locked queue, a flag or counter read under a lock) are
//     concurrent unless they hold a common lock, as in every lockset
//     algorithm: such hand-offs are reported as races.
//   - Ownership transfer and atomic instructions: an access through a C11
//     atomic is no access of the trace (the recorder writes atomics as
//     lock operations on atomic:... objects, which are locks here).
//   - It predicts races for every schedule consistent with the periods, not
//     only those of the recorded run, and it is not exact: a race is a
//     warning (a potential race, §4.5), and no race between accesses of
//     one thread period is ever reported.
package lockset

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/intset"
	"github.com/mcpredict/mcpredict/analysis/internal/units"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Name is the analysis name (--analysis lockset).
const Name = "lockset"

// KindRace is the kind of its findings.
const KindRace = "race"

// Options select the variant.
type Options struct {
	// Paper applies Figure 4.1's test to each variable as a whole (the
	// dissertation's algorithm) instead of to each pair of concurrent
	// thread periods.
	Paper bool
}

// New returns the multi-lockset race detector as an analysis: a finding
// per racy variable, and the verdicts of every variable as its result (a
// *Result) for the analyzers that require it. The escape information is
// the result of esc (escape.New), which it requires.
func New(opts Options, esc *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "data races: variables whose conflicting accesses in concurrent thread periods are not protected by a common lock (multi-lockset, after escape; locks order nothing)",
		Paper:    "L. Wang, Analysis of Synchronization Errors for Multithreaded Programs (dissertation, Stony Brook, 2006): §4.5, multi-lockset algorithm, Figure 4.1 (with §3.1 escape and §3.2 thread periods)",
		Requires: []analysis.Requirement{analysis.LockSets, analysis.ThreadPeriods, esc},
		Kinds: []bugs.FindingKind{
			{ID: KindRace, Name: "data race", Help: "Two threads access the variable in thread periods that are not ordered by create, join, barriers, condition variables or semaphores, at least one writing, and no lock held at both accesses protects it (multi-lockset test): the accesses can run at the same time."},
		},
		IDPrefix: "LS",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			m := pass.Model
			conc := units.NewConc(m, pass.Periods())
			res, err := Check(ctx, m, escape.Of(pass, esc), pass.LockSets(), conc, opts)
			if err != nil {
				return nil, err
			}
			vars, exact := map[int32]bool{}, map[int32]bool{}
			for _, r := range res.Races {
				pass.Report(finding(m, pass.LockSets(), r))
				vars[r.Var] = true
				if r.Exact {
					exact[r.Var] = true
				}
			}
			pass.Summarize("%d racy variables (%d with concurrent accesses holding no common lock; %d racy location pairs) of %d accessed by several threads", len(vars), len(exact), len(res.Races), res.Shared)
			return res, nil
		},
	}
}

// Of returns the result of the analyzer ls (built by New), as the pass of
// an analyzer requiring it holds it.
func Of(pass *analysis.Pass, ls *analysis.Analyzer) *Result {
	r, _ := pass.ResultOf[ls].(*Result)
	return r
}

// Result is the verdict on every variable.
type Result struct {
	racy        []bool // by variable
	conflicting []bool
	// Races are the racy variables, by variable id: a witness for each
	// pair of racy source locations (at most maxPairs), or the one
	// conservative witness of the test.
	Races []Race
	// Shared counts the variables with escaped accesses of two threads.
	Shared int
}

// Racy reports whether variable v has a potential race.
func (r *Result) Racy(v int32) bool { return r.racy[v] }

// Conflicting reports whether variable v has two escaped conflicting
// accesses (one writing) in concurrent thread periods, whatever locks
// they hold. A variable that is not conflicting — thread-local, read-only
// after it escapes, or only accessed in ordered periods — commutes with
// every access of other threads.
func (r *Result) Conflicting(v int32) bool { return r.conflicting[v] }

// Race is a racy variable with two witness accesses.
type Race struct {
	Var  int32
	A, B int32 // events (indexes in Model.Events), A before B in the trace; one writes
	// Exact is set when A and B hold no common lock (no lock excludes
	// them); otherwise the pair is the conservative witness of the test.
	Exact bool
}

// lockSets interns sorted sets of lock object ids.
type lockSets struct {
	*intset.Table
	bySet [][2]int32 // by LockSetIndex.SetID: (all locks, exclusive locks) + 1, 0 unknown
	inter map[[2]int32]int32
}

func newLockSets() *lockSets {
	return &lockSets{Table: intset.NewTable(), inter: map[[2]int32]int32{}}
}

func (s *lockSets) intern(ls []int32) int32 { return s.Intern(ls) }

// of returns the interned sets of all locks and of the exclusively held
// locks of the holds before event ev.
func (s *lockSets) of(li *analysis.LockSetIndex, ev int32) (all, excl int32) {
	id := li.SetID(ev)
	if int(id) < len(s.bySet) && s.bySet[id][0] > 0 {
		p := s.bySet[id]
		return p[0] - 1, p[1] - 1
	}
	hs := li.Before(ev)
	var a, x []int32
	for _, h := range hs {
		a = append(a, h.Lock)
		if !h.Shared {
			x = append(x, h.Lock)
		}
	}
	p := [2]int32{s.intern(a), s.intern(x)}
	for int(id) >= len(s.bySet) {
		s.bySet = append(s.bySet, [2]int32{})
	}
	s.bySet[id] = [2]int32{p[0] + 1, p[1] + 1}
	return p[0], p[1]
}

// disjoint reports whether sets a and b have no lock in common.
func (s *lockSets) disjoint(a, b int32) bool {
	if a == 0 || b == 0 {
		return true
	}
	p, q := s.Set(a), s.Set(b)
	i, j := 0, 0
	for i < len(p) && j < len(q) {
		switch {
		case p[i] < q[j]:
			i++
		case p[i] > q[j]:
			j++
		default:
			return false
		}
	}
	return true
}

// subset reports whether a ⊆ b.
func (s *lockSets) subset(a, b int32) bool {
	if a == 0 || a == b {
		return true
	}
	p, q := s.Set(a), s.Set(b)
	j := 0
	for _, x := range p {
		for j < len(q) && q[j] < x {
			j++
		}
		if j == len(q) || q[j] != x {
			return false
		}
	}
	return true
}

func (s *lockSets) intersect(a, b int32) int32 {
	if a == 0 || b == 0 {
		return 0
	}
	if a == b {
		return a
	}
	k := [2]int32{min(a, b), max(a, b)}
	if id, ok := s.inter[k]; ok {
		return id
	}
	var out []int32
	p, q := s.Set(a), s.Set(b)
	i, j := 0, 0
	for i < len(p) && j < len(q) {
		switch {
		case p[i] < q[j]:
			i++
		case p[i] > q[j]:
			j++
		default:
			out = append(out, p[i])
			i++
			j++
		}
	}
	id := s.intern(out)
	s.inter[k] = id
	return id
}

// sets is the multi-lockset state of Figure 4.1: ReadSets and WriteSet.
type sets struct {
	reads  []int32 // ⊆-minimal read locksets
	write  int32   // WriteSet (exclusive holds), if hasW
	hasW   bool
	hasR   bool
	period int32
}

func (st *sets) read(s *lockSets, ls int32) {
	st.hasR = true
	for _, r := range st.reads {
		if s.subset(r, ls) {
			return
		}
	}
	kept := st.reads[:0]
	for _, r := range st.reads {
		if !s.subset(ls, r) {
			kept = append(kept, r)
		}
	}
	st.reads = append(kept, ls)
}

func (st *sets) writeLocks(s *lockSets, excl int32) {
	if !st.hasW {
		st.hasW, st.write = true, excl
		return
	}
	st.write = s.intersect(st.write, excl)
}

// unprotected reports whether some read lockset misses every lock of ws.
func (st *sets) unprotected(s *lockSets, ws int32) bool {
	for _, r := range st.reads {
		if s.disjoint(r, ws) {
			return true
		}
	}
	return false
}

// Check runs the multi-lockset test on every variable of m. It fails only
// when ctx is done.
func Check(ctx context.Context, m *tracemodel.Model, esc *escape.Info, li *analysis.LockSetIndex, conc *units.Conc, opts Options) (*Result, error) {
	if esc == nil || li == nil || conc == nil {
		return nil, fmt.Errorf("lockset: missing escape information, lock sets or periods")
	}
	res := &Result{racy: make([]bool, len(m.Vars)), conflicting: make([]bool, len(m.Vars))}
	s := newLockSets()
	// One pass in trace order (memory order: the accesses of a variable
	// are scattered) fills the sets of each variable, per period and as a
	// whole.
	type varSets struct {
		global sets
		per    []sets // in order of first access; a thread's in period order
	}
	vs := make([]varSets, len(m.Vars))
	cur := make([]int, len(m.Threads)) // by thread: index of its current segment
	for i := range m.Events {
		m.Pace(i)
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("lockset: %w", err)
			}
		}
		e := &m.Events[i]
		if !e.Kind.IsAccess() {
			continue
		}
		v := e.Obj
		if m.IsSyncVar(int(v)) || !esc.Escaped(int32(i)) {
			continue
		}
		tps := conc.ThreadSegments(e.Thread)
		k := cur[e.Thread-1]
		for conc.All[tps[k]].Last < e.Pos {
			k++
		}
		cur[e.Thread-1] = k
		p := tps[k]
		st := &vs[v]
		j := -1
		for q := len(st.per) - 1; q >= 0; q-- {
			if conc.All[st.per[q].period].Thread == e.Thread {
				if st.per[q].period == p {
					j = q
				}
				break
			}
		}
		if j < 0 {
			j = len(st.per)
			st.per = append(st.per, sets{period: p})
		}
		all, excl := s.of(li, int32(i))
		if e.Kind == tracemodel.Write {
			st.per[j].writeLocks(s, excl)
			st.global.writeLocks(s, excl)
		} else {
			st.per[j].read(s, all)
			st.global.read(s, all)
		}
	}
	threads := map[int32][]int{} // thread -> indexes in per, in period order
	for v := range vs {
		if v&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("lockset: %w", err)
			}
		}
		st := &vs[v]
		if len(st.per) < 2 {
			continue
		}
		clear(threads)
		for i := range st.per {
			t := conc.All[st.per[i].period].Thread
			threads[t] = append(threads[t], i)
		}
		if len(threads) < 2 {
			continue
		}
		res.Shared++
		if !st.global.hasW {
			continue
		}
		crossWR, concWW, racyPairs := scan(s, conc, st.per, threads)
		res.conflicting[v] = crossWR || concWW
		switch {
		case !opts.Paper:
			res.racy[v] = racyPairs
		case st.global.write == 0:
			res.racy[v] = crossWR || concWW
		default:
			res.racy[v] = st.global.unprotected(s, st.global.write) && crossWR
		}
		if res.racy[v] {
			res.Races = append(res.Races, witnesses(m, esc, li, conc, s, int32(v))...)
		}
	}
	return res, nil
}

// scan looks at every pair of concurrent periods of different threads, one
// of them writing: whether a writing period is concurrent with a reading
// one (crossWR) or with another writing one (concWW), and whether the sets
// of such a pair fail the multi-lockset test (racy).
func scan(s *lockSets, conc *units.Conc, per []sets, threads map[int32][]int) (crossWR, concWW, racy bool) {
	for _, w := range per {
		if !w.hasW {
			continue
		}
		for t, idx := range threads {
			lo, hi := conc.Range(w.period, t)
			if lo == hi {
				continue
			}
			// idx lists the thread's periods of the variable in order.
			start, _ := slices.BinarySearchFunc(idx, lo, func(i int, lo int) int {
				return int(conc.Index(per[i].period)) - lo
			})
			for _, i := range idx[start:] {
				q := &per[i]
				if int(conc.Index(q.period)) >= hi {
					break
				}
				if q.hasW {
					concWW = true
					if s.disjoint(w.write, q.write) {
						racy = true
					}
				}
				if q.hasR {
					crossWR = true
					if q.unprotected(s, w.write) {
						racy = true
					}
				}
				if racy && crossWR && concWW {
					return
				}
			}
		}
	}
	return
}

// maxPairs bounds the racy location pairs reported for one variable.
const maxPairs = 32

// witnesses finds the accesses of v that show its race: one pair of
// accesses for every pair of source locations that race (holding no common
// lock, concurrent, one writing), as a happens-before detector names every
// racy line, at most maxPairs; else the conservative witness of the test.
func witnesses(m *tracemodel.Model, esc *escape.Info, li *analysis.LockSetIndex, conc *units.Conc, s *lockSets, v int32) []Race {
	evs := distinctAccesses(m, esc, li, conc, s, v)
	var out []Race
	seen := map[[2]int32]bool{}
	var fallback *Race
	for _, a := range evs {
		if m.Events[a].Kind != tracemodel.Write {
			continue
		}
		pa := conc.Of(a)
		for _, b := range evs {
			if b == a || m.Events[b].Thread == m.Events[a].Thread || !conc.Concurrent(pa, conc.Of(b)) {
				continue
			}
			r := Race{Var: v, A: min(a, b), B: max(a, b)}
			if analysis.Excludes(li.Before(a), li.Before(b)) {
				if fallback == nil {
					fallback = &r
				}
				continue
			}
			la, lb := m.Events[r.A].Loc, m.Events[r.B].Loc
			k := [2]int32{min(la, lb), max(la, lb)}
			if seen[k] || len(out) == maxPairs {
				continue
			}
			seen[k] = true
			r.Exact = true
			out = append(out, r)
		}
	}
	switch {
	case len(out) > 0:
		return out
	case fallback != nil:
		return []Race{*fallback}
	}
	// Only beyond the distinct accesses kept: the first write and any
	// access of another thread.
	return []Race{{Var: v, A: evs[0], B: evs[len(evs)-1]}}
}

// distinctAccesses are the escaped accesses of v, one per (period, kind,
// locks held, location), at most 128.
func distinctAccesses(m *tracemodel.Model, esc *escape.Info, li *analysis.LockSetIndex, conc *units.Conc, s *lockSets, v int32) []int32 {
	type key struct {
		period      int32
		write       bool
		all, shared int32
		loc         int32 // every racy line pairs with the others
	}
	const maxKeys = 128
	var evs []int32
	seen := map[key]bool{}
	for i, ev := range m.Vars[v].Accesses {
		m.Pace(i)
		if !esc.Escaped(ev) {
			continue
		}
		all, excl := s.of(li, ev)
		k := key{period: conc.Of(ev), write: m.Events[ev].Kind == tracemodel.Write, all: all, shared: excl, loc: m.Events[ev].Loc}
		if !seen[k] {
			seen[k] = true
			evs = append(evs, ev)
			if len(evs) == maxKeys {
				break
			}
		}
	}
	return evs
}

// finding turns a race into a finding.
func finding(m *tracemodel.Model, li *analysis.LockSetIndex, r Race) analysis.Finding {
	name := m.Vars[r.Var].Name
	desc := func(ev int32) string {
		e := &m.Events[ev]
		var locks []string
		for _, h := range li.Before(ev) {
			l := m.Objects[h.Lock]
			if h.Shared {
				l += " (read)"
			}
			locks = append(locks, l)
		}
		held := "no lock"
		if len(locks) > 0 {
			held = "locks " + strings.Join(locks, ", ")
		}
		return fmt.Sprintf("thread %s's %s at %s (trace line %d, %s)", m.Threads[e.Thread-1].Handle, e.Kind, m.Locs[e.Loc], e.Line, held)
	}
	msg := fmt.Sprintf("data race on %s: %s and %s can run at the same time", name, desc(r.A), desc(r.B))
	if !r.Exact {
		msg = fmt.Sprintf("potential data race on %s (conservative multi-lockset test: an access holds none of the locks held at every write of a concurrent period; no two concurrent accesses without a common lock were found): %s and %s", name, desc(r.A), desc(r.B))
	}
	role := func(ev int32) string {
		if m.Events[ev].Kind == tracemodel.Write {
			return "write"
		}
		return "read"
	}
	sites := []analysis.Site{
		{Event: r.A, Role: role(r.A), Essential: true},
		{Event: r.B, Role: role(r.B), Essential: true},
	}
	return analysis.Finding{Kind: KindRace, Message: msg, Objects: []string{name}, Sites: sites}
}
