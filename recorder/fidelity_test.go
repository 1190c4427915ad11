package recorder

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Tests of issue 10 (recorder fidelity): each builds an example with
// `mcpredict cc`, records it with `mcpredict record` and checks the trace
// and, where it matters, `mcpredict run`.

// cli runs the mcpredict binary with the test's runtime cache and returns
// its stdout and stderr; a status other than 0 or 1 fails the test.
func cli(t *testing.T, bin string, env []string, args ...string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(testContext(t), bin, args...)
	cmd.Env = append(append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(testCacheDir(), "xdg")), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("mcpredict %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
	}
	return stdout.String(), stderr.String()
}

// ccExample builds an example with mcpredict cc (and extra options).
func ccExample(t *testing.T, bin, src string, opts ...string) string {
	t.Helper()
	prog := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	args := append(append([]string{"cc"}, opts...), "-O1", "-o", prog, src)
	cli(t, bin, nil, args...)
	return prog
}

// recordCLI records prog with mcpredict record; env is added to the
// program's environment. It returns the trace and record's stderr.
func recordCLI(t *testing.T, bin string, env []string, prog string, args ...string) (string, string) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "trace.csv")
	_, stderr := cli(t, bin, env, append([]string{"record", "-o", trace, "--", prog}, args...)...)
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), stderr
}

// variables returns the sorted set of objects of the trace's accesses,
// Allocs and Frees.
func variables(evs []event) []string {
	seen := map[string]bool{}
	for _, e := range evs {
		switch e.action {
		case "Read", "Write", "Alloc", "Free":
			seen[e.objs[0]] = true
		}
	}
	var out []string
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// bugIDs predicts with the native engine and returns the sorted bug ids.
func bugIDs(t *testing.T, bin, trace string) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := cli(t, bin, nil, "run", "--format", "json", "--engine", "native", "--no-cache", path)
	var rep report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON report: %v\n%s", err, out)
	}
	var ids []string
	for _, b := range rep.Bugs {
		ids = append(ids, b.ID+" "+b.Pattern+" "+strings.Join(b.Vars, ","))
	}
	sort.Strings(ids)
	return ids
}

// TestStableNames records each program twice, in environments of
// different sizes (which moves the stack) and with address-space layout
// randomisation as usual: the variables and the bug ids must be the same,
// and no name may contain an address.
func TestStableNames(t *testing.T) {
	requireTool(t, "gcc")
	bin := mcpredict(t)
	tests := []struct {
		src  string
		cc   []string
		args []string
		bugs bool // the program has a bug to predict
	}{
		{src: "rec_heap_names.c", args: []string{"2", "20000"}, bugs: true},
		{src: "rec_stack_ctx.c", args: []string{"2", "20000"}, bugs: true},
		{src: "rec_atomic_ref.c", args: []string{"1", "20000"}, bugs: true},
		{src: "rec_pool_alloc.c", cc: []string{"--alloc-func", "pool_get:2", "--free-func", "pool_put:2"}, args: []string{"4"}},
		{src: "apache_log.c", args: []string{"2", "3", "20000"}, bugs: true},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			t.Parallel()
			prog := ccExample(t, bin, exampleSource(tt.src), tt.cc...)
			var vars [2][]string
			var ids [2][]string
			for i := range 2 {
				env := []string{"MCPREDICT_TEST_PAD=" + strings.Repeat("x", 1+i*3000)}
				trace, _ := recordCLI(t, bin, env, prog, tt.args...)
				evs := parseTrace(t, trace)
				vars[i] = variables(evs)
				for _, v := range vars[i] {
					// Offsets in a module (libc.so.6+0x758cc, an
					// allocation inside libc) are the same in every run.
					if strings.Contains(strings.ReplaceAll(v, "+0x", "+"), "0x") {
						t.Errorf("run %d: a name with an address: %s", i+1, v)
					}
				}
				ids[i] = bugIDs(t, bin, trace)
			}
			if !slices.Equal(vars[0], vars[1]) {
				t.Errorf("variables differ between two recordings:\n%q\n%q", vars[0], vars[1])
			}
			if !slices.Equal(ids[0], ids[1]) {
				t.Errorf("bug ids differ between two recordings:\n%q\n%q", ids[0], ids[1])
			}
			if tt.bugs && len(ids[0]) == 0 {
				t.Errorf("no bug predicted")
			}
		})
	}
}

