// Package reduction is the off-line reduction-based atomicity checker of
// Wang's dissertation (seeds/004, ch. 4; implementation notes
// ../shared/specs/wang-dissertation.md S1): Lipton's reduction applied to
// the transactions of a trace, checking conflict-atomicity.
//
// # What it checks
//
// Every event of a transaction is classified by how it commutes with the
// events of other threads (§4.2, §4.4, §4.6):
//
//   - a lock acquisition is a right-mover R, a release a left-mover L;
//   - an escaped access (package escape, §3.1) to a variable with a
//     potential data race (package lockset, the multi-lockset detector of
//     §4.5) is a non-mover N; every other access is a both-mover B;
//   - acquisitions and releases are both-movers when re-entrant, when the
//     lock is thread-local (one thread ever acquires it), when it is
//     protected (another lock is held exclusively at every acquisition of
//     it, by any thread: no other thread can touch it meanwhile), and
//     when the critical section accesses only variables that have no
//     conflicting accesses in concurrent thread periods at all (read-only,
//     thread-local or ordered: the AcqA*Rel rule of Theorem 4.4.2, applied
//     recursively to nested critical sections, and extended from read-only
//     and thread-local variables to variables whose conflicting accesses
//     are all ordered by the thread periods);
//   - everything else (function entries, signals, allocation) is B.
//
// A transaction is reducible when its mover string, B dropped, is
// R* N? L* (Theorem 4.3.1; Theorem 4.4.2 with the rules above): then it
// can be moved together in every trace. The classification is off-line
// (§4.3 "off-line"): races and lock properties are those of the whole
// trace, so a variable that turns racy late is a non-mover everywhere, and
// the check is conservative — every transaction on a cycle of conflicts of
// some feasible trace is reported (no missed violation among the observed
// transactions, §7.7), at the cost of false alarms.
//
// A transaction that is not reducible is one finding (one warning per
// transaction, as in §7), of kind
//
//   - "cs-cs": it releases a lock and later acquires one (two critical
//     sections that another thread can come between — the Vector
//     constructor of Figure 1.1);
//   - "race-race": two racy accesses;
//   - "race-cs": a racy access before an acquisition, or after a release.
//
// Its sites are the event that ended the right-mover phase (a release or a
// racy access) and the event that cannot follow it (an acquisition or a
// racy access), with the acquisition of the released lock when the
// transaction made it.
//
// Transactions are those of package txn (--atomic, --not-atomic, Begin/End
// labels, else every function but the start routines and main), split
// into units at thread-period boundaries and blocking waits, and the
// outermost critical sections outside them (implicit transactions; package
// analysis/internal/units). Non-transactional code is not checked.
//
// # What it does not check
//
//   - The dissertation's §4.7 tree (varsOne, varsMul per synchronized
//     block) is not built: the trace is kept, so each transaction's events
//     are classified in their order after the race detection. The verdict
//     is the same (the pattern is insensitive to the order within a block).
//   - No deadlock check: the theorems assume no potential deadlock; run the
//     deadlock analysis (on by default) alongside.
//   - It never names the other thread, and cannot tell a benign race (a
//     statistics counter, modCount) from a harmful one: any racy access
//     makes two non-movers of a read-modify-write. The block and
//     commit-node analyses are more precise (§7.4).
package reduction

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/units"
	"github.com/mcpredict/mcpredict/analysis/lockset"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Name is the analysis name (--analysis reduction).
const Name = "reduction"

// Kinds of findings.
const (
	CSCS     = "cs-cs"
	RaceRace = "race-race"
	RaceCS   = "race-cs"
)

// Mover is the commutativity of an event (§4.2).
type Mover uint8

// Movers.
const (
	B Mover = iota // both-mover
	R              // right-mover
	L              // left-mover
	N              // non-mover
)

func (mv Mover) String() string { return string("BRLN"[mv]) }

