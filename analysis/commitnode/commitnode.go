// Package commitnode is the commit-node atomicity checker of Wang's
// dissertation (seeds/004, ch. 6, Figure 6.8; implementation notes
// ../shared/specs/wang-dissertation.md S3), in both its variants: the
// view-forest checks view-atomicity, the conflict-forest
// conflict-atomicity.
//
// # What it checks
//
// Every unit of the trace (package analysis/internal/units: the
// transactions of package txn split at thread-period boundaries and
// blocking waits, the outermost critical sections outside them, and the
// non-transactional code) gets an access tree (§6.1.1): the root, a
// synchronization node per hold of a lock (re-entrant acquisitions fold;
// a lock held when the unit starts is a node too), and a leaf per escaped
// access (package escape, §3.1), trimmed to the first two reads and the
// first two writes of each variable under each parent (§6.5.1). At most
// two identical trees starting in one period are kept (§6.5).
//
// Inter-edges join the trees of concurrent units (different threads,
// concurrent thread periods: the fact thread-periods of package analysis,
// split further at condition variables and semaphores, see package
// analysis/internal/units; a unit is split by blocking waits, not by
// signals, so concurrency is that of the accesses' periods), for accesses
// of one variable, by Figure 6.2's procedure: between the two
// leaves when no lock held at both excludes them, else between the nodes
// of the outermost such lock in both trees — except for a read that a
// write of its own unit inside that node precedes, which cannot observe the
// other access.
//
//   - Conflict-forest (§6.1.3): every read with every write, every two
//     writes.
//   - View-forest (§6.1.4, Figure 6.4): every read with every write it can
//     observe; every two potential write-predecessors of one read (its own
//     unit's earlier write among them; pairs of one unit or of ordered
//     units are skipped); every two unit-final writes.
//
// A node with an inter-edge is a communication node; a commit node is one
// with no communication node below it (S8.1: the innermost reading, as the
// dissertation's examples and proofs have it). A transaction with at most
// one commit node is atomic (Theorems 6.3.1, 6.3.4); otherwise it is
// reported when two of its communication nodes, neither containing the
// other, lie on a cycle of the forest (Theorems 6.3.3, 6.3.6): the second
// is reachable from the first through inter-edges and the trees of other
// units, without the transaction's own tree edges. The test is sufficient
// for any number of transactions, and exact for two (Theorems 6.3.2,
// 6.3.5). The view-forest's edges are a subset of the conflict-forest's,
// so a transaction reported for view-atomicity is reported for
// conflict-atomicity too: each is reported once, of kind "view" when the
// view-forest reports it, else of kind "conflict" (conflict-unserializable
// interleavings that are view-serializable, such as a blind write between
// two writes). Options.Mode builds one forest only.
//
// A report lists the transaction's commit nodes and the cycle: the events
// of the inter-edges from its first communication node through the other
// units to its second (for a cycle through one other unit, the
// interleaving: the transaction's first event, the other unit's events,
// its second event).
//
// # What it does not check
//
//   - No deadlock check: the dissertation returns "cannot decide" when the
//     deadlock check fires (Figure 6.8); here the forest is checked anyway,
//     and the deadlock analysis (on by default) reports the deadlock. With
//     a potential deadlock, "the outermost common lock" of two accesses is
//     taken in the first access's tree.
//   - The units of one thread are joined by their program order (a
//     departure: the dissertation's forest and serialization graph have no
//     edge between two units of one thread, so its cycle test misses a
//     cycle that closes through it — a transaction reads z before another
//     thread's unit writes z, and a later unit of that thread reads y
//     before the transaction writes y — which the random cross-check
//     against a brute-force oracle found). The edge is undirected, as tree
//     edges are: this can report a transaction whose two partners in one
//     thread run in the order that closes no cycle.
//   - Reachability is not restricted to simple cycles: a path may cross a
//     unit's tree more than once, which can only add reports (the test
//     stays sufficient).
//   - Bounded work: the pairs of accesses examined per forest
//     (Options.MaxPairs) and the cycle checks (Options.MaxWork); the
//     summary says when a bound was reached, and the inter-edges or
//     transactions beyond it are not checked.
//   - Like the other atomicity analyses of the dissertation it ignores data
//     and control dependences (every feasible schedule executes the same
//     events), and orders units by create, join, barriers, condition
//     variables and semaphores only: a hand-off through a lock orders
//     nothing.
package commitnode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/escape"
	"github.com/mcpredict/mcpredict/analysis/internal/units"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Name is the analysis name (--analysis commitnode).
