package reproduce

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
)

// Where a failure is placed relative to the window of the run's holds.
//
// The runtime logs, with each hold and release, the number of the last
// event taken (the trace's second column) and the milliseconds since
// start-up; a fatal signal and exit() are logged the same way. A failure
// then lies some events after the last hold ended. It is the window's when
// it came while a thread was held, within nearEvents events after, or when
// the thread that failed had just accessed the window's objects; else it
// came outside any window (a server that crashed a hundred thousand events
// later, in code the hold never touched).
//
// A crash on memory (SIGSEGV, SIGBUS; not an assertion's abort, which
// fires where the program checks) may come further from its cause: memory freed
// or corrupted in the window is used later, by another thread (Apache
// 21285's cache_insert read a key freed 12,000 events after a hold in its
// window): for it, nearCrashEvents.
const (
	nearEvents      = 2000
	nearCrashEvents = 10 * nearEvents
	sigSEGV, sigBUS = 11, 7
	// lastAccesses is how many of the failing thread's last accesses
	// are looked at for the window's objects, and for accesses in an
	// order of threads the recording never had.
	lastAccesses = 100
	// maxInterleaved is how many such accesses a failure lists.
	maxInterleaved = 3
)

// logPoint is a place in a directed run: the last event's number and the
// milliseconds since the runtime started.
type logPoint struct {
	Seq    uint64
	Ms     int64
	Thread string // the thread token, for a fatal signal and exit()
}

// holdSpan is one hold of a directed run, from the runtime's log.
type holdSpan struct {
	Where    string // "before-lock", "point=2", ...
	Begin    logPoint
	End      logPoint
	Why      string // what let it go: matched, timeout, lock, stuck, ...
	AfterMs  int64
	Released bool
}

// runLog is what the runtime's log of one process says.
type runLog struct {
	Armed bool // the schedule's L1 was reached
	Holds []holdSpan
	// End is where the process died (Fatal, its signal) or called exit().
	End   *logPoint
	Fatal int
}

// fields reads the key=value words of a log line.
func fields(words []string) map[string]string {
	m := map[string]string{}
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok {
			m[k] = v
		}
	}
	return m
}

func pointOf(m map[string]string) logPoint {
	p := logPoint{Thread: m["thread"]}
	p.Seq, _ = strconv.ParseUint(m["seq"], 10, 64)
	p.Ms, _ = strconv.ParseInt(m["ms"], 10, 64)
	return p
}

// parseRunLog reads the runtime's log lines of one process.
func parseRunLog(lines []string) runLog {
	var l runLog
	open := map[string]int{} // where -> index of its unreleased hold
	for _, line := range lines {
		w := strings.Fields(line)
		if len(w) == 0 {
			continue
		}
		m := fields(w[1:])
		switch w[0] {
		case "trigger":
			l.Armed = true
		case "hold":
			if len(w) < 2 {
				continue
			}
			open[w[1]] = len(l.Holds)
			l.Holds = append(l.Holds, holdSpan{Where: w[1], Begin: pointOf(m)})
		case "release":
			if len(w) < 2 {
				continue
			}
			i, ok := open[w[1]]
			if !ok {
				continue
			}
			delete(open, w[1])
			h := &l.Holds[i]
			h.End, h.Why, h.Released = pointOf(m), m["why"], true
			h.AfterMs, _ = strconv.ParseInt(m["after_ms"], 10, 64)
		case "fatal", "exit":
			if l.End == nil {
				p := pointOf(m)
				l.End = &p
				l.Fatal, _ = strconv.Atoi(m["signal"])
			}
		}
	}
	return l
}

// lastHold is the hold that ended last (or is still held), nil if none.
func (l runLog) lastHold() *holdSpan {
	var last *holdSpan
	for i := range l.Holds {
		h := &l.Holds[i]
		if !h.Released {
			return h
		}
		if last == nil || h.End.Seq > last.End.Seq {
			last = h
		}
	}
	return last
}

// onlyPreheld reports whether a directed run's only holds were preholds
// (the remote thread held before its lock, to wait for L1) and its L1
// never came: the candidate's window never opened, and a prehold that
// matched some other thread's lock (a library's lock wrapper, at start-up)
// is no window of it.
func (l runLog) onlyPreheld() bool {
	if l.Armed || len(l.Holds) == 0 {
		return false
	}
	for _, h := range l.Holds {
		if !strings.HasPrefix(h.Where, "prehold") {
			return false
		}
	}
	return true
}

// describe says what a hold was, for a report.
func (h holdSpan) describe() string {
	if !h.Released {
		return fmt.Sprintf("held at %s (event %d) until the program ended", h.Where, h.Begin.Seq)
	}
	return fmt.Sprintf("held at %s from event %d to %d (%d ms, let go: %s)", h.Where, h.Begin.Seq, h.End.Seq, h.AfterMs, h.Why)
}

// access is an access of a trace, as far as orders of threads go.
type access struct {
	thread string
	site   string // "file:line Read"
	obj    string
}

// orderKey is an order of two threads' conflicting accesses to one
// variable: the earlier access's site, then the later one's.
type orderKey struct{ first, then string }

// orders collects the orders of conflicting accesses of a trace: for each
// access, the variable's previous access by another thread, when one of
// the two is a write.
type orders struct {
	last map[string]access // by variable
	seen map[orderKey]bool
}

func newOrders() *orders {
	return &orders{last: map[string]access{}, seen: map[orderKey]bool{}}
}

