package tracemodel

import (
	"sort"
	"strings"
)

// Context is what a report shows around one event: the locks its thread
// held, the functions it was in, and where the thread was created.
type Context struct {
	// Locks are the names of the locks the thread held at the event, in
	// the order it took them.
	Locks []string
	// Stack is the call chain of the event, innermost function first,
	// from the thread's Enter and Exit events (empty without them).
	Stack []string
	// StackLibrary marks the frames of Stack whose code is library code
	// (library.go): the code they were running at the event is in a
	// library file or unknown. Nil when the trace names no library file.
	StackLibrary []bool
	// Created is where the thread was created ("" for the first thread
	// or a thread whose Create the trace does not have).
	Created Loc
	// Allocated is where the heap block the event accesses was allocated
	// (the latest Alloc of its object before the event); zero for other
	// memory, or a block whose Alloc the trace does not have.
	Allocated Loc
}

// contextSteps bounds the events Context reads back from one event: a
// report asks for a few accesses, but one of a thread that ran for
// millions of events must not read them all.
const contextSteps = 1 << 20

// ContextAt returns the context of the event on trace line traceLine
// (ok false if no event is there). It reads the thread's events back from
// the event: the first operation on a lock met says whether the lock was
// held, an Enter not matched by a later Exit is a frame of the stack.
func (m *Model) ContextAt(traceLine int) (Context, bool) { return m.Contexts().At(traceLine) }

// Contexts reads the contexts of several events: each thread's creation
// site and each variable's allocation site are looked up once, not once
// per event (a report with hundreds of bugs asks for a thousand).
type Contexts struct {
	m         *Model
	created   []Loc // by thread id - 1; nil until first needed
	allocated map[int32]Loc
}

// Contexts returns a reader of the model's event contexts.
func (m *Model) Contexts() *Contexts { return &Contexts{m: m, allocated: map[int32]Loc{}} }

// At is ContextAt.
func (cs *Contexts) At(traceLine int) (Context, bool) {
	m := cs.m
	var c Context
	i := sort.Search(len(m.Events), func(i int) bool { return int(m.Events[i].Line) >= traceLine })
	if i >= len(m.Events) || int(m.Events[i].Line) != traceLine {
		return c, false
	}
	e := &m.Events[i]
	tid := int(e.Thread)
	decided := map[int32]bool{}
	depth := 0
	codeAt := e.Loc // where the current frame's code is at the event
	for pos, n := e.Pos-1, 0; pos >= 1 && n < contextSteps; pos, n = pos-1, n+1 {
		p := m.EventAt(tid, pos)
		switch p.Kind {
		case Lock, TryLock, RdLock, WrLock:
			if !decided[p.Obj] {
				decided[p.Obj] = true
				c.Locks = append(c.Locks, m.Objects[p.Obj])
			}
		case Unlock, RwUnlock:
			decided[p.Obj] = true
		case Exit:
			depth++
		case Enter:
			if depth > 0 {
				depth--
			} else {
				if m.libLoc != nil {
					c.StackLibrary = append(c.StackLibrary, m.isLibraryLoc(codeAt))
				}
				c.Stack = append(c.Stack, m.Objects[p.Obj])
				codeAt = p.Loc // the call is in the next frame's code
			}
		}
	}
	if len(c.Stack) == 0 && e.Func != 0 {
		c.Stack = []string{m.Objects[e.Func]}
	}
	for l, r := 0, len(c.Locks)-1; l < r; l, r = l+1, r-1 {
		c.Locks[l], c.Locks[r] = c.Locks[r], c.Locks[l]
	}
	if cs.created == nil {
		cs.created = m.creations()
	}
	c.Created = cs.created[tid-1]
	if e.Kind == Read || e.Kind == Write {
		a, ok := cs.allocated[e.Obj]
		if !ok {
			// One generation of a variable is one allocation.
			a = m.allocation(i, m.Vars[e.Obj].Name)
			cs.allocated[e.Obj] = a
		}
		c.Allocated = a
	}
	return c, true
}

// allocation returns where the heap block holding variable name was last
// allocated before event i: the latest Alloc whose block ("*cache.obj")
// the variable is part of ("cache.obj->value", "cache.obj[2]").
func (m *Model) allocation(i int, name string) Loc {
	for j, n := i-1, 0; j >= 0 && n < contextSteps; j, n = j-1, n+1 {
		e := &m.Events[j]
		if e.Kind != Alloc {
			continue
		}
		block := strings.TrimPrefix(m.Objects[e.Obj], "*")
		if rest, ok := strings.CutPrefix(name, block); ok && (rest == "" || strings.HasPrefix(rest, "->") || rest[0] == '.' || rest[0] == '[') {
			if u, ok := m.userSite(e); ok {
				return m.Locs[u.loc] // the user's call that allocated it
			}
			return m.Locs[e.Loc]
		}
	}
	return Loc{}
}

// creations returns where each thread was created (by thread id - 1), in
// one pass over the events.
func (m *Model) creations() []Loc {
	out := make([]Loc, len(m.Threads))
	for i := range m.Events {
		m.Pace(i)
		if e := &m.Events[i]; e.Kind == Create && e.Obj >= 1 && int(e.Obj) <= len(out) {
			out[e.Obj-1] = m.Locs[e.Loc]
		}
	}
	return out
}