const Name = "commitnode"

// Kinds of findings.
const (
	KindView     = "view"
	KindConflict = "conflict"
)

// Mode selects the forests.
type Mode uint8

// Modes.
const (
	Both         Mode = iota // view-forest, and conflict-forest for what it does not report
	ViewOnly                 // view-atomicity only
	ConflictOnly             // conflict-atomicity only
)

// Options of the commit-node checker.
type Options struct {
	Mode Mode
	// MaxPairs bounds the pairs of accesses examined per forest (0:
	// DefaultMaxPairs).
	MaxPairs int
	// MaxWork bounds the cycle checks, in graph vertices and edges visited
	// (0: DefaultMaxWork).
	MaxWork int
}

// Defaults of Options.
const (
	DefaultMaxPairs = 50_000_000
	DefaultMaxWork  = 200_000_000
)

var errBudget = errors.New("pair budget spent")

// New returns the commit-node checker as an analysis. It requires the
// transactions tx (txn.New) and the escape information esc (escape.New).
func New(opts Options, tx, esc *analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "atomicity of transactions by commit nodes: access trees of all units joined by inter-edges of conflicting accesses (at the outermost common lock); a transaction with two communication nodes on a cycle (view- and conflict-forest)",
		Paper:    "L. Wang, Analysis of Synchronization Errors for Multithreaded Programs (dissertation, Stony Brook, 2006): ch. 6, commit-node algorithm, Figures 6.2, 6.4, 6.8, Theorems 6.3.3 and 6.3.6, trimming §6.5.1",
		Requires: []analysis.Requirement{analysis.ThreadPeriods, tx, esc},
		Kinds: []bugs.FindingKind{
			{ID: KindView, Name: "not view-atomic: two commit nodes on a cycle", Help: "The transaction has two commit nodes (innermost code regions that interact with other threads) that lie on a cycle of the view-forest: other units can observe or overwrite its intermediate state between them, in some feasible schedule no serial execution gives the same reads and final values."},
			{ID: KindConflict, Name: "not conflict-atomic: two commit nodes on a cycle", Help: "The transaction has two commit nodes on a cycle of the conflict-forest (and not of the view-forest): in some feasible schedule its conflicting accesses are ordered against another unit both ways, as with a blind write between two of its writes; the result may still equal a serial one."},
		},
		IDPrefix: "CN",
		Run: func(ctx context.Context, pass *analysis.Pass) (any, error) {
			m := pass.Model
			ts := txn.Of(pass, tx)
			us, err := units.Split(ctx, m, ts, pass.Periods())
			if err != nil {
				return nil, fmt.Errorf("commitnode: %w", err)
			}
			res, err := Check(ctx, m, us, escape.Of(pass, esc), units.NewConc(m, pass.Periods()), opts)
			if err != nil {
				return nil, err
			}
			for _, v := range res.Violations {
				pass.Report(finding(m, ts, us, v))
			}
			pass.Summarize("%s", res.Summary())
			return nil, nil
		},
	}
}

// Violation is a transaction reported by a forest.
type Violation struct {
	Unit int    // index of its unit
	Kind string // KindView or KindConflict
	// Commits are the representative events of its commit nodes (the
	// acquisition of a synchronization node, the access of a leaf).
	Commits []int32
	// First and Second are the representative events of the two
	// communication nodes on a cycle, in program order.
	First, Second int32
	// Path are the events of the cycle outside the transaction: per
	// inter-edge, the event on the side it is entered from and the event
	// on the other side, from First's node to Second's.
	Path []int32
	// Others are the units the path goes through.
	Others []int
}

