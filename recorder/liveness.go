package recorder

import (
	"fmt"
	"sort"
	"strings"
)

// liveness follows the threads' lives through the first pass, to tell the
// user which threads the trace has only in part: those created but never
// started, and those still running when the program exited (main
// returned without joining them) or was killed. The trace also shows it
// to mcpredict run without these comments: a thread's start routine is
// entered by an Enter at its start and exited when the thread ends (see
// traceWriter), so a thread whose start routine has no Exit still ran at
// the end, and one created with no event never ran.
type liveness struct {
	log     *rawLog
	created map[uint64]createdAt // by the child's token
	startFn map[uint64]uint64    // start routine by token
	ended   map[uint64]bool
	joined  map[uint64]bool
	exitBy  uint64 // the thread that called exit, 0 if none did
	// last is the kind and sequence number of each thread's latest event
	// (by rawThread.idx; kind 0: none yet): a thread whose last event is
	// a lock wait was blocked when the run ended.
	last []lastEvent
}

type lastEvent struct {
	kind kind
	seq  uint64
}

type createdAt struct{ by, pc uint64 }

func newLiveness(l *rawLog) *liveness {
	for i, t := range l.Threads {
		t.idx = i // as openRawLog numbers them
	}
	return &liveness{
		log:     l,
		created: map[uint64]createdAt{},
		startFn: map[uint64]uint64{},
		ended:   map[uint64]bool{},
		joined:  map[uint64]bool{},
		last:    make([]lastEvent, len(l.Threads)),
	}
}

func (v *liveness) note(ev *rawEvent) {
	v.last[ev.Thread.idx] = lastEvent{ev.Kind, ev.Seq}
	switch ev.Kind {
	case kCreate:
		v.created[ev.Addr] = createdAt{ev.Thread.Token, ev.PC}
	case kJoin:
		if ev.Extra == 0 {
			v.joined[ev.Addr] = true
		}
	case kThrStart:
		v.startFn[ev.Thread.Token] = ev.Addr
	case kThrEnd:
		v.ended[ev.Thread.Token] = true
	case kProcExit:
		v.exitBy = ev.Thread.Token
	}
}

// blocked returns, by thread token, the sequence number of each thread's
// lock wait that never returned: the thread's last event.
func (v *liveness) blocked() map[uint64]uint64 {
	b := map[uint64]uint64{}
	for i, ev := range v.last {
		if ev.kind == kLockWait {
			b[v.log.Threads[i].Token] = ev.seq
		}
	}
	return b
}

// warnings returns the warnings, and the threads that still ran at the
// end and those that never ran.
func (v *liveness) warnings(syms *procSyms) (warns []string, unfinished, neverRan []uint64) {
	logged := map[uint64]bool{}
	var main uint64
	for _, t := range v.log.Threads {
		logged[t.Token] = true
		if main == 0 || t.Token < main {
			main = t.Token
		}
	}
	describe := func(tok uint64) string {
		if fn, ok := v.startFn[tok]; ok {
			return fmt.Sprintf("%d (%s)", tok, syms.function(fn))
		}
		return fmt.Sprint(tok)
	}
	// A thread whose log the runtime could not create ran, unrecorded:
	// the lost-log warning names it.
	for _, lg := range v.log.Lost {
		logged[lg.Token] = true
	}
	for tok := range v.created {
		if !logged[tok] {
			neverRan = append(neverRan, tok)
		}
	}
	sort.Slice(neverRan, func(i, j int) bool { return neverRan[i] < neverRan[j] })
	for _, tok := range neverRan {
		c := v.created[tok]
		loc := syms.location(c.pc)
		if i := strings.LastIndex(loc, "-"); i > 0 {
			loc = loc[:i] + ":" + loc[i+1:]
		}
		warns = append(warns, fmt.Sprintf("thread %d never ran: created by thread %d at %s, it had not started when the program ended",
			tok, c.by, loc))
	}
	for _, t := range v.log.Threads {
		if t.Token != main && !v.ended[t.Token] && !v.joined[t.Token] {
			unfinished = append(unfinished, t.Token)
		}
	}
	if len(unfinished) > 0 {
		var names []string
		for _, tok := range unfinished {
			names = append(names, describe(tok))
		}
		what := "thread " + names[0] + " was"
		if len(names) > 1 {
			what = "threads " + strings.Join(names, ", ") + " were"
		}
		why := "when the recording ended (the program was killed or crashed)"
		if v.exitBy != 0 {
			why = fmt.Sprintf("when the program exited (thread %d returned from main or called exit without joining it)", v.exitBy)
			if len(names) > 1 {
				why = strings.Replace(why, "joining it", "joining them", 1)
			}
		}
		after := "what it did after that is not in the trace"
		if len(names) > 1 {
			after = "what they did after that is not in the trace"
		}
		warns = append(warns, fmt.Sprintf("%s still running %s: %s", what, why, after))
	}
	return warns, unfinished, neverRan
}
