package recorder

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxExpand bounds the number of trace events one access expands to: a
// memcpy over an array touches one variable per element, and the first
// elements are enough to see a conflict on the array.
const maxExpand = 64

// ConvertOptions control Convert.
type ConvertOptions struct {
	// PID selects the process whose log is converted when the directory
	// holds several (a program that runs others); 0 means the only one.
	PID int
	// FullPaths writes source files as the DWARF names them instead of
	// their base names (DESIGN §2's examples use base names, as Pin did).
	FullPaths bool
	// NoFuncs leaves out the Enter and Exit events.
	NoFuncs bool
	// Comments are written first, each as a "# " line.
	Comments []string
	// Warn receives problems that do not stop the conversion (a module
	// without readable symbols). Nil discards them.
	Warn func(string)
}

// Stats summarise a converted trace.
type Stats struct {
	PID     int
	Exe     string
	Threads int // threads that recorded at least their header
	Events  int // trace lines written
}

// Convert reads the raw log in dir (written by a program built with
// mcpredict cc and run with MCPREDICT_TRACE_DIR=dir) and writes it to w as
// a trace in the CSV format of DESIGN §2, in the recorded total order.
//
// It makes two passes over the log: the first replays the heap to name
// each block after the first pointer the program reached it through, so
// that every access to the block, even those before that read, gets the
// same name; the second writes the lines.
func Convert(dir string, w io.Writer, opts ConvertOptions) (Stats, error) {
	l, err := openRawLog(dir, opts.PID)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{PID: l.PID, Exe: l.Exe, Threads: len(l.Threads)}
	syms := newProcSyms(l.Modules, opts.FullPaths, opts.Warn)

	learner := newNamer(syms, l.Threads)
	if err := l.scan(func(ev *rawEvent) error {
		learner.learn(ev)
		return nil
	}); err != nil {
		return st, err
	}

	n := newNamer(syms, l.Threads)
	n.blockNames = learner.blockNames
	bw := bufio.NewWriterSize(w, 256<<10)
	for _, c := range opts.Comments {
		for _, line := range strings.Split(c, "\n") {
			bw.WriteString("# " + line + "\n")
		}
	}
	cw := &csvWriter{w: bw}
	err = l.scan(func(ev *rawEvent) error {
		n.replay(ev)
		writeEvent(cw, syms, n, ev, opts.NoFuncs)
		return cw.err
	})
	st.Events = cw.lines
	if err == nil {
		fmt.Fprintf(bw, "# end: %d events, %d threads\n", cw.lines, st.Threads)
		err = bw.Flush()
	}
	return st, err
}

// csvWriter writes trace lines.
type csvWriter struct {
	w     *bufio.Writer
	buf   []byte
	lines int
	err   error
}

func (c *csvWriter) line(t *rawThread, seq uint64, loc, action string, objs ...string) {
	if c.err != nil {
		return
	}
	b := c.buf[:0]
	b = strconv.AppendUint(b, t.Token, 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, ", "...)
	b = append(b, loc...)
	b = append(b, ", "...)
	b = append(b, action...)
	for _, o := range objs {
		b = append(b, ", "...)
		b = appendField(b, o)
	}
	b = append(b, '\n')
	c.buf = b
	_, c.err = c.w.Write(b)
	c.lines++
}

// appendField appends a name, replacing the characters that would break
// the line format (C++ template names contain commas).
func appendField(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case ',':
			b = append(b, ';')
		case '\n', '\r':
			b = append(b, ' ')
		default:
			b = append(b, ch)
		}
	}
	return b
}

// syncAction is the trace action of a synchronisation event, or "".
func syncAction(k kind) string {
	switch k {
	case kLock:
		return "Lock"
	case kTryLock:
		return "TryLock"
	case kUnlock:
		return "Unlock"
	case kRdLock:
		return "RdLock"
	case kWrLock:
		return "WrLock"
	case kRwUnlock:
		return "RwUnlock"
	case kSignal, kAtomicRel:
		return "Signal"
	case kBroadcast:
		return "Broadcast"
	case kBarrier:
		return "BarrierWait"
	case kSemPost:
		return "SemPost"
	case kSemWait:
		return "SemWait"
	case kAtomicAcq:
		return "Wait"
	}
	return ""
}

func writeEvent(c *csvWriter, syms *procSyms, n *namer, ev *rawEvent, noFuncs bool) {
	t := ev.Thread
	switch ev.Kind {
	case kRead, kWrite, kRead8:
		action, size := "Read", ev.Extra
		switch ev.Kind {
		case kWrite:
			action = "Write"
		case kRead8:
			size = 8
		}
		loc := syms.location(ev.PC)
		a, end := ev.Addr, ev.Addr+size
		for i := 0; a < end && i < maxExpand; i++ {
			name, next := n.nameAt(a, end)
			c.line(t, ev.Seq, loc, action, name)
			a = next
		}
	case kWait:
		if ev.Extra != 0 {
			c.line(t, ev.Seq, syms.location(ev.PC), "Wait", n.syncName(ev.Addr), n.syncName(ev.Extra))
		} else {
			c.line(t, ev.Seq, syms.location(ev.PC), "Wait", n.syncName(ev.Addr))
		}
	case kCreate:
		c.line(t, ev.Seq, syms.location(ev.PC), "Create", strconv.FormatUint(ev.Addr, 10))
	case kJoin:
		obj := strconv.FormatUint(ev.Addr, 10)
		if ev.Extra == 1 {
			// A thread the recorder did not see created.
			obj = fmt.Sprintf("pthread:0x%x", ev.Addr)
		}
		c.line(t, ev.Seq, syms.location(ev.PC), "Join", obj)
	case kAlloc:
		c.line(t, ev.Seq, syms.location(ev.PC), "Alloc", fmt.Sprintf("0x%x", ev.Addr))
	case kFree:
		c.line(t, ev.Seq, syms.location(ev.PC), "Free", fmt.Sprintf("0x%x", ev.Addr))
	case kEnter:
		if !noFuncs {
			c.line(t, ev.Seq, syms.location(ev.PC), "Enter", syms.function(ev.Addr))
		}
	case kExit:
		if !noFuncs {
			c.line(t, ev.Seq, syms.location(ev.PC), "Exit", syms.function(ev.PC))
		}
	default:
		if action := syncAction(ev.Kind); action != "" {
			c.line(t, ev.Seq, syms.location(ev.PC), action, n.syncName(ev.Addr))
		}
	}
}
