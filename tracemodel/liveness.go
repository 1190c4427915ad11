package tracemodel

import (
	"fmt"
	"strings"
)

// livenessWarnings tells which threads the trace has only in part, from
// the events alone:
//
//   - a thread that some Create names but that has no event never ran (the
//     program ended before it started, or the recorder lost it);
//   - a thread other than the first that was never joined and whose
//     outermost function has no Exit still ran when the trace ended: a
//     program that returned from main without joining it, or that was
//     killed. The mcpredict recorder enters a thread's start routine with
//     an Enter at its start and exits it when the thread ends (even when
//     it records no other function events), so that an unfinished thread
//     is one whose start routine never exits. Traces without function
//     events give no such warning.
//
// Their events after that point are missing, so the predictions about
// them are partial.
func (m *Model) livenessWarnings() []string {
	if len(m.Threads) < 2 {
		return nil
	}
	createdAt := make([]int32, len(m.Threads)+1) // Loc of the Create, +1 so 0 = none
	joined := make([]bool, len(m.Threads)+1)
	for i := range m.Events {
		m.Pace(i)
		e := &m.Events[i]
		if e.Obj <= 0 || int(e.Obj) > len(m.Threads) {
			continue
		}
		switch e.Kind {
		case Create:
			createdAt[e.Obj] = e.Loc + 1
		case Join:
			joined[e.Obj] = true
		}
	}
	var never, running []string
	for i := 1; i < len(m.Threads); i++ {
		t := &m.Threads[i]
		name := fmt.Sprintf("%d (handle %s", t.ID, t.Handle)
		if len(t.Events) == 0 {
			if createdAt[t.ID] > 0 {
				s := name + ")"
				if l := createdAt[t.ID] - 1; l > 0 && int(l) < len(m.Locs) {
					s = fmt.Sprintf("%s, created at %s)", name, m.Locs[l])
				}
				never = append(never, s)
			}
			continue
		}
		if joined[t.ID] {
			continue
		}
		var open []string
		for k, ei := range t.Events {
			m.Pace(k)
			e := &m.Events[ei]
			switch e.Kind {
			case Enter:
				open = append(open, m.liveObjectName(e.Obj))
			case Exit:
				if len(open) > 0 {
					open = open[:len(open)-1]
				}
			}
		}
		if len(open) > 0 {
			running = append(running, fmt.Sprintf("%s, in %s)", name, open[0]))
		}
	}
	var out []string
	if len(never) == 1 {
		out = append(out, fmt.Sprintf("thread %s never ran: the trace has no event of it", never[0]))
	} else if len(never) > 1 {
		out = append(out, fmt.Sprintf("threads %s never ran: the trace has no event of them", strings.Join(never, ", ")))
	}
	if len(running) == 1 {
		out = append(out, fmt.Sprintf("thread %s was still running when the trace ended (never joined, and the function it started in had not returned): what it did after that is missing from the trace", running[0]))
	} else if len(running) > 1 {
		out = append(out, fmt.Sprintf("threads %s were still running when the trace ended (never joined, and the functions they started in had not returned): what they did after that is missing from the trace", strings.Join(running, ", ")))
	}
	return out
}

// liveObjectName is the name of object o, or "?".
func (m *Model) liveObjectName(o int32) string {
	if o > 0 && int(o) < len(m.Objects) {
		return m.Objects[o]
	}
	return "?"
}
