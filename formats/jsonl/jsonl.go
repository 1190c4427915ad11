// Package jsonl is the JSON-lines trace format: one JSON object per line,
// one event per object, in trace order.
//
//	{"thread": "201", "action": "Read", "object": "balance", "file": "bank.c", "line": 11}
//	{"thread": 100, "action": "Wait", "object": "cond", "object2": "mutex", "file": "q.c", "line": 40}
//
// Fields: thread (string or number, required), action (an mcpredict
// action, case-insensitive, required), object (string or number,
// required), object2 (the mutex of a Wait), file and line (the source
// location; both absent: unknown). Other fields (a timestamp, say) are
// ignored. Blank lines are skipped.
//
// The package only translates lines: it does not check events.
package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Event is one event object.
type Event struct {
	Thread  Token  `json:"thread"`
	Action  string `json:"action"`
	Object  Token  `json:"object"`
	Object2 Token  `json:"object2,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
}

// Token is a string that may be written as a JSON string or number.
type Token string

// UnmarshalJSON accepts a string or a number.
func (t *Token) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Token(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*t = ""
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("want a string or a number")
	}
	*t = Token(n)
	return nil
}

// Skip reports whether a line carries no event (blank).
func Skip(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// Parse parses one event line.
func Parse(line []byte) (Event, error) {
	e, ok := parseFast(line)
	if !ok {
		e = Event{}
		if err := json.Unmarshal(line, &e); err != nil {
			return e, fmt.Errorf("bad JSON event: %v", err)
		}
	}
	switch {
	case e.Thread == "":
		return e, errors.New(`event without "thread"`)
	case e.Action == "":
		return e, errors.New(`event without "action"`)
	case e.Object == "":
		return e, errors.New(`event without "object"`)
	case e.Line < 0:
		return e, fmt.Errorf("bad line %d", e.Line)
	}
	return e, nil
}

// Append appends the JSON line of an event (without line end) to dst.
func Append(dst []byte, e Event) []byte {
	dst = append(dst, `{"thread":`...)
	dst = appendString(dst, string(e.Thread))
	dst = append(dst, `,"action":`...)
	dst = appendString(dst, e.Action)
	dst = append(dst, `,"object":`...)
	dst = appendString(dst, string(e.Object))
	if e.Object2 != "" {
		dst = append(dst, `,"object2":`...)
		dst = appendString(dst, string(e.Object2))
	}
	if e.File != "" {
		dst = append(dst, `,"file":`...)
		dst = appendString(dst, e.File)
		dst = append(dst, `,"line":`...)
		dst = strconv.AppendInt(dst, int64(e.Line), 10)
	}
	return append(dst, '}')
}

// Detect reports whether head's first non-blank line is a JSON event.
func Detect(head []byte) bool {
	for _, line := range bytes.Split(head, []byte("\n")) {
		if Skip(line) {
			continue
		}
		var probe struct {
			Thread json.RawMessage `json:"thread"`
			Action json.RawMessage `json:"action"`
		}
		t := bytes.TrimSpace(line)
		return len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &probe) == nil && probe.Thread != nil && probe.Action != nil
	}
	return false
}

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}
