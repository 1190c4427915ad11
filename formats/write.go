package formats

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/mcpredict/mcpredict/formats/jsonl"
	"github.com/mcpredict/mcpredict/formats/std"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Writable are the formats Write writes.
func Writable() []string { return []string{CSV, "std", "jsonl"} }

// WriteOptions control Write.
type WriteOptions struct {
	// Compact writes the events one per line. By default every event stays
	// on its trace line (blank lines fill the gaps left by comments and
	// skipped lines), so that reports of the written trace name the same
	// trace lines as reports of the original.
	Compact bool
	// RAPID (std only) writes what RAPID reads: only its operations —
	// locks of any kind become acq/rel, a Wait with a mutex becomes rel and
	// acq of the mutex, and events without a RAPID counterpart (condition
	// variables, barriers, semaphores, Alloc/Free, and Begin/End/Enter/Exit
	// other than transaction boundaries) are dropped — and integer
	// locations: each distinct file:line gets a number from 1 in order of
	// first use in the output (0: unknown), listed in Locs. Implies Compact.
	RAPID bool
	// Boundaries (RAPID) says which events begin and end a transaction:
	// RAPID's begin replaces a beginning event, its end replaces an ending
	// End or Exit or follows any other ending event. Nil: Begin and End
	// events are the boundaries.
	Boundaries func(ev int) (begin, end bool)
	// Locs (RAPID) receives the location table: one "N file:line" line per
	// location number. Nil: not written.
	Locs io.Writer
}

// WriteStats count what Write did.
type WriteStats struct {
	Events  int // events written
	Dropped int // events without a counterpart (RAPID)
}

