// Package stale checks stale-value errors as Pessanha, Dias and Lourenço
// define them (seeds/001 §5.2, Definitions 10-11), over the dynamic atomic
// blocks of one trace (the spec's trace mapping, B7).
//
// # What it reports
//
// A value read in one atomic block escapes it (into a local) and is used
// in a later block of the same thread, while another thread may write the
// variable in between: the later block computes from a stale value.
// `tmp = getX(); tmp = tmp + val; setX(tmp)` (the paper's Fig. 1(b), incX)
// loses the update of a thread that ran setX between getX and setX, though
// every access is locked. View consistency (package hldr) does not see
// it: each block has one variable.
//
//   - Atomic blocks are the dynamic instances of lock-protected regions,
//     Begin/End regions and invocations of --atomic functions (package
//     analysis/internal/blocks); reads outside blocks are not atomic
//     versions (Definition 10) and are not followed.
//   - An edge (B1, x, B2) of the paper's view-dependency graph is a read
//     of x in block B1 of thread t whose value reaches a write in a later
//     block B2 of t (B1 ≠ B2: the dynamic instances cover the paper's
//     m1 = m2 case, a value that left an atomic method and came back into
//     another call of it).
//   - It is an error when another thread writes x in an atomic block
//     (Definition 11; spec B4 [interp]: a writer other than the thread
//     that carries the value — the formula's "every process" would flag
//     single-threaded code) whose write is not ordered, by the
//     synchronization order (create, join, barriers, signal/wait; locks
//     are not causal), before the read or after the write (the B7
//     extension: a writer joined before the read cannot interleave).
//   - Kind `update`: the value of x is written back to x (a lost update,
//     incX). Kind `use`: it reaches a write of another variable (y is
//     computed from a stale x).
//   - Occurred (text: "occurred in the recorded run"): such a write did
//     fall between the read and the write in the recorded run (the spec's
//     optional manifested mode, SVD-like); the others are predicted.
//
// # Value flow
//
// The paper follows causal dependencies through locals, parameters and
// return values; the trace records none of them, and package
// analysis/internal/flow infers them (the summary line says how). In the
// default mode, update, a read reaches the writes of its own statement
// (`setX(getX() + 1)` on one line, through both calls) and the later
// writes of the same variable in its invocation's loop iteration or its
// callers (`tmp = getX(); ...; setX(tmp)`): every `update` and the
// one-statement `use`s. Mode invocation lets a read reach every later
// write of its invocation's iteration (more `use`s, and more false
// ones: a value read for a test and a counter incremented later are
// "dependent"); mode statement only the one-statement flows.
//
// # What it does not do
//
// It does not follow control dependences beyond a statement (the paper's
// `if (x == 0) { y = 4 }` where the branch and the write are separate
// statements), nor values that travel through memory the trace does not
// record (the thread's own stack) or through code that is not
// instrumented. It does not check whether the stale value matters: a
// statistic read in one block and written back in another by design (a
// sampled copy) is reported. Races outside atomic blocks are other
// analyses' business (the paper assumes none).
package stale

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpredict/mcpredict/analysis/internal/blocks"
	"github.com/mcpredict/mcpredict/analysis/internal/flow"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Kinds of findings.
const (
	// KindUpdate: the stale value is written back to its own variable.
	KindUpdate = "update"
	// KindUse: the stale value reaches a write of another variable.
	KindUse = "use"
)

// Options configure the check.
type Options struct {
	// Atomic names functions whose invocations are atomic blocks, besides
	// the critical sections and Begin/End regions.
	Atomic []string
	// ValueFlow is the flow mode: statement, update (default) or
	// invocation (package analysis/internal/flow).
	ValueFlow string
}

// An Access is one event of an error, by trace line.
//
// Its Role is "read", "write" (the carrying thread) or "remote".
type Access = flow.Access

// Error is one stale-value error.
type Error struct {
	Kind    string
	Var     string // the variable whose value went stale
	Written string // the variable written from it
	Message string
	// Events are the read (in B1), the write (in B2) and the other
	// thread's write of Var; Schedule has them in the order that shows
	// the error (read, remote write, write).
	Events, Schedule []Access
	// Occurred: the other thread's write fell between the read and the
	// write in the recorded run (the first instance's, or any later one's).
	Occurred bool
	Count    int // dynamic instances at the same locations
}

// Result is what Check found.
type Result struct {
	Errors []Error
	Blocks int // dynamic atomic blocks
	Flows  int // dynamic flows from a block into a later block (edges of D_V)
	Mode   flow.Mode
	Traits flow.Traits
}

