// Package svd is the Serializability Violation Detector of Xu, Bodík and
// Hill (PLDI 2005, seeds/003) on a recorded trace: it infers the atomic
// regions of each thread — computational units (CUs) — from dependences,
// without annotations and ignoring locks, and reports the CUs
// that did not run serializably in the recorded execution.
//
// # The algorithm
//
// It is the paper's online one-pass algorithm (§4.2, Fig. 7; spec A4),
// driven by the trace's events in their total order, not the offline
// three-pass reference (§4.1, spec A3): the offline one needs, per
// statement, its true and control dependence predecessors and a global
// "shared" flag per location, which no trace carries; the online one
// infers both as it goes, which is what a trace allows, and is the
// version the paper evaluated. Per thread (real threads, not CPUs) it
// keeps, for each variable it touched (the memory block; the trace's
// variables are already split at Free), a CU reference, the six-state
// block FSM (Idle, Loaded, Loaded_Shared, Stored, Stored_Shared,
// True_Dep; the transition table of the spec's [interp], A4) and a
// conflict flag:
//
//   - a read (LOAD) of a block in Stored_Shared ends its CU (a shared
//     dependence: the CU reads back a shared value it wrote, region
//     hypothesis H1); the block joins its CU's read set, a fresh CU if it
//     has none, and the read's value carries that CU;
//   - a write (STORE) checks the CUs its value depends on, then merges
//     them (union-find) into the CU of the block, which joins its write
//     set (a write that depends on nothing starts a CU);
//   - another thread's access (REMOTE_ACCESS) of a block in True_Dep ends
//     its CU; otherwise it moves the block to a _Shared state and sets its
//     conflict flag on a remote write to a block the CU read, or any
//     remote access to a block the CU wrote;
//   - the check (check_violations) reports each *input* block of the CUs
//     that the write depends on — read by the CU before it wrote it —
//     whose conflict flag is set: strict two-phase locking was violated on
//     an input of a computation whose result is being stored (the paper's
//     relaxation of the offline check, "check only input blocks", §4.3);
//   - ending a CU resets its blocks to Idle and clears their flags.
//
// A violation happened in the recorded run (it is never a prediction):
// its sites are the CU's read of the input, the other thread's access,
// and the dependent write. Kinds: `remote-write` (the input was
// overwritten: the Apache log bug of Fig. 2) and `remote-read` (the CU
// read and wrote the input, and another thread read it before the CU
// ended: it saw an intermediate value).
//
// The a-posteriori log (§2.3) is kept as well: a read that sees a value
// another thread wrote over this thread's own earlier write (s, rw, lw).
// It finds bugs SVD misses online when a region breaks hypothesis H1
// (Fig. 3, MySQL); it is counted in the summary and returned by Check,
// not reported as bugs.
//
// # Dependences: what the trace carries
//
// The paper propagates CU references through registers (data), branch
// predicates (control, Skipper's reconvergence) and addresses. A trace
// has none of these (spec A9; package analysis/internal/flow explains why
// the recorder cannot record them), so the value a write depends on is
// inferred by package analysis/internal/flow, and the summary line says
// which fallback was used: by default (update), the reads of the write's
// statement and of the calls on it, and the thread's latest read of the
// same variable in the invocation's loop iteration (`b = balance;
// balance = b + n`); statement: only the former; invocation: every read of the
// iteration (the spec's coarsest fallback: bigger CUs, more reports).
// Data, address and control dependences are not told apart: every
// inferred source is both merged and checked (the paper merges data only
// and checks all three).
//
// # Departures
//
//   - A CU also ends when no live value carries it any more (its reads'
//     values all ended: a new loop iteration, a return past them): the
//     trace-based counterpart of its registers being overwritten. The
//     paper's CU lives until a shared dependence; with block-set CUs
//     (§4.3), a later read of the same block would join the old CU, and
//     a polled flag or a counter read in every iteration of a loop would
//     be one CU spanning the whole loop, conflicting with every other
//     thread's update between two iterations.
//   - Blocks are the trace's variables, not fixed-size memory blocks.
//   - A thread's blocking synchronization (a cond wait, a barrier, a
//     join, a semaphore wait) and its hand-offs (create, signal,
//     broadcast, semaphore post; on `atomic:` objects too) end its CUs:
//     the region boundaries of the precise semantics (README, "What is
//     predicted"). The program hands its data over there, and a CU that
//     spans a barrier conflicts with every neighbour's write of the next
//     phase. Options.IgnoreSync ignores synchronization altogether, as the
//     paper. Locks still play no part: a missing or misplaced lock hides
//     nothing.
//
// # What it does not do
//
// It does not predict: an unserializable interleaving that the recorded
// run did not take is not reported (mcpatom and the other analyses
// predict). Regions that read back a shared value they wrote (H1 broken)
// are cut into smaller CUs and their violations missed online (the log
// keeps their traces). Strict 2PL is sufficient, not necessary, for
// serializability: an interleaving that is serializable but overlaps is
// reported.
package svd

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/mcpredict/mcpredict/analysis/internal/flow"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Kinds of findings.
const (
	// KindRemoteWrite: another thread wrote an input of the CU before the
	// CU's dependent write.
	KindRemoteWrite = "remote-write"
	// KindRemoteRead: another thread read an input the CU had written,
	// before the CU's dependent write.
	KindRemoteRead = "remote-read"
)