// New returns the reduction-based checker as an analysis. It requires the
// transactions tx (txn.New), the race verdicts ls (lockset.New) and the
// escape information esc (escape.New).
func New(tx, ls, esc *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "atomicity of transactions by Lipton's reduction: a transaction whose movers (acquire R, release L, racy access N) are not R* N? L* (off-line, with multi-lockset races, escape, thread periods; conservative)",
		Paper:    "L. Wang, Analysis of Synchronization Errors for Multithreaded Programs (dissertation, Stony Brook, 2006): ch. 4, reduction-based algorithm, Theorems 4.3.1 and 4.4.2, §4.6, off-line (§4.3, §4.7)",
		Requires: []analysis.Requirement{analysis.LockSets, analysis.ThreadPeriods, tx, ls, esc},
		Kinds: []bugs.FindingKind{
			{ID: CSCS, Name: "not reducible: two critical sections", Help: "The transaction releases a lock and later acquires one (right-mover after a left-mover): another thread can run between its critical sections, so it is not atomic by reduction."},
			{ID: RaceRace, Name: "not reducible: two racy accesses", Help: "The transaction makes two accesses to variables with potential data races (two non-movers): another thread's conflicting access can come between them."},
			{ID: RaceCS, Name: "not reducible: racy access and critical section", Help: "The transaction makes an access with a potential data race (a non-mover) before acquiring a lock, or after releasing one: another thread can come between."},
		},
		IDPrefix: "RD",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			m := pass.Model
			us, err := units.Split(ctx, m, txn.Of(pass, tx), pass.Periods())
			if err != nil {
				return nil, fmt.Errorf("reduction: %w", err)
			}
			vs, stats, err := Check(ctx, m, us, escape.Of(pass, esc), lockset.Of(pass, ls), pass.LockSets())
			if err != nil {
				return nil, err
			}
			ts := txn.Of(pass, tx)
			for _, v := range vs {
				pass.Report(finding(m, ts, us, v))
			}
			pass.Summarize("%d of %d transactions not reducible (%d both-mover locks, %d critical sections skipped by AcqA*Rel)",
				len(vs), stats.Transactions, stats.BothLocks, stats.Skipped)
			return nil, nil
		},
	}
}

// Violation is a transaction that is not reducible.
type Violation struct {
	Unit int    // index of its unit
	Kind string // CSCS, RaceRace or RaceCS
	// Switch ended the right-mover phase (a release or a racy access);
	// Offending cannot follow it (an acquisition or a racy access);
	// Acquire is the acquisition of Switch's lock when Switch is a release
	// of a hold taken in the unit, -1 otherwise. Events are indexes in
	// Model.Events.
	Switch, Offending, Acquire int32
	Movers                     string // the movers of its accesses and lock operations (truncated)
}

// Stats count what Check classified.
type Stats struct {
	Transactions int // units checked
	BothLocks    int // locks whose operations are both-movers (thread-local or protected)
	Skipped      int // critical sections skipped by the AcqA*Rel rule
}

// Check classifies the events of every transaction unit of us and returns
// those that are not reducible, in unit order. It fails only when ctx is
// done.
func Check(ctx context.Context, m *tracemodel.Model, us []units.Unit, esc *escape.Info, races *lockset.Result, li *analysis.LockSetIndex) ([]Violation, Stats, error) {
	var st Stats
	if esc == nil || races == nil || li == nil {
		return nil, st, fmt.Errorf("reduction: missing escape information, race verdicts or lock sets")
	}
	both := bothMoverLocks(m, li)
	for _, b := range both {
		if b {
			st.BothLocks++
		}
	}
	c := &checker{m: m, esc: esc, races: races, both: both}
	var out []Violation
	for i := range us {
		if i&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, fmt.Errorf("reduction: %w", err)
			}
		}
		u := &us[i]
		if !u.Kind.Transaction() {
			continue
		}
		st.Transactions++
		if v, ok := c.unit(u, &st); !ok {
			v.Unit = i
			out = append(out, v)
		}
	}
	return out, st, nil
}