// Summary is the one-line account of the work.
func (r *Result) Summary() string {
	occ := 0
	for _, e := range r.Errors {
		if e.Occurred {
			occ++
		}
	}
	return fmt.Sprintf("%d stale-value errors (%d occurred in the recorded run); %d atomic blocks, %d flows between blocks; %s",
		len(r.Errors), occ, r.Blocks, r.Flows, flow.Describe(r.Mode, r.Traits))
}

// key identifies an error by its sites' code and variables.
type key struct {
	kind             string
	read, write, rem int32 // locations
	x, y             string
}

// cand is a flow (B1, x, B2) at the same code locations as others.
type cand struct {
	kind        string
	read, write int32 // locations
	x, y        string
}

type checker struct {
	m       *tracemodel.Model
	bs      *blocks.Set
	order   *tracemodel.Order
	writes  [][]int32    // by variable: its writes inside blocks, in trace order
	writers [][]int32    // by variable: the threads that write it inside blocks
	done    map[cand]int // flows already reported: index in errs
	none    map[cand]int // flows checked without finding a writer: how often
	errs    []Error
	byKey   map[key]int
}

// Check finds the stale-value errors of m. order is the synchronization
// order (Model.SyncOrder).
func Check(ctx context.Context, m *tracemodel.Model, order *tracemodel.Order, opts Options) (*Result, error) {
	mode, err := flow.ParseMode(opts.ValueFlow)
	if err != nil {
		return nil, err
	}
	res := &Result{Mode: mode, Traits: flow.TraitsOf(m)}
	c := &checker{
		m: m, bs: blocks.Find(m, blocks.Options{Atomic: opts.Atomic}), order: order,
		done: map[cand]int{}, none: map[cand]int{}, byKey: map[key]int{},
	}
	res.Blocks = len(c.bs.Blocks)
	c.indexWrites()
	for ti := range m.Threads {
		if err := c.thread(ctx, ti+1, mode, res); err != nil {
			return nil, err
		}
	}
	sortErrors(c.errs)
	res.Errors = c.errs
	return res, nil
}

// indexWrites lists each variable's writes inside blocks and their threads.
func (c *checker) indexWrites() {
	m := c.m
	c.writes = make([][]int32, len(m.Vars))
	c.writers = make([][]int32, len(m.Vars))
	pc := m.Pacer()
	for v := 1; v < len(m.Vars); v++ {
		if m.IsSyncVar(v) {
			continue
		}
		for _, ev := range m.Vars[v].Accesses {
			pc.Step()
			e := &m.Events[ev]
			if e.Kind != tracemodel.Write || c.bs.Of(ev) < 0 {
				continue
			}
			c.writes[v] = append(c.writes[v], ev)
			if !slices.Contains(c.writers[v], e.Thread) {
				c.writers[v] = append(c.writers[v], e.Thread)
			}
		}
	}
}

// thread follows thread tid's values from its blocks' reads into later
// blocks' writes.
func (c *checker) thread(ctx context.Context, tid int, mode flow.Mode, res *Result) error {
	m := c.m
	tr := flow.Tracker{}
	type src struct {
		read   int32
		strong bool
	}
	var srcs []src
	for i, ev := range m.Threads[tid-1].Events {
		m.Pace(i)
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("stale: %w", err)
			}
		}
		e := &m.Events[ev]
		tr.Step(e)
		if !e.Kind.IsAccess() || m.IsSyncVar(int(e.Obj)) {
			continue
		}
		b := c.bs.Of(ev)
		if b < 0 {
			continue
		}
		if e.Kind == tracemodel.Read {
			tr.Read(e.Obj, ev)
			continue
		}
		srcs = srcs[:0]
		tr.Sources(e.Obj, mode, func(x flow.Entry, strong bool) bool {
			if b1 := c.bs.Of(x.Tag); b1 >= 0 && b1 != b {
				srcs = append(srcs, src{x.Tag, strong})
			}
			return true
		})
		for _, s := range srcs {
			res.Flows++
			c.flowInto(s.read, ev)
		}
	}
	return nil
}