// Options configure the detector.
type Options struct {
	// ValueFlow is the dependence mode: statement, update (default) or
	// invocation (package analysis/internal/flow).
	ValueFlow string
	// IgnoreSync ignores synchronization altogether, as the paper; by
	// default a thread's blocking synchronization and hand-offs end its
	// CUs (see the package doc).
	IgnoreSync bool
}

// An Access is one event of a violation or log entry, by trace line.
//
// Its Role is "read" (the CU's read of the input), "remote", "write" (the
// dependent write); in the log "read", "remote", "local".
type Access = flow.Access

// Violation is one serializability violation (a strict 2PL violation on
// an input of a CU).
type Violation struct {
	Kind    string
	Var     string // the input
	Written string // the variable of the dependent write
	Message string
	// Events: the CU's read of the input, the other thread's access and
	// the dependent write, in trace order.
	Events []Access
	Count  int // dynamic instances at the same locations
}

// LogEntry is one a-posteriori log entry (§2.3): the read s saw the
// remote write rw, which overwrote the thread's own earlier write lw.
type LogEntry struct {
	Events []Access // s, rw, lw
	Count  int
}

// Result is what Check found.
type Result struct {
	Violations []Violation
	Log        []LogEntry
	CUs        int // computational units formed (after merges)
	Cut        int // CUs ended by a shared dependence
	Synced     int // CUs ended by their thread's synchronization
	Mode       flow.Mode
	Traits     flow.Traits
}

// Summary is the one-line account of the work.
func (r *Result) Summary() string {
	dyn := 0
	for _, v := range r.Violations {
		dyn += v.Count
	}
	return fmt.Sprintf("%d serializability violations (%d dynamic) of %d computational units (%d ended by shared dependences, %d by synchronization); %d a-posteriori log entries; %s",
		len(r.Violations), dyn, r.CUs, r.Cut, r.Synced, len(r.Log), flow.Describe(r.Mode, r.Traits))
}

// state is the block FSM of Fig. 8 (the spec's transition table, A4).
type state uint8

const (
	idle state = iota
	loaded
	loadedShared
	stored
	storedShared
	trueDep
)

// block is one thread's view of one variable.
type block struct {
	thread    int32
	v         int32
	cu        int32 // -1: none
	st        state
	inRS      bool  // in its CU's read set
	inWS      bool  // in its CU's write set
	input     bool  // read by its CU before the CU wrote it
	conflict  bool  // a conflicting remote access since it joined its CU
	watched   bool  // in the variable's watcher list
	inputRead int32 // the CU's read that made it an input
	lastWrite int32 // the thread's latest write of v, -1 (kept across CUs)
}

type pending struct{ blk, remote int32 }

// unit is a computational unit; merged units point to their root. Its
// blocks are a list of members (nodes), in the order they joined; a block
// that left for another unit stays listed and is skipped.
type unit struct {
	parent     int32
	refs       int32 // live values carrying it (on the root)
	head, tail int32 // its members in nodes, -1 if none
	size       int32 // members
	open       bool
	loaded     bool // some live value carried it
}

// node is one membership of a block in a unit.
type node struct{ blk, next int32 }

