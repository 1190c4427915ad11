package conflict

import (
	"context"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Stream is CheckFirst on a trace as it is read: its Visit, given to the
// parser (tracemodel.Options.Visit), extracts the transactions (txn.Stream)
// and checks each event as the parser adds it, and stops the read once the
// first cycle is found and the prefix decides the report. The read then
// ends there: the rest of the trace is neither parsed nor indexed (a bad
// line after the stop is not an error; one before it is the parser's
// usual error), and Result is what CheckFirst of the whole trace returns:
// the same violations, witnesses, Begin, End and messages.
//
// The prefix decides the report when:
//
//   - the transactions are those of the prefix: --atomic names them, or a
//     Begin was read before the cycle (rule 3 of package txn: the labels
//     are the transactions). Under the all-functions default a Begin
//     later in the trace would make the labels the transactions, so the
//     stream does not stop;
//   - the transaction of the cycle has ended (its End or Exit was read):
//     the report names its last event;
//   - every thread with a transaction open at the cycle has an event
//     after it: none of those transactions ended with its thread's last
//     event (which the whole trace's pass would have ended there, with a
//     handshake that can close a cycle first).
//
// Until it stops, a Begin after a function frame taken for a transaction
// by default, or a synchronization action on an object whose accesses
// were checked as a variable's (the whole trace's pass ignores the
// accesses of synchronization objects), makes it check the events read
// so far again from the first, as the whole trace's pass would have; after
// the cycle either makes it read to the end. When it does not stop, the
// trace is read to its end and the whole model's analysis is the report
// (Stopped is false).
//
// What it does not do: an object accessed as a variable before the stop
// and used for synchronization only after it counts as a variable (the
// whole trace's pass would leave out its accesses); the transaction counts
// are those read; and sidetrack, which predicts over the whole trace,
// does not run (no "(also sidetrack: ...)" on the finding).
type Stream struct {
	opts Options
	m    *tracemodel.Model
	tx   *txn.Stream
	c    *checker
	buf  []access
	// checked is the number of events checked (0..checked-1).
	checked int32
	// data marks, by object, those whose accesses were checked as a
	// variable's.
	data []bool
	// found: the first cycle closed; wait are the threads whose next
	// event must be read before the stop (each had a transaction open
	// at the cycle).
	found bool
	wait  []int32
	// void: the prefix does not decide; the trace is read to the end.
	void    bool
	stopped bool
	line    int // the trace line of the last event read, once stopped
	stats   Stats
}

// NewStream returns a Stream that checks the transactions opts select
// (opts.First is implied).
func NewStream(opts Options) *Stream {
	opts.First = true
	return &Stream{opts: opts}
}

// Visit is a tracemodel.Visitor: it checks event ev of the trace being
// read into m, and returns true to stop the read.
func (s *Stream) Visit(m *tracemodel.Model, ev int32) bool {
	if s.m == nil {
		s.m = m
		s.tx = txn.NewStream(m, txn.Options{Atomic: s.opts.Atomic, NotAtomic: s.opts.NotAtomic})
		s.c = s.newChecker()
	}
	if s.void || s.stopped {
		return false
	}
	e := &m.Events[ev]
	again := s.syncAfterData(e)
	_, _, restart := s.tx.Add(ev)
	if restart {
		for i := int32(0); i < ev; i++ {
			s.tx.Add(i)
		}
		s.tx.Add(ev)
		again = true
	}
	if s.found {
		if again {
			s.void = true
			return false
		}
		s.seen(e.Thread)
		return s.decided()
	}
	if again {
		s.c = s.newChecker()
		s.checked = 0
		clear(s.data)
	}
	for s.checked <= ev && !s.found {
		s.check(s.checked)
		s.checked++
	}
	if !s.found {
		return false
	}
	if len(s.opts.Atomic) == 0 && !s.tx.Set().Labels {
		s.void = true // the all-functions default: a later Begin would change the transactions
		return false
	}
	for _, t := range s.c.open {
		s.wait = append(s.wait, t)
	}
	// An event after the cycle's read again: its thread has another event.
	for i := s.checked; i <= ev; i++ {
		s.seen(m.Events[i].Thread)
	}
	return s.decided()
}

func (s *Stream) newChecker() *checker {
	c := newChecker(s.m, s.tx.Set())
	c.live = s.tx
	return c
}

// check checks event ev, already added to the transactions.
func (s *Stream) check(ev int32) {
	set := s.tx.Set()
	x := set.TxnOf(ev)
	ends := x >= 0 && set.Txns[x].Last == ev && !s.tx.Open(x)
	s.buf = s.c.step(ev, x, ends, s.buf[:0])
	if len(s.c.out) > 0 {
		s.found = true
		s.stats = s.c.stats
		s.stats.Txns = len(set.Txns)
	}
	m := s.m
	if e := &m.Events[ev]; e.Kind.IsAccess() {
		if o := m.Vars[e.Obj].Obj; !m.SyncObjectSoFar(o) {
			for int(o) >= len(s.data) {
				s.data = append(s.data, false)
			}
			s.data[o] = true
		}
	}
}

// syncAfterData reports whether e is a synchronization action on an
// object whose accesses were checked as a variable's.
func (s *Stream) syncAfterData(e *tracemodel.Event) bool {
	if !e.Kind.IsSync() {
		return false
	}
	is := func(o int32) bool { return int(o) < len(s.data) && s.data[o] }
	return is(e.Obj) || (e.Kind == tracemodel.Wait && e.Obj2 != 0 && is(e.Obj2))
}

// seen notes an event of thread t after the cycle.
func (s *Stream) seen(t int32) {
	for i, u := range s.wait {
		if u == t {
			s.wait = append(s.wait[:i], s.wait[i+1:]...)
			return
		}
	}
}

// decided reports whether the read can stop, and then completes the
// violations with their transactions' ends.
func (s *Stream) decided() bool {
	if len(s.wait) > 0 {
		return false
	}
	for i := range s.c.out {
		if s.tx.Open(s.c.out[i].txn) {
			return false
		}
	}
	m, set := s.m, s.tx.Set()
	for i := range s.c.out {
		v := &s.c.out[i]
		tx := set.Txns[v.txn]
		v.Txn = set.Info(m, v.txn)
		v.End = txn.Ref(m, tx.Last, RoleEnd)
		v.endEv = tx.Last
		v.Message = message(v)
	}
	s.stopped = true
	s.line = int(m.Events[len(m.Events)-1].Line)
	return true
}

// Stopped reports whether the stream stopped the read: Result is then the
// report of the trace, and the parsed model that of the events read. If
// not, the trace was read to its end and its model is to be analysed as
// usual.
func (s *Stream) Stopped() bool { return s.stopped }

// Result returns the violations of the first cycle and the pass's
// statistics (Txns: the transactions read), once Stopped.
func (s *Stream) Result() ([]Violation, Stats) {
	if !s.stopped {
		return nil, Stats{}
	}
	return s.c.out, s.stats
}

// Line returns the trace line of the last event read, once Stopped.
func (s *Stream) Line() int { return s.line }

// Analyzer returns the analysis conflict whose findings are the stream's
// Result, to run (analysis.Run) on the model of the stopped read: the same
// findings as the analysis of New with Options.First on the whole trace,
// without sidetrack's cross-references; its summary says where the read
// stopped.
func (s *Stream) Analyzer() *analysis.Analyzer {
	return newAnalyzer(nil, func(ctx context.Context, pass *analysis.Pass) (any, error) {
		vs, st := s.Result()
		for i := range vs {
			pass.Report(finding(&vs[i]))
		}
		pass.Summarize("%s; --first: the read stopped at line %d, after the first cycle and the end of its transaction (%s)", summarize(st), s.line, readNote)
		return nil, nil
	})
}

// readNote says what a stopped read leaves out.
const readNote = "the counts are of the events read; sidetrack, which needs the whole trace, not run"