// add records e's order after the previous access to its variable, and
// returns it (ok false when there is none).
func (o *orders) add(e event) (orderKey, access, bool) {
	k := e.kind()
	if (k != 'R' && k != 'W') || e.Object == "" {
		return orderKey{}, access{}, false
	}
	a := access{thread: e.Thread, site: fmt.Sprintf("%s:%d %s", e.File, e.Line, e.Action), obj: e.Object}
	prev, ok := o.last[e.Object]
	o.last[e.Object] = a
	if !ok || prev.thread == e.Thread || (k != 'W' && !strings.Contains(prev.site, "Write")) {
		return orderKey{}, access{}, false
	}
	key := orderKey{prev.site, a.site}
	o.seen[key] = true
	return key, prev, true
}

// recordedOrders reads the orders of conflicting accesses of a trace.
func recordedOrders(r io.Reader) (map[orderKey]bool, error) {
	o := newOrders()
	err := scanEvents(r, func(e event) error {
		o.add(e)
		return nil
	})
	return o.seen, err
}

// placement is where a failure lies in its run's trace.
type placement struct {
	attribution string // bugs.AttrWindow, AttrOutside, AttrNoHold
	window      *bugs.Window
	lastSite    string // the failing thread's last access ("" unknown)
	// blocked are the sites of the acquisitions that never returned (a
	// run that hung in a deadlock), sorted.
	blocked []string
}

// place reads a failed run's trace and puts its failure in or outside the
// window of its last hold: in it when the program failed while held,
// within nearEvents events after the hold ended, or when the failing
// thread accessed the window's objects after it ended (objects: ObjectOf
// names, a candidate's variables; none for an exploration). recorded are
// the orders of the recorded run.
func place(r io.Reader, l runLog, objects []string, recorded map[orderKey]bool) (placement, error) {
	var p placement
	h := l.lastHold()
	if h == nil || l.onlyPreheld() {
		p.attribution = bugs.AttrNoHold
		return p, scanEvents(r, func(event) error { return nil })
	}
	sc, err := scanFailure(r, l, h, recorded)
	if err != nil {
		return p, err
	}
	w := &bugs.Window{Hold: h.describe()}
	if h.Released {
		w.Events = sc.after
		endMs := h.End.Ms
		if l.End != nil {
			endMs = l.End.Ms
		}
		w.Ms = max(endMs-h.End.Ms, 0)
	}
	touched := false
	for i := len(sc.tail) - 1; i >= 0; i-- {
		n := sc.tail[i]
		if n.order != "" && len(w.Interleaved) < maxInterleaved {
			w.Interleaved = append(w.Interleaved, n.order)
		}
		if p.lastSite == "" && (l.End == nil || l.End.Thread == "" || n.e.Thread == l.End.Thread) {
			p.lastSite = fmt.Sprintf("%s:%d", n.e.File, n.e.Line)
		}
		if h.Released && n.e.Seq <= h.End.Seq {
			continue // before the window ended: what the hold changed came after
		}
		for _, obj := range objects {
			touched = touched || ObjectOf(n.e.Object) == obj
		}
	}
	p.window, p.blocked = w, sc.blocked
	switch {
	case !h.Released || w.Events <= nearEvents || touched:
		p.attribution = bugs.AttrWindow
	case (l.Fatal == sigSEGV || l.Fatal == sigBUS) && w.Events <= nearCrashEvents:
		p.attribution = bugs.AttrWindow
	default:
		p.attribution = bugs.AttrOutside
	}
	return p, nil
}

// nearAccess is an access near a failure: the failing thread's own, or
// another thread's in an order the recording never had (order says it).
type nearAccess struct {
	e     event
	order string
}

// failureScan is what a failed run's trace says up to the failure.
type failureScan struct {
	tail    []nearAccess // the last lastAccesses of them, in order
	after   int          // events after the hold ended
	blocked []string     // sites of acquisitions that never returned, sorted
}

// scanFailure reads a failed run's trace up to the failure (the log's end
// point, or the trace's end), its hold h.
func scanFailure(r io.Reader, l runLog, h *holdSpan, recorded map[orderKey]bool) (failureScan, error) {
	var sc failureScan
	end := ^uint64(0)
	if l.End != nil {
		end = l.End.Seq
	}
	failing := ""
	if l.End != nil {
		failing = l.End.Thread
	}
	o := newOrders()
	blocked := map[string]bool{}
	err := scanEvents(r, func(e event) error {
		if e.Seq > end {
			return nil
		}
		if e.kind() == 'B' {
			blocked[fmt.Sprintf("%s:%d", e.File, e.Line)] = true
		}
		if h.Released && e.Seq > h.End.Seq {
			sc.after++
		}
		key, prev, ok := o.add(e)
		if k := e.kind(); k != 'R' && k != 'W' {
			return nil
		}
		n := nearAccess{e: e}
		if ok && !recorded[key] && e.Seq >= h.Begin.Seq {
			n.order = orderText(e, prev)
		}
		if failing != "" && e.Thread != failing && n.order == "" {
			return nil // another thread's access, in an order seen before
		}
		sc.tail = append(sc.tail, n)
		if len(sc.tail) > 4*lastAccesses {
			sc.tail = append(sc.tail[:0], sc.tail[len(sc.tail)-lastAccesses:]...)
		}
		return nil
	})
	if len(sc.tail) > lastAccesses {
		sc.tail = sc.tail[len(sc.tail)-lastAccesses:]
	}
	for b := range blocked {
		sc.blocked = append(sc.blocked, b)
	}
	slices.Sort(sc.blocked)
	return sc, err
}

// orderText says an order of two threads' accesses to a variable.
func orderText(e event, prev access) string {
	return fmt.Sprintf("%s: %s by thread %s, then %s:%d %s by thread %s (never in this order in the recorded run)",
		e.Object, prev.site, prev.thread, e.File, e.Line, e.Action, e.Thread)
}
