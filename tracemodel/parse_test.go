package tracemodel

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func parse(t *testing.T, text string) *Model {
	t.Helper()
	m, err := Parse(context.Background(), strings.NewReader(text), "t.csv", Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

func TestParseActions(t *testing.T) {
	text := `# every action
1, 1, a.c-1, Enter, main
1, 2, a.c-2, Create, 2
2, 3, a.c-3, Lock, m
2, 4, a.c-4, TryLock, m
2, 5, a.c-5, Unlock, m
2, 6, a.c-6, Unlock, m
2, 7, a.c-7, RdLock, rw
2, 8, a.c-8, RwUnlock, rw
2, 9, a.c-9, WrLock, rw
2, 10, a.c-10, RwUnlock, rw
2, 11, a.c-11, Signal, c
2, 12, a.c-12, Broadcast, c
1, 13, a.c-13, Lock, m
1, 14, a.c-14, Wait, c, m
1, 15, a.c-15, Unlock, m
1, 16, a.c-16, Wait, c
1, 17, a.c-17, BarrierWait, b
2, 18, a.c-18, Barrier, b
2, 19, a.c-19, SemPost, s
1, 20, a.c-20, SemWait, s
1, 21, a.c-21, Alloc, 0x10
1, 22, a.c-22, Write, 0x10
1, 23, a.c-23, Free, 0x10
1, 24, a.c-24, Begin, region
1, 25, a.c-25, End, region
1, 26, my-file.c-26, Read, x
1, 27, dir/b.c:27, Write, x
1, 28, ?, read, x
1, 29, a.c-29, Join, 2
1, 30, a.c-30, Exit, main
`
	m := parse(t, text)
	if got, want := len(m.Events), 30; got != want {
		t.Fatalf("events = %d, want %d", got, want)
	}
	kinds := []Kind{Enter, Create, Lock, TryLock, Unlock, Unlock, RdLock, RwUnlock, WrLock, RwUnlock, Signal, Broadcast,
		Lock, Wait, Unlock, Wait, BarrierWait, BarrierWait, SemPost, SemWait, Alloc, Write, Free, Begin, End, Read, Write, Read, Join, Exit}
	for i, k := range kinds {
		if m.Events[i].Kind != k {
			t.Errorf("event %d kind = %v, want %v", i, m.Events[i].Kind, k)
		}
	}
	locs := map[int]Loc{25: {"my-file.c", 26}, 26: {"dir/b.c", 27}, 27: {}}
	for i, want := range locs {
		if got := m.Locs[m.Events[i].Loc]; got != want {
			t.Errorf("event %d loc = %v, want %v", i, got, want)
		}
	}
	if m.Events[0].Func == 0 || m.Objects[m.Events[25].Func] != "main" {
		t.Errorf("function of events not tracked: %v", m.Events[25])
	}
	for _, name := range []string{"m", "c", "rw", "b", "s"} {
		id := m.objIndexForTest(name)
		if !m.syncObj[id] {
			t.Errorf("%s not a synchronization object", name)
		}
	}
	if m.Events[13].Obj2 == 0 || m.Objects[m.Events[13].Obj2] != "m" {
		t.Errorf("Wait mutex not recorded")
	}
}

func (m *Model) objIndexForTest(name string) int32 {
	for i, o := range m.Objects {
		if o == name {
			return int32(i)
		}
	}
	return -1
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
		line             int
	}{
		{"unknown action", "1, 1, a.c-1, Jump, x\n", "unknown action \"Jump\"", 1},
		{"missing field", "1, 1, a.c-1, Read\n", "missing field object", 1},
		{"missing location", "# c\n1, 1\n", "missing field location", 2},
		{"empty field", "1, , a.c-1, Read, x\n", "empty timestamp field", 1},
		{"bad line number", "1, 1, a.c-x1, Read, x\n", "bad line number \"x1\"", 1},
		{"no line number", "1, 1, a.c, Read, x\n", "bad location", 1},
		{"extra field", "1, 1, a.c-1, Read, x, y\n", "too many fields for Read", 1},
		{"rwlock as mutex", "1, 1, a.c-1, RdLock, l\n1, 2, a.c-2, RwUnlock, l\n1, 3, a.c-3, Lock, l\n", "used as a rwlock", 3},
		{"self join", "1, 1, a.c-1, Join, 1\n", "cannot Join itself", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(context.Background(), strings.NewReader(tc.text), "bad.csv", Options{})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ParseError", err)
			}
			if pe.File != "bad.csv" || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.want) {
				t.Errorf("err = %q, want bad.csv:%d: ...%s...", err, tc.line, tc.want)
			}
			// Lenient mode skips it and counts it.
			m, err := Parse(context.Background(), strings.NewReader(tc.text), "bad.csv", Options{Lenient: true})
			if err != nil {
				t.Fatalf("lenient: %v", err)
			}
			if m.Skipped == 0 || !strings.Contains(m.Problems[0], tc.want) {
				t.Errorf("lenient: skipped %d, problems %q", m.Skipped, m.Problems)
			}
		})
	}
}