// Result is the outcome of Check.
type Result struct {
	Violations []Violation // in unit order
	// View and Conflict are, by unit index, whether the forest reports the
	// unit (a copy of a kept identical tree takes its verdict); nil when
	// the forest was not built.
	View, Conflict []bool
	Units          int // transactions
	Flagged        int // transactions reported, twins of kept trees included
	Trees          int // trees kept
	Nodes          int
	Edges          [2]int // inter-edges of the view- and conflict-forest
	Truncated      []string
}

// Summary is the one-line account of the check.
func (r *Result) Summary() string {
	s := fmt.Sprintf("%d transactions not atomic of %d; %d trees, %d nodes, %d view and %d conflict inter-edges",
		r.Flagged, r.Units, r.Trees, r.Nodes, r.Edges[0], r.Edges[1])
	if len(r.Truncated) > 0 {
		s += "; incomplete: " + strings.Join(r.Truncated, ", ")
	}
	return s
}

// Check builds the forests of the units us of m and checks every
// transaction. It fails only when ctx is done.
func Check(ctx context.Context, m *tracemodel.Model, us []units.Unit, esc *escape.Info, conc *units.Conc, opts Options) (*Result, error) {
	if esc == nil || conc == nil {
		return nil, errors.New("commitnode: missing escape information or periods")
	}
	if opts.MaxPairs <= 0 {
		opts.MaxPairs = DefaultMaxPairs
	}
	if opts.MaxWork <= 0 {
		opts.MaxWork = DefaultMaxWork
	}
	f, err := build(ctx, m, us, esc, conc)
	if err != nil {
		return nil, fmt.Errorf("commitnode: %w", err)
	}
	res := &Result{Trees: len(f.trees), Nodes: len(f.nodes)}
	for i := range us {
		if us[i].Kind.Transaction() {
			res.Units++
		}
	}
	reported := map[int32]bool{}
	run := func(view bool) ([]bool, error) {
		k := &linker{f: f, es: newEdges(len(f.nodes)), maxPairs: opts.MaxPairs}
		name := "conflict"
		build := k.conflictForest
		if view {
			name, build = "view", k.viewForest
		}
		switch err := build(ctx); {
		case errors.Is(err, errBudget):
			res.Truncated = append(res.Truncated, fmt.Sprintf("%s-forest pair bound (%d) reached", name, opts.MaxPairs))
		case err != nil:
			return nil, fmt.Errorf("commitnode: %w", err)
		}
		if view {
			res.Edges[0] = len(k.es.list)
		} else {
			res.Edges[1] = len(k.es.list)
		}
		c := newChecker(f, k.es, opts.MaxWork)
		flagged := make([]bool, len(f.trees))
		for t := range f.trees {
			if t&0xff == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("commitnode: %w", err)
				}
			}
			if !f.trees[t].txn {
				continue
			}
			vd, ok, inBudget := c.check(int32(t))
			if !inBudget {
				res.Truncated = append(res.Truncated, fmt.Sprintf("%s-forest cycle checks bound (%d) reached", name, opts.MaxWork))
				break
			}
			if ok {
				continue
			}
			flagged[t] = true
			if reported[int32(t)] {
				continue
			}
			reported[int32(t)] = true
			kind := KindConflict
			if view {
				kind = KindView
			}
			res.Violations = append(res.Violations, violation(f, c, vd, kind))
		}
		bySrc := make([]bool, len(us))
		for i, t := range f.rep {
			bySrc[i] = t >= 0 && flagged[t]
		}
		return bySrc, nil
	}
	if opts.Mode != ConflictOnly {
		if res.View, err = run(true); err != nil {
			return nil, err
		}
	}
	if opts.Mode != ViewOnly {
		if res.Conflict, err = run(false); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(res.Violations, func(a, b Violation) int { return a.Unit - b.Unit })
	for i := range us {
		if (res.View != nil && res.View[i]) || (res.Conflict != nil && res.Conflict[i]) {
			res.Flagged++
		}
	}
	return res, nil
}

