// Package deadlock predicts lock-order deadlocks from a trace: the
// generalized Goodlock algorithm of Wang's dissertation (seeds/004, §9.4.1,
// Figures 9.1-9.3; the pairwise check of Ch. 2), with gate locks, thread
// periods / happens-before and rwlocks, and reports the deadlocks the
// recording ended in.
//
// Every acquisition of a lock l by a thread t while t holds locks H
// (re-entrant re-acquisitions folded, successful trylocks never block and
// add no edge, a cond Wait's implicit reacquisition neither) is an edge
// h → l of the lock-order graph for each h in H, labelled with the thread,
// H with the acquisition sites of its locks, the acquire site, and the
// occurrences in the trace. A cycle l0 → l1 → … → l0 of length ≥ 2 whose
// edges belong to distinct threads is a predicted deadlock unless
//
//   - two of its threads hold a common lock (a gate lock; read holds of a
//     rwlock by both do not count), or
//   - a link cannot block: the acquisition is a read lock and the next
//     thread holds the lock for reading, or
//   - no choice of occurrences of its acquisitions is pairwise concurrent
//     under the synchronization order (create, join, barriers,
//     signal/wait, semaphores): a thread cannot reach its acquisition
//     without an event of another thread at or after that thread's own
//     blocking acquisition.
//
// Each cycle is reported once (rotation starting at its smallest lock),
// with the acquire site of every thread and the sites where it took the
// locks it held. The search is bounded: cycles of at most Options.MaxCycle
// locks, Options.MaxSteps extensions of the depth-first search and
// Options.MaxFindings reports; the summary says when a bound was reached.
//
// A deadlock that occurred is read from Blocked events (the recording
// ended with the thread blocked in that acquisition): a cycle of blocked
// threads, each waiting for a lock the next one holds at the end of the
// trace, is reported with Occurred set; the prediction of the same cycle is
// then not reported again.
package deadlock

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Name is the analyzer's name.
const Name = "deadlock"

// Kind is the kind of its findings.
const Kind = "DL"

// Options bound the search.
type Options struct {
	// MaxCycle is the longest cycle searched, in locks (= threads);
	// default 8.
	MaxCycle int
	// MaxSteps bounds the extensions of the cycle search; default
	// 2,000,000.
	MaxSteps int
	// MaxFindings bounds the deadlocks reported; default 1000.
	MaxFindings int
	// MaxOccurrences bounds the occurrences kept per distinct acquisition
	// (same thread, sites and held locks) for the concurrency check; the
	// first ones and the latest are kept; default 16.
	MaxOccurrences int
}

// DefaultMaxCycle is the default of Options.MaxCycle.
const DefaultMaxCycle = 8

func (o *Options) defaults() {
	if o.MaxCycle <= 0 {
		o.MaxCycle = DefaultMaxCycle
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 2_000_000
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = 1000
	}
	if o.MaxOccurrences <= 0 {
		o.MaxOccurrences = 16
	}
}

// New returns the deadlock analyzer.
func New(opts Options) *analysis.Analyzer {
	opts.defaults()
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "lock-order deadlocks: cycles of nested lock acquisitions by different threads, pruned by gate locks and happens-before; and deadlocks the recording ended in",
		Paper:    "L. Wang, Analysis of Synchronization Errors for Multithreaded Programs (dissertation, Stony Brook, 2006): Ch. 2 and §9.4.1, generalized Goodlock with gate locks, Figures 9.1-9.3",
		Requires: []analysis.Requirement{analysis.CausalOrder, analysis.LockSets},
		Kinds: []bugs.FindingKind{{ID: Kind, Name: "lock-order deadlock",
			Help: "Threads acquire locks in a cyclic order: each holds a lock the next one acquires while it acquires the lock the previous one holds. When they run at the same time, each waits for the next one forever. No common (gate) lock keeps them apart and no causal order (create, join, barrier, signal) keeps them from running at once. Take the locks in one global order, or guard the nested acquisitions with one lock."}},
		IDPrefix: "DL",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			return nil, run(ctx, pass, opts)
		},
	}
}

// acq is a distinct nested acquisition: thread, lock, mode, acquire site
// and the locks held (with their acquisition sites).
type acq struct {
	thread  int32
	lock    int32
	shared  bool                // RdLock
	held    []analysis.HeldLock // of the first occurrence
	occ     []int32             // event indexes of occurrences (bounded)
	blocked bool                // the first occurrence is a Blocked event
}