// TestTruncatedRecording: a trace mcpredict record wrote ends with its
// "# end:" trailer; cut short, it is bad input (but with --lenient).
func TestTruncatedRecording(t *testing.T) {
	head := "# mcpredict trace (CSV: thread, sequence number, file-line, action, object[, object2])\n1, 1, a.c-1, Read, x\n1, 2, a.c-2, Write, x\n"
	tests := []struct {
		name, text string
		lenient    bool
		wantErr    string
	}{
		{"whole", head + "# end: 2 events, 1 threads\n", false, ""},
		{"cut", head, false, "bad.csv:3: truncated after this line"},
		{"cut, lenient", head, true, ""},
		{"not a recording", "1, 1, a.c-1, Read, x\n", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(context.Background(), strings.NewReader(tc.text), "bad.csv", Options{Lenient: tc.lenient})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				m.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestCondWaitTakeover(t *testing.T) {
	// The consumer's Wait is recorded when it returns, after the producer
	// locked and unlocked the mutex.
	text := `c, 1, a.c-1, Lock, m
c, 2, a.c-2, Read, ready
p, 3, a.c-3, Lock, m
p, 4, a.c-4, Write, ready
p, 5, a.c-5, Signal, cv
p, 6, a.c-6, Unlock, m
c, 7, a.c-7, Wait, cv, m
c, 8, a.c-8, Read, ready
c, 9, a.c-9, Unlock, m
`
	m := parse(t, text)
	if got := m.Clock(1, 3, 2); got != 3 {
		t.Errorf("consumer's Wait clock of producer = %d, want 3 (the Signal)", got)
	}
	// Still held by the producer when the consumer's Wait returns, and the
	// producer goes on without a Wait of its own: error.
	bad := strings.Replace(text, "p, 6, a.c-6, Unlock, m\n", "", 1) + "p, 10, a.c-10, Unlock, m\n"
	if _, err := Parse(context.Background(), strings.NewReader(bad), "t.csv", Options{StrictSync: true}); err == nil || !strings.Contains(err.Error(), "t.csv:9: thread p held m") {
		t.Errorf("err = %v, want thread p held m ... not a Wait", err)
	}
	// By default the consumer's Wait took a lock the producer held: the
	// producer's hold ended unseen, and its Unlock releases nothing.
	mbad := parse(t, bad)
	if got := opsText(mbad, "m", 2); got != "" {
		t.Errorf("producer's ops on m = %q, want none", got)
	}
	if got, want := opsText(mbad, "m", 1), "Lock@1 Unlock@3w Lock@3w Unlock@5"; got != want {
		t.Errorf("consumer's ops on m = %q, want %q", got, want)
	}
	if len(mbad.Warnings) != 1 || !strings.HasPrefix(mbad.Warnings[0], "t.csv:6: Wait on cv returning with m at a.c:7 while thread p holds it (since line 3), and thread p's next event (line 9) is not a Wait with that mutex: thread p's hold ended unseen") {
		t.Errorf("warnings = %q", mbad.Warnings)
	}
	// Both sides wait on conditions of one mutex (producer/consumer): each
	// Wait is recorded when it returns, while the other is still blocked.
	both := `c, 1, a.c-1, Lock, m
c, 2, a.c-2, Read, count
p, 3, a.c-3, Lock, m
p, 4, a.c-4, Read, count
c, 5, a.c-5, Wait, notempty, m
c, 6, a.c-6, Write, count
c, 7, a.c-7, Signal, notfull
c, 8, a.c-8, Unlock, m
p, 9, a.c-9, Wait, notfull, m
p, 10, a.c-10, Write, count
p, 11, a.c-11, Unlock, m
`
	mb := parse(t, both)
	if got := mb.Clock(2, 3, 1); got != 5 {
		t.Errorf("producer's Wait clock of consumer = %d, want 5 (its Signal)", got)
	}
}

func TestCompressedAndStdinNames(t *testing.T) {
	text := "1, 1, a.c-1, Write, x\n2, 2, a.c-2, Read, x\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	var zs bytes.Buffer
	enc, _ := zstd.NewWriter(&zs)
	enc.Write([]byte(text))
	enc.Close()
	dir := t.TempDir()
	for name, data := range map[string][]byte{"plain-name.csv": []byte(text), "t.csv.gz": gz.Bytes(), "t.csv.zst": zs.Bytes()} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		m, err := Open(context.Background(), p, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(m.Events) != 2 || len(m.SharedVars()) != 1 {
			t.Errorf("%s: %d events, %d shared", name, len(m.Events), len(m.SharedVars()))
		}
	}
	// Truncated gzip: an error naming the file and the line reached.
	p := filepath.Join(dir, "cut.csv.gz")
	os.WriteFile(p, gz.Bytes()[:gz.Len()-8], 0o644)
	if _, err := Open(context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), "cut.csv.gz:") || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated gzip: err = %v", err)
	}
}

func TestSharedVarsAndSync(t *testing.T) {
	text := `1, 1, a.c-1, Write, x
2, 2, a.c-2, Read, x
1, 3, a.c-3, Read, y
2, 4, a.c-4, Read, y
1, 5, a.c-5, Write, m
2, 6, a.c-6, Lock, m
2, 7, a.c-7, Unlock, m
2, 8, a.c-8, Write, m
1, 9, a.c-9, Write, z
3, 10, a.c-10, Write, p
1, 11, a.c-11, Free, p
2, 12, a.c-12, Write, p
1, 13, a.c-13, Read, p
`
	m := parse(t, text)
	var names []string
	for _, sv := range m.SharedVars() {
		names = append(names, sv.Name)
	}
	// y is only read, m is a lock, z has one thread, p of thread 3 is freed
	// before the other threads use the address again (p#2).
	if got, want := strings.Join(names, ","), "x,p#2"; got != want {
		t.Errorf("shared vars = %s, want %s", got, want)
	}
}

func TestVectorClocks(t *testing.T) {
	text := `1, 1, a.c-1, Write, x
1, 2, a.c-2, Create, 2
1, 3, a.c-3, Signal, c
3, 4, a.c-4, Wait, c
3, 5, a.c-5, SemPost, s
2, 6, a.c-6, Read, x
2, 7, a.c-7, SemWait, s
2, 8, a.c-8, BarrierWait, b
3, 9, a.c-9, BarrierWait, b
2, 10, a.c-10, Read, x
3, 11, a.c-11, Write, x
1, 12, a.c-12, Lock, m
1, 13, a.c-13, Unlock, m
`
	m := parse(t, text)
	tests := []struct {
		tid   int
		pos   int32
		other int
		want  int32
	}{
		{2, 1, 1, 2}, // create: after the Create (position 2 of thread 1)
		{3, 1, 1, 3}, // signal → wait
		{2, 2, 3, 2}, // sempost → semwait
		{2, 3, 3, 2}, // its own BarrierWait does not wait yet
		{2, 4, 3, 3}, // after the barrier: every BarrierWait before it in the trace (thread 3's, position 3)
		{3, 4, 2, 3}, // thread 3 after the barrier: thread 2's BarrierWait
		{1, 5, 2, 0}, // locks are not causal
		{3, 5, 1, 3}, // thread 3 stays after thread 1's Signal
		{2, 4, 1, 3}, // through thread 3: signal → wait → sempost → semwait
	}
	for _, tc := range tests {
		if got := m.Clock(tc.tid, tc.pos, tc.other); got != tc.want {
			t.Errorf("Clock(t%d, %d, t%d) = %d, want %d", tc.tid, tc.pos, tc.other, got, tc.want)
		}
	}
}

// TestParseLimits checks the bounds on hostile input: a line without end (a
// file of zeros, or a decompression bomb of them) and a trace larger than
// the decompressed-size bound are bad input naming the flag that raises the
// bound, read without buffering the whole input.
func TestParseLimits(t *testing.T) {
	zeros := bytes.Repeat([]byte{0}, 8<<20)
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(zeros)
	zw.Close()
	trace := []byte("1, 1, a.c-1, Write, x\n2, 2, a.c-2, Read, x\n")
	tests := []struct {
		name string
		in   []byte
		opts Options
		want string
	}{
		{"zeros", zeros, Options{}, "t:1: line over the limit of 1048576 bytes (--max-line-bytes raises it)"},
		{"gzip bomb", bomb.Bytes(), Options{MaxLineBytes: 4096}, "t:1: line over the limit of 4096 bytes (--max-line-bytes raises it)"},
		{"long second line", append(append([]byte{}, trace[:22]...), bytes.Repeat([]byte("x"), 300)...), Options{MaxLineBytes: 100}, "t:2: line over the limit of 100 bytes"},
		{"decompressed size", trace, Options{MaxBytes: 30}, "t:2: trace (decompressed) over the limit of 30 bytes (--max-trace-bytes raises it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(context.Background(), bytes.NewReader(tt.in), "t", tt.opts)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a ParseError containing %q", err, tt.want)
			}
		})
	}
	if _, err := Parse(context.Background(), bytes.NewReader(trace), "t", Options{MaxBytes: int64(len(trace)), MaxLineBytes: 30}); err != nil {
		t.Errorf("a trace at the bounds: %v", err)
	}
}