// TestStackObject: main's own accesses to the struct it gave to the
// worker are recorded and named main::ctx.done; what only main touches
// is not in the trace.
//
// With gcc the locals' frame base is the CFA, with clang the frame
// pointer: both name the struct.
func TestStackObject(t *testing.T) {
	src := exampleSource("rec_stack_ctx.c")
	mk := markers(t, src)
	for _, compiler := range []string{"gcc", "clang"} {
		t.Run(compiler, func(t *testing.T) {
			prog := buildWith(t, compiler, src)
			trace, _ := record(t, prog, "2")
			evs := parseTrace(t, trace)
			for _, th := range []string{"1", "2"} {
				for _, a := range []struct{ action, marker string }{{"Read", "read"}, {"Write", "write"}} {
					n := 0
					for _, e := range find(evs, a.action, "main::ctx.done", mk[a.marker]) {
						if e.thread == th {
							n++
						}
					}
					if n != 2 {
						t.Errorf("thread %s: %d %s of main::ctx.done at line %d, want 2", th, n, a.action, mk[a.marker])
					}
				}
			}
			mustFind(t, evs, "Lock", "main::ctx.lock", 0)
			for _, e := range evs {
				if len(e.objs) > 0 && (strings.HasPrefix(e.objs[0], "main::ctx.name") || strings.HasPrefix(e.objs[0], "stack:")) {
					t.Errorf("unshared or unnamed stack memory in the trace: %v", e)
				}
			}
		})
	}
}

// TestTLSAndReadOnly: errno, __thread variables, string literals and
// constant tables are never variables.
func TestTLSAndReadOnly(t *testing.T) {
	requireTool(t, "gcc")
	prog := build(t, exampleSource("rec_tls.c"))
	trace, _ := record(t, prog, "3")
	evs := parseTrace(t, trace)
	var data []string
	for _, v := range variables(evs) {
		if !strings.HasPrefix(v, "*") { // not a block's Alloc or Free
			data = append(data, v)
		}
	}
	if !slices.Equal(data, []string{"total"}) {
		t.Errorf("variables %q, want only total", data)
	}
}

// TestAtomicPlainAccesses: an atomic read-modify-write of a location the
// program also reads plainly is a Write of it (AtomicWrite), with its order on
// atomic:<name>; a location only accessed atomically is synchronisation
// only.
func TestAtomicPlainAccesses(t *testing.T) {
	requireTool(t, "gcc")
	src := exampleSource("rec_atomic_ref.c")
	prog := build(t, src)
	trace, _ := record(t, prog, "1", "20000")
	evs := parseTrace(t, trace)
	mk := markers(t, src)
	for _, th := range []string{"2", "3"} {
		var w, r bool
		for _, e := range find(evs, "AtomicWrite", "shared->ref", mk["dec"]) {
			w = w || e.thread == th
		}
		for _, e := range find(evs, "Read", "shared->ref", mk["check"]) {
			r = r || e.thread == th
		}
		if !w || !r {
			t.Errorf("thread %s: atomic decrement recorded as an AtomicWrite: %v, plain read: %v", th, w, r)
		}
	}
	// The second decrement reads the first, a read-modify-write: that
	// orders nothing (a counter; see learned.atomicOrder).
	for _, e := range find(evs, "", "atomic:shared->ref*", 0) {
		if e.action == "Wait" || e.action == "Signal" {
			t.Errorf("a decrement that read a decrement orders the trace: %v", e)
		}
	}
	for _, e := range evs {
		if (e.action == "Read" || e.action == "Write") && e.objs[0] == "freed" {
			t.Errorf("an atomic-only variable recorded as data: %v", e)
		}
		if (e.action == "Wait" || e.action == "Signal") && e.objs[0] == "shared->ref" {
			t.Errorf("synchronisation on the data variable itself: %v", e)
		}
	}
}