// Write writes the events of m in the format to (csv, std or jsonl).
func Write(w io.Writer, m *tracemodel.Model, to string, o WriteOptions) (WriteStats, error) {
	var st WriteStats
	if o.RAPID && to != "std" {
		return st, &InputError{Msg: "the RAPID option is for --to std only"}
	}
	var enc func([]byte, event) ([]byte, error)
	switch to {
	case CSV:
		enc = appendCSV
	case "std":
		enc = appendSTD
	case "jsonl":
		enc = func(dst []byte, e event) ([]byte, error) {
			return jsonl.Append(dst, jsonl.Event{Thread: jsonl.Token(e.Thread), Action: e.Action, Object: jsonl.Token(e.Object), Object2: jsonl.Token(e.Object2), File: e.File, Line: e.SrcLine}), nil
		}
	default:
		return st, &InputError{Msg: fmt.Sprintf("cannot write format %q (writable: csv, std, jsonl)", to)}
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf []byte
	line := 0
	emit := func(e event) error {
		if !o.Compact && !o.RAPID {
			for line+1 < e.TraceLine {
				bw.WriteByte('\n')
				line++
			}
		}
		var err error
		if buf, err = enc(buf[:0], e); err != nil {
			return fmt.Errorf("%s:%d: %w", m.Name, e.TraceLine, err)
		}
		buf = append(buf, '\n')
		bw.Write(buf)
		line++
		st.Events++
		return nil
	}
	var locs rapidLocs
	var early map[int][]event // RAPID: releases of cond waits, by the event they follow
	if o.RAPID {
		enc = locs.appendSTD
		early = waitReleases(m)
	}
	for i := range m.Events {
		if err := emitAll(emit, early[i-1]); err != nil {
			return st, err
		}
		e := eventOf(m, &m.Events[i])
		if !o.RAPID {
			if err := emit(e); err != nil {
				return st, err
			}
			continue
		}
		begin, end := e.Action == "Begin", e.Action == "End"
		if o.Boundaries != nil {
			begin, end = o.Boundaries(i)
		}
		rs := lowerRAPID(e)
		if e.Action == "Wait" && len(rs) == 2 && movedRelease(m, i) {
			rs = rs[1:] // its release went out where the thread blocked
		}
		switch {
		case begin:
			e.Action, e.Object = "Begin", ""
			rs = []event{e}
		case end && (e.Action == "End" || e.Action == "Exit"):
			rs = nil
		}
		if end {
			x := e
			x.Action, x.Object, x.Object2 = "End", "", ""
			rs = append(rs, x)
		}
		for _, r := range rs {
			if err := emit(r); err != nil {
				return st, err
			}
		}
		if len(rs) == 0 {
			st.Dropped++
		}
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	if o.RAPID && o.Locs != nil {
		return st, locs.write(o.Locs)
	}
	return st, nil
}

// rapidLocs numbers the locations of a RAPID trace.
type rapidLocs struct {
	ids   map[string]int
	names []string // by id - 1
}

// appendSTD appends the RAPID STD line of e: its location as a number, a
// begin or end without decor.
func (l *rapidLocs) appendSTD(dst []byte, e event) ([]byte, error) {
	id := 0
	if e.File != "" {
		key := fmt.Sprintf("%s:%d", e.File, e.SrcLine)
		if l.ids == nil {
			l.ids = map[string]int{}
		}
		if id = l.ids[key]; id == 0 {
			l.names = append(l.names, key)
			id = len(l.names)
			l.ids[key] = id
		}
	}
	if e.Action == "Begin" || e.Action == "End" {
		op, _ := std.Op(e.Action)
		return fmt.Appendf(dst, "%s|%s|%d", e.Thread, op, id), nil
	}
	dst, err := std.Append(dst, std.Event{Thread: e.Thread, Action: e.Action, Object: e.Object, Object2: e.Object2})
	if err != nil {
		return dst, err
	}
	dst = dst[:len(dst)-1] // the "?" of an unknown location
	return strconv.AppendInt(dst, int64(id), 10), nil
}

// write writes the table: "N file:line" per line, N from 1.
func (l *rapidLocs) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i, n := range l.names {
		fmt.Fprintf(bw, "%d %s\n", i+1, n)
	}
	return bw.Flush()
}

// event is an event of a model in the terms of the trace formats.
type event struct {
	TraceLine                             int
	Thread, Action, Object, Object2, File string
	SrcLine                               int
}

func eventOf(m *tracemodel.Model, ev *tracemodel.Event) event {
	e := event{TraceLine: int(ev.Line), Thread: m.Threads[ev.Thread-1].Handle, Action: ev.Kind.String()}
	if ev.Data {
		e.Action = tracemodel.DataReadAction
		if ev.Copy {
			e.Action = tracemodel.CopyReadAction
		}
	}
	switch ev.Kind {
	case tracemodel.Read, tracemodel.Write:
		e.Object = m.Objects[m.Vars[ev.Obj].Obj] // the object, not the generation (a#2)
	case tracemodel.Create, tracemodel.Join:
		e.Object = m.Threads[ev.Obj-1].Handle
	default:
		e.Object = m.Objects[ev.Obj]
	}
	if ev.Kind == tracemodel.Wait && ev.Obj2 != 0 {
		e.Object2 = m.Objects[ev.Obj2]
	}
	loc := m.Locs[ev.Loc]
	e.File, e.SrcLine = loc.File, loc.Line
	return e
}

// waitReleases places the release of the mutex of each cond Wait (whose
// event the trace has where the wait returned) right after the waiting
// thread's previous event, where it blocked: at the wait's return the
// waker has already taken the mutex, and a release there would have the
// waker acquire a mutex the waiter still holds. Keyed by the index of the
// event the release follows; a wait that is its thread's first event keeps
// its release (movedRelease false).
func waitReleases(m *tracemodel.Model) map[int][]event {
	out := map[int][]event{}
	for i := range m.Events {
		ev := &m.Events[i]
		if !movedRelease(m, i) {
			continue
		}
		prev := m.Threads[ev.Thread-1].Events[ev.Pos-2]
		rel := eventOf(m, ev)
		rel.Action, rel.Object, rel.Object2 = "Unlock", m.Objects[ev.Obj2], ""
		out[int(prev)] = append(out[int(prev)], rel)
	}
	return out
}

// movedRelease reports whether the Wait at index i has its release placed
// after its thread's previous event (waitReleases).
func movedRelease(m *tracemodel.Model, i int) bool {
	ev := &m.Events[i]
	return ev.Kind == tracemodel.Wait && ev.Obj2 != 0 && ev.Pos >= 2
}

// emitAll emits the events in order.
func emitAll(emit func(event) error, es []event) error {
	for _, e := range es {
		if err := emit(e); err != nil {
			return err
		}
	}
	return nil
}

// lowerRAPID maps an event to RAPID's operations (none: dropped).
func lowerRAPID(e event) []event {
	switch e.Action {
	case "Read", "Write", "Lock", "Unlock", "Create", "Join", "Begin", "End":
		return []event{e}
	case tracemodel.DataReadAction, tracemodel.CopyReadAction:
		e.Action = "Read"
		return []event{e}
	case "TryLock", "RdLock", "WrLock":
		e.Action = "Lock"
		return []event{e}
	case "RwUnlock":
		e.Action = "Unlock"
		return []event{e}
	case "Wait":
		if e.Object2 == "" {
			return nil
		}
		rel, acq := e, e
		rel.Action, rel.Object, rel.Object2 = "Unlock", e.Object2, ""
		acq.Action, acq.Object, acq.Object2 = "Lock", e.Object2, ""
		return []event{rel, acq}
	}
	return nil
}

func appendSTD(dst []byte, e event) ([]byte, error) {
	return std.Append(dst, std.Event{Thread: e.Thread, Action: e.Action, Object: e.Object, Object2: e.Object2, File: e.File, Line: e.SrcLine})
}

func appendCSV(dst []byte, e event) ([]byte, error) {
	for _, s := range []string{e.Thread, e.Object, e.Object2, e.File} {
		for i := 0; i < len(s); i++ {
			if s[i] == ',' || s[i] == '\n' || s[i] == '\r' {
				return dst, fmt.Errorf("%q cannot be written in CSV (contains a comma or a line end)", s)
			}
		}
	}
	dst = append(dst, e.Thread...)
	dst = append(dst, ", "...)
	dst = fmt.Appendf(dst, "%d, ", e.TraceLine)
	if e.File == "" {
		dst = append(dst, '?')
	} else {
		dst = fmt.Appendf(dst, "%s:%d", e.File, e.SrcLine)
	}
	dst = append(dst, ", "...)
	dst = append(dst, e.Action...)
	dst = append(dst, ", "...)
	dst = append(dst, e.Object...)
	if e.Object2 != "" {
		dst = append(dst, ", "...)
		dst = append(dst, e.Object2...)
	}
	return dst, nil
}
