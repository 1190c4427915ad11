package tracemodel

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// Atomic sets: which shared variables belong together.
//
// A two-variable pattern (ltl: M1..M6) can complete only where one thread
// accesses both variables of the set in one region, the region of the
// precise semantics: no blocking synchronization, hand-off or end of an
// operation (scope.go) between the accesses. So the sets are inferred
// from the trace by access correlation, in the manner of MUVI (Lu et al.,
// SOSP 2007): two shared variables are correlated when a thread accesses
// both in one region, and the more regions they share the stronger the
// correlation. Each variable keeps its MaxPartners strongest partners —
// fields of one struct object before others at equal strength — so that a
// trace of 32,000 variables gives at most MaxPartners sets per variable,
// not one per pair. Users add the sets the inference misses (Declared).

// DefaultMaxPartners is the default of SetOptions.MaxPartners.
const DefaultMaxPartners = 2

// DefaultMinConfidence is the default of SetOptions.MinConfidence.
const DefaultMinConfidence = 0.75

// regionWindow bounds the distinct variables a region remembers: a
// variable is correlated with the regionWindow variables the thread
// accessed last in the region, so that a long region (a barrier phase over
// an array) costs a bounded amount per access.
const regionWindow = 8

// SetOptions tune AtomicSets.
type SetOptions struct {
	// MaxPartners bounds the inferred partners of a variable (0:
	// DefaultMaxPartners; negative: no inferred sets, only declared ones).
	MaxPartners int
	// MinConfidence is the least AtomicSet.Confidence of an inferred set,
	// as MUVI's: two variables that are often accessed apart are no set
	// even when some operation accesses both (a loop that polls a stop flag
	// and a request counter). 0: DefaultMinConfidence; negative: none.
	MinConfidence float64
	// Declared are the user's sets, each a list of variable names or
	// path.Match globs; a set is every shared variable that one of its
	// globs matches, checked pair by pair.
	Declared [][]string
}

// AtomicSet is a pair of shared variables checked together.
type AtomicSet struct {
	Vars  [2]int    // variable ids, Vars[0] < Vars[1]
	Names [2]string // their names
	// Regions counts the regions in which one thread accessed both.
	Regions int
	// Confidence is Regions over the regions of the less accessed of the
	// two variables: 1 when one is never accessed without the other.
	Confidence float64
	// Declared marks a set the user declared.
	Declared bool
	// Published marks a publication set: a pointer and a field of its
	// target that a thread wrote in one critical section, the pointer
	// first, while another read the pointer without the lock (publish.go).
	Published bool
	// co[kx*2+ky]: threads that accessed Vars[0] with kind kx and Vars[1]
	// with ky in one region (0 read, 1 write; bit t-1, t ≤ 64); anyLocal:
	// some thread above 64 did, or the set is declared.
	co       [4]uint64
	anyLocal bool
	// uses[i][k]: threads that access Vars[i] with kind k (0 read, 1
	// write), anywhere; anyUse: a thread above 64 does.
	uses   [2][2]uint64
	anyUse bool
}

// CoAccess reports whether thread t accessed the set's first variable with
// kind kx and its second with ky (Read or Write) in one region, as the
// inference saw it (within its window; any thread of a declared set): a
// pattern's local thread must, with the kinds of its terms.
func (s AtomicSet) CoAccess(t int, kx, ky Kind) bool {
	return s.anyLocal || t <= 64 && s.co[kindBit(kx)*2+kindBit(ky)]>>(t-1)&1 != 0
}

// Uses reports whether thread t accesses variable i (0 or 1) of the set
// with kind k (Read or Write).
func (s AtomicSet) Uses(t, i int, k Kind) bool {
	return s.anyUse || t <= 64 && s.uses[i][kindBit(k)]>>(t-1)&1 != 0
}

func kindBit(k Kind) int {
	if k == Write {
		return 1
	}
	return 0
}

// pairStat is the correlation of two variables.
type pairStat struct {
	regions int
	// co[kx*2+ky]: threads that accessed the first variable with kind kx
	// and the second with ky in one region (0 read, 1 write; bit t-1,
	// t ≤ 64); anyLocal: a thread above 64 accessed both in one region.
	co       [4]uint64
	anyLocal bool
}