// TestAtomicOrders: a load that reads the end of a chain of
// read-modify-writes acquires the release of every thread of the chain; the
// read-modify-writes order nothing among themselves; a release store orders
// the acquire loads that read it.
func TestAtomicOrders(t *testing.T) {
	requireTool(t, "gcc")
	src := filepath.Join("testdata", "atomic_chain.c")
	prog := build(t, src)
	trace, _ := record(t, prog)
	evs := parseTrace(t, trace)
	mk := markers(t, src)
	from := map[string]bool{}
	for _, e := range find(evs, "Wait", "atomic:done*", 0) {
		if e.line != mk["done-load"] || e.thread != "1" {
			t.Errorf("an acquire of done other than main's load that saw the count complete: %v", e)
		}
		from[e.objs[0]] = true
	}
	// One Wait on the latest release, one per other worker.
	if len(from) != 3 || !from["atomic:done"] {
		t.Errorf("main's load acquires %v, want atomic:done and two atomic:done@<worker>", from)
	}
	// Every worker releases (on atomic:done when a load read its
	// increment last, on its own object when a later one's).
	signaled := map[string]bool{}
	for _, e := range find(evs, "Signal", "atomic:done*", mk["count"]) {
		signaled[e.thread] = true
		if e.objs[0] != "atomic:done" && e.objs[0] != "atomic:done@"+e.thread {
			t.Errorf("a release on another thread's object: %v", e)
		}
	}
	if len(signaled) != 3 {
		t.Errorf("releases of done by %v, want all three workers", signaled)
	}
	mustFind(t, evs, "Signal", "atomic:go", mk["go-store"])
	if got := find(evs, "Wait", "atomic:go", mk["go-load"]); len(got) != 3 {
		t.Errorf("%d acquires of go, want 3 (each worker's load that saw it set): %v", len(got), got)
	}
}

// TestArgvIsMainStack: argv[] above the stack top that pthread_getattr_np
// reports for the main thread is main's own stack, not a variable named by
// its address (TestStableNames failed on it when ASLR put an argv slot
// past that page).
func TestArgvIsMainStack(t *testing.T) {
	requireTool(t, "gcc")
	prog := build(t, filepath.Join("testdata", "argv_top.c"))
	args := make([]string, 1500) // 12 KB of pointers: past any page boundary
	for i := range args {
		args[i] = "a"
	}
	trace, _ := record(t, prog, args...)
	for _, v := range variables(parseTrace(t, trace)) {
		if strings.Contains(strings.ReplaceAll(v, "+0x", "+"), "0x") {
			t.Errorf("a variable named by its address: %s", v)
		}
	}
}

// TestUnjoinedThread: record and run both warn about the thread main did
// not join, naming it.
func TestUnjoinedThread(t *testing.T) {
	requireTool(t, "gcc")
	bin := mcpredict(t)
	prog := ccExample(t, bin, exampleSource("rec_unjoined.c"))
	trace, stderr := recordCLI(t, bin, nil, prog, "3")
	const want = "warning: thread 3 (monitor) was still running when the program exited (thread 1 returned from main or called exit without joining it)"
	if !strings.Contains(stderr, want) {
		t.Errorf("mcpredict record said:\n%s\nwant %q", stderr, want)
	}
	if !strings.Contains(trace, "# "+want) {
		t.Errorf("the trace has no %q comment", want)
	}
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	_, runErr := cli(t, bin, nil, "run", "--engine", "native", path)
	if w := "warning: thread 3 (handle 3, in monitor) was still running when the trace ended"; !strings.Contains(runErr, w) {
		t.Errorf("mcpredict run said:\n%s\nwant %q", runErr, w)
	}
	if strings.Contains(runErr, "thread 2") {
		t.Errorf("mcpredict run warns about the joined worker:\n%s", runErr)
	}

	// Without function events, the threads' start routines are still
	// entered and exited, and run still sees the unfinished thread.
	trace2 := filepath.Join(t.TempDir(), "nofuncs.csv")
	cli(t, bin, nil, "record", "-no-funcs", "-o", trace2, "--", prog, "3")
	data, err := os.ReadFile(trace2)
	if err != nil {
		t.Fatal(err)
	}
	evs := parseTrace(t, string(data))
	enters := map[string]string{}
	for _, e := range find(evs, "Enter", "", 0) {
		enters[e.thread] = e.objs[0]
	}
	if enters["2"] != "worker" || enters["3"] != "monitor" || enters["1"] != "" {
		t.Errorf("-no-funcs: Enter events %v, want the start routines of threads 2 and 3 only", enters)
	}
	if n := len(find(evs, "Exit", "", 0)); n != 1 {
		t.Errorf("-no-funcs: %d Exit events, want 1 (the worker's end)", n)
	}
	_, runErr = cli(t, bin, nil, "run", "--engine", "native", trace2)
	if w := "thread 3 (handle 3, in monitor) was still running"; !strings.Contains(runErr, w) {
		t.Errorf("-no-funcs: mcpredict run said:\n%s\nwant %q", runErr, w)
	}
}