// bothMoverLocks returns, by object id, the locks whose acquisitions and
// releases are both-movers: those acquired by one thread only, and those
// protected by another lock held exclusively at every acquisition (§4.6).
func bothMoverLocks(m *tracemodel.Model, li *analysis.LockSetIndex) []bool {
	type info struct {
		thread  int32
		threads int
		prot    []int32 // candidate protecting locks; nil before the first acquisition
		seen    bool
	}
	locks := map[int32]*info{}
	for i := range m.Events {
		m.Pace(i)
		e := &m.Events[i]
		l := e.Obj
		switch e.Kind {
		case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock, tracemodel.RdLock:
		case tracemodel.Wait:
			if e.Obj2 == 0 {
				continue
			}
			l = e.Obj2
		default:
			continue
		}
		hs := li.Before(int32(i))
		if e.Kind != tracemodel.Wait {
			if _, held := analysis.Holds(hs, l); held {
				continue // re-entrant
			}
		}
		in := locks[l]
		if in == nil {
			in = &info{}
			locks[l] = in
		}
		if in.threads == 0 || in.thread != e.Thread {
			if in.threads < 2 {
				in.threads++
			}
			in.thread = e.Thread
		}
		var excl []int32
		for _, h := range hs {
			if h.Lock != l && !h.Shared {
				excl = append(excl, h.Lock)
			}
		}
		if !in.seen {
			in.seen, in.prot = true, excl
			continue
		}
		kept := in.prot[:0]
		for _, p := range in.prot {
			for _, x := range excl {
				if x == p {
					kept = append(kept, p)
					break
				}
			}
		}
		in.prot = kept
	}
	out := make([]bool, len(m.Objects))
	for l, in := range locks {
		out[l] = in.threads == 1 || len(in.prot) > 0
	}
	return out
}

type checker struct {
	m     *tracemodel.Model
	esc   *escape.Info
	races *lockset.Result
	both  []bool
}

// quiet reports whether access event ev commutes with every access of
// other threads (the A of AcqA*Rel): unescaped, or to a variable with no
// concurrent conflicting accesses.
func (c *checker) quiet(ev int32) bool {
	v := c.m.Events[ev].Obj
	return c.m.IsSyncVar(int(v)) || !c.esc.Escaped(ev) || !c.races.Conflicting(v)
}

func (c *checker) racy(ev int32) bool {
	v := c.m.Events[ev].Obj
	return !c.m.IsSyncVar(int(v)) && c.esc.Escaped(ev) && c.races.Racy(v)
}

// skippable returns, by acquisition event, whether the critical section
// it opens in the unit is AcqA*Rel: closed in the unit, with only quiet
// accesses in it (nested critical sections included).
func (c *checker) skippable(u *units.Unit, st *Stats) map[int32]bool {
	m := c.m
	var h units.Holds
	h.Reset(u.Held)
	type open struct {
		acq   int32
		quiet bool
	}
	var stack []open
	var skip map[int32]bool
	for _, ev := range u.Events(m) {
		e := &m.Events[ev]
		if e.Kind.IsAccess() {
			if !c.quiet(ev) {
				for i := range stack {
					stack[i].quiet = false
				}
			}
			continue
		}
		ch, hold := h.Step(m, ev)
		switch ch {
		case units.Acquired:
			stack = append(stack, open{acq: ev, quiet: true})
		case units.Released:
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].acq != hold.Acq {
					continue
				}
				if stack[i].quiet {
					if skip == nil {
						skip = map[int32]bool{}
					}
					skip[hold.Acq] = true
					if !c.both[hold.Lock] {
						st.Skipped++
					}
				}
				stack = append(stack[:i], stack[i+1:]...)
				break
			}
		}
	}
	return skip
}

