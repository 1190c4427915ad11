package jsonl

import (
	"encoding/json"
	"testing"
)

var fastCases = []string{
	`{"thread": "201", "action": "Read", "object": "balance", "file": "bank.c", "line": 11}`,
	`{"thread":100,"action":"Wait","object":"cond","object2":"mutex","file":"q.c","line":40}`,
	`  { "ts": 12.5e3, "thread": -3, "action": "Write", "object": 0, "extra": true, "n": null }  `,
	`{"thread": "a", "action": "Read", "object": "x", "line": null, "file": null}`,
	`{"thread": "a", "thread": "b", "action": "Read", "object": "x"}`,
	`{}`,
	`{"Thread": "a", "action": "Read", "object": "x"}`,       // case-insensitive key: encoding/json
	`{"thread": "a\u0041", "action": "Read", "object": "x"}`, // escape
	`{"thread": "é", "action": "Read", "object": "x"}`,       // non-ASCII
	`{"thread": "a", "action": "Read", "object": {"n": 1}}`,  // nested
	`{"thread": "a", "action": 5, "object": "x"}`,            // number for a string field
	`{"thread": "a", "action": "Read", "object": "x", "line": 1.5}`,
	`{"thread": "a", "action": "Read", "object": "x", "line": "3"}`,
	`{"thread": "a", "action": "Read", "object": "x", "line": 12345678901}`,
	`{"thread": 01, "action": "Read", "object": "x"}`,           // bad number
	`{"thread": "a", "action": "Read", "object": "x"} trailing`, // garbage
	`{"thread": "a", "action": "Read", "object": "x",}`,         // trailing comma
	`{"thread": "a" "action": "Read"}`,                          // missing comma
	`{"thread": true, "action": "Read", "object": "x"}`,         // boolean for a field
	`[1, 2]`,
	`{"thread": "a", "action": "Read", "object": "x"`,
}

// checkFast requires that parseFast, when it accepts a line, gives what
// encoding/json gives.
func checkFast(t *testing.T, line string) {
	fast, ok := parseFast([]byte(line))
	if !ok {
		return
	}
	var slow Event
	if err := json.Unmarshal([]byte(line), &slow); err != nil {
		t.Fatalf("%s: the fast path accepted a line encoding/json rejects (%v)", line, err)
	}
	if fast != slow {
		t.Fatalf("%s: fast %+v, encoding/json %+v", line, fast, slow)
	}
}

func TestFastMatchesJSON(t *testing.T) {
	accepted := 0
	for _, line := range fastCases {
		checkFast(t, line)
		if _, ok := parseFast([]byte(line)); ok {
			accepted++
		}
	}
	if accepted < 6 {
		t.Errorf("the fast path took only %d of the plain lines", accepted)
	}
}

func FuzzFastMatchesJSON(f *testing.F) {
	for _, line := range fastCases {
		f.Add(line)
	}
	f.Fuzz(checkFast)
}