// violation describes the verdict of a reported transaction.
func violation(f *forest, c *checker, vd verdict, kind string) Violation {
	t := &f.trees[vd.tree]
	v := Violation{Unit: t.src, Kind: kind}
	rep := func(n int32) int32 {
		// A communication node stands for the access that gave it its
		// first inter-edge; a commit node for its own event.
		if len(c.adj[n]) > 0 {
			e := &c.es.list[c.adj[n][0]]
			if e.x == n {
				return e.ex
			}
			return e.ey
		}
		return f.nodes[n].ev
	}
	for _, n := range vd.commits {
		v.Commits = append(v.Commits, f.nodes[n].ev)
	}
	if len(vd.path) > 0 {
		v.First, v.Second = vd.path[0].from, vd.path[len(vd.path)-1].to
	} else {
		v.First, v.Second = rep(vd.n1), rep(vd.n2)
	}
	seen := map[int]bool{}
	for i, s := range vd.path {
		if i > 0 && s.from != v.Path[len(v.Path)-1] {
			// The event the path leaves a unit from (one event when it
			// enters and leaves through the same access).
			v.Path = append(v.Path, s.from)
		}
		if i < len(vd.path)-1 {
			v.Path = append(v.Path, s.to)
			u := f.trees[f.nodes[s.node].unit].src
			if !seen[u] {
				seen[u] = true
				v.Others = append(v.Others, u)
			}
		}
	}
	if v.Second < v.First {
		v.First, v.Second = v.Second, v.First
		slices.Reverse(v.Path)
	}
	return v
}

func finding(m *tracemodel.Model, ts *txn.Set, us []units.Unit, v Violation) analysis.Finding {
	u := &us[v.Unit]
	name := func(u *units.Unit) string {
		return fmt.Sprintf("%s of thread %s", units.Name(m, ts, u), m.Threads[u.Thread-1].Handle)
	}
	where := func(ev int32) string {
		e := &m.Events[ev]
		return fmt.Sprintf("%s (%s %s)", m.Locs[e.Loc], e.Kind, objectName(m, e))
	}
	var commits []string
	for i, ev := range v.Commits {
		if i == 4 {
			commits = append(commits, fmt.Sprintf("… %d more", len(v.Commits)-4))
			break
		}
		commits = append(commits, where(ev))
	}
	var others []string
	for _, o := range v.Others {
		others = append(others, name(&us[o]))
	}
	forest, theorem := "view", "6.3.6"
	if v.Kind == KindConflict {
		forest, theorem = "conflict", "6.3.3"
	}
	msg := fmt.Sprintf("%s has %d commit nodes in the %s-forest (%s); %s and %s lie on a cycle through %s: not %s-atomic (Theorem %s)",
		name(u), len(v.Commits), forest, strings.Join(commits, ", "), where(v.First), where(v.Second), strings.Join(others, ", "), forest, theorem)
	sites := []analysis.Site{{Event: v.First, Role: "local", Essential: true}}
	for _, ev := range v.Path {
		sites = append(sites, analysis.Site{Event: ev, Role: "remote", Essential: true})
	}
	sites = append(sites, analysis.Site{Event: v.Second, Role: "local", Essential: true})
	var objs []string
	for _, s := range sites {
		if o := objectName(m, &m.Events[s.Event]); !slices.Contains(objs, o) {
			objs = append(objs, o)
		}
	}
	f := analysis.Finding{Kind: v.Kind, Message: msg, Objects: objs, Sites: sites}
	if len(v.Others) == 1 {
		// The interleaving: the other unit between the two.
		rem := slices.Clone(sites[1 : len(sites)-1])
		slices.SortStableFunc(rem, func(a, b analysis.Site) int { return int(m.Events[a.Event].Pos - m.Events[b.Event].Pos) })
		f.Schedule = append(append([]analysis.Site{sites[0]}, rem...), sites[len(sites)-1])
	}
	return f
}

func objectName(m *tracemodel.Model, e *tracemodel.Event) string {
	if e.Kind.IsAccess() {
		return m.Vars[e.Obj].Name
	}
	return m.Objects[e.Obj]
}
