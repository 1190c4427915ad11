// Package std is the syntax of RAPID's STD trace format as mcpredict reads
// and writes it: one event per line, "THREAD|OP(DECOR)|LOC".
//
// RAPID's operations map to mcpredict's actions: r Read, w Write, acq
// Lock, rel Unlock, fork Create, join Join, begin Begin, end End. The rest
// of mcpredict's actions are extension operations (tryacq, racq, wacq,
// rwrel, signal, broadcast, wait, barrier, sempost, semwait, alloc, free,
// enter, exit) that RAPID itself does not read; Write with Options.RAPID
// lowers or drops them. Wait's decor is "cond" or "cond,mutex".
//
// LOC is "file:line", "file-line", "?" (unknown), a bare number N (RAPID's
// location ids: file "loc", line N) or any other token (a file, line 0).
// Blank lines and lines starting with # are skipped (an extension).
//
// The package only translates lines: it does not check events (mcpredict's
// trace builder does).
package std

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// ops maps STD operations to mcpredict actions.
var ops = map[string]string{
	"r": "Read", "w": "Write", "acq": "Lock", "rel": "Unlock", "fork": "Create", "join": "Join",
	"begin": "Begin", "end": "End",
	"tryacq": "TryLock", "racq": "RdLock", "wacq": "WrLock", "rwrel": "RwUnlock",
	"signal": "Signal", "broadcast": "Broadcast", "wait": "Wait", "barrier": "BarrierWait",
	"sempost": "SemPost", "semwait": "SemWait", "alloc": "Alloc", "free": "Free",
	"enter": "Enter", "exit": "Exit", "dr": "DataRead", "cr": "CopyRead",
}

// Action returns the mcpredict action of an STD operation.
func Action(op string) (string, bool) {
	a, ok := ops[op]
	return a, ok
}

// Op returns the STD operation of an mcpredict action.
func Op(action string) (string, bool) {
	for op, a := range ops {
		if a == action {
			return op, true
		}
	}
	return "", false
}

// locFile is the file of RAPID's numbered locations (parseLoc).
var locFile = []byte("loc")

// Event is one parsed line.
type Event struct {
	Thread, Action, Object, Object2, File string
	Line                                  int
}

// Skip reports whether a line carries no event (blank or a # comment).
func Skip(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) == 0 || t[0] == '#'
}

// Fields are the fields of an event line, as slices of it.
type Fields struct {
	Thread, Op, Object, Object2, Loc []byte
}

// Split splits an event line into its fields without allocating; Parse
// checks them.
func Split(line []byte) (Fields, bool) {
	var f Fields
	t := bytes.TrimSpace(line)
	i := bytes.IndexByte(t, '|')
	j := bytes.LastIndexByte(t, '|')
	if i <= 0 || j <= i {
		return f, false
	}
	f.Thread, f.Loc = t[:i], t[j+1:]
	opf := t[i+1 : j]
	k := bytes.IndexByte(opf, '(')
	if k <= 0 || opf[len(opf)-1] != ')' || bytes.IndexByte(opf, '|') >= 0 {
		return f, false
	}
	f.Op, f.Object = opf[:k], opf[k+1:len(opf)-1]
	return f, true
}

// Fast returns the action of a plain event line (one of RAPID's or the
// extension operations in lower case, no Wait, no spaces, location
// "file:line" or RAPID's bare number N, file "loc") with its fields,
// without allocating; ok is false for any other line, which Parse then
// handles.
func Fast(line []byte) (f Fields, action string, file []byte, n int, ok bool) {
	f, ok = Split(line)
	if !ok || bytes.ContainsAny(bytes.TrimSpace(line), " \t") {
		return f, "", nil, 0, false
	}
	action, ok = ops[string(f.Op)]
	if !ok || action == "Wait" || action == "Begin" || action == "End" || len(f.Object) == 0 || bytes.IndexByte(f.Object, ' ') >= 0 {
		return f, "", nil, 0, false
	}
	if k := len(f.Loc); k > 0 && k <= 9 && f.Loc[0] >= '0' && f.Loc[0] <= '9' {
		// RAPID's location ids, as convert --rapid writes them.
		for _, d := range f.Loc {
			if d < '0' || d > '9' {
				return f, "", nil, 0, false
			}
			n = n*10 + int(d-'0')
		}
		return f, action, locFile, n, true
	}
	c := bytes.LastIndexByte(f.Loc, ':')
	if c <= 0 || c == len(f.Loc)-1 || len(f.Loc)-c > 10 {
		return f, "", nil, 0, false
	}
	for _, d := range f.Loc[c+1:] {
		if d < '0' || d > '9' {
			return f, "", nil, 0, false
		}
		n = n*10 + int(d-'0')
	}
	return f, action, f.Loc[:c], n, true
}