// TestLivenessNeverRan: a thread created but never started, and one
// killed while running (no exit recorded).
func TestLivenessNeverRan(t *testing.T) {
	main, worker := &rawThread{Token: 1}, &rawThread{Token: 2}
	v := newLiveness(&rawLog{Threads: []*rawThread{main, worker}})
	for _, ev := range []rawEvent{
		{Seq: 1, Kind: kCreate, Thread: main, Addr: 2},
		{Seq: 2, Kind: kCreate, Thread: main, Addr: 3},
		{Seq: 3, Kind: kThrStart, Thread: worker, Addr: 0},
	} {
		v.note(&ev)
	}
	warns, unfinished, never := v.warnings(newProcSyms(nil, false, nil))
	if !slices.Equal(unfinished, []uint64{2}) || !slices.Equal(never, []uint64{3}) {
		t.Fatalf("unfinished %v, never ran %v; want [2], [3]", unfinished, never)
	}
	want := []string{
		"thread 3 never ran: created by thread 1 at ?",
		"thread 2 (0x0) was still running when the recording ended (the program was killed or crashed)",
	}
	if len(warns) != len(want) {
		t.Fatalf("warnings %q", warns)
	}
	for i := range want {
		if !strings.HasPrefix(warns[i], want[i]) {
			t.Errorf("warning %q, want %q…", warns[i], want[i])
		}
	}
}

// TestAllocFuncLifetimes: with --alloc-func and --free-func, each message
// the pool hands out is a variable of its own, named after the queue slot
// that carried it; the same memory's next message is another.
func TestAllocFuncLifetimes(t *testing.T) {
	requireTool(t, "gcc")
	bin := mcpredict(t)
	src := exampleSource("rec_pool_alloc.c")
	prog := ccExample(t, bin, src, "--alloc-func=pool_get:2", "--free-func=pool_put:2")
	trace, _ := recordCLI(t, bin, nil, prog, "5")
	evs := parseTrace(t, trace)
	allocs := map[string]bool{}
	for _, e := range find(evs, "Alloc", "*q.items[*", 0) {
		allocs[e.objs[0]] = true
		if e.thread != "2" {
			t.Errorf("%v: a message allocated by thread %s, want the producer", e, e.thread)
		}
	}
	if len(allocs) != 5 || !allocs["*q.items[0]#2"] {
		t.Errorf("message lifetimes %v, want 5 with *q.items[0]#2", allocs)
	}
	if n := len(find(evs, "Free", "*q.items[*", 0)); n != 5 {
		t.Errorf("%d Free of messages, want 5", n)
	}
	// Both threads access each message, under its lifetime's name.
	for _, v := range []string{"q.items[0]->len", "q.items[0]#2->len"} {
		th := map[string]bool{}
		for _, e := range evs {
			if (e.action == "Read" || e.action == "Write") && e.objs[0] == v {
				th[e.thread] = true
			}
		}
		if !th["2"] || !th["3"] {
			t.Errorf("%s accessed by threads %v, want 2 and 3", v, th)
		}
	}
	// Function events name the real function, not the wrapper's target.
	mustFind(t, evs, "Enter", "pool_get", 0)
	for _, e := range evs {
		if strings.Contains(strings.Join(e.objs, ","), realPrefix) {
			t.Errorf("the renamed definition shows: %v", e)
		}
	}
}

// TestRewriteAsm checks the renaming and the wrapper on gcc's and clang's
// own output, and that the wrapped program runs without the recorder (the
// runtime's hooks are weak references).
func TestRewriteAsm(t *testing.T) {
	for _, compiler := range []string{"gcc", "clang"} {
		t.Run(compiler, func(t *testing.T) {
			requireTool(t, compiler)
			rewriteAsmWith(t, compiler)
		})
	}
}