// unit checks one transaction unit; ok is false with the violation when
// it is not reducible.
func (c *checker) unit(u *units.Unit, st *Stats) (v Violation, ok bool) {
	m := c.m
	skip := c.skippable(u, st)
	var h units.Holds
	h.Reset(u.Held)
	var (
		movers strings.Builder
		post   bool
		sw     int32 = -1
		swAcq  int32 = -1
		failed bool
	)
	for _, ev := range u.Events(m) {
		e := &m.Events[ev]
		mv := B
		var acq int32 = -1
		ch := units.None
		switch {
		case e.Kind.IsAccess():
			if c.racy(ev) {
				mv = N
			}
		default:
			var hold units.Hold
			ch, hold = h.Step(m, ev)
			lockB := c.both[hold.Lock] || skip[hold.Acq]
			switch {
			case ch == units.Acquired && !lockB:
				mv = R
			case ch == units.Released && !lockB:
				mv = L
				if hold.Acq >= m.Threads[u.Thread-1].Events[u.First-1] {
					acq = hold.Acq
				}
			}
		}
		if mv == B && !e.Kind.IsAccess() && ch == units.None {
			continue
		}
		if movers.Len() < 64 {
			movers.WriteString(mv.String())
		}
		if failed || mv == B {
			continue
		}
		switch {
		case !post && (mv == L || mv == N):
			post, sw, swAcq = true, ev, acq
		case post && (mv == R || mv == N):
			failed = true
			v = Violation{Switch: sw, Offending: ev, Acquire: swAcq, Kind: kindOf(m.Events[sw].Kind.IsAccess(), mv == N)}
		}
	}
	if !failed {
		return Violation{}, true
	}
	v.Movers = movers.String()
	if movers.Len() >= 64 {
		v.Movers += "…"
	}
	return v, false
}

func kindOf(switchN, offendingN bool) string {
	switch {
	case switchN && offendingN:
		return RaceRace
	case !switchN && !offendingN:
		return CSCS
	}
	return RaceCS
}

// Reducible reports whether a mover string (B anywhere) matches R* N? L*.
func Reducible(seq []Mover) bool {
	post := false
	for _, mv := range seq {
		switch mv {
		case R:
			if post {
				return false
			}
		case L:
			post = true
		case N:
			if post {
				return false
			}
			post = true
		}
	}
	return true
}

func finding(m *tracemodel.Model, ts *txn.Set, us []units.Unit, v Violation) analysis.Finding {
	u := &us[v.Unit]
	what := func(ev int32) (string, string) {
		e := &m.Events[ev]
		loc := m.Locs[e.Loc].String()
		switch {
		case e.Kind.IsAccess():
			return "racy access", fmt.Sprintf("makes a racy %s of %s at %s (non-mover)", strings.ToLower(e.Kind.String()), m.Vars[e.Obj].Name, loc)
		case units.Acquires(e.Kind):
			return "acquire", fmt.Sprintf("acquires %s at %s (right-mover)", m.Objects[e.Obj], loc)
		}
		return "release", fmt.Sprintf("releases %s at %s (left-mover)", m.Objects[e.Obj], loc)
	}
	object := func(ev int32) string {
		e := &m.Events[ev]
		if e.Kind.IsAccess() {
			return m.Vars[e.Obj].Name
		}
		return m.Objects[e.Obj]
	}
	swRole, swDesc := what(v.Switch)
	offRole, offDesc := what(v.Offending)
	msg := fmt.Sprintf("%s of thread %s is not reducible to R* N? L* (movers %s): it %s, then %s",
		units.Name(m, ts, u), m.Threads[u.Thread-1].Handle, v.Movers, swDesc, offDesc)
	var sites []analysis.Site
	if v.Acquire >= 0 {
		sites = append(sites, analysis.Site{Event: v.Acquire, Role: "acquire"})
	}
	sites = append(sites,
		analysis.Site{Event: v.Switch, Role: swRole, Essential: true},
		analysis.Site{Event: v.Offending, Role: offRole, Essential: true})
	objs := []string{object(v.Switch)}
	if o := object(v.Offending); o != objs[0] {
		objs = append(objs, o)
	}
	return analysis.Finding{Kind: v.Kind, Message: msg, Objects: objs, Sites: sites}
}
