package recorder

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testCacheDir is where the tests build the runtime: shared by all tests
// and runs (RuntimeLib keys it by the sources and the compiler).
func testCacheDir() string {
	return filepath.Join(os.TempDir(), "mcpredict-test-cache")
}

func requireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed", name)
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// build compiles a C or C++ file the way mcpredict cc does, at -O1, and
// returns the executable.
func build(t testing.TB, src string, extra ...string) string {
	t.Helper()
	return buildWith(t, "", src, extra...)
}

// buildWith is build with the compiler driver of mcpredict cc --compiler
// ("": gcc or g++); the test skips if the driver is not installed.
func buildWith(t testing.TB, compiler, src string, extra ...string) string {
	t.Helper()
	tool := compiler
	if tool == "" {
		tool = "gcc"
		if isCxxSource(src) {
			tool = "g++"
		}
	}
	requireTool(t, tool)
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	args := append([]string{"-O1", "-Wall", "-o", out, src}, extra...)
	var stderr bytes.Buffer
	if err := CC(testContext(t), args, compiler, testCacheDir(), false, &stderr, &stderr); err != nil {
		t.Fatalf("mcpredict cc %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// record runs prog with recording and returns the trace.
func record(t testing.TB, prog string, args ...string) (string, RecordResult) {
	t.Helper()
	var trace, stderr bytes.Buffer
	res, err := Record(testContext(t), &trace, RecordOptions{
		Program: prog, Args: args, Stdout: &stderr, Stderr: &stderr,
		Convert: ConvertOptions{Warn: func(s string) { t.Log(s) }},
	})
	if err != nil {
		t.Fatalf("recording %s: %v\n%s", prog, err, stderr.String())
	}
	return trace.String(), res
}

// markers maps the "@name" comments of a source file to their lines.
func markers(t testing.TB, src string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`@([a-z][a-z0-9-]*)`)
	m := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		for _, g := range re.FindAllStringSubmatch(line, -1) {
			m[g[1]] = i + 1
		}
	}
	return m
}

// event is one parsed trace line.
type event struct {
	n      int // line number in the trace
	thread string
	seq    uint64
	file   string
	line   int
	action string // a DataRead is a Read with data set, a CopyRead one with copied too
	objs   []string
	data   bool
	copied bool
}

func (e event) String() string {
	return fmt.Sprintf("line %d: %s, %d, %s-%d, %s, %s", e.n, e.thread, e.seq, e.file, e.line, e.action, strings.Join(e.objs, ", "))
}

// parseTrace checks every line against DESIGN §2 and returns the events.
// It is deliberately independent of the tracemodel package: it checks
// what the recorder writes, not what the predictor accepts.
func parseTrace(t testing.TB, trace string) []event {
	t.Helper()
	actions := map[string]int{ // action -> number of objects
		"Read": 1, "DataRead": 1, "CopyRead": 1, "Write": 1, "AtomicWrite": 1, "Lock": 1, "TryLock": 1, "Unlock": 1, "RdLock": 1, "WrLock": 1,
		"RwUnlock": 1, "Signal": 1, "Broadcast": 1, "Wait": 1, "BarrierWait": 1, "Create": 1,
		"Join": 1, "SemPost": 1, "SemWait": 1, "Alloc": 1, "Free": 1, "Enter": 1, "Exit": 1, "Blocked": 1,
	}
	var evs []event
	var last uint64
	sc := bufio.NewScanner(strings.NewReader(trace))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if len(f) < 5 || len(f) > 6 {
			t.Fatalf("trace line %d: %d fields: %q", n, len(f), line)
		}
		ev := event{n: n, thread: f[0], action: f[3], objs: f[4:]}
		if _, err := strconv.ParseUint(ev.thread, 10, 64); err != nil {
			t.Fatalf("trace line %d: thread %q is not a token", n, ev.thread)
		}
		seq, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || seq < last {
			t.Fatalf("trace line %d: sequence number %q after %d", n, f[1], last)
		}
		last, ev.seq = seq, seq
		if f[2] != "?" {
			i := strings.LastIndex(f[2], "-")
			l, err := strconv.Atoi(f[2][i+1:])
			if i <= 0 || err != nil || l <= 0 {
				t.Fatalf("trace line %d: location %q is not file-line", n, f[2])
			}
			ev.file, ev.line = f[2][:i], l
		}
		want, ok := actions[ev.action]
		if !ok {
			t.Fatalf("trace line %d: unknown action %q", n, ev.action)
		}
		if len(ev.objs) < want || (len(ev.objs) > want && ev.action != "Wait" && ev.action != "Blocked") {
			t.Fatalf("trace line %d: %s with objects %q", n, ev.action, ev.objs)
		}
		for _, o := range ev.objs {
			if o == "" {
				t.Fatalf("trace line %d: empty object", n)
			}
		}
		switch ev.action {
		case "DataRead":
			ev.action, ev.data = "Read", true
		case "CopyRead":
			ev.action, ev.data, ev.copied = "Read", true, true
		}
		evs = append(evs, ev)
	}
	checkOrder(t, evs)
	return evs
}