func rewriteAsmWith(t *testing.T, compiler string) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte(`#include <stdlib.h>
#include <stdio.h>
void *get(int tag, size_t n) { return malloc(n + (size_t)tag); }
static void put(void *p) { free(p); }
void (*volatile putp)(void *) = put;
int main(void) { char *p = get(1, 15); p[0] = 'x'; putp(p); printf("ok %d\n", p != 0); return 0; }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	asm := filepath.Join(dir, "p.s")
	if out, err := exec.Command(compiler, "-O1", "-S", "-o", asm, src).CombinedOutput(); err != nil {
		t.Fatalf("%s -S: %v\n%s", compiler, err, out)
	}
	funcs := []AllocFunc{{Name: "get", Arg: 2}, {Name: "put", Free: true, Arg: 1}, {Name: "absent"}}
	done, err := rewriteAsm(asm, funcs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(done, []string{"get", "put"}) {
		t.Errorf("wrapped %v, want get and put", done)
	}
	text, _ := os.ReadFile(asm)
	for _, want := range []string{realPrefix + "get:", realPrefix + "put:", "\nget:\n", "\nput:\n", "\t.globl\tget",
		"\t.type\t" + realPrefix + "get, @function"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("rewritten assembly lacks %q", want)
		}
	}
	exe := filepath.Join(dir, "p")
	if out, err := exec.Command(compiler, "-o", exe, asm).CombinedOutput(); err != nil {
		t.Fatalf("assembling: %v\n%s", err, out)
	}
	if out, err := exec.Command(exe).CombinedOutput(); err != nil || string(out) != "ok 1\n" {
		t.Errorf("wrapped program without the recorder: %v, %q", err, out)
	}
	// The renamed functions' sizes are theirs, not the wrappers'.
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == realPrefix+"get" && s.Size == 0 {
			t.Errorf("%s has no size", s.Name)
		}
	}
}

func TestParseAllocFunc(t *testing.T) {
	for _, c := range []struct {
		spec string
		free bool
		want AllocFunc
		err  bool
	}{
		{spec: "apr_palloc:2", want: AllocFunc{Name: "apr_palloc", Arg: 2}},
		{spec: "pool_get", want: AllocFunc{Name: "pool_get"}},
		{spec: "pool_put", free: true, want: AllocFunc{Name: "pool_put", Free: true, Arg: 1}},
		{spec: "_ZN4Pool3getEm:2", want: AllocFunc{Name: "_ZN4Pool3getEm", Arg: 2}},
		{spec: "x:7", err: true},
		{spec: "put:0", free: true, err: true},
		{spec: "a b", err: true},
	} {
		got, err := ParseAllocFunc(c.spec, c.free)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("ParseAllocFunc(%q, %v) = %+v, %v", c.spec, c.free, got, err)
		}
	}
	list, err := ParseAllocFuncList("a, b:1,", false)
	if err != nil || len(list) != 2 || list[1].Arg != 1 {
		t.Errorf("ParseAllocFuncList = %+v, %v", list, err)
	}
}

// TestStackChurn: many short threads sharing stack objects, whose stacks
// later threads reuse: every shared stack object is named after its
// function's local, per owner thread where several threads have one.
func TestStackChurn(t *testing.T) {
	requireTool(t, "gcc")
	src := filepath.Join("testdata", "churn.c")
	prog := build(t, src)
	trace, res := record(t, prog, "8")
	if res.ExitCode != 0 {
		t.Fatalf("program %s", res.Exit)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %q", res.Warnings)
	}
	evs := parseTrace(t, trace)
	mk := markers(t, src)
	if n := len(find(evs, "Create", "", 0)); n != 128 {
		t.Errorf("%d Create events, want 128", n)
	}
	// main's slots: written by the workers, read by main.
	for i := 0; i < 8; i++ {
		if n := len(find(evs, "Write", "main::slots["+strconv.Itoa(i)+"]", mk["slot"])); n != 8 {
			t.Errorf("%d writes of main::slots[%d], want 8", n, i)
		}
	}
	// Each worker's box: one variable per worker thread.
	boxes := map[string]bool{}
	for _, e := range find(evs, "Write", "worker::mine@t*", mk["helper"]) {
		if strings.HasSuffix(e.objs[0], ".value") {
			boxes[e.objs[0]] = true
		}
	}
	if len(boxes) != 64 {
		t.Errorf("%d worker boxes written by helpers, want 64", len(boxes))
	}
	for _, e := range evs {
		if len(e.objs) > 0 && strings.HasPrefix(e.objs[0], "stack:") {
			t.Errorf("unnamed stack location: %v", e)
		}
	}
}
