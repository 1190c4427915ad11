package tracemodel

import "errors"

// Reading a trace as a stream (Options.Visit).
//
// Parse and ParseRecords call Options.Visit with each event they add to
// the model, in trace order, once its line has passed every check of the
// trace format: a bad line before it is the usual *ParseError, and a
// visitor sees exactly the events, the thread ids, the variables and the
// object ids that the finished model has. It lets an analysis that can
// decide on a prefix of the trace (conflict --first) check the events as
// they are read and stop the read.
//
// While the parse runs, the model given to the visitor holds the events
// read so far and what their lines named: Events (by index; never retained
// across calls, the slice moves when the parse spills to disk), Threads
// (ids and handles; no Thread.Events), Objects, Locs, Vars (names; no
// accesses), Sources and Reached of the comments read. SyncObjectSoFar
// says which objects were used for synchronization so far. Nothing else of
// the model (orders, scopes, indexes, lock operations) is there yet.
//
// A visitor that returns true stops the read: the line of that event is
// the last read (the reader stops, a format plugin's read is closed), and
// Parse returns the model of the prefix without an error. A stopped model
// is the model of the events read, with what their analyses need to be
// reported (finishPrefix): Thread.Events, Var.Accesses and Model.AccessesOf,
// SharedVars, IsSyncVar, Contexts, EventAt, Position, EventCount, Spill,
// the warnings of the oddities so far; it has none of the orders, scopes
// or projections of a finished model (SyncOrder, Clock, DataflowOrder,
// Project and what uses them would panic), and the lines after the stop
// were never read: a bad line there is no error, a "# end:" trailer is
// not seen, and the counts of the report are those of the events read.
// It must be closed like any model.

// A Visitor sees one event of a trace being read: ev is its index in
// m.Events. It returns true to stop the read after that event.
type Visitor func(m *Model, ev int32) (stop bool)

// errStopped ends the read loop of a parse that a visitor stopped.
var errStopped = errors.New("read stopped by the visitor")

// visit calls the visitor on the event the last line added, if it added
// one (the model had n events before it).
func (b *builder) visit(n int) bool {
	if b.opts.Visit == nil || len(b.m.Events) <= n {
		return false
	}
	return b.opts.Visit(b.m, int32(n))
}

// SyncObjectSoFar reports whether object obj (an index in Objects) was
// used by a synchronization action so far: during a parse, in the events
// read; in a finished model, in the trace (IsSyncVar of its variables).
func (m *Model) SyncObjectSoFar(obj int32) bool {
	return int(obj) < len(m.syncObj) && m.syncObj[obj]
}

// finishPrefix makes the model of the events read when a visitor stopped
// the read: the indexes of its threads and variables and what a report of
// its events reads, not the orders and scopes of finish.
func (b *builder) finishPrefix() (*Model, error) {
	m := b.m
	if err := b.indexes(); err != nil {
		return nil, err
	}
	if m.Sources != nil {
		m.locSource = make([]string, len(m.Locs))
		for i, l := range m.Locs {
			m.locSource[i] = m.Sources[l]
		}
	}
	if s := m.spill; s != nil {
		s.events.written()
		s.locks.Load().written()
		s.arena.Load().written()
	}
	m.Warnings = append(m.Warnings, b.oddityWarnings()...)
	return m, nil
}
