package reproduce

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Observation is where a directed run's trace has a pattern's accesses.
type Observation struct {
	// Lines are the trace lines of L1, the remote steps and L2, in that
	// order (for a deadlock cycle, of every step, in the schedule's
	// order); nil when the trace does not have the pattern.
	Lines []int
	// Loose is set when the remote accesses between L1 and L2 were not at
	// the steps' sites but on the same objects (ObserveLoose): the other
	// thread read another value and took another path. Remote then says
	// what they were.
	Loose  bool
	Remote []string
	// Ended is set when the run ended after the remote steps with the
	// local thread still held after L1 (Lines then end at the last remote
	// step): the remote thread read the state between the local thread's
	// two accesses, and the program exited before the second (aget's
	// SIGINT thread saves the torn totals, then exits).
	Ended bool
}

// Reproduced reports whether the pattern was observed.
func (o Observation) Reproduced() bool { return o.Lines != nil }

// objectOf is the object a variable is part of: what a pointer points to
// (g_cfg->port: "g_cfg->", not the pointer g_cfg), else the name before
// its first field or element (lg.data[3]: lg). Names of one trace are
// compared as they are (a heap block's generation is its address); a
// recorded name with a directed run's, without their generations.
func objectOf(v string) string {
	if i := strings.Index(v, "->"); i > 0 {
		return v[:i+2]
	}
	if i := strings.IndexAny(v, ".["); i > 0 {
		return v[:i]
	}
	return v
}

// touches reports whether an event is an access of the kind of the step
// to the step's object, at any site: for a step on L1's variable, the
// object L1 accessed in this run (l1Obj).
func (st Step) touches(e event, l1Obj string) bool {
	k := e.kind()
	if k != 'R' && k != 'W' {
		return false
	}
	if sk := st.kind(); sk != 'A' && sk != k {
		return false
	}
	if st.Same {
		return objectOf(e.Object) == objectOf(l1Obj)
	}
	return generationRE.ReplaceAllString(objectOf(e.Object), "#") == generationRE.ReplaceAllString(objectOf(st.Var), "#")
}

// atSite reports whether an event is an access of the step's kind at its
// site, to any variable: what the schedule counts occurrences of.
func (st Step) atSite(e event) bool {
	k := e.kind()
	if k != 'R' && k != 'W' {
		return false
	}
	if sk := st.kind(); sk != 'A' && sk != k {
		return false
	}
	return e.Line == st.Line && e.File == st.File
}

// matches reports whether an event is an access of the step (or an
// acquisition, or a blocked one, for the steps of a deadlock).
func (st Step) matches(e event) bool {
	k := e.kind()
	if sk := st.kind(); sk == 'L' || sk == 'B' {
		return k == sk && e.Line == st.Line && e.File == st.File && (st.Var == "" || sameVar(e.Object, st.Var))
	}
	if k != 'R' && k != 'W' {
		return false
	}
	if sk := st.kind(); sk != 'A' && sk != k {
		return false
	}
	return e.Line == st.Line && e.File == st.File && (st.Var == "" || sameVar(e.Object, st.Var))
}

var errFound = errors.New("found")

// Observe reads a trace (a directed run's recording) and looks for the
// steps in the observed order: a thread's access of L1, then accesses of
// the remote steps in order by other threads, then the same thread's
// access of L2, with no other access of L1 by that thread between (its
// latest one counts). The variables must be the steps' (heap names
// compared without their run-dependent parts).
//
// The steps of a deadlock cycle (L1 an acquisition) are observed by
// observeCycle.
func Observe(r io.Reader, steps []Step) (Observation, error) {
	if isCycle(steps) {
		return observeCycle(r, steps)
	}
	return observe(r, steps, func(remote []Step, e event, _ string) bool { return remote[0].matches(e) }, false, 0)
}

// ObserveLoose is Observe with remote accesses that may be at any site and
// on any part of the steps' objects: a run in which the other thread, held
// back or let in at another point, read another value and went another
// way (a reader that found a published object unfilled and stopped).
//
// One such access is enough: a thread that went another way may make only
// one. It must come while the local thread can still be held after L1 (at
// its first acquisition or its second release since L1, the schedule has
// let it go): a window left open across the local thread's later critical
// sections would take the other thread's next ordinary pass for a loose
// match (Apache 21285: a thread's insert of one request, another thread's
// insert a request later, the first thread's next request).
//
// The window must also be the schedule's: the one opened by the
// occurrence-th execution of L1's site (by any thread, as the schedule
// counts them; 0: any). An access of the object at another site is loose
// evidence only next to the hold: elsewhere in a run it is the program's
// ordinary traffic (aget's workers, each reading the total the others
// update, matched a save_log pattern 3,000 events before the hold).
//
// A deadlock cycle is never observed loosely.
func ObserveLoose(r io.Reader, steps []Step, occurrence int) (Observation, error) {
	if isCycle(steps) {
		return Observation{}, nil
	}
	obs, err := observe(r, steps, func(remote []Step, e event, l1Obj string) bool {
		for _, st := range remote {
			if st.touches(e, l1Obj) {
				return true
			}
		}
		return false
	}, true, occurrence)
	obs.Loose = obs.Lines != nil
	return obs, err
}

