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
// start-up; a fatal signal and exit() are logged the same way, exit() with
// its status. A failure then lies some events after the last hold ended.
// It is the window's when it came while a thread was held, or within
// nearEvents events after; further on, only when the schedule left a mark
// on the candidate's variables: an order of two threads' accesses to one
// of them that the recorded run never had, after the hold began. Else it
// came outside any window (a server that crashed a hundred thousand events
// later, in code the hold never touched).
//
// Where the mark must be depends on what failed:
//   - The process saw the failure itself (an assertion, exit(1)): its
//     failing thread accessed the candidate's objects among its last
//     accesses (main's final check of a counter).
//   - A crash on memory (SIGSEGV, SIGBUS) may come further from its cause:
//     memory freed or corrupted in the window is used later, by another
//     thread (Apache 21285's cache_insert read a key freed 12,000 events
//     after a hold in its window). Within nearCrashEvents it is the
//     window's; further, only when the access that crashed was on the
//     candidate's objects: the cache's ejection loop touches the queue of a
//     candidate 94,000 events later on every request, and crashes on a key.
//   - The process ended well (exit status 0) and something else judged the
//     run (a load script checking a log, --check, a line of stderr): the
//     distance to the end says nothing, the mark anywhere after the hold
//     does (Apache 25520's lost log lines, judged after the server
//     stopped, belong to the buffer's counter, not to the worker queue
//     whose candidate happened to be held).
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
	// End is where the process died (Fatal, its signal) or called exit()
	// (Status, -1 when the log does not say).
	End    *logPoint
	Fatal  int
	Status int
}

// endedWell reports whether the process called exit(0): whatever failed
// was judged after it ended, by another process or a check.
func (l runLog) endedWell() bool {
	return l.End != nil && l.Fatal == 0 && l.Status == 0
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
	l := runLog{Status: -1}
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
				if st, err := strconv.Atoi(m["status"]); err == nil && w[0] == "exit" {
					l.Status = st
				}
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
	// reordered are the variables of the whole run (their generations
	// left out) accessed in an order the recorded run never had.
	reordered map[string]bool
}

// place reads a failed run's trace and puts its failure in or outside the
// window of its last hold (the rules above). objects are the window's
// objects (ObjectOf names) and vars its variables, a candidate's; an
// exploration has none, and any variable's new order is its mark.
// recorded are the orders of the recorded run.
func place(r io.Reader, l runLog, objects, vars []string, recorded map[orderKey]bool) (placement, error) {
	var p placement
	h := l.lastHold()
	if h == nil || l.onlyPreheld() {
		p.attribution = bugs.AttrNoHold
		// A hold that never began: only the whole run's new orders are
		// read, for commonCause.
		sc, err := scanFailure(r, l, &holdSpan{Begin: logPoint{Seq: ^uint64(0)}}, recorded)
		p.reordered = sc.inRun
		return p, err
	}
	sc, err := scanFailure(r, l, h, recorded)
	if err != nil {
		return p, err
	}
	p.reordered = sc.inRun
	w := &bugs.Window{Hold: h.describe()}
	if h.Released {
		w.Events = sc.after
		endMs := h.End.Ms
		if l.End != nil {
			endMs = l.End.Ms
		}
		w.Ms = max(endMs-h.End.Ms, 0)
	}
	isObject := func(name string) bool { return slices.Contains(objects, ObjectOf(name)) }
	touched, lastTouched, seenLast := false, false, false
	for i := len(sc.tail) - 1; i >= 0; i-- {
		n := sc.tail[i]
		if n.order != "" && len(w.Interleaved) < maxInterleaved {
			w.Interleaved = append(w.Interleaved, n.order)
		}
		if !seenLast && (l.End == nil || l.End.Thread == "" || n.e.Thread == l.End.Thread) {
			p.lastSite = fmt.Sprintf("%s:%d", n.e.File, n.e.Line)
			lastTouched, seenLast = isObject(n.e.Object), true
		}
		if h.Released && n.e.Seq <= h.End.Seq {
			continue // before the window ended: what the hold changed came after
		}
		touched = touched || isObject(n.e.Object)
	}
	marked := sc.marked(vars)
	if l.endedWell() && len(w.Interleaved) == 0 {
		w.Interleaved = sc.markOrders(vars)
	}
	p.window, p.blocked = w, sc.blocked
	crash := l.Fatal == sigSEGV || l.Fatal == sigBUS
	var in bool
	switch {
	case !h.Released:
		in = true
	case l.endedWell():
		in = marked
		w.Why = "the process ended with exit status 0 and the run was judged after it ended: " + markWhy(marked) + " after the hold began"
	case w.Events <= nearEvents:
		in = true
	case crash && w.Events <= nearCrashEvents:
		in = true
		w.Why = fmt.Sprintf("a crash on memory within %d events of the hold: what the window freed or changed is used later", nearCrashEvents)
	case crash:
		in = lastTouched && marked
		w.Why = fmt.Sprintf("a crash on memory more than %d events after the hold: %s, and the access that crashed was %s its objects",
			nearCrashEvents, markWhy(marked), yesNo(lastTouched, "on", "not on"))
	default:
		in = touched && marked
		w.Why = fmt.Sprintf("%s, and the failing thread %s its objects among its last %d accesses",
			markWhy(marked), yesNo(touched, "accessed", "did not access"), lastAccesses)
	}
	p.attribution = attribution(in)
	return p, nil
}

// markWhy says whether the hold left its mark on the candidate's variables.
func markWhy(marked bool) string {
	if marked {
		return "its variables were accessed in an order the recorded run never had"
	}
	return "the hold left no mark on its variables (no order of their accesses that the recorded run never had)"
}

// yesNo is yes when ok, else no.
func yesNo(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// attribution is AttrWindow when in, else AttrOutside.
func attribution(in bool) string {
	if in {
		return bugs.AttrWindow
	}
	return bugs.AttrOutside
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
	// reordered are the variables (their generations left out) accessed
	// in an order the recorded run never had, after the hold began, each
	// with its first such order; inRun those of the whole run.
	reordered map[string]string
	inRun     map[string]bool
}

// marked reports whether one of vars was reordered (any variable, when
// vars is empty).
func (sc failureScan) marked(vars []string) bool {
	return len(sc.markOrders(vars)) > 0
}

// markOrders are the first orders of vars that the recording never had
// (of any variable, when vars is empty), sorted, at most maxInterleaved.
func (sc failureScan) markOrders(vars []string) []string {
	want := map[string]bool{}
	for _, v := range vars {
		want[varKey(v)] = true
	}
	var out []string
	for v, o := range sc.reordered {
		if len(vars) == 0 || want[v] {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), maxInterleaved)]
}

// scanFailure reads a failed run's trace up to the failure (the log's end
// point, or the trace's end), its hold h.
func scanFailure(r io.Reader, l runLog, h *holdSpan, recorded map[orderKey]bool) (failureScan, error) {
	sc := failureScan{reordered: map[string]string{}, inRun: map[string]bool{}}
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
		if ok && !recorded[key] {
			sc.inRun[varKey(e.Object)] = true
		}
		if ok && !recorded[key] && e.Seq >= h.Begin.Seq {
			n.order = orderText(e, prev)
			if v := varKey(e.Object); sc.reordered[v] == "" {
				sc.reordered[v] = n.order
			}
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
