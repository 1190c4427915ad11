package txn

import "github.com/mcpredict/mcpredict/tracemodel"

// Stream extracts the transactions of a trace as its events are read
// (tracemodel.Options.Visit), for an analysis that decides on a prefix of
// the trace (conflict --first). It is the pass of Extract, one event at a
// time: after Add of the events 0..ev, Set holds the frames and
// transactions of that prefix, TxnOf and FrameOf answer for its events,
// and a transaction's Last is its latest event so far (Open says whether
// an event closed it).
//
// What a prefix cannot tell: a frame left open is closed by its thread's
// last event, which only the end of the trace shows (Frame.End stays -1,
// the transaction stays Open); and whether the trace has Begin events
// (rule 3 of the package comment), which Add learns at the first Begin
// and answers by starting again (Add's restart).
type Stream struct {
	x    *extractor
	opts Options
}

// NewStream returns a Stream over the model m that a parse is filling.
func NewStream(m *tracemodel.Model, opts Options) *Stream {
	return &Stream{x: newExtractor(m, opts, false), opts: opts}
}

// Add adds event ev, the next in trace order (the first is 0). It returns
// the transaction of ev (an index in Set().Txns, -1 outside every
// transaction) and whether ev is its last event (it closes the
// transaction's outermost frame).
//
// restart is true when ev is the trace's first Begin and a function frame
// before it was taken for a transaction by the all-functions default:
// those were not the trace's transactions (rule 3). The stream has then
// started again, knowing that the trace has labels, without ev: the caller
// adds every event again from the first (as Extract makes a second pass);
// no later Add restarts.
func (s *Stream) Add(ev int32) (txn int32, ends, restart bool) {
	txn, ends, restart = s.x.add(ev)
	if restart {
		s.x = newExtractor(s.x.m, s.opts, true)
	}
	return txn, ends, restart
}

// Set returns the transactions of the events added so far.
func (s *Stream) Set() *Set { return s.x.s }

// Open reports whether transaction i (an index in Set().Txns) is still
// open: no event added so far closed it.
func (s *Stream) Open(i int32) bool { return s.x.open(i) }

// Current returns the open transaction of thread t (a model thread id),
// -1 if none.
func (s *Stream) Current(t int32) int32 {
	if int(t) >= len(s.x.ts) || s.x.ts[t].cur < 0 {
		return -1
	}
	return s.x.s.th[t].spans[s.x.ts[t].cur].x
}