// AtomicSets returns the atomic sets of the trace's shared variables
// (shared: SharedVars), in order of their first variable, then second. A
// glob of Declared that matches no shared variable is an error.
func (m *Model) AtomicSets(shared []SharedVar, opts SetOptions) ([]AtomicSet, error) {
	isShared := make([]bool, len(m.Vars))
	for _, sv := range shared {
		isShared[sv.Var] = true
	}
	writers, anyWriter := m.writers()
	bothWriters := func(p [2]int32) (uint64, bool) {
		return writers[p[0]] & writers[p[1]], anyWriter[p[0]] && anyWriter[p[1]]
	}
	minConf := opts.MinConfidence
	if minConf == 0 {
		minConf = DefaultMinConfidence
	}
	declared, err := m.declaredSets(shared, opts.Declared)
	if err != nil {
		return nil, err
	}
	var stats map[[2]int32]*pairStat       // the correlation of inferred pairs; none for declared sets only
	varRegions := make([]int, len(m.Vars)) // regions in which each variable is accessed (correlate's, if it runs)
	addressed := map[[2]int32]uint8{}      // pairs of a pointer and what it selected: bit i, Vars[i] is the pointer
	if opts.MaxPartners >= 0 {
		inferable := slices.Clone(isShared)
		m.notInferable(inferable, addressed)
		// The pairs that the filter below drops whatever their statistics
		// are not counted at all (a declared set keeps its count).
		never := m.neverInferred(inferable, writers, anyWriter)
		skip := func(p [2]int32) bool { return never(p) && !declared[p] }
		stats, varRegions = m.correlate(inferable, skip)
		for p := range addressed {
			delete(stats, p)
		}
		for p := range stats {
			a, b := m.Vars[p[0]].Name, m.Vars[p[1]].Name
			// Every built-in pattern needs a thread that writes both (the
			// remote one of M1/M2, the local one of M5/M6, both in M3/M4):
			// two variables that different threads write are two races.
			w, anyW := bothWriters(p)
			if w == 0 && !anyW || pointerOf(a) == b || pointerOf(b) == a || otherInstance(a, b) ||
				confidence(stats[p].regions, varRegions, p) < minConf {
				delete(stats, p)
			}
		}
	}
	k := opts.MaxPartners
	if k == 0 {
		k = DefaultMaxPartners
	}
	chosen := map[[2]int32]bool{}
	if k > 0 {
		partners := map[int32][][2]int32{}
		for p := range stats {
			partners[p[0]] = append(partners[p[0]], p)
			partners[p[1]] = append(partners[p[1]], p)
		}
		for v, ps := range partners {
			slices.SortFunc(ps, func(a, b [2]int32) int {
				if c := cmp.Compare(stats[b].regions, stats[a].regions); c != 0 {
					return c
				}
				sa, sb := m.siblings(a), m.siblings(b)
				if sa != sb {
					if sa {
						return -1
					}
					return 1
				}
				return cmp.Compare(other(a, v), other(b, v))
			})
			for _, p := range ps[:min(k, len(ps))] {
				chosen[p] = true
			}
		}
	}
	// Publication sets, which the filters above leave out, up to k per
	// pointer besides its other partners.
	published := map[[2]int32]bool{}
	if k > 0 {
		for p, st := range m.publications(isShared, addressed, k) {
			published[p] = true
			if s := stats[p]; s != nil && chosen[p] {
				s.regions = max(s.regions, st.regions)
				for i := range s.co {
					s.co[i] |= st.co[i]
				}
				s.anyLocal = s.anyLocal || st.anyLocal
				continue
			}
			chosen[p] = true
			stats[p] = st
		}
	}
	out := make([]AtomicSet, 0, len(chosen)+len(declared))
	for p := range chosen {
		st := stats[p]
		out = append(out, AtomicSet{Vars: [2]int{int(p[0]), int(p[1])}, Regions: st.regions,
			co: st.co, anyLocal: st.anyLocal || declared[p], Declared: declared[p], Published: published[p]})
	}
	for p := range declared {
		if chosen[p] {
			continue
		}
		s := AtomicSet{Vars: [2]int{int(p[0]), int(p[1])}, Declared: true, anyLocal: true}
		if st := stats[p]; st != nil {
			s.Regions = st.regions
		}
		out = append(out, s)
	}
	pc := m.Pacer()
	for i := range out {
		s := &out[i]
		s.Confidence = confidence(s.Regions, varRegions, [2]int32{int32(s.Vars[0]), int32(s.Vars[1])})
		s.Names = [2]string{m.Vars[s.Vars[0]].Name, m.Vars[s.Vars[1]].Name}
		for i, v := range s.Vars {
			for k := range m.Vars[v].access {
				pc.Step()
				e := &m.Vars[v].access[k]
				if e.Thread > 64 {
					s.anyUse = true
					continue
				}
				s.uses[i][kindBit(e.Kind)] |= 1 << (e.Thread - 1)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Vars[0] != out[j].Vars[0] {
			return out[i].Vars[0] < out[j].Vars[0]
		}
		return out[i].Vars[1] < out[j].Vars[1]
	})
	return out, nil
}

func other(p [2]int32, v int32) int32 {
	if p[0] == v {
		return p[1]
	}
	return p[0]
}

// notInferable clears, in inferable, the variables that are no data of an
// invariant, and lists in addressed the pairs of which one variable
// addresses the other (bit i set: the pair's variable i is the pointer):
//
//   - a polled flag: a thread reads it at one location and reads it there
//     again with nothing but reads at that location and synchronization
//     in between (a wait loop, a spin on a flag, a poll under a lock). Its reader acts on it only once it
//     changed, so the data handed off with it is read after it, never
//     torn (handoff_flag.c);
//   - a pointer or index and what it selects: a steering read of p (not a
//     DataRead) directly followed by the thread's access of an array
//     element or a heap field q. The read of q depends on the value of p,
//     so an interleaving where p is read stale and q fresh does not exist
//     (a copy-on-write swap, an index into a free list).
//
// Declared sets are not filtered.
func (m *Model) notInferable(inferable []bool, addressed map[[2]int32]uint8) {
	selected := make([]bool, len(m.Vars)) // an array element or a heap field
	for v := range m.Vars {
		selected[v] = strings.ContainsAny(m.Vars[v].Name, "[>")
	}
	share, n := m.threadShares()
	polled := make([][]bool, n)
	addr := make([]map[[2]int32]uint8, n)
	addr[0] = addressed
	eachShare(n, func(w int) {
		polled[w] = make([]bool, len(m.Vars))
		if w > 0 {
			addr[w] = map[[2]int32]uint8{}
		}
		m.notInferableShare(share, int32(w), selected, polled[w], addr[w])
	})
	for w := range n {
		for v, p := range polled[w] {
			if p {
				inferable[v] = false
			}
		}
		if w > 0 {
			for p, b := range addr[w] {
				addressed[p] |= b
			}
		}
	}
}

// notInferableShare marks, for notInferable, the variables that the
// threads of share w poll and the pairs they address.
func (m *Model) notInferableShare(share []int32, w int32, selected, polled []bool, addressed map[[2]int32]uint8) {
	// A run is a stretch of a thread's accesses that are all reads at one
	// location (synchronization in between does not end it): a variable
	// read twice in one run is polled. The variables a run read are a few
	// (a poll reads one again and again), so they are a short list, and a
	// set only when the run reads more (a loop over an array at one
	// location).
	type runState struct {
		runLoc   int32   // the location of the current run; -1: the next access starts a run
		prevRead int32   // the variable of the previous access, if a steering read; else -1
		read     []int32 // the variables the run read, while few
		readSet  map[int32]bool
	}
	reset := func(t *runState) { *t = runState{runLoc: -1, prevRead: -1, read: t.read[:0]} }
	for idx, t := range shareEvents(m, share, w, reset) {
		e := &m.Events[idx]
		if e.Kind != Read && e.Kind != Write || m.IsSyncVar(int(e.Obj)) {
			continue
		}
		v := e.Obj
		if p := t.prevRead; p >= 0 && p != v && selected[v] {
			if p < v {
				addressed[[2]int32{p, v}] |= 1
			} else {
				addressed[[2]int32{v, p}] |= 2
			}
		}
		t.prevRead = -1
		if e.Kind == Write || e.Loc != t.runLoc || e.Loc == 0 {
			t.runLoc, t.read, t.readSet = e.Loc, t.read[:0], nil
		}
		if e.Kind == Write {
			t.runLoc = -1
			continue
		}
		if !e.Data {
			t.prevRead = v
		}
		switch {
		case slices.Contains(t.read, v) || t.readSet[v]:
			polled[v] = true
		case len(t.read) < runList:
			t.read = append(t.read, v)
		default:
			if t.readSet == nil {
				t.readSet = map[int32]bool{}
			}
			t.readSet[v] = true
		}
	}
}

// runList is the most variables of a run that notInferable keeps in a
// list before it keeps them in a set.
const runList = 8

// correlate returns the correlation of the shared variables, over every
// thread: every two that a thread accesses in one region, within the last
// regionWindow distinct ones, and how many regions access each variable.
// It reads the events in trace order, per share of the threads (shares.go).
func (m *Model) correlate(isShared []bool, skip func([2]int32) bool) (map[[2]int32]*pairStat, []int) {
	share, n := m.threadShares()
	stats := make([]map[[2]int32]*pairStat, n)
	varRegions := make([][]int, n)
	eachShare(n, func(w int) {
		stats[w], varRegions[w] = map[[2]int32]*pairStat{}, make([]int, len(m.Vars))
		m.correlateShare(share, int32(w), isShared, skip, stats[w], varRegions[w])
	})
	for w := 1; w < n; w++ {
		for p, st := range stats[w] {
			s := stats[0][p]
			if s == nil {
				stats[0][p] = st
				continue
			}
			s.regions += st.regions
			for i := range s.co {
				s.co[i] |= st.co[i]
			}
			s.anyLocal = s.anyLocal || st.anyLocal
		}
		for v, k := range varRegions[w] {
			varRegions[0][v] += k
		}
	}
	return stats[0], varRegions[0]
}

// correlateShare adds to stats and varRegions the regions of the threads
// of share w.
func (m *Model) correlateShare(share []int32, w int32, isShared []bool, skip func([2]int32) bool, stats map[[2]int32]*pairStat, varRegions []int) {
	type region struct {
		window    []int32 // distinct variables of the current region, oldest first
		kinds     []uint8 // per variable of window: how the region accessed it (1 read, 2 write)
		prev      int32   // position of the previous shared access
		lastWrite int32
		bl, ho    int // cursors: the thread's first blocking event and hand-off after prev
	}
	reset := func(r *region) { *r = region{window: r.window[:0], kinds: r.kinds[:0]} }
	for idx, r := range shareEvents(m, share, w, reset) {
		e := &m.Events[idx]
		if e.Kind != Read && e.Kind != Write || !isShared[e.Obj] {
			continue
		}
		tid, pos := int(e.Thread), e.Pos
		if r.prev > 0 && (nextIn(m.blocking[tid-1], &r.bl, r.prev+1, pos) || nextIn(m.handoffs[tid-1], &r.ho, r.prev+1, pos) ||
			m.scopeBreak(tid, r.lastWrite, r.prev, pos) > 0) {
			r.window, r.kinds, r.lastWrite = r.window[:0], r.kinds[:0], 0
		}
		r.prev = pos
		if e.Kind == Write {
			r.lastWrite = pos
		}
		v := e.Obj
		kind := uint8(1) // bit 0: read, bit 1: write
		if e.Kind == Write {
			kind = 2
		}
		// Every two variables of the window were paired when the later
		// of them entered it (unless skip), so a pair without stats is
		// one that skip drops.
		j := slices.Index(r.window, v)
		for i, u := range r.window {
			if i == j {
				continue
			}
			p := [2]int32{min(u, v), max(u, v)}
			if skip(p) {
				continue
			}
			st := stats[p]
			if st == nil {
				st = &pairStat{}
				stats[p] = st
			}
			if j < 0 {
				st.regions++
			}
			// The kinds of the two variables' accesses in the region.
			for ku := uint8(1); ku <= 2; ku++ {
				if r.kinds[i]&ku == 0 {
					continue
				}
				kx, ky := ku, kind
				if u != p[0] {
					kx, ky = kind, ku
				}
				c := &st.co[(kx-1)*2+ky-1]
				if tid <= 64 {
					*c |= 1 << (tid - 1)
				} else {
					st.anyLocal = true
				}
			}
		}
		if j >= 0 {
			// Most recent last.
			k := r.kinds[j] | kind
			copy(r.window[j:], r.window[j+1:])
			copy(r.kinds[j:], r.kinds[j+1:])
			r.window[len(r.window)-1], r.kinds[len(r.kinds)-1] = v, k
			continue
		}
		varRegions[v]++
		if len(r.window) == regionWindow {
			r.window = append(r.window[:0], r.window[1:]...)
			r.kinds = append(r.kinds[:0], r.kinds[1:]...)
		}
		r.window = append(r.window, v)
		r.kinds = append(r.kinds, kind)
	}
}

// nextIn is anyIn for a scan whose lo never decreases: *c is the index of
// the first element of sorted at or above the previous lo.
func nextIn(sorted []int32, c *int, lo, hi int32) bool {
	for *c < len(sorted) && sorted[*c] < lo {
		*c++
	}
	return *c < len(sorted) && sorted[*c] < hi
}

// neverInferred returns the test of the pairs of inferable variables that
// AtomicSets' filter drops whatever their statistics: no thread writes
// both, one is the other's pointer, or they are different objects of one
// kind (otherInstance). Its per-variable parts are computed once, so that
// the test costs a few comparisons where the names would cost string
// operations for every co-access of the trace.
func (m *Model) neverInferred(inferable []bool, writers []uint64, anyWriter []bool) func([2]int32) bool {
	n := len(m.Vars)
	obj, root, objShape, rootShape, ptr := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	ids := map[string]int32{}
	intern := func(s string) int32 {
		id, ok := ids[s]
		if !ok {
			id = int32(len(ids))
			ids[s] = id
		}
		return id
	}
	byName := map[string]int32{}
	for v := range m.Vars {
		if inferable[v] {
			byName[m.Vars[v].Name] = int32(v)
		}
	}
	for v := range m.Vars {
		ptr[v] = -1
		if !inferable[v] {
			continue
		}
		name := m.Vars[v].Name
		o, r := objectOf(name), rootOf(name)
		obj[v], root[v] = intern("o:"+o), intern("r:"+r)
		objShape[v], rootShape[v] = intern("s:"+instanceShape(o)), intern("s:"+instanceShape(r))
		if p, ok := byName[pointerOf(name)]; ok {
			ptr[v] = p
		}
	}
	return func(p [2]int32) bool {
		a, b := p[0], p[1]
		if writers[a]&writers[b] == 0 && !(anyWriter[a] && anyWriter[b]) || ptr[a] == b || ptr[b] == a {
			return true
		}
		return obj[a] != obj[b] && objShape[a] == objShape[b] || root[a] != root[b] && rootShape[a] == rootShape[b]
	}
}

// confidence is the share of the regions of the less accessed variable of
// p in which both are accessed (varRegions: regions per variable).
func confidence(regions int, varRegions []int, p [2]int32) float64 {
	n := min(varRegions[p[0]], varRegions[p[1]])
	if n == 0 {
		return 0
	}
	return min(1, float64(regions)/float64(n))
}

// writers returns, per variable, the threads that write it (bit t-1, t ≤
// 64) and whether a thread above 64 does.
func (m *Model) writers() ([]uint64, []bool) {
	bits := make([]uint64, len(m.Vars))
	above := make([]bool, len(m.Vars))
	pc := m.Pacer()
	for v := range m.Vars {
		for i := range m.Vars[v].access {
			pc.Step()
			if e := &m.Vars[v].access[i]; e.Kind == Write {
				if e.Thread <= 64 {
					bits[v] |= 1 << (e.Thread - 1)
				} else {
					above[v] = true
				}
			}
		}
	}
	return bits, above
}

// pointerOf returns the pointer variable through which a heap variable is
// named ("current" of "current#21->budget_ms", "main::ctx.items" of
// "main::ctx.items->len"), "" for other names. A pointer and what it
// points to are no inferred set: what a thread reads through the pointer
// depends on the pointer's value, so the pointer read stale and the field
// read fresh is no interleaving of the program (a copy-on-write swap).
func pointerOf(name string) string {
	i := strings.Index(name, "->")
	if i < 0 {
		return ""
	}
	p := name[:i]
	if j := strings.LastIndexByte(p, '#'); j > 0 {
		p = p[:j]
	}
	return p
}

// otherInstance reports whether two variables belong to different objects
// of one kind: elements of one array at different indices (hist[0].count,
// hist[1].sum), or blocks of one allocation site or pointer (node.n(…#2),
// node.n(…#3); buf->len, buf#2->len). Each such object is its own atomic
// set, locked on its own (per-object locks); a thread that visits them in
// turn correlates them, but no invariant spans them that the inference
// can tell. Declared sets are not filtered.
func otherInstance(a, b string) bool {
	oa, ob := objectOf(a), objectOf(b)
	ra, rb := rootOf(a), rootOf(b)
	return oa != ob && instanceShape(oa) == instanceShape(ob) || ra != rb && instanceShape(ra) == instanceShape(rb)
}

// rootOf returns the variable a name starts from: "buckets[0]" of
// "buckets[0]#4->key" and of "buckets[0]", "hist[1]" of "hist[1].sum".
func rootOf(name string) string {
	suffix := ""
	if i := strings.IndexByte(name, '('); i > 0 {
		name, suffix = name[:i], name[i:]
	}
	if i := strings.IndexAny(name, ".-#"); i > 0 {
		name = name[:i]
	}
	return name + suffix
}

// objectOf returns the object a variable belongs to: the name up to its
// last field ("hist[0]" of "hist[0].count", "buf#2->" of "buf#2->len",
// "node(calloc@list.c:50#4)" of "node.n(calloc@list.c:50#4)"), the whole
// name of an array element or a scalar.
func objectOf(name string) string {
	suffix := ""
	if i := strings.IndexByte(name, '('); i > 0 {
		name, suffix = name[:i], name[i:]
	}
	head, rest := "", name
	if i := strings.LastIndex(name, "->"); i >= 0 {
		head, rest = name[:i+2], name[i+2:]
	}
	if i := strings.LastIndexByte(rest, '.'); i > 0 {
		rest = rest[:i]
	} else if head != "" && !strings.ContainsRune(rest, '[') {
		rest = ""
	}
	return head + rest + suffix
}

// instanceShape leaves out the indices and block numbers of an object's
// name: "hist[]" of "hist[2]", "buf->" of "buf#2->" and of "buf->".
func instanceShape(obj string) string {
	var b strings.Builder
	for i := 0; i < len(obj); i++ {
		c := obj[i]
		if c == '#' {
			for i+1 < len(obj) && (isDigit(obj[i+1]) || obj[i+1] == 't' || obj[i+1] == '.') {
				i++
			}
			continue
		}
		b.WriteByte(c)
		if c == '[' {
			for i+1 < len(obj) && isDigit(obj[i+1]) {
				i++
			}
		}
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// siblings reports whether the two variables of p are fields of one
// struct object: names that differ only after their last '.'.
func (m *Model) siblings(p [2]int32) bool {
	a, b := structOf(m.Vars[p[0]].Name), structOf(m.Vars[p[1]].Name)
	return a != "" && a == b
}

// structOf returns the object part of a field's name: "range" of
// "range.lo", "node(calloc@list.c:50#4)" of "node.count(calloc@list.c:50#4)";
// "" when the name has no field.
func structOf(name string) string {
	suffix := ""
	if i := strings.IndexByte(name, '('); i > 0 {
		name, suffix = name[:i], name[i:]
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return ""
	}
	return name[:i] + suffix
}

// declaredSets returns the pairs of the user's sets.
func (m *Model) declaredSets(shared []SharedVar, sets [][]string) (map[[2]int32]bool, error) {
	out := map[[2]int32]bool{}
	for _, globs := range sets {
		var vars []int32
		for _, g := range globs {
			if _, err := path.Match(g, ""); err != nil {
				return nil, fmt.Errorf("--atomic-set: bad pattern %q: %v", g, err)
			}
			found := false
			for _, sv := range shared {
				if ok, _ := path.Match(g, sv.Name); ok {
					vars = append(vars, int32(sv.Var))
					found = true
				}
			}
			if !found {
				return nil, fmt.Errorf("--atomic-set: no shared variable matches %q in %s", g, m.Name)
			}
		}
		slices.Sort(vars)
		vars = slices.Compact(vars)
		for i, a := range vars {
			for _, b := range vars[i+1:] {
				out[[2]int32{a, b}] = true
			}
		}
	}
	return out, nil
}

// Concurrent reports whether some access of thread t1 to one of the
// variables vs and some access of thread t2 to one of them, at least one of
// the two a write, are not ordered by the synchronization order (Clock).
// When every such pair is ordered, every interleaving of a model keeps
// their recorded order, and a remote access recorded between two accesses
// of a thread reached it through an acquisition of that thread (Wait,
// Join, BarrierWait, SemWait), which is a region boundary: no pattern that
// needs a remote access between two local ones of one region, with a
// write in each pair (ltl.Pattern.Interleaved), can match.
func (m *Model) Concurrent(vs []int, t1, t2 int) bool {
	return m.NewConcurrency().Index(vs).Concurrent(t1, t2)
}

// Concurrency answers Model.Concurrent for many variables and thread
// pairs, as planning asks it. Not safe for concurrent use.
//
// (It used to keep, at their first use, a flat table of each thread's
// clock with respect to another: the synchronization order's snapshots
// were persistent clocks, slow to search. Its snapshots are rows now,
// searched directly; the tables were a copy of the order in the heap —
// 173 MB of a 100 M-event server trace.)
type Concurrency struct {
	m *Model
}

// NewConcurrency returns an empty Concurrency of m.
func (m *Model) NewConcurrency() *Concurrency {
	return &Concurrency{m: m}
}

// AccessIndex is the accesses of some variables by thread, sorted, for
// asking Concurrent and Locked of their thread pairs. It is not safe for
// concurrent use.
type AccessIndex struct {
	c           *Concurrency
	all, writes map[int][]int32 // by thread: positions

	// Locked's candidate locks and per-thread guards (locked.go), made on
	// its first call.
	candidates []int32
	guards     map[guardKey]*lockGuard
}

// Index indexes the accesses of the variables vs by thread.
func (c *Concurrency) Index(vs []int) *AccessIndex {
	m := c.m
	x := &AccessIndex{c: c, all: map[int][]int32{}, writes: map[int][]int32{}}
	pc := m.Pacer()
	for _, v := range vs {
		for i := range m.Vars[v].access {
			pc.Step()
			e := &m.Vars[v].access[i]
			t := int(e.Thread)
			x.all[t] = append(x.all[t], e.Pos)
			if e.Kind == Write {
				x.writes[t] = append(x.writes[t], e.Pos)
			}
		}
	}
	if len(vs) > 1 {
		for _, ps := range x.all {
			slices.Sort(ps)
		}
		for _, ps := range x.writes {
			slices.Sort(ps)
		}
	}
	return x
}

// Concurrent reports whether some access of t1 and some of t2 to the
// indexed variables, one a write, are not ordered by the synchronization
// order (Model.Concurrent).
func (x *AccessIndex) Concurrent(t1, t2 int) bool {
	return x.unordered(t1, x.all[t1], t2, x.writes[t2]) || x.unordered(t1, x.writes[t1], t2, x.all[t2])
}

// unordered reports whether an access of t2 at one of qs and one of t1 at
// one of ps (both sorted) are unordered: for some q, the first access p of
// t1 that does not happen before q does not happen after it either.
func (x *AccessIndex) unordered(t1 int, ps []int32, t2 int, qs []int32) bool {
	if len(ps) == 0 || len(qs) == 0 {
		return false
	}
	ord := x.c.m.sync
	i := 0
	for _, q := range qs {
		// Both the clock of t1 at q and the index of p only grow with q.
		for c := ord.Clock(t2, q, t1); i < len(ps) && ps[i] <= c; {
			i++
		}
		if i < len(ps) && ord.Clock(t1, ps[i], t2) < q {
			return true
		}
	}
	return false
}