// Parse parses one event line.
func Parse(line []byte) (Event, error) {
	var e Event
	t := bytes.TrimSpace(line)
	f := bytes.Split(t, []byte("|"))
	if len(f) != 3 {
		return e, fmt.Errorf("want THREAD|OP(DECOR)|LOC, got %d |-separated fields", len(f))
	}
	e.Thread = string(bytes.TrimSpace(f[0]))
	opf := bytes.TrimSpace(f[1])
	op, decor := opf, []byte(nil)
	if i := bytes.IndexByte(opf, '('); i >= 0 {
		if opf[len(opf)-1] != ')' {
			return e, fmt.Errorf("operation %q: missing )", opf)
		}
		op, decor = opf[:i], bytes.TrimSpace(opf[i+1:len(opf)-1])
	}
	a, ok := ops[strings.ToLower(string(op))]
	if !ok {
		return e, fmt.Errorf("unknown operation %q (want r, w, acq, rel, fork, join, begin, end or an mcpredict extension: see docs/trace-format.md)", op)
	}
	e.Action = a
	e.Object = string(decor)
	switch a {
	case "Wait":
		if i := bytes.IndexByte(decor, ','); i >= 0 {
			e.Object, e.Object2 = string(bytes.TrimSpace(decor[:i])), string(bytes.TrimSpace(decor[i+1:]))
		}
	case "Begin", "End":
		if e.Object == "" {
			e.Object = "atomic" // RAPID's begin/end carry no label
		}
	}
	var err error
	e.File, e.Line, err = parseLoc(bytes.TrimSpace(f[2]))
	return e, err
}

func parseLoc(loc []byte) (string, int, error) {
	if len(loc) == 0 || string(loc) == "?" {
		return "", 0, nil
	}
	if n, err := strconv.Atoi(string(loc)); err == nil && n >= 0 {
		return "loc", n, nil
	}
	i := bytes.LastIndexByte(loc, ':')
	if j := bytes.LastIndexByte(loc, '-'); j > i {
		i = j
	}
	if i > 0 && i < len(loc)-1 {
		if n, err := strconv.Atoi(string(loc[i+1:])); err == nil && n >= 0 {
			return string(loc[:i]), n, nil
		}
	}
	return string(loc), 0, nil
}

// Append appends the STD line of an event (without line end) to dst. It
// fails on fields that STD cannot carry.
func Append(dst []byte, e Event) ([]byte, error) {
	op, ok := Op(e.Action)
	if !ok {
		return dst, fmt.Errorf("no STD operation for action %q", e.Action)
	}
	for _, s := range []string{e.Thread, e.Object, e.Object2, e.File} {
		if strings.ContainsAny(s, "|\n\r") || (s != e.Object && s != e.Object2 && strings.ContainsAny(s, " \t")) {
			return dst, fmt.Errorf("%q cannot be written in STD (contains | or a line end)", s)
		}
	}
	dst = append(dst, e.Thread...)
	dst = append(dst, '|')
	dst = append(dst, op...)
	dst = append(dst, '(')
	dst = append(dst, e.Object...)
	if e.Object2 != "" {
		dst = append(dst, ',')
		dst = append(dst, e.Object2...)
	}
	dst = append(dst, ")|"...)
	if e.File == "" {
		return append(dst, '?'), nil
	}
	dst = append(dst, e.File...)
	dst = append(dst, ':')
	return strconv.AppendInt(dst, int64(e.Line), 10), nil
}

// Detect reports whether head's first event line is an STD line.
func Detect(head []byte) bool {
	for _, line := range bytes.Split(head, []byte("\n")) {
		if Skip(line) {
			continue
		}
		_, err := Parse(line)
		return err == nil
	}
	return false
}