// observe finds the steps; remoteMatch says whether an event is the next
// remote step (the rest of the remote steps given), collapse makes one
// remote access enough, occurrence (> 0) opens a window at that execution
// of L1's site only.
func observe(r io.Reader, steps []Step, remoteMatch func([]Step, event, string) bool, collapse bool, occurrence int) (Observation, error) {
	l2Match := func(st Step, e event, _ string) bool { return st.matches(e) }
	if collapse {
		// The local thread, let go, may have gone another way too: any
		// access of its own to L1's variable closes the window.
		l2Match = func(st Step, e event, l1Obj string) bool {
			k := e.kind()
			return st.matches(e) || st.Same && (k == 'R' || k == 'W') && e.Object == l1Obj
		}
	}
	l1, l2, remote := splitSteps(steps)
	if l1 == nil || l2 == nil || len(remote) == 0 {
		return Observation{}, errors.New("schedule without L1, L2 or a remote step")
	}
	need := len(remote)
	if collapse {
		need = 1
	}
	// A step on L1's variable must be on the very variable L1 accessed in
	// this run (its generation: the same address), not only one of the
	// same name.
	sameObj := func(st Step, w *window, e event) bool { return !st.Same || e.Object == w.l1Obj }
	open := map[string]*window{}
	atL1 := 0 // executions of L1's site so far
	var obs Observation
	err := scanEvents(r, func(e event) error {
		if w := open[e.Thread]; w != nil && len(w.lines) == need && l2Match(*l2, e, w.l1Obj) && sameObj(*l2, w, e) {
			obs.Lines = append(append([]int{w.l1}, w.lines...), e.TraceLine)
			obs.Remote = w.remote
			return errFound
		}
		if w := open[e.Thread]; w != nil {
			if k := e.kind(); !((k == 'R' || k == 'W') && e.Object == w.l1Obj) {
				w.moved = true
			}
		}
		// Loosely, the remote access must come while the local thread could
		// be held: before it acquires a lock or releases a second one.
		if w := open[e.Thread]; collapse && w != nil && len(w.lines) == 0 {
			switch e.kind() {
			case 'L':
				delete(open, e.Thread)
			case 'U':
				if w.releases++; w.releases > 1 {
					delete(open, e.Thread)
				}
			}
		}
		// One access may be a remote step of another thread's window and
		// open its own (both threads run the same code).
		for th, w := range open {
			if th != e.Thread && len(w.lines) < need && remoteMatch(remote[len(w.lines):], e, w.l1Obj) && (collapse || sameObj(remote[len(w.lines)], w, e)) {
				w.lines = append(w.lines, e.TraceLine)
				w.remote = append(w.remote, fmt.Sprintf("%s %s %s:%d", e.Action, e.Object, e.File, e.Line))
			}
		}
		if l1.atSite(e) {
			atL1++
		}
		if l1.matches(e) && (occurrence <= 0 || atL1 == occurrence) {
			open[e.Thread] = &window{l1: e.TraceLine, l1Obj: e.Object}
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return obs, nil
	}
	if err == nil && readsOnly(remote) {
		obs = endedHeld(open, need)
	}
	return obs, err
}

// window is, for a thread, the remote steps made by others since its
// latest L1.
type window struct {
	l1       int
	l1Obj    string // the variable L1 accessed, as this trace names it
	lines    []int
	remote   []string
	releases int  // the local thread's releases since L1 (loose only)
	moved    bool // the local thread did more than access L1's variable since L1
}

// endedHeld is the observation of a run that ended with a local thread
// held after L1 (nothing but L1's variable accessed since) and all need
// remote steps made (the earliest such window), if any: the remote thread
// read what lies between the local thread's two accesses, which is the
// violation when it only reads.
func endedHeld(open map[string]*window, need int) Observation {
	var obs Observation
	for _, w := range open {
		if len(w.lines) == need && !w.moved && (obs.Lines == nil || w.l1 < obs.Lines[0]) {
			obs = Observation{Lines: append([]int{w.l1}, w.lines...), Remote: w.remote, Ended: true}
		}
	}
	return obs
}

// readsOnly reports whether every remote step is a read.
func readsOnly(remote []Step) bool {
	for _, st := range remote {
		if st.kind() != 'R' {
			return false
		}
	}
	return true
}

// isCycle reports whether steps are a deadlock cycle's: L1 is an
// acquisition.
func isCycle(steps []Step) bool {
	l1, _, _ := splitSteps(steps)
	return l1 != nil && l1.kind() == 'L'
}

// observeCycle looks for a deadlock cycle in a trace: a thread that
// acquired at L1 and, holding that lock, blocked at L2 (a Blocked event:
// the acquisition never returned), and for each remote step Rk a thread of
// its own that acquired at Rk and, holding that lock, blocked at Bk. A
// schedule without B steps (written before they were) wants of Rk only an
// acquisition by another thread between L1 and L2, as it did then.
func observeCycle(r io.Reader, steps []Step) (Observation, error) {
	l1, l2, remote := splitSteps(steps)
	if l1 == nil || l2 == nil || len(remote) == 0 {
		return Observation{}, errors.New("deadlock schedule without L1, L2 or a remote step")
	}
	blockedStep := map[string]*Step{} // Rk -> Bk
	for i := range steps {
		if st := &steps[i]; strings.HasPrefix(st.Role, "B") {
			blockedStep["R"+st.Role[1:]] = st
		}
	}
	// A part of the cycle a thread may play: its acquisition at a lock
	// step, still held when it blocked at the blocked step (blocked 0:
	// an old schedule's remote step, not blocked).
	type part struct{ lock, blocked int }
	type thread struct {
		held  map[string]event // the locks it holds now, by name
		locks []event          // its acquisitions at a lock step
		// parts[i] are the parts it can play of pair i (0: L1 and L2, k:
		// Rk and Bk).
		parts [][]part
	}
	pairs := len(remote) + 1
	lockOf := func(i int) Step {
		if i == 0 {
			return *l1
		}
		return remote[i-1]
	}
	blockOf := func(i int) *Step {
		if i == 0 {
			return l2
		}
		return blockedStep[remote[i-1].Role]
	}
	threads := map[string]*thread{}
	var order []string
	err := scanEvents(r, func(e event) error {
		t := threads[e.Thread]
		if t == nil {
			t = &thread{held: map[string]event{}, parts: make([][]part, pairs)}
			threads[e.Thread] = t
			order = append(order, e.Thread)
		}
		switch e.kind() {
		case 'L':
			t.held[e.Object] = e
			for i := 0; i < pairs; i++ {
				if lockOf(i).matches(e) {
					t.locks = append(t.locks, e)
					break
				}
			}
		case 'U':
			delete(t.held, e.Object)
		case 'B':
			for i := 0; i < pairs; i++ {
				b := blockOf(i)
				if b == nil || !b.matches(e) {
					continue
				}
				for _, h := range t.held {
					if lockOf(i).matches(h) {
						t.parts[i] = append(t.parts[i], part{h.TraceLine, e.TraceLine})
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return Observation{}, err
	}
	// Assign each pair a thread of its own: the local pair first (an old
	// schedule's remote steps are between its lines), then the others.
	lines := make([]int, len(steps))
	at := map[string]int{} // role -> index in steps
	for i, st := range steps {
		at[st.Role] = i
	}
	used := map[string]bool{}
	var assign func(i, lo, hi int) bool
	assign = func(i, lo, hi int) bool {
		if i == pairs {
			return true
		}
		for _, th := range order {
			if used[th] {
				continue
			}
			t := threads[th]
			var cands []part
			if blockOf(i) != nil {
				cands = t.parts[i]
			} else {
				for _, e := range t.locks {
					if lockOf(i).matches(e) && e.TraceLine > lo && e.TraceLine < hi {
						cands = append(cands, part{lock: e.TraceLine})
					}
				}
			}
			for _, p := range cands {
				used[th] = true
				nlo, nhi := lo, hi
				if i == 0 {
					nlo, nhi = p.lock, p.blocked
				}
				if assign(i+1, nlo, nhi) {
					lines[at[lockOf(i).Role]] = p.lock
					if b := blockOf(i); b != nil {
						lines[at[b.Role]] = p.blocked
					}
					return true
				}
				used[th] = false
			}
		}
		return false
	}
	if !assign(0, 0, 0) {
		return Observation{}, nil
	}
	var obs Observation
	for i, st := range steps {
		if st.Role == "PRE" || st.Role == "PEER" {
			continue // where threads are held, not steps of the pattern
		}
		obs.Lines = append(obs.Lines, lines[i])
	}
	return obs, nil
}
