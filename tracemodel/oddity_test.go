package tracemodel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// opsText is the model's lock operations of thread tid on lock name, as
// "Lock@1 Unlock@3": kind, position, w for a cond Wait's implicit ones.
func opsText(m *Model, name string, tid int32) string {
	var out []string
	for _, op := range m.lockOps[lockThread{lock: m.objIndexForTest(name), thread: tid}] {
		w := ""
		if op.Wait {
			w = "w"
		}
		out = append(out, fmt.Sprintf("%s@%d%s", op.Kind, op.Pos, w))
	}
	return strings.Join(out, " ")
}

// Synchronization oddities are warnings, once per kind and source
// location with the count of the others, and the model absorbs them as
// README "Trace format" says; with StrictSync each is bad input.
func TestSyncOddities(t *testing.T) {
	tests := []struct {
		name, text string
		strict     string // StrictSync error
		warnings   []string
		check      func(t *testing.T, m *Model)
	}{
		{
			name:     "unlock not held",
			text:     "1, 1, a.c-1, Lock, m\n2, 2, a.c-2, Unlock, m\n1, 3, a.c-3, Unlock, m\n",
			strict:   "t.csv:2: Unlock of m, which thread 2 does not hold",
			warnings: []string{"t.csv:2: Unlock of m at a.c:2, which thread 2 does not hold: dropped"},
			check: func(t *testing.T, m *Model) {
				// Dropped: thread 2 had no other event, so it is not a thread.
				if len(m.Events) != 2 || len(m.Threads) != 1 {
					t.Errorf("events %d, threads %d, want 2, 1", len(m.Events), len(m.Threads))
				}
				if got := opsText(m, "m", 1); got != "Lock@1 Unlock@2" {
					t.Errorf("ops = %q", got)
				}
			},
		},
		{
			name: "unlock not held, repeated at one location",
			text: "\n\n1, 1, a.c-5, Unlock, m\n1, 2, a.c-5, Unlock, m\n1, 3, a.c-6, RdLock, l\n2, 4, a.c-7, RwUnlock, l\n1, 5, a.c-5, Unlock, n\n",
			// The lines before the first event keep their numbers.
			strict: "t.csv:3: Unlock of m, which thread 1 does not hold",
			warnings: []string{
				"t.csv:3: Unlock of m at a.c:5, which thread 1 does not hold: dropped (2 more like it)",
				"t.csv:6: RwUnlock of l at a.c:7, which thread 2 does not hold: dropped",
			},
			check: func(t *testing.T, m *Model) {
				if len(m.Events) != 1 || m.Events[0].Kind != RdLock || m.Events[0].Pos != 1 {
					t.Errorf("events %+v, want the RdLock only", m.Events)
				}
			},
		},
		{
			name:     "join of unknown thread",
			text:     "1, 1, a.c-1, Read, x\n1, 2, a.c-2, Join, 9\n1, 3, a.c-3, Write, x\n",
			strict:   "t.csv:2: Join of unknown thread 9 (it never appeared and was never created)",
			warnings: []string{"t.csv:2: Join of unknown thread 9 at a.c:2 (it never appeared and was never created): dropped (no order)"},
			check: func(t *testing.T, m *Model) {
				if len(m.Events) != 2 || len(m.Threads) != 1 || m.Events[1].Pos != 2 || m.Events[1].Kind != Write {
					t.Errorf("events %+v, threads %d, want Read@1 Write@2 of one thread", m.Events, len(m.Threads))
				}
			},
		},
		{
			name:     "wait with a mutex not held",
			text:     "1, 1, a.c-1, Wait, c, m\n1, 2, a.c-2, Read, x\n1, 3, a.c-3, Unlock, m\n2, 4, a.c-4, Lock, m\n2, 5, a.c-5, Unlock, m\n",
			strict:   "t.csv:1: Wait on c with mutex m, which thread 1 does not hold",
			warnings: []string{"t.csv:1: Wait on c with mutex m at a.c:1, which thread 1 does not hold: no implicit Unlock; the thread holds m after the Wait"},
			check: func(t *testing.T, m *Model) {
				// The Wait acquires m: the Read is in a critical section,
				// and the Unlock releases it.
				if got := opsText(m, "m", 1); got != "Lock@1w Unlock@3" {
					t.Errorf("ops = %q", got)
				}
				if !m.holdsAt(m.objIndexForTest("m"), 1, 2) {
					t.Error("the Read after the Wait is not in a hold of m")
				}
				if e := m.Events[0]; e.Kind != Wait || m.Objects[e.Obj2] != "m" {
					t.Errorf("the Wait lost its mutex: %+v", e)
				}
			},
		},
		{
			name: "lock another thread holds, not explained by a cond wait",
			text: "1, 1, a.c-1, Lock, m\n1, 2, a.c-2, Write, x\n2, 3, a.c-3, Lock, m\n2, 4, a.c-4, Write, x\n2, 5, a.c-5, Unlock, m\n1, 6, a.c-6, Read, x\n1, 7, a.c-7, Unlock, m\n",
			// Thread 1's hold could be suspended by a cond Wait recorded
			// when it returns: its next event says it is not.
			strict: "t.csv:6: thread 1 held m when thread 2 took it at line 3, and its next event is not a Wait with that mutex",
			warnings: []string{"t.csv:3: Lock of m at a.c:3 while thread 1 holds it (since line 1), and thread 1's next event (line 6) is not a Wait with that mutex: " +
				"thread 1's hold ended unseen before it (no critical section in the model; its later release is kept and releases nothing)"},
			check: func(t *testing.T, m *Model) {
				if len(m.Events) != 7 {
					t.Errorf("events %d, want all 7", len(m.Events))
				}
				if got := opsText(m, "m", 1); got != "" {
					t.Errorf("thread 1's ops = %q, want none", got)
				}
				if got := opsText(m, "m", 2); got != "Lock@1 Unlock@3" {
					t.Errorf("thread 2's ops = %q", got)
				}
			},
		},
		{
			name: "lock another thread holds, at once",
			text: "1, 1, a.c-1, WrLock, l\n2, 2, a.c-2, WrLock, l\n2, 3, a.c-3, RwUnlock, l\n1, 4, a.c-4, RwUnlock, l\n" +
				"1, 5, a.c-5, RdLock, l\n2, 6, a.c-2, WrLock, l\n2, 7, a.c-3, RwUnlock, l\n1, 8, a.c-8, RwUnlock, l\n1, 9, a.c-9, Lock, k\n1, 10, a.c-10, Lock, k\n",
			strict: "t.csv:2: WrLock of l while thread 1 holds it (since line 1)",
			warnings: []string{
				"t.csv:2: WrLock of l at a.c:2 while thread 1 holds it (since line 1): thread 1's hold ended unseen before it (no critical section in the model; its later release is kept and releases nothing) (1 more like it)",
			},
			check: func(t *testing.T, m *Model) {
				if len(m.Events) != 10 {
					t.Errorf("events %d, want all 10", len(m.Events))
				}
				if got := opsText(m, "l", 1); got != "" {
					t.Errorf("thread 1's ops = %q, want none", got)
				}
				if got := opsText(m, "l", 2); got != "WrLock@1 RwUnlock@2 WrLock@3 RwUnlock@4" {
					t.Errorf("thread 2's ops = %q", got)
				}
				// Recursive locking is not an oddity.
				if got := opsText(m, "k", 1); got != "Lock@5" {
					t.Errorf("thread 1's ops on k = %q", got)
				}
			},
		},
		{
			name:     "rdlock while another thread writes",
			text:     "1, 1, a.c-1, WrLock, l\n2, 2, a.c-2, RdLock, l\n2, 3, a.c-3, RwUnlock, l\n",
			strict:   "t.csv:2: RdLock of l while thread 1 holds it for writing (since line 1)",
			warnings: []string{"t.csv:2: RdLock of l at a.c:2 while thread 1 holds it for writing (since line 1): thread 1's hold ended unseen before it (no critical section in the model; its later release is kept and releases nothing)"},
			check: func(t *testing.T, m *Model) {
				if got := opsText(m, "l", 1) + "|" + opsText(m, "l", 2); got != "|RdLock@1 RwUnlock@2" {
					t.Errorf("ops = %q", got)
				}
			},
		},
		{
			name:     "event after join",
			text:     "1, 1, a.c-1, Create, 2\n2, 2, a.c-2, Read, x\n1, 3, a.c-3, Join, 2\n2, 4, a.c-4, Read, x\n2, 5, a.c-4, Write, x\n",
			strict:   "t.csv:4: event of thread 2 after it was joined at line 3",
			warnings: []string{"t.csv:4: event of thread 2 at a.c:4 after it was joined at line 3: kept (that Join orders only the events before it) (1 more like it)"},
			check: func(t *testing.T, m *Model) {
				if len(m.Events) != 5 {
					t.Errorf("events %d, want all 5", len(m.Events))
				}
				// The Join (thread 1, position 2) is after thread 2's first
				// event only.
				if got := m.Clock(1, 2, 2); got != 1 {
					t.Errorf("Join's clock of thread 2 = %d, want 1", got)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(context.Background(), strings.NewReader(tc.text), "t.csv", Options{})
			if err != nil {
				t.Fatalf("default: %v", err)
			}
			if !slices.Equal(m.Warnings, tc.warnings) {
				t.Errorf("warnings\n%q\nwant\n%q", m.Warnings, tc.warnings)
			}
			tc.check(t, m)
			// The same events through ParseRecords (other formats).
			if mr, err := ParseRecords(context.Background(), csvSource(t, tc.text), "t.csv", Options{}); err != nil || !slices.Equal(mr.Warnings, m.Warnings) || len(mr.Events) != len(m.Events) {
				t.Errorf("ParseRecords: err %v, warnings %q, %d events", err, mr.Warnings, len(mr.Events))
			}

			_, err = Parse(context.Background(), strings.NewReader(tc.text), "t.csv", Options{StrictSync: true})
			var pe *ParseError
			if !errors.As(err, &pe) || err.Error() != tc.strict {
				t.Errorf("StrictSync: err = %v, want %s", err, tc.strict)
			}
			// Lenient StrictSync skips the line and counts it.
			ml, err := Parse(context.Background(), strings.NewReader(tc.text), "t.csv", Options{StrictSync: true, Lenient: true})
			if err != nil {
				t.Fatalf("StrictSync lenient: %v", err)
			}
			if ml.Skipped == 0 || ml.Problems[0] != tc.strict {
				t.Errorf("StrictSync lenient: skipped %d, problems %q", ml.Skipped, ml.Problems)
			}
		})
	}
}

// csvSource delivers the events of a CSV text as records, one per line.
func csvSource(t *testing.T, text string) RecordSource {
	var recs []Record
	for i, line := range strings.Split(text, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		for j := range f {
			f[j] = strings.TrimSpace(f[j])
		}
		file, ln, msg := parseLoc([]byte(f[2]))
		if msg != "" {
			t.Fatalf("line %d: %s", i+1, msg)
		}
		r := Record{Thread: []byte(f[0]), Action: []byte(f[3]), Object: []byte(f[4]), File: file, Line: ln, TraceLine: i + 1}
		if len(f) > 5 {
			r.Object2 = []byte(f[5])
		}
		recs = append(recs, r)
	}
	return &sliceSource{recs: recs, n: 2}
}

// Past the first maxOddities source locations, one line counts the rest.
func TestSyncOdditiesBounded(t *testing.T) {
	var sb strings.Builder
	for i := 1; i <= maxOddities+5; i++ {
		fmt.Fprintf(&sb, "1, %d, a.c-%d, Unlock, m\n1, %d, a.c-%d, Unlock, m\n", i, i, i, i)
	}
	m, err := Parse(context.Background(), strings.NewReader(sb.String()), "t.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) != maxOddities+1 || len(m.Events) != 0 {
		t.Fatalf("%d warnings, %d events: %q", len(m.Warnings), len(m.Events), m.Warnings)
	}
	if got, want := m.Warnings[0], "t.csv:1: Unlock of m at a.c:1, which thread 1 does not hold: dropped (1 more like it)"; got != want {
		t.Errorf("first warning %q, want %q", got, want)
	}
	if got, want := m.Warnings[maxOddities], `t.csv: 5 more synchronization oddities (10 events) at other source locations, absorbed as README "Trace format" says (--strict-sync refuses the trace instead)`; got != want {
		t.Errorf("last warning %q, want %q", got, want)
	}
}
