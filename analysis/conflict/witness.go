package conflict

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// cycle records that a cycle closed at event ev on the open transaction of
// thread t.
func (c *checker) cycle(t, ev int32) {
	c.stats.Cycles++
	th := &c.th[t]
	if c.stopFirst || th.found {
		return
	}
	th.found = true
	m := c.m
	x := th.txn
	tx := c.ts.Txns[x]
	key := fmt.Sprintf("%s|%s", m.Locs[m.Events[tx.First].Loc], m.Locs[m.Events[ev].Loc])
	if i, ok := c.index[key]; ok {
		c.out[i].Count++
		return
	}
	v := Violation{
		Txn:     c.ts.Info(m, x),
		Begin:   txn.Ref(m, tx.First, RoleBegin),
		End:     txn.Ref(m, tx.Last, RoleEnd),
		Close:   txn.Ref(m, ev, RoleClose),
		Count:   1,
		txn:     x,
		close:   ev,
		beginEv: tx.First,
		endEv:   tx.Last,
	}
	threads := []int32{t}
	if c.stats.Witnesses < MaxWitnesses {
		if steps, ths := c.witness(x, ev); steps != nil {
			c.stats.Witnesses++
			v.Cycle = steps
			threads = ths
		}
	}
	for _, u := range threads {
		v.Threads = append(v.Threads, m.Threads[u-1].Handle)
	}
	v.Message = message(&v)
	c.index[key] = len(c.out)
	c.out = append(c.out, v)
}

func message(v *Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s of thread %s (%s, line %d to %s, line %d) is not conflict-serializable: ",
		v.Txn.Kind, v.Txn.Name, v.Txn.Thread, v.Begin.Where(), v.Begin.Line, v.End.Where(), v.End.Line)
	if v.Cycle == nil {
		fmt.Fprintf(&b, "a cycle of conflicts closes at its %s %s at %s (line %d)", v.Close.Action, v.Close.Object, v.Close.Where(), v.Close.Line)
		return b.String()
	}
	desc := func(r EventRef, obj string) string {
		who := "thread " + r.Thread + "'s"
		if r.Thread == v.Txn.Thread && r.Line >= v.Begin.Line && r.Line <= v.End.Line {
			who = "its"
		}
		return fmt.Sprintf("%s %s %s at %s (line %d)", who, r.Action, obj, r.Where(), r.Line)
	}
	for i, s := range v.Cycle {
		if i > 0 {
			b.WriteString(", then ")
		}
		fmt.Fprintf(&b, "%s → %s", desc(s.From, s.Object), desc(s.To, s.Object))
	}
	return b.String()
}

// edge is an edge of the transaction graph of a witness search.
type edge struct {
	from, to     int32 // nodes
	fromEv, toEv int32 // the events that make it (program order: the two nodes' events)
	obj          int32 // the object of a conflict; -1 for program order
}

// witness rebuilds a cycle through transaction x of the graph of the trace
// up to event close, with the fewest conflict edges. It returns its
// conflict steps from an event of x back to x, and the threads of its
// transactions in cycle order (x's first); nil if there is none (which
// would be a bug of the pass).
func (c *checker) witness(x, close int32) ([]Step, []int32) {
	m := c.m
	start := c.windowStart(x)
	g := newGraph(c, start, close)
	vx := g.txnNode[x]
	if vx < 0 {
		return nil, nil
	}
	path := g.shortestCycle(vx)
	if path == nil {
		return nil, nil
	}
	var steps []Step
	threads := []int32{m.Events[c.ts.Txns[x].First].Thread}
	for _, e := range path {
		if e.obj >= 0 {
			name := objName(m, e.obj)
			steps = append(steps, Step{From: c.ref(e.fromEv, RoleOut, e.obj), To: c.ref(e.toEv, RoleIn, e.obj), Object: name, fromEv: e.fromEv, toEv: e.toEv})
		}
		if t := m.Events[e.toEv].Thread; t != threads[len(threads)-1] && e.to != vx {
			threads = append(threads, t)
		}
	}
	return steps, threads
}

// ref names event ev with a role; an access the event makes for an
// earlier one (a barrier's departure, a thread's start) is named by the
// object's action.
func (c *checker) ref(ev int32, role string, obj int32) EventRef {
	r := txn.Ref(c.m, ev, role)
	e := &c.m.Events[ev]
	name := objName(c.m, obj)
	if r.Object != name && !(e.Kind == tracemodel.Wait) {
		switch {
		case obj&^classIndex == classThread:
			r.Action = "Start"
		default:
			r.Action = "LeaveBarrier"
		}
		r.Object = name
	}
	return r
}

// windowStart returns the first event of the oldest transaction linked to
// x by a chain of overlapping transactions: every transaction of a cycle
// through x has all its events at or after it (a transaction reached from
// x has an event after x's Begin; one that also had an event before the
// start would overlap the chain).
func (c *checker) windowStart(x int32) int32 {
	txns := c.ts.Txns
	// last is a transaction's last event; one still open while the trace
	// is read ends after every event so far.
	last := func(i int) int32 {
		if c.live != nil && c.live.Open(int32(i)) {
			return math.MaxInt32
		}
		return txns[i].Last
	}
	if c.prefMax == nil || c.live != nil {
		c.prefMax = c.prefMax[:0]
		mx := int32(-1)
		for i := range txns {
			mx = max(mx, last(i))
			c.prefMax = append(c.prefMax, mx)
		}
	}
	s := txns[x].First
	for i := x - 1; i >= 0 && c.prefMax[i] >= s; i-- {
		if last(int(i)) >= s {
			s = txns[i].First
		}
	}
	return s
}