type detector struct {
	m        *tracemodel.Model
	mode     flow.Mode
	sync     bool      // blocking synchronization and hand-offs end CUs
	open     [][]int32 // by thread: units it opened (some merged or ended since)
	units    []unit
	nodes    []node
	pending  map[int32][]pending // by root unit: conflicted inputs not yet reported
	blocks   []block
	byKey    map[uint64]int32 // thread<<32 | variable → block
	watchers [][]int32        // by variable: blocks not Idle
	last     []int32          // by variable: latest write, -1
	stamp    []int32          // by unit: the store that last collected it
	res      *Result
	viol     map[string]int // violation key → index
	logKey   map[[3]int32]int
}

// Check runs the detector over m.
func Check(ctx context.Context, m *tracemodel.Model, opts Options) (*Result, error) {
	mode, err := flow.ParseMode(opts.ValueFlow)
	if err != nil {
		return nil, err
	}
	d := &detector{
		m: m, mode: mode, sync: !opts.IgnoreSync, open: make([][]int32, len(m.Threads)), byKey: map[uint64]int32{},
		watchers: make([][]int32, len(m.Vars)), last: make([]int32, len(m.Vars)),
		res:  &Result{Mode: mode, Traits: flow.TraitsOf(m)},
		viol: map[string]int{}, logKey: map[[3]int32]int{}, pending: map[int32][]pending{},
	}
	for i := range d.last {
		d.last[i] = -1
	}
	trackers := make([]*flow.Tracker, len(m.Threads))
	var srcs []int32
	for i := range m.Events {
		m.Pace(i)
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("svd: %w", err)
			}
		}
		e := &m.Events[i]
		tr := trackers[e.Thread-1]
		if tr == nil {
			tr = &flow.Tracker{Drop: func(x flow.Entry) { d.unref(x.Tag) }}
			trackers[e.Thread-1] = tr
		}
		tr.Step(e)
		if d.sync && boundary(e.Kind) {
			d.endThread(e.Thread)
			continue
		}
		if !e.Kind.IsAccess() || m.IsSyncVar(int(e.Obj)) {
			continue
		}
		ev := int32(i)
		d.remote(e, ev)
		if e.Kind == tracemodel.Read {
			u := d.load(e, ev)
			d.units[u].refs++ // before Read, which may drop an older value of u
			d.units[u].loaded = true
			tr.Read(e.Obj, u)
			continue
		}
		srcs = srcs[:0]
		tr.Sources(e.Obj, mode, func(x flow.Entry, _ bool) bool {
			if u := d.find(x.Tag); d.units[u].open && d.stamp[u] != ev {
				d.stamp[u] = ev
				srcs = append(srcs, u)
			}
			return true
		})
		d.check(srcs, e, ev)
		d.store(e, ev, srcs)
	}
	for i := range d.units {
		if d.units[i].parent == int32(i) {
			d.res.CUs++
		}
	}
	slices.SortStableFunc(d.res.Violations, func(a, b Violation) int { return cmp.Compare(a.Events[2].Line, b.Events[2].Line) })
	return d.res, nil
}

// boundary reports whether a thread's event of kind k ends its CUs: a
// blocking synchronization (it waits for other threads to change shared
// state) or a hand-off (it lets them), the region boundaries of the
// precise semantics.
func boundary(k tracemodel.Kind) bool {
	switch k {
	case tracemodel.Create, tracemodel.Signal, tracemodel.Broadcast, tracemodel.SemPost:
		return true
	}
	return k.Blocking()
}

// endThread ends the open CUs of thread t.
func (d *detector) endThread(t int32) {
	for _, u := range d.open[t-1] {
		if d.units[u].parent == u && d.units[u].open {
			d.end(u, false)
			d.res.Synced++
		}
	}
	d.open[t-1] = d.open[t-1][:0]
}

func (d *detector) newUnit(t int32) int32 {
	id := int32(len(d.units))
	if d.sync {
		d.open[t-1] = append(d.open[t-1], id)
	}
	d.units = append(d.units, unit{parent: id, head: -1, tail: -1, open: true})
	d.stamp = append(d.stamp, -1)
	return id
}

func (d *detector) find(u int32) int32 {
	for d.units[u].parent != u {
		p := d.units[u].parent
		d.units[u].parent = d.units[p].parent
		u = p
	}
	return u
}

// blockOf returns thread t's block of variable v, made Idle if new.
func (d *detector) blockOf(t, v int32) int32 {
	k := uint64(t)<<32 | uint64(uint32(v))
	if b, ok := d.byKey[k]; ok {
		return b
	}
	b := int32(len(d.blocks))
	d.blocks = append(d.blocks, block{thread: t, v: v, cu: -1, inputRead: -1, lastWrite: -1})
	d.byKey[k] = b
	return b
}