type edge struct {
	acq int32 // index into acqs
	to  int32 // lock acquired
}

type state struct {
	m       *tracemodel.Model
	opts    Options
	acqs    []acq
	out     [][]edge // by lock object id
	steps   int
	pass    *analysis.Pass
	seen    map[string]bool // signatures of reported cycles
	reports int
	cycles  int // cycles of distinct threads met
	pruned  [3]int
}

const (
	prunedGate = iota
	prunedReadRead
	prunedOrder
)

func run(ctx context.Context, pass *analysis.Pass, opts Options) error {
	m := pass.Model
	ls := pass.LockSets()
	s := &state{m: m, opts: opts, pass: pass, out: make([][]edge, len(m.Objects)), seen: map[string]bool{}}
	index := map[string]int32{}
	var key []byte
	nested := 0
	var blocked []int32
	for i := range m.Events {
		m.Pace(i)
		e := &m.Events[i]
		var shared bool
		switch e.Kind {
		case tracemodel.Lock, tracemodel.WrLock:
		case tracemodel.RdLock:
			shared = true
		case tracemodel.Blocked:
			shared = tracemodel.Kind(e.Obj2) == tracemodel.RdLock
			blocked = append(blocked, int32(i))
		default:
			continue
		}
		held := ls.Before(int32(i))
		if len(held) == 0 {
			continue
		}
		if _, again := analysis.Holds(held, e.Obj); again {
			continue // re-entrant
		}
		nested++
		key = key[:0]
		key = strconv.AppendInt(key, int64(e.Thread), 36)
		key = append(key, '|')
		key = strconv.AppendInt(key, int64(e.Obj), 36)
		key = append(key, '|')
		key = strconv.AppendInt(key, int64(e.Loc), 36)
		if shared {
			key = append(key, 'r')
		}
		for _, h := range held {
			key = append(key, '|')
			key = strconv.AppendInt(key, int64(h.Lock), 36)
			key = append(key, '@')
			key = strconv.AppendInt(key, int64(m.Events[h.Acquired].Loc), 36)
			if h.Shared {
				key = append(key, 'r')
			}
		}
		if k, ok := index[string(key)]; ok {
			a := &s.acqs[k]
			if len(a.occ) < opts.MaxOccurrences {
				a.occ = append(a.occ, int32(i))
			} else {
				a.occ[len(a.occ)-1] = int32(i)
			}
			continue
		}
		k := int32(len(s.acqs))
		index[string(key)] = k
		s.acqs = append(s.acqs, acq{thread: e.Thread, lock: e.Obj, shared: shared, held: held, occ: []int32{int32(i)}, blocked: e.Kind == tracemodel.Blocked})
		for _, h := range held {
			s.out[h.Lock] = append(s.out[h.Lock], edge{acq: k, to: e.Obj})
		}
		if i&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := s.occurred(ctx, ls, blocked); err != nil {
		return err
	}
	edges := 0
	for _, es := range s.out {
		edges += len(es)
	}
	truncated := s.search(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	sum := fmt.Sprintf("%d nested acquisitions, %d distinct, %d lock-order edges; %d cycles of distinct threads up to %d locks, pruned: %d by gate locks, %d read-read, %d by happens-before",
		nested, len(s.acqs), edges, s.cycles, opts.MaxCycle, s.pruned[prunedGate], s.pruned[prunedReadRead], s.pruned[prunedOrder])
	if truncated != "" {
		sum += "; search stopped: " + truncated
	}
	pass.Summarize("%s", sum)
	return nil
}

// search enumerates the cycles; it returns why it stopped early, or "".
func (s *state) search(ctx context.Context) string {
	locks := make([]int32, 0)
	for l, es := range s.out {
		if len(es) > 0 {
			locks = append(locks, int32(l))
		}
	}
	path := make([]int32, 0, s.opts.MaxCycle) // acq indexes
	onPath := map[int32]bool{}
	usedThread := map[int32]bool{}
	var stop string
	var dfs func(start, cur int32)
	dfs = func(start, cur int32) {
		for _, e := range s.out[cur] {
			if stop != "" {
				return
			}
			s.steps++
			if s.steps > s.opts.MaxSteps {
				stop = fmt.Sprintf("%d search steps (MaxSteps)", s.opts.MaxSteps)
				return
			}
			if s.steps&0xfff == 0 && ctx.Err() != nil {
				stop = "interrupted"
				return
			}
			a := &s.acqs[e.acq]
			if usedThread[a.thread] {
				continue
			}
			switch {
			case e.to == start:
				if len(path) >= 1 {
					s.cycles++
					s.check(append(path, e.acq))
					if s.reports >= s.opts.MaxFindings {
						stop = fmt.Sprintf("%d deadlocks reported (MaxFindings)", s.opts.MaxFindings)
					}
				}
			case e.to > start && !onPath[e.to] && len(path)+1 < s.opts.MaxCycle:
				path = append(path, e.acq)
				onPath[e.to] = true
				usedThread[a.thread] = true
				dfs(start, e.to)
				usedThread[a.thread] = false
				onPath[e.to] = false
				path = path[:len(path)-1]
			}
		}
	}
	for _, l := range locks {
		onPath[l] = true
		dfs(l, l)
		onPath[l] = false
		if stop != "" {
			break
		}
	}
	return stop
}

// holdOf returns the hold of lock in acquisition a's held set.
func holdOf(a *acq, lock int32) analysis.HeldLock {
	h, _ := analysis.Holds(a.held, lock)
	return h
}

// check decides a cycle: cyc[i] holds lock L_i and acquires L_{i+1}.
func (s *state) check(cyc []int32) {
	n := len(cyc)
	as := make([]*acq, n)
	for i, k := range cyc {
		as[i] = &s.acqs[k]
	}
	for i := range as {
		next := as[(i+1)%n]
		if as[i].shared && holdOf(next, as[i].lock).Shared {
			s.pruned[prunedReadRead]++
			return
		}
		for j := i + 1; j < n; j++ {
			if analysis.Excludes(as[i].held, as[j].held) {
				s.pruned[prunedGate]++
				return
			}
		}
	}
	choice := make([]int32, n)
	budget := 100000
	var pick func(i int) bool
	pick = func(i int) bool {
		if i == n {
			return true
		}
		for _, o := range as[i].occ {
			if budget--; budget < 0 {
				return false
			}
			ok := true
			for j := 0; j < i && ok; j++ {
				ok = s.concurrent(o, choice[j])
			}
			if ok {
				choice[i] = o
				if pick(i + 1) {
					return true
				}
			}
		}
		return false
	}
	if !pick(0) {
		s.pruned[prunedOrder]++
		return
	}
	s.report(as, choice, false)
}

// concurrent reports whether two blocking acquisitions (event indexes) of
// different threads can both be reached while the other waits: neither
// depends on the other or on anything after it.
func (s *state) concurrent(a, b int32) bool {
	ea, eb := &s.m.Events[a], &s.m.Events[b]
	return s.m.Clock(int(eb.Thread), eb.Pos, int(ea.Thread)) < ea.Pos &&
		s.m.Clock(int(ea.Thread), ea.Pos, int(eb.Thread)) < eb.Pos
}

// report reports the cycle as[0..n): as[i] holds the lock as[i-1] acquires.
func (s *state) report(as []*acq, at []int32, occurred bool) {
	m := s.m
	n := len(as)
	f := analysis.Finding{Kind: Kind, Occurred: occurred}
	var msg []string
	sig := make([]string, 0, 2*n)
	for i, a := range as {
		prev := as[(i+n-1)%n]
		h := holdOf(a, prev.lock)
		f.Threads = append(f.Threads, int(a.thread))
		f.Objects = append(f.Objects, m.Objects[a.lock])
		for _, x := range a.held {
			f.Sites = append(f.Sites, analysis.Site{Event: x.Acquired, Role: "held", Essential: x.Lock == prev.lock})
		}
		f.Sites = append(f.Sites, analysis.Site{Event: at[i], Role: "acquire", Action: acquireAction(m, at[i]), Essential: true})
		msg = append(msg, fmt.Sprintf("thread %s holds %s (%s) and waits for %s (%s)",
			m.Threads[a.thread-1].Handle, m.Objects[prev.lock], s.loc(h.Acquired), m.Objects[a.lock], s.loc(at[i])))
		sig = append(sig, fmt.Sprintf("%d>%d", m.Events[h.Acquired].Loc, m.Events[at[i]].Loc))
	}
	// Objects in cycle order starting with the lock the first thread holds.
	f.Objects = append([]string{m.Objects[as[n-1].lock]}, f.Objects[:n-1]...)
	sort.Strings(sig)
	key := strings.Join(sig, ",")
	if s.seen[key] && !occurred {
		return
	}
	s.seen[key] = true
	// Schedule: every thread takes the locks it holds, then each blocks.
	for _, site := range f.Sites {
		if site.Role == "held" {
			f.Schedule = append(f.Schedule, site)
		}
	}
	for _, site := range f.Sites {
		if site.Role == "acquire" {
			f.Schedule = append(f.Schedule, site)
		}
	}
	verb := "can deadlock"
	if occurred {
		verb = "deadlocked"
	}
	f.Message = fmt.Sprintf("%d threads %s: %s", n, verb, strings.Join(msg, "; "))
	s.pass.Report(f)
	s.reports++
}

func (s *state) loc(ev int32) string { return s.m.Locs[s.m.Events[ev].Loc].String() }

// acquireAction is the action of an acquisition event: a Blocked event is
// shown as the acquisition that blocked.
func acquireAction(m *tracemodel.Model, ev int32) string {
	e := &m.Events[ev]
	if e.Kind == tracemodel.Blocked {
		return tracemodel.Kind(e.Obj2).String()
	}
	return e.Kind.String()
}

// occurred reports the cycles of threads blocked at the end of the trace,
// each waiting for a lock that the next one holds.
func (s *state) occurred(ctx context.Context, ls *analysis.LockSetIndex, blocked []int32) error {
	if len(blocked) == 0 {
		return nil
	}
	m := s.m
	// waitsFor[t]: the blocked event of thread t, and the threads holding
	// its lock in a conflicting mode at the end.
	type waiter struct {
		ev      int32
		holders []int32
	}
	waits := map[int32]*waiter{}
	for _, b := range blocked {
		e := &m.Events[b]
		shared := tracemodel.Kind(e.Obj2) == tracemodel.RdLock
		w := &waiter{ev: b}
		for t := range m.Threads {
			if int32(t+1) == e.Thread {
				continue
			}
			if h, ok := analysis.Holds(ls.AtEnd(t+1), e.Obj); ok && !(h.Shared && shared) {
				w.holders = append(w.holders, int32(t+1))
			}
		}
		waits[e.Thread] = w
	}
	threads := make([]int32, 0, len(waits))
	for t := range waits {
		threads = append(threads, t)
	}
	sort.Slice(threads, func(i, j int) bool { return threads[i] < threads[j] })
	var path []int32
	on := map[int32]bool{}
	var dfs func(start, cur int32)
	dfs = func(start, cur int32) {
		for _, u := range waits[cur].holders {
			switch {
			case u == start:
				s.reportOccurred(append([]int32(nil), path...), ls, func(t int32) int32 { return waits[t].ev })
			case u > start && !on[u] && waits[u] != nil && len(path) < s.opts.MaxCycle:
				on[u] = true
				path = append(path, u)
				dfs(start, u)
				path = path[:len(path)-1]
				on[u] = false
			}
		}
	}
	for _, t := range threads {
		path = append(path[:0], t)
		on[t] = true
		dfs(t, t)
		on[t] = false
	}
	return ctx.Err()
}

// reportOccurred reports a cycle of blocked threads: ts[i] waits for a lock
// ts[i+1] holds.
func (s *state) reportOccurred(ts []int32, ls *analysis.LockSetIndex, ev func(int32) int32) {
	m := s.m
	n := len(ts)
	// In report's orientation as[i] holds the lock as[i-1] acquires: the
	// holder follows the waiter, which is ts's order.
	as := make([]*acq, n)
	at := make([]int32, n)
	for i, t := range ts {
		b := ev(t)
		e := &m.Events[b]
		as[i] = &acq{thread: t, lock: e.Obj, shared: tracemodel.Kind(e.Obj2) == tracemodel.RdLock, held: ls.Before(b), occ: []int32{b}, blocked: true}
		at[i] = b
	}
	// report expects as[i] to hold as[i-1].lock: ts[i] holds the lock
	// ts[i-1] waits for. Check it (the holder at the end holds it at its
	// Blocked event too, since a blocked thread has no later event).
	for i := range as {
		if _, ok := analysis.Holds(as[i].held, as[(i+n-1)%n].lock); !ok {
			return
		}
	}
	s.report(as, at, true)
}