// TestReachedComments reads the recorder's "# reached:" details and
// ignores every other comment, malformed ones included.
func TestReachedComments(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]string
	}{
		{"none", "# a comment\n1, 1, a.c-1, Read, x\n", nil},
		{"one", "# reached: node.n(calloc@l.c:5#3) as head->next->next->n\n1, 1, a.c-1, Read, x\n",
			map[string]string{"node.n(calloc@l.c:5#3)": "head->next->next->n"}},
		{"at the end", "1, 1, a.c-1, Read, x\n#   reached: a(b) as p->a  \n# reached: c(d) as q->c\n# end: 1 events\n",
			map[string]string{"c(d)": "q->c"}},
		{"malformed", "# reached: nothing\n# reached:  as p\n# reached: x as \n1, 1, a.c-1, Read, x\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := parse(t, tt.text)
			if len(m.Reached) != len(tt.want) {
				t.Fatalf("Reached = %v, want %v", m.Reached, tt.want)
			}
			for k, v := range tt.want {
				if m.Reached[k] != v {
					t.Errorf("Reached[%q] = %q, want %q", k, m.Reached[k], v)
				}
			}
		})
	}
}

// TestParseProgress: Options.Progress sees the bytes of the input read,
// increasing, the last call the whole input (compressed: the file's bytes).
func TestParseProgress(t *testing.T) {
	var text strings.Builder
	text.WriteString("1, 1, a.c-1, Write, x\n")
	for i := 0; i < 40000; i++ {
		fmt.Fprintf(&text, "1, %d, a.c-2, Read, x\n", i+2)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text.String()))
	zw.Close()
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"plain", []byte(text.String())}, {"gzip", gz.Bytes()}} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []int64
			_, err := Parse(context.Background(), bytes.NewReader(tc.in), "p.csv", Options{Progress: func(n int64) { seen = append(seen, n) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) == 0 || seen[len(seen)-1] != int64(len(tc.in)) || !slices.IsSorted(seen) {
				t.Errorf("progress %v, want increasing to %d", seen, len(tc.in))
			}
		})
	}
}

// endlessTrace is a trace that never ends: thread 1 writes x, again and
// again.
type endlessTrace struct{ n int }

func (e *endlessTrace) Read(p []byte) (int, error) {
	k := 0
	for len(p)-k >= 64 {
		e.n++
		k += copy(p[k:], fmt.Sprintf("1, %d, a.c-1, Write, x\n", e.n))
	}
	return k, nil
}

// TestParseStopsReader: a parse that fails or is cancelled while its
// reader goroutine is still reading returns, and leaves no goroutine
// behind, even when the input never ends.
func TestParseStopsReader(t *testing.T) {
	before := runtime.NumGoroutine()
	bad := io.MultiReader(strings.NewReader("1, 1, a.c-1, Write, x\n1, 2, a.c-2, Frobnicate, x\n"), &endlessTrace{n: 2})
	_, err := Parse(context.Background(), bad, "t", Options{})
	if err == nil || !strings.Contains(err.Error(), "t:2: unknown action") {
		t.Errorf("err = %v, want t:2: unknown action", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := Parse(ctx, &endlessTrace{}, "t", Options{Spill: SpillNever}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
	for range 100 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines after the parses, %d before", runtime.NumGoroutine(), before)
}