// checkOrder checks the orders a recorded trace must respect: a thread's
// Create comes before its first event and its Join after its last, and no
// mutex is held by two threads at once.
func checkOrder(t testing.TB, evs []event) {
	t.Helper()
	created := map[string]int{}
	first := map[string]int{}
	lastOf := map[string]int{}
	for i, e := range evs {
		if _, ok := first[e.thread]; !ok {
			first[e.thread] = i
		}
		lastOf[e.thread] = i
		if e.action == "Create" {
			created[e.objs[0]] = i
		}
	}
	for th, i := range created {
		if f, ok := first[th]; ok && f < i {
			t.Errorf("thread %s has an event (%v) before its Create (%v)", th, evs[f], evs[i])
		}
	}
	holder := map[string]string{}
	for _, e := range evs {
		switch e.action {
		case "Join":
			if l, ok := lastOf[e.objs[0]]; ok && evs[l].seq > e.seq {
				t.Errorf("%v: thread %s still runs after the Join (%v)", e, e.objs[0], evs[l])
			}
		case "Lock", "TryLock", "WrLock":
			if h, ok := holder[e.objs[0]]; ok && h != e.thread {
				t.Errorf("%v: %s taken while thread %s holds it", e, e.objs[0], h)
			}
			holder[e.objs[0]] = e.thread
		case "Unlock", "RwUnlock":
			delete(holder, e.objs[0])
		}
	}
}

// find returns the events matching action, object (exact, or a prefix
// ending in '*') and source line (0: any).
func find(evs []event, action, obj string, line int) []event {
	var out []event
	for _, e := range evs {
		if e.action != action || (line != 0 && e.line != line) {
			continue
		}
		if obj != "" {
			if p, ok := strings.CutSuffix(obj, "*"); ok {
				if !strings.HasPrefix(e.objs[0], p) {
					continue
				}
			} else if e.objs[0] != obj {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

func mustFind(t testing.TB, evs []event, action, obj string, line int) []event {
	t.Helper()
	got := find(evs, action, obj, line)
	if len(got) == 0 {
		t.Errorf("no %s of %q at line %d in the trace", action, obj, line)
	}
	return got
}

// interleaved reports whether the accesses to v of two threads alternate
// in the trace (rather than one thread's all coming before the other's).
func interleaved(evs []event, v string) bool {
	var order []string
	for _, e := range evs {
		if (e.action == "Read" || e.action == "Write") && e.objs[0] == v {
			if len(order) == 0 || order[len(order)-1] != e.thread {
				order = append(order, e.thread)
			}
		}
	}
	seen := map[string]bool{}
	for _, th := range order {
		if seen[th] {
			return true
		}
		seen[th] = true
	}
	return false
}

func exampleSource(name string) string {
	return filepath.Join("..", "examples", "c", name)
}
