package reproduce

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// event is one line of a CSV trace, as far as reproduce needs it.
type event struct {
	TraceLine int
	Seq       uint64 // the event's number in the run (the second column)
	Thread    string
	File      string
	Line      int
	Action    string
	Object    string
}

// kind is the access kind of an action: R, W, L (an acquisition), U (a
// release), B (a blocked acquisition), or 0 for the others.
func (e event) kind() byte { return kindOf(e.Action) }

func kindOf(action string) byte {
	switch action {
	case "Read", "DataRead", "CopyRead":
		return 'R'
	case "Write", "AtomicWrite":
		return 'W'
	case "Lock", "TryLock", "RdLock", "WrLock":
		return 'L'
	case "Unlock", "RwUnlock":
		return 'U'
	case "Blocked":
		return 'B' // an acquisition that never returned (a deadlock)
	}
	return 0
}

// scanEvents calls fn for every event line of a CSV trace, in order. It
// reads the trace format the recorder writes (thread, number, file-line,
// action, object[, object2]; '#' comments); lines it cannot split are
// skipped, since the trace was already checked when it was predicted on
// or is a directed run's own recording.
func scanEvents(r io.Reader, fn func(e event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := splitFields(line)
		if len(f) < 4 {
			continue
		}
		e := event{TraceLine: n, Thread: f[0], Action: f[3]}
		e.Seq, _ = strconv.ParseUint(f[1], 10, 64)
		if len(f) > 4 {
			e.Object = f[4]
		}
		if i := strings.LastIndexByte(f[2], '-'); i > 0 {
			e.File = f[2][:i]
			e.Line, _ = strconv.Atoi(f[2][i+1:])
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading trace: %w", err)
	}
	return nil
}

// splitFields splits a trace line at commas, honouring double-quoted
// fields (the recorder quotes names that hold a comma).
func splitFields(line string) []string {
	var out []string
	for len(line) > 0 {
		line = strings.TrimLeft(line, " \t")
		if strings.HasPrefix(line, `"`) {
			if s, err := strconv.QuotedPrefix(line); err == nil {
				v, _ := strconv.Unquote(s)
				out = append(out, v)
				line = strings.TrimLeft(line[len(s):], " \t")
				line = strings.TrimPrefix(line, ",")
				continue
			}
		}
		i := strings.IndexByte(line, ',')
		if i < 0 {
			out = append(out, strings.TrimSpace(line))
			break
		}
		out = append(out, strings.TrimSpace(line[:i]))
		line = line[i+1:]
	}
	return out
}

// generationRE matches what differs between runs in the name of a heap
// variable: its generation at the address ("#2") and the thread and
// allocation number of its site ("#t2.14").
var generationRE = regexp.MustCompile(`#t?\d+(\.\d+)?`)

// sameVar reports whether two variable names, of two runs, name the same
// variable: equal once the run-dependent parts are left out.
func sameVar(a, b string) bool {
	return a == b || generationRE.ReplaceAllString(a, "#") == generationRE.ReplaceAllString(b, "#")
}