// join makes block b a member of unit u (a fresh membership: flags clear).
func (d *detector) join(b, u int32) {
	blk := &d.blocks[b]
	blk.cu = u
	blk.inRS, blk.inWS, blk.input, blk.conflict = false, false, false, false
	n := int32(len(d.nodes))
	d.nodes = append(d.nodes, node{blk: b, next: -1})
	un := &d.units[u]
	if un.tail < 0 {
		un.head = n
	} else {
		d.nodes[un.tail].next = n
	}
	un.tail = n
	un.size++
	if !blk.watched {
		blk.watched = true
		d.watchers[blk.v] = append(d.watchers[blk.v], b)
	}
}

// load is a read of e.Obj by e.Thread (LOAD); it returns the unit the
// value carries.
func (d *detector) load(e *tracemodel.Event, ev int32) int32 {
	b := d.blockOf(e.Thread, e.Obj)
	if d.blocks[b].st == storedShared {
		d.end(d.find(d.blocks[b].cu), true) // shared dependence (H1)
	}
	blk := &d.blocks[b]
	if blk.cu < 0 {
		d.join(b, d.newUnit(e.Thread))
	}
	blk = &d.blocks[b]
	if !blk.inWS && !blk.input {
		blk.input, blk.inputRead = true, ev
	}
	blk.inRS = true
	switch blk.st {
	case idle:
		blk.st = loaded
	case stored:
		blk.st = trueDep
	}
	if w := d.last[e.Obj]; w >= 0 && d.m.Events[w].Thread != e.Thread && blk.lastWrite >= 0 && blk.lastWrite < w {
		d.logEntry(ev, w, blk.lastWrite)
	}
	return d.find(blk.cu)
}

// store is a write of e.Obj by e.Thread (STORE) whose value depends on
// the open units srcs.
func (d *detector) store(e *tracemodel.Event, ev int32, srcs []int32) {
	u := d.merge(e.Thread, srcs)
	b := d.blockOf(e.Thread, e.Obj)
	if blk := &d.blocks[b]; blk.cu < 0 || d.find(blk.cu) != u {
		d.join(b, u)
	}
	blk := &d.blocks[b]
	blk.inWS = true
	switch blk.st {
	case idle, loaded:
		blk.st = stored
	case loadedShared:
		blk.st = storedShared
	}
	blk.lastWrite = ev
	d.last[e.Obj] = ev
}

// merge merges the units into one (a new unit if none) and returns it.
func (d *detector) merge(t int32, us []int32) int32 {
	if len(us) == 0 {
		return d.newUnit(t)
	}
	root := us[0]
	for _, u := range us[1:] {
		if d.units[u].size > d.units[root].size {
			root = u
		}
	}
	r := &d.units[root]
	for _, u := range us {
		if u == root {
			continue
		}
		o := &d.units[u]
		o.parent = root
		r.refs += o.refs
		r.loaded = r.loaded || o.loaded
		if o.head >= 0 {
			if r.tail < 0 {
				r.head = o.head
			} else {
				d.nodes[r.tail].next = o.head
			}
			r.tail = o.tail
			r.size += o.size
		}
		if p, ok := d.pending[u]; ok {
			d.pending[root] = append(d.pending[root], p...)
			delete(d.pending, u)
		}
		o.head, o.tail, o.size, o.refs = -1, -1, 0, 0
	}
	return root
}

// remote is e's access as seen by every other thread with a non-Idle
// block of its variable (REMOTE_ACCESS).
func (d *detector) remote(e *tracemodel.Event, ev int32) {
	ws := d.watchers[e.Obj]
	write := e.Kind == tracemodel.Write
	keep := ws[:0]
	for _, b := range ws {
		blk := &d.blocks[b]
		if blk.cu < 0 && blk.st == idle {
			blk.watched = false
			continue
		}
		keep = append(keep, b)
		if blk.thread == e.Thread {
			continue
		}
		if blk.st == trueDep {
			d.end(d.find(blk.cu), true)
			continue
		}
		switch blk.st {
		case loaded:
			blk.st = loadedShared
		case stored:
			blk.st = storedShared
		}
		if blk.cu >= 0 && !blk.conflict && ((write && blk.inRS) || blk.inWS) {
			blk.conflict = true
			if blk.input {
				u := d.find(blk.cu)
				d.pending[u] = append(d.pending[u], pending{blk: b, remote: ev})
			}
		}
	}
	// Blocks ended above are dropped at the next access.
	d.watchers[e.Obj] = keep
}

