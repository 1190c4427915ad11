package tracemodel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestAtomicSets checks the inference: variables accessed in one region
// are a set, a polled flag is in none, and a declared set is kept.
func TestAtomicSets(t *testing.T) {
	// Thread 201 writes data and len, then sets ready; 202 polls ready
	// twice at one line, then reads data and len.
	const trace = `100, 1, h.c-1, Create, 201
100, 2, h.c-2, Create, 202
201, 3, h.c-10, Write, data
201, 4, h.c-11, Write, len
201, 5, h.c-12, Write, ready
202, 6, h.c-20, Read, ready
202, 7, h.c-20, Read, ready
202, 8, h.c-21, Read, data
202, 9, h.c-22, Read, len
`
	m := parse(t, trace)
	names := func(opts SetOptions) []string {
		sets, err := m.AtomicSets(m.SharedVars(), opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range sets {
			out = append(out, s.Names[0]+"+"+s.Names[1])
		}
		return out
	}
	if got := strings.Join(names(SetOptions{}), " "); got != "data+len" {
		t.Errorf("inferred sets %q, want data+len (ready is polled)", got)
	}
	if got := strings.Join(names(SetOptions{MaxPartners: -1, Declared: [][]string{{"ready", "d*"}}}), " "); got != "data+ready" {
		t.Errorf("declared sets %q, want data+ready", got)
	}
	if _, err := m.AtomicSets(m.SharedVars(), SetOptions{Declared: [][]string{{"nosuch"}}}); err == nil {
		t.Error("a declared glob that matches nothing is accepted")
	}
}

// TestSetNames checks the name rules of the inference: a pointer and what
// it points to, and different objects of one kind, are no inferred set.
func TestSetNames(t *testing.T) {
	for _, c := range []struct {
		a, b            string
		pointer, others bool
	}{
		{"range.lo", "range.hi", false, false},
		{"msg.len", "msg.text[6]", false, false},
		{"hist[0].count", "hist[0].sum", false, false},
		{"hist[0].count", "hist[1].sum", false, true},
		{"tab[1]", "tab[2]", false, true},
		{"buf->len", "buf->data", false, false},
		{"buf->len", "buf#2->len", false, true},
		{"node.n(calloc@l.c:50#4)", "node.m(calloc@l.c:50#5)", false, true},
		{"node.n(calloc@l.c:50#4)", "node.m(calloc@l.c:50#4)", false, false},
		{"current", "current#21->budget_ms", true, false},
		{"main::ctx.items", "main::ctx.items->len", true, false},
		{"a", "b", false, false},
		{"buckets[1]", "buckets[0]#4->key", false, true},
		{"buckets[0]->key", "buckets[0]#4->key", false, true},
		{"buckets[0]", "buckets[0]#4->key", true, false},
		{"main::ctx.a", "main::ctx.b", false, false},
	} {
		if got := pointerOf(c.b) == c.a; got != c.pointer {
			t.Errorf("%s is the pointer of %s: %v, want %v", c.a, c.b, got, c.pointer)
		}
		if got := otherInstance(c.a, c.b); got != c.others {
			t.Errorf("otherInstance(%s, %s) = %v, want %v (objects %q, %q)", c.a, c.b, got, c.others, objectOf(c.a), objectOf(c.b))
		}
	}
}

// TestSetModelUpdates checks the read-modify-write rule of set models: an
// update is one write step unless it follows a plain read of the other
// variable, and OnlyUpdates marks a variable only updated.
func TestSetModelUpdates(t *testing.T) {
	// 201: gen read, bytes += n (kept as read and write: it follows the
	// read of gen); then hits++ style update of gen alone (one step).
	// 202: gen++ and bytes = 0 under the lock.
	const trace = `100, 1, l.c-1, Create, 201
100, 2, l.c-2, Create, 202
201, 3, l.c-10, Lock, L
201, 4, l.c-11, Read, gen
201, 5, l.c-12, Unlock, L
201, 6, l.c-13, Lock, L
201, 7, l.c-14, Read, bytes
201, 8, l.c-14, Write, bytes
201, 9, l.c-15, Unlock, L
202, 10, l.c-20, Lock, L
202, 11, l.c-21, Read, gen
202, 12, l.c-21, Write, gen
202, 13, l.c-22, Write, bytes
202, 14, l.c-23, Unlock, L
`
	m := parse(t, trace)
	pm := genBytesModel(t, m)
	if got, want := accessSteps(pm.Steps[0]), "Rx1 Ry1 Wy1"; got != want {
		t.Errorf("thread 201 steps %q, want %q (the update of bytes follows the read of gen)", got, want)
	}
	if got, want := accessSteps(pm.Steps[1]), "Wx2 Wy1"; got != want {
		t.Errorf("thread 202 steps %q, want %q (gen++ is one write step)", got, want)
	}
	if pm.OnlyUpdates != [2]bool{true, false} {
		t.Errorf("OnlyUpdates %v, want [true false]: gen is only updated, bytes also stored", pm.OnlyUpdates)
	}
}

// TestConcurrent checks the order test of set models' thread pairs: a
// barrier between the threads' accesses orders them, a lock does not.
func TestConcurrent(t *testing.T) {
	const trace = `100, 1, c.c-1, Create, 201
100, 2, c.c-2, Create, 202
201, 3, c.c-10, Write, a
201, 4, c.c-11, Write, b
201, 5, c.c-12, BarrierWait, bar
202, 6, c.c-12, BarrierWait, bar
202, 7, c.c-20, Read, a
202, 8, c.c-21, Read, b
201, 15, c.c-28, Read, d
202, 16, c.c-29, Read, d
202, 9, c.c-22, Lock, L
202, 10, c.c-23, Write, c
202, 11, c.c-24, Unlock, L
201, 12, c.c-25, Lock, L
201, 13, c.c-26, Write, c
201, 14, c.c-27, Unlock, L
`
	m := parse(t, trace)
	t1, t2 := m.ThreadByHandle("201"), m.ThreadByHandle("202")
	a, b, c := m.VarByName("a"), m.VarByName("b"), m.VarByName("c")
	for _, tc := range []struct {
		vs   []int
		want bool
	}{{[]int{a, b}, false}, {[]int{a, c}, true}, {[]int{c}, true}, {[]int{m.VarByName("d")}, false}} {
		if got := m.Concurrent(tc.vs, t1, t2); got != tc.want {
			t.Errorf("Concurrent(%v) = %v, want %v", tc.vs, got, tc.want)
		}
		if got := m.Concurrent(tc.vs, t2, t1); got != tc.want {
			t.Errorf("Concurrent(%v) swapped = %v, want %v", tc.vs, got, tc.want)
		}
	}
}

// TestSetModelInitStore: a store that happens before every access of the
// other thread (an initialization before pthread_create) does not keep an
// update's read: it falls in no view.
func TestSetModelInitStore(t *testing.T) {
	const trace = `100, 1, i.c-1, Create, 202
202, 2, i.c-5, Write, bytes
202, 3, i.c-6, Create, 201
201, 4, i.c-10, Read, gen
201, 5, i.c-11, Lock, L
201, 6, i.c-12, Read, bytes
201, 7, i.c-12, Write, bytes
201, 8, i.c-13, Unlock, L
202, 9, i.c-20, Lock, L
202, 10, i.c-21, Read, gen
202, 11, i.c-21, Write, gen
202, 12, i.c-22, Read, bytes
202, 13, i.c-22, Write, bytes
202, 14, i.c-23, Unlock, L
`
	m := parse(t, trace)
	pm := genBytesModel(t, m)
	if got, want := accessSteps(pm.Steps[0]), "Rx1 Wy2"; got != want {
		t.Errorf("thread 201 steps %s, want %s (the update of bytes is one step)", got, want)
	}
	if pm.OnlyUpdates != [2]bool{true, true} {
		t.Errorf("OnlyUpdates %v, want both: the initial store is before 201", pm.OnlyUpdates)
	}
}

// genBytesModel is the model of the set {gen, bytes} of threads 201, 202.
func genBytesModel(t *testing.T, m *Model) *PairModel {
	t.Helper()
	pm, err := m.ProjectSet(m.VarByName("gen"), m.VarByName("bytes"), m.ThreadByHandle("201"), m.ThreadByHandle("202"), ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// accessSteps writes the access steps of a set model's thread: R or W, x
// or y, and the number of events ("Rx1 Wy2": a read of x, an update of y).
func accessSteps(steps []Step) string {
	var out []string
	for _, s := range steps {
		if s.Kind != StepRead && s.Kind != StepWrite {
			continue
		}
		k, v := "R", "x"
		if s.Kind == StepWrite {
			k = "W"
		}
		if s.Second {
			v = "y"
		}
		out = append(out, fmt.Sprintf("%s%s%d", k, v, len(s.Events)))
	}
	return strings.Join(out, " ")
}

// TestAtomicSetsInterleavings checks that the inference (and the
// commutative updates, update.go) depend on each thread's own events
// only, not on how the threads' events interleave:
// the scans read the trace in order, each thread's state beside, over
// one to four shares of the threads. A state shared across threads (a
// variable's latest read, as polled flags were once found) breaks it.
func TestAtomicSetsInterleavings(t *testing.T) {
	threads := map[string][]string{
		// A writer that fills a record and raises a flag, twice, with
		// function calls around each fill (region scope).
		"w": {"p.c-10, Enter, fill", "p.c-11, Write, rec.len", "p.c-12, Write, rec.data", "p.c-13, Exit, fill", "p.c-14, Write, ready",
			"p.c-10, Enter, fill", "p.c-11, Write, rec.len", "p.c-12, Write, rec.data", "p.c-13, Exit, fill", "p.c-14, Write, ready"},
		// Two pollers of ready at their own lines, then readers of the record.
		"a": {"p.c-20, Read, ready", "p.c-20, Read, ready", "p.c-21, Read, rec.len", "p.c-22, Read, rec.data", "p.c-23, Lock, m", "p.c-24, DataRead, hits", "p.c-24, Write, hits", "p.c-25, Unlock, m"},
		"b": {"p.c-30, Read, ready", "p.c-31, Lock, m", "p.c-32, DataRead, hits", "p.c-32, Write, hits", "p.c-33, Unlock, m", "p.c-30, Read, ready", "p.c-34, Read, rec.data", "p.c-35, Read, rec.len"},
		// A thread that reads an index and the element it selects, and
		// updates two counters together.
		"c": {"p.c-40, Read, idx", "p.c-41, Read, tab[3]", "p.c-42, Write, rec.len", "p.c-43, Write, rec.data", "p.c-44, Write, ready", "p.c-45, Write, idx"},
	}
	names := []string{"w", "a", "b", "c"}
	sets := func(order []string, shares int) string {
		var b strings.Builder
		for i, n := range names {
			fmt.Fprintf(&b, "main, %d, p.c-1, Create, %s\n", i+1, n)
		}
		next := map[string]int{}
		for i, n := range order {
			fmt.Fprintf(&b, "%s, %d, %s\n", n, len(names)+i+1, threads[n][next[n]])
			next[n]++
		}
		m, err := Parse(context.Background(), strings.NewReader(b.String()), "t.csv", Options{shares: shares})
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.AtomicSets(m.SharedVars(), SetOptions{MinConfidence: -1, MaxPartners: 8})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range got {
			out = append(out, fmt.Sprintf("%s+%s:%d:%v:%v", s.Names[0], s.Names[1], s.Regions, s.co, s.uses))
		}
		// The commutative updates, by thread and position.
		var updates []string
		for idx := range m.Events {
			if e := m.Events[idx]; m.isUpdate(int32(idx)) {
				updates = append(updates, fmt.Sprintf("%s@%d", m.Threads[e.Thread-1].Handle, e.Pos))
			}
		}
		slices.Sort(updates)
		return strings.Join(out, " ") + " updates " + strings.Join(updates, " ")
	}
	var serial []string // thread by thread
	for _, n := range names {
		for range threads[n] {
			serial = append(serial, n)
		}
	}
	want := sets(serial, 1)
	if !strings.Contains(want, "rec.len+rec.data") || strings.Contains(want, "ready") || !strings.HasSuffix(want, "updates a@6 a@7 b@3 b@4") {
		t.Fatalf("thread by thread: %q, want the set rec.len+rec.data, none with ready (polled), and the updates of hits", want)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	// interleave picks a random thread at each step among those whose next
	// event may run: a Lock waits while another thread holds the lock.
	interleave := func() []string {
		var order []string
		next := map[string]int{}
		holder := map[string]string{}
		for len(order) < len(serial) {
			var ready []string
			for _, n := range names {
				if next[n] == len(threads[n]) {
					continue
				}
				f := strings.Split(threads[n][next[n]], ", ")
				if f[1] == "Lock" && holder[f[2]] != "" {
					continue
				}
				ready = append(ready, n)
			}
			n := ready[rng.IntN(len(ready))]
			switch f := strings.Split(threads[n][next[n]], ", "); f[1] {
			case "Lock":
				holder[f[2]] = n
			case "Unlock":
				holder[f[2]] = ""
			}
			order = append(order, n)
			next[n]++
		}
		return order
	}
	for k := range 200 {
		order := interleave()
		shares := 1 + k%4 // the threads' scans on 1 to 4 goroutines
		if got := sets(order, shares); got != want {
			t.Fatalf("interleaving %d %v, %d shares: sets\n%s\nwant (thread by thread, one share)\n%s", k, order, shares, got, want)
		}
	}
}
