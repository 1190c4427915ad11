package reproduce

import (
	"errors"
	"io"
)

// Observation is where a directed run's trace has a pattern's accesses.
type Observation struct {
	// Lines are the trace lines of L1, the remote steps and L2, in that
	// order; nil when the trace does not have the pattern.
	Lines []int
}

// Reproduced reports whether the pattern was observed.
func (o Observation) Reproduced() bool { return o.Lines != nil }

// matches reports whether an event is an access of the step.
func (st Step) matches(e event) bool {
	k := e.kind()
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
func Observe(r io.Reader, steps []Step) (Observation, error) {
	var l1, l2 *Step
	var remote []Step
	for i := range steps {
		switch st := &steps[i]; {
		case st.Role == "L1":
			l1 = st
		case st.Role == "L2":
			l2 = st
		case st.Role != "PRE":
			remote = append(remote, *st)
		}
	}
	if l1 == nil || l2 == nil || len(remote) == 0 {
		return Observation{}, errors.New("schedule without L1, L2 or a remote step")
	}
	// Per thread, the remote steps made by others since its latest L1.
	type window struct {
		l1    int
		lines []int
	}
	open := map[string]*window{}
	var obs Observation
	err := scanEvents(r, func(e event) error {
		if w := open[e.Thread]; w != nil && len(w.lines) == len(remote) && l2.matches(e) {
			obs.Lines = append(append([]int{w.l1}, w.lines...), e.TraceLine)
			return errFound
		}
		// One access may be a remote step of another thread's window and
		// open its own (both threads run the same code).
		for th, w := range open {
			if th != e.Thread && len(w.lines) < len(remote) && remote[len(w.lines)].matches(e) {
				w.lines = append(w.lines, e.TraceLine)
			}
		}
		if l1.matches(e) {
			open[e.Thread] = &window{l1: e.TraceLine}
		}
		return nil
	})
	if errors.Is(err, errFound) {
		err = nil
	}
	return obs, err
}