// check reports the conflicted inputs of the units srcs that write ev
// depends on (check_violations), each once per unit.
func (d *detector) check(srcs []int32, e *tracemodel.Event, ev int32) {
	for _, u := range srcs {
		ps, ok := d.pending[u]
		if !ok {
			continue
		}
		for _, p := range ps {
			blk := &d.blocks[p.blk]
			if blk.cu < 0 || d.find(blk.cu) != u || !blk.conflict {
				continue
			}
			d.report(blk, p.remote, ev)
		}
		delete(d.pending, u)
	}
}

// end ends unit u (deactivate_log_CU): its blocks become Idle.
func (d *detector) end(u int32, cut bool) {
	un := &d.units[u]
	if !un.open {
		return
	}
	un.open = false
	if cut {
		d.res.Cut++
	}
	for n := un.head; n >= 0; n = d.nodes[n].next {
		blk := &d.blocks[d.nodes[n].blk]
		if blk.cu >= 0 && d.find(blk.cu) == u {
			blk.cu, blk.st = -1, idle
			blk.inRS, blk.inWS, blk.input, blk.conflict = false, false, false, false
		}
	}
	un.head, un.tail, un.size = -1, -1, 0
	delete(d.pending, u)
}

// unref is the end of a live value carrying unit tag: a unit that values
// carried and that none carries any more ends.
func (d *detector) unref(tag int32) {
	u := d.find(tag)
	un := &d.units[u]
	un.refs--
	if un.refs <= 0 && un.open && un.loaded {
		d.end(u, false)
	}
}

func (d *detector) access(ev int32, role string) Access {
	m := d.m
	e := &m.Events[ev]
	return Access{
		Line: int(e.Line), Thread: m.Threads[e.Thread-1].Handle, Role: role, Var: m.Vars[e.Obj].Name,
		Kind: e.Kind.String(), Where: m.Locs[e.Loc].String(),
	}
}

// report records a violation: the input blk (read at blk.inputRead), the
// remote access q, the dependent write s.
func (d *detector) report(blk *block, q, s int32) {
	m := d.m
	kind := KindRemoteWrite
	if m.Events[q].Kind == tracemodel.Read {
		kind = KindRemoteRead
	}
	r := blk.inputRead
	k := fmt.Sprintf("%s|%d|%d|%d|%s|%s", kind, m.Events[r].Loc, m.Events[q].Loc, m.Events[s].Loc, m.Vars[blk.v].Name, m.Vars[m.Events[s].Obj].Name)
	if i, ok := d.viol[k]; ok {
		d.res.Violations[i].Count++
		return
	}
	ra, qa, sa := d.access(r, "read"), d.access(q, "remote"), d.access(s, "write")
	v := Violation{Kind: kind, Var: ra.Var, Written: sa.Var, Events: []Access{ra, qa, sa}, Count: 1}
	if kind == KindRemoteWrite {
		v.Message = fmt.Sprintf("a computational unit of thread %s read %s (%s); thread %s wrote it (%s) before the unit's write of %s (%s), which depends on that read: the unit did not run serializably",
			ra.Thread, ra.Var, ra.Where, qa.Thread, qa.Where, sa.Var, sa.Where)
	} else {
		v.Message = fmt.Sprintf("a computational unit of thread %s read %s (%s) and wrote it; thread %s read it (%s) before the unit's write of %s (%s), which depends on the first read: it saw an intermediate value",
			ra.Thread, ra.Var, ra.Where, qa.Thread, qa.Where, sa.Var, sa.Where)
	}
	d.viol[k] = len(d.res.Violations)
	d.res.Violations = append(d.res.Violations, v)
}

// logEntry records (s, rw, lw) in the a-posteriori log, once per three
// locations.
func (d *detector) logEntry(s, rw, lw int32) {
	m := d.m
	k := [3]int32{m.Events[s].Loc, m.Events[rw].Loc, m.Events[lw].Loc}
	if i, ok := d.logKey[k]; ok {
		d.res.Log[i].Count++
		return
	}
	d.logKey[k] = len(d.res.Log)
	d.res.Log = append(d.res.Log, LogEntry{
		Events: []Access{d.access(s, "read"), d.access(rw, "remote"), d.access(lw, "local")}, Count: 1,
	})
}