// flowInto checks the flow of the read r into the write w of a later
// block of the same thread.
func (c *checker) flowInto(r, w int32) {
	m := c.m
	re, we := &m.Events[r], &m.Events[w]
	x := re.Obj
	k := cand{kind: KindUse, read: re.Loc, write: we.Loc, x: m.Vars[x].Name, y: m.Vars[we.Obj].Name}
	if x == we.Obj {
		k.kind = KindUpdate
	}
	if i, ok := c.done[k]; ok {
		c.errs[i].Count++
		if !c.errs[i].Occurred {
			if q, ok := c.remote(r, w, true); ok && q >= 0 {
				c.errs[i].Occurred = true
			}
		}
		return
	}
	if only := c.writers[x]; len(only) == 0 || (len(only) == 1 && only[0] == re.Thread) {
		return // no other thread writes x in a block
	}
	if c.none[k] >= 8 {
		return // checked often without a concurrent writer
	}
	q, ok := c.remote(r, w, false)
	if !ok {
		c.none[k]++
		return
	}
	c.report(k, r, w, q)
}

// remote finds a write of the read's variable by another thread inside a
// block that can fall between read r and write w: one between them in
// the trace (occurred) if any, else one not ordered before r or after w
// (only between them if window). The scans are bounded.
func (c *checker) remote(r, w int32, window bool) (int32, bool) {
	m := c.m
	re, we := &m.Events[r], &m.Events[w]
	ws := c.writes[re.Obj]
	i := sort.Search(len(ws), func(i int) bool { return ws[i] > r })
	for j := i; j < len(ws) && ws[j] < w && j < i+64; j++ {
		if m.Events[ws[j]].Thread != re.Thread {
			return ws[j], true
		}
	}
	if window || c.order == nil {
		return -1, false
	}
	// Before the read, nearest first: concurrent unless it happens before.
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		q := &m.Events[ws[j]]
		if q.Thread != re.Thread && c.order.Clock(int(re.Thread), re.Pos, int(q.Thread)) < q.Pos {
			return ws[j], true
		}
	}
	// After the write: concurrent unless the write happens before it.
	k := sort.Search(len(ws), func(i int) bool { return ws[i] > w })
	for j := k; j < len(ws) && j < k+64; j++ {
		q := &m.Events[ws[j]]
		if q.Thread != re.Thread && c.order.Clock(int(q.Thread), q.Pos, int(we.Thread)) < we.Pos {
			return ws[j], true
		}
	}
	return -1, false
}

func (c *checker) access(ev int32, role string) Access {
	m := c.m
	e := &m.Events[ev]
	return Access{
		Line: int(e.Line), Thread: m.Threads[e.Thread-1].Handle, Role: role, Var: m.Vars[e.Obj].Name,
		Kind: e.Kind.String(), Where: m.Locs[e.Loc].String(),
	}
}

// report records the error of flow k: read r, write w, the other
// thread's write q.
func (c *checker) report(k cand, r, w, q int32) {
	m := c.m
	kk := key{kind: k.kind, read: k.read, write: k.write, rem: m.Events[q].Loc, x: k.x, y: k.y}
	occurred := q > r && q < w
	if i, ok := c.byKey[kk]; ok {
		c.errs[i].Count++
		c.errs[i].Occurred = c.errs[i].Occurred || occurred
		c.done[k] = i
		return
	}
	ra, wa, qa := c.access(r, "read"), c.access(w, "write"), c.access(q, "remote")
	e := Error{
		Kind: k.kind, Var: k.x, Written: k.y, Occurred: occurred, Count: 1,
		Events: []Access{ra, wa, qa}, Schedule: []Access{ra, qa, wa},
	}
	if k.kind == KindUpdate {
		e.Message = fmt.Sprintf("thread %s reads %s in one atomic block (%s) and writes a value computed from it back in a later block (%s); thread %s writes %s in a block (%s) that can run in between: its update is lost (stale value)",
			ra.Thread, k.x, ra.Where, wa.Where, qa.Thread, k.x, qa.Where)
	} else {
		e.Message = fmt.Sprintf("thread %s reads %s in one atomic block (%s) and writes %s from it in a later block (%s); thread %s writes %s in a block (%s) that can run in between: %s is computed from a stale %s",
			ra.Thread, k.x, ra.Where, k.y, wa.Where, qa.Thread, k.x, qa.Where, k.y, k.x)
	}
	i := len(c.errs)
	c.byKey[kk] = i
	c.done[k] = i
	c.errs = append(c.errs, e)
}

// sortErrors orders errors by their first event (tests and reports do not
// depend on the order threads were visited in).
func sortErrors(es []Error) {
	slices.SortStableFunc(es, func(a, b Error) int { return cmp.Compare(a.Events[0].Line, b.Events[0].Line) })
}