type graph struct {
	txnNode []int32 // node of each transaction, -1
	nodes   int32
	edges   []edge
	out     []int32 // CSR: edges of node n are sorted[out[n]:out[n+1]]
	sorted  []edge
}

type lastAccess struct {
	thread, ev, node int32
}

// newGraph builds the transaction graph of the events [start, close]
// (edges kept to what reachability needs: from the last write to a read,
// from the last write and the latest read of each thread since it to a
// write, from the child's latest event to a Join, and program order).
func newGraph(c *checker, start, close int32) *graph {
	m := c.m
	g := &graph{txnNode: make([]int32, len(c.ts.Txns))}
	for i := range g.txnNode {
		g.txnNode[i] = -1
	}
	acc := c.acc.replayer(start)
	lastW := map[int32]lastAccess{}
	readers := map[int32][]lastAccess{}
	lastNode := make([]int32, len(m.Threads)+1)
	lastEv := make([]int32, len(m.Threads)+1)
	for i := range lastNode {
		lastNode[i] = -1
	}
	var buf []access
	for ev := start; ev <= close; ev++ {
		e := &m.Events[ev]
		t := e.Thread
		buf = acc.of(ev, buf[:0])
		n := int32(-1)
		if x := c.ts.TxnOf(ev); x >= 0 {
			if g.txnNode[x] < 0 {
				g.txnNode[x] = g.nodes
				g.nodes++
			}
			n = g.txnNode[x]
		} else if len(buf) > 0 || e.Kind == tracemodel.Join {
			n = g.nodes
			g.nodes++
		} else {
			continue
		}
		if p := lastNode[t]; p >= 0 && p != n {
			g.edges = append(g.edges, edge{from: p, to: n, fromEv: lastEv[t], toEv: ev, obj: -1})
		}
		lastNode[t], lastEv[t] = n, ev
		for _, a := range buf {
			here := lastAccess{thread: t, ev: ev, node: n}
			if w, ok := lastW[a.obj]; ok && w.thread != t {
				g.edges = append(g.edges, edge{from: w.node, to: n, fromEv: w.ev, toEv: ev, obj: a.obj})
			}
			rs := readers[a.obj]
			if a.write {
				for _, r := range rs {
					if r.thread != t {
						g.edges = append(g.edges, edge{from: r.node, to: n, fromEv: r.ev, toEv: ev, obj: a.obj})
					}
				}
				readers[a.obj] = rs[:0]
				lastW[a.obj] = here
				continue
			}
			replaced := false
			for k := range rs {
				if rs[k].thread == t {
					rs[k], replaced = here, true
				}
			}
			if !replaced {
				readers[a.obj] = append(rs, here)
			}
		}
		if e.Kind == tracemodel.Join && e.Obj != t {
			if p := lastNode[e.Obj]; p >= 0 {
				g.edges = append(g.edges, edge{from: p, to: n, fromEv: lastEv[e.Obj], toEv: ev, obj: objThread(e.Obj)})
			}
		}
	}
	g.out = make([]int32, g.nodes+1)
	for _, e := range g.edges {
		g.out[e.from+1]++
	}
	for i := int32(1); i <= g.nodes; i++ {
		g.out[i] += g.out[i-1]
	}
	g.sorted = make([]edge, len(g.edges))
	fill := append([]int32(nil), g.out[:g.nodes]...)
	for _, e := range g.edges {
		g.sorted[fill[e.from]] = e
		fill[e.from]++
	}
	return g
}

// Costs of the edges of a witness search: program order is free, and a
// conflict on a variable is cheaper than one on a synchronization object,
// so that of two cycles with as many conflicts, the one through the data
// is shown.
const (
	costVar  = 2
	costSync = 3
)

func (g *graph) cost(e *edge) int32 {
	switch {
	case e.obj < 0:
		return 0
	case e.obj&^classIndex == classVar:
		return costVar
	}
	return costSync
}

// shortestCycle returns the edges of a cheapest cycle through node v
// (Dial's algorithm over the small integer costs), nil if v is on no
// cycle.
func (g *graph) shortestCycle(v int32) []edge {
	const inf = int32(1 << 30)
	dist := make([]int32, g.nodes)
	via := make([]int32, g.nodes) // index in sorted of the edge that reached the node
	for i := range dist {
		dist[i], via[i] = inf, -1
	}
	dist[v] = 0
	buckets := [][]int32{{v}}
	for d := 0; d < len(buckets); d++ {
		for i := 0; i < len(buckets[d]); i++ {
			n := buckets[d][i]
			if dist[n] != int32(d) {
				continue // reached more cheaply since
			}
			for k := g.out[n]; k < g.out[n+1]; k++ {
				e := &g.sorted[k]
				nd := dist[n] + g.cost(e)
				if e.to == v || nd >= dist[e.to] {
					continue
				}
				dist[e.to], via[e.to] = nd, k
				for int(nd) >= len(buckets) {
					buckets = append(buckets, nil)
				}
				buckets[nd] = append(buckets[nd], e.to)
			}
		}
		buckets[d] = nil
	}
	best, bestK := inf, int32(-1)
	for k := range g.sorted {
		e := &g.sorted[k]
		if e.to != v || dist[e.from] == inf {
			continue
		}
		if d := dist[e.from] + g.cost(e); d < best {
			best, bestK = d, int32(k)
		}
	}
	if bestK < 0 {
		return nil
	}
	path := []edge{g.sorted[bestK]}
	for n := g.sorted[bestK].from; n != v; {
		e := g.sorted[via[n]]
		path = append(path, e)
		n = e.from
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}
