package conflict

import (
	"fmt"

	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// oracle is the transaction graph built by brute force, straight from the
// definitions of the package comment: a node per outermost transaction and
// per event outside transactions, program-order edges, and an edge for
// every pair of conflicting events of different threads.
type oracle struct {
	m     *tracemodel.Model
	node  []int // by event
	succ  [][]bool
	nodes int
	// conflicts[i][j] (i < j): events i and j conflict (or j joins i's
	// thread after i); the object's name.
	conflicts map[[2]int]map[string]bool
}

type oAccess struct {
	obj   string
	write bool
}

func newOracle(m *tracemodel.Model, ts *txn.Set) *oracle {
	o := &oracle{m: m, node: make([]int, len(m.Events)), conflicts: map[[2]int]map[string]bool{}}
	txNode := map[int32]int{}
	for i := range m.Events {
		if x := ts.TxnOf(int32(i)); x >= 0 {
			n, ok := txNode[x]
			if !ok {
				n = o.nodes
				o.nodes++
				txNode[x] = n
			}
			o.node[i] = n
			continue
		}
		o.node[i] = o.nodes
		o.nodes++
	}
	o.succ = make([][]bool, o.nodes)
	for i := range o.succ {
		o.succ[i] = make([]bool, o.nodes)
	}
	add := func(i, j int, obj string) {
		if o.node[i] != o.node[j] {
			o.succ[o.node[i]][o.node[j]] = true
		}
		if obj != "" {
			k := [2]int{i, j}
			if o.conflicts[k] == nil {
				o.conflicts[k] = map[string]bool{}
			}
			o.conflicts[k][obj] = true
		}
	}
	for _, th := range m.Threads {
		for k := 1; k < len(th.Events); k++ {
			add(int(th.Events[k-1]), int(th.Events[k]), "")
		}
	}
	acc := o.accesses()
	for j := range m.Events {
		ej := &m.Events[j]
		for i := 0; i < j; i++ {
			ei := &m.Events[i]
			if ei.Thread == ej.Thread {
				continue
			}
			for _, a := range acc[i] {
				for _, b := range acc[j] {
					if a.obj == b.obj && (a.write || b.write) {
						add(i, j, a.obj)
					}
				}
			}
			if ej.Kind == tracemodel.Join && ej.Obj == ei.Thread {
				add(i, j, "thread "+m.Threads[ei.Thread-1].Handle)
			}
		}
	}
	return o
}

// accesses lists the accesses of every event, by object name.
func (o *oracle) accesses() [][]oAccess {
	m := o.m
	out := make([][]oAccess, len(m.Events))
	created := map[int32]bool{}
	holds := map[[2]int32][]bool{} // (thread, lock): read holds, innermost last
	for i := range m.Events {
		e := &m.Events[i]
		var as []oAccess
		if e.Pos == 1 && created[e.Thread] {
			as = append(as, oAccess{obj: "thread " + m.Threads[e.Thread-1].Handle})
		}
		if e.Pos > 1 {
			if p := m.EventAt(int(e.Thread), e.Pos-1); p.Kind == tracemodel.BarrierWait {
				as = append(as, oAccess{obj: "sync " + m.Objects[p.Obj]})
			}
		}
		sync := func(obj int32, write bool) { as = append(as, oAccess{obj: "sync " + m.Objects[obj], write: write}) }
		k := [2]int32{e.Thread, e.Obj}
		switch e.Kind {
		case tracemodel.Read, tracemodel.Write:
			if !m.IsSyncVar(int(e.Obj)) {
				as = append(as, oAccess{obj: "var " + m.Vars[e.Obj].Name, write: e.Kind == tracemodel.Write})
			}
		case tracemodel.Lock, tracemodel.TryLock, tracemodel.Unlock, tracemodel.Signal, tracemodel.Broadcast,
			tracemodel.SemPost, tracemodel.SemWait, tracemodel.BarrierWait:
			sync(e.Obj, true)
		case tracemodel.RdLock:
			holds[k] = append(holds[k], true)
			sync(e.Obj, false)
		case tracemodel.WrLock:
			holds[k] = append(holds[k], false)
			sync(e.Obj, true)
		case tracemodel.RwUnlock:
			read := false
			if h := holds[k]; len(h) > 0 {
				read = h[len(h)-1]
				holds[k] = h[:len(h)-1]
			}
			sync(e.Obj, !read)
		case tracemodel.Wait:
			sync(e.Obj, false)
			if e.Obj2 != 0 {
				sync(e.Obj2, true)
			}
		case tracemodel.Create:
			as = append(as, oAccess{obj: "thread " + m.Threads[e.Obj-1].Handle, write: true})
			created[e.Obj] = true
		}
		out[i] = as
	}
	return out
}

// cyclic reports whether the graph has a cycle.
func (o *oracle) cyclic() bool {
	color := make([]int, o.nodes)
	var visit func(n int) bool
	visit = func(n int) bool {
		color[n] = 1
		for k, ok := range o.succ[n] {
			if !ok {
				continue
			}
			if color[k] == 1 || (color[k] == 0 && visit(k)) {
				return true
			}
		}
		color[n] = 2
		return false
	}
	for n := range color {
		if color[n] == 0 && visit(n) {
			return true
		}
	}
	return false
}

// checkWitness checks that v's witness is a cycle of the graph through
// its transaction: each step is a conflicting pair in trace order, and the
// transaction, the steps and the transaction again follow each other in
// program order (the same thread, the same or a later node).
func (o *oracle) checkWitness(v *Violation) error {
	if v.Cycle == nil {
		return fmt.Errorf("no witness")
	}
	follows := func(a, b int32) bool { // b's node is a's or a later one of its thread
		return o.m.Events[a].Thread == o.m.Events[b].Thread && o.node[b] >= o.node[a]
	}
	prev := v.beginEv
	for k, s := range v.Cycle {
		i, j := int(s.fromEv), int(s.toEv)
		if i >= j || len(o.conflicts[[2]int{i, j}]) == 0 {
			return fmt.Errorf("step %d: events %d and %d do not conflict", k, i, j)
		}
		if !follows(prev, s.fromEv) {
			return fmt.Errorf("step %d does not start where the cycle is (event %d, after %d)", k, i, prev)
		}
		prev = s.toEv
	}
	if o.m.Events[prev].Thread != o.m.Events[v.beginEv].Thread || o.node[prev] > o.node[v.beginEv] {
		return fmt.Errorf("the cycle ends at event %d, not back in the transaction", prev)
	}
	return nil
}
