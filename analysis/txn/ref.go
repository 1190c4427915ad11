package txn

import "github.com/mcpredict/mcpredict/tracemodel"

// EventRef names one event of a trace in a result.
type EventRef struct {
	Line   int    // 1-based line of the event in the trace file
	Thread string // the thread's handle in the trace
	Action string // Read, Write, Lock, ...
	Object string // the variable, lock or other object
	File   string // source file, "" if unknown
	SrcLn  int    // source line, 0 if unknown
	Func   string // innermost function (Enter/Exit), "" if unknown
	Role   string // what the event is in the result; each analysis documents its roles
}

// Ref returns the EventRef of event ev (an index in m.Events) with the given
// role.
func Ref(m *tracemodel.Model, ev int32, role string) EventRef {
	e := &m.Events[ev]
	r := EventRef{
		Line:   int(e.Line),
		Thread: m.Threads[e.Thread-1].Handle,
		Action: e.Kind.String(),
		Role:   role,
	}
	switch e.Kind {
	case tracemodel.Read, tracemodel.Write:
		r.Object = m.Vars[e.Obj].Name
	case tracemodel.Create, tracemodel.Join:
		r.Object = m.Threads[e.Obj-1].Handle
	default:
		r.Object = m.Objects[e.Obj]
	}
	// Where the report shows it: the user's call, for an event in
	// library code (tracemodel.Model.Ref).
	ref := m.Ref(e)
	r.File, r.SrcLn, r.Func = ref.File, ref.Line, ref.Func
	return r
}

// Where returns "file:line" of the event's source location, "?" if unknown.
func (r EventRef) Where() string {
	return tracemodel.Loc{File: r.File, Line: r.SrcLn}.String()
}

// Info describes a transaction in a result.
type Info struct {
	Thread string // the thread's handle
	Kind   string // "function" or "label"
	Name   string // the function or label of its outermost frame
	First  int    // trace line of its first event
	Last   int    // trace line of its last event
}

// Info returns the description of Txn t.
func (s *Set) Info(m *tracemodel.Model, t int32) Info {
	x := s.Txns[t]
	f := s.Frames[x.Frame]
	return Info{
		Thread: m.Threads[x.Thread-1].Handle,
		Kind:   f.Kind.String(),
		Name:   f.Name,
		First:  int(m.Events[x.First].Line),
		Last:   int(m.Events[x.Last].Line),
	}
}
