package recorder

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCompileCommands(t *testing.T) {
	opts := CCOptions{Runtime: "/rt/libmcprec.a", TempDir: "/tmp/x"}
	link := []string{"/rt/libmcprec.a", "-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset",
		"-Wl,--export-dynamic-symbol=__mcprec_ufn_*", "-lpthread", "-ldl"}
	pool := []AllocFunc{{Name: "pool_get", Arg: 2}, {Name: "pool_put", Free: true, Arg: 1}}
	tests := []struct {
		name string
		args []string
		opts CCOptions
		want [][]string
	}{
		{
			name: "compile only",
			args: []string{"-O2", "-c", "a.c", "-o", "a.o"},
			want: [][]string{{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-O2", "-c", "a.c", "-o", "a.o"}},
		},
		{
			name: "compile only keeps the user's -g level and drops a duplicate -fsanitize",
			args: []string{"-g3", "-fsanitize=thread", "-c", "a.c"},
			want: [][]string{{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g3", "-c", "a.c"}},
		},
		{
			name: "link objects",
			args: []string{"-o", "prog", "a.o", "b.o", "-lm"},
			want: [][]string{append([]string{"gcc", "-o", "prog", "a.o", "b.o", "-lm"}, link...)},
		},
		{
			name: "one-step build is split",
			args: []string{"-O1", "-Iinc", "-o", "prog", "main.c", "util.o", "-Wl,-z,now", "-lm"},
			want: [][]string{
				{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-O1", "-Iinc", "-c", "main.c", "-o", "/tmp/x/1-main.o"},
				append([]string{"gcc", "-O1", "-Iinc", "-o", "prog", "/tmp/x/1-main.o", "util.o", "-Wl,-z,now", "-lm"}, link...),
			},
		},
		{
			name: "C++ picks g++",
			args: []string{"-std=c++17", "x.cpp", "-o", "x"},
			want: [][]string{
				{"g++", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-std=c++17", "-c", "x.cpp", "-o", "/tmp/x/1-x.o"},
				append([]string{"g++", "-std=c++17", "/tmp/x/1-x.o", "-o", "x"}, link...),
			},
		},
		{
			name: "explicit compiler and -x",
			args: []string{"-x", "c", "prog.txt", "-o", "p"},
			opts: CCOptions{Compiler: "cc"},
			want: [][]string{
				{"cc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-x", "c", "-c", "prog.txt", "-o", "/tmp/x/1-prog.o"},
				append([]string{"cc", "-x", "c", "-x", "none", "/tmp/x/1-prog.o", "-o", "p"}, link...),
			},
		},
		{
			name: "shared library: instrumented, no runtime",
			args: []string{"-shared", "-fPIC", "-o", "libx.so", "x.c"},
			want: [][]string{
				{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-fPIC", "-c", "x.c", "-o", "/tmp/x/1-x.o"},
				{"gcc", "-shared", "-fPIC", "-o", "libx.so", "/tmp/x/1-x.o", "-fno-omit-frame-pointer", "-g"},
			},
		},
		{
			name: "frame pointers stay on",
			args: []string{"-O2", "-fomit-frame-pointer", "-c", "a.c"},
			want: [][]string{{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-O2", "-c", "a.c"}},
		},
		{
			name: "alloc funcs: compiled through assembly, dependencies kept",
			args: []string{"-O1", "-MMD", "-c", "pool.c", "-o", "obj/pool.o"},
			opts: CCOptions{AllocFuncs: pool},
			want: [][]string{
				{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-O1", "-MMD", "-MF", "obj/pool.d", "-MT", "obj/pool.o", "-S", "pool.c", "-o", "/tmp/x/1-pool.s"},
				{RewriteStep, "/tmp/x/1-pool.s", "alloc:pool_get:2", "free:pool_put:1"},
				{"gcc", "-x", "assembler", "-c", "/tmp/x/1-pool.s", "-o", "obj/pool.o"},
			},
		},
		{
			name: "alloc funcs: several sources, -m options to the assembler",
			args: []string{"-m64", "-c", "a.c", "b.c"},
			opts: CCOptions{AllocFuncs: pool[:1]},
			want: [][]string{
				{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-m64", "-S", "a.c", "-o", "/tmp/x/1-a.s"},
				{RewriteStep, "/tmp/x/1-a.s", "alloc:pool_get:2"},
				{"gcc", "-m64", "-x", "assembler", "-c", "/tmp/x/1-a.s", "-o", "a.o"},
				{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-m64", "-S", "b.c", "-o", "/tmp/x/2-b.s"},
				{RewriteStep, "/tmp/x/2-b.s", "alloc:pool_get:2"},
				{"gcc", "-m64", "-x", "assembler", "-c", "/tmp/x/2-b.s", "-o", "b.o"},
			},
		},
		{
			name: "alloc funcs: preprocessing only is not rewritten",
			args: []string{"-E", "a.c"},
			opts: CCOptions{AllocFuncs: pool},
			want: [][]string{{"gcc", "-fsanitize=thread", "-fsanitize-coverage=trace-cmp", "-fno-omit-frame-pointer", "-g", "-E", "a.c"}},
		},
		{
			name: "no input",
			args: []string{"--version"},
			want: [][]string{{"gcc", "--version"}},
		},
		{
			name: "clang: compile only, with its coverage kind, the reads before writes and no vectorizing after -O2",
			args: []string{"-O2", "-c", "a.c"},
			opts: CCOptions{Compiler: "clang", Clang: true},
			want: [][]string{{"clang", "-fsanitize=thread", "-fsanitize-coverage=func,trace-pc-guard,trace-cmp",
				"-mllvm", "-tsan-instrument-read-before-write", "-fno-omit-frame-pointer", "-g", "-O2", "-c", "a.c",
				"-fno-vectorize", "-fno-slp-vectorize"}},
		},
		{
			name: "clang: C++ sources linked by clang++",
			args: []string{"-std=c++17", "x.cpp", "-o", "x"},
			opts: CCOptions{Compiler: "clang", Clang: true},
			want: [][]string{
				{"clang", "-fsanitize=thread", "-fsanitize-coverage=func,trace-pc-guard,trace-cmp",
					"-mllvm", "-tsan-instrument-read-before-write", "-fno-omit-frame-pointer", "-g", "-std=c++17",
					"-fno-vectorize", "-fno-slp-vectorize", "-c", "x.cpp", "-o", "/tmp/x/1-x.o"},
				append([]string{"clang++", "-std=c++17", "/tmp/x/1-x.o", "-o", "x"}, link...),
			},
		},
		{
			name: "clang++: a shared library, no sanitizer on the link",
			args: []string{"-shared", "-o", "libx.so", "x.o"},
			opts: CCOptions{Compiler: "clang++", Clang: true},
			want: [][]string{{"clang++", "-shared", "-o", "libx.so", "x.o", "-fno-omit-frame-pointer", "-g"}},
		},
		{
			name: "g++ links C objects too",
			args: []string{"-o", "prog", "a.o"},
			opts: CCOptions{Compiler: "g++"},
			want: [][]string{append([]string{"g++", "-o", "prog", "a.o"}, link...)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			if tt.opts.Compiler != "" {
				o.Compiler = tt.opts.Compiler
			}
			o.AllocFuncs = tt.opts.AllocFuncs
			o.Clang = tt.opts.Clang
			got, err := CompileCommands(tt.args, o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CompileCommands(%q)\n got %q\nwant %q", tt.args, got, tt.want)
			}
		})
	}
	if _, err := CompileCommands([]string{"-o"}, opts); err == nil {
		t.Error("a missing -o value is not an error")
	}
}

func TestBlockMap(t *testing.T) {
	// Against a plain map, with random allocations and frees.
	var m blockMap
	ref := map[uint64]uint64{} // base -> size
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		base := uint64(r.IntN(2000)) * 16
		if r.IntN(3) == 0 {
			got := m.remove(base)
			_, had := ref[base]
			if (got != nil) != had {
				t.Fatalf("remove(%d) = %v, reference has it: %v", base, got, had)
			}
			delete(ref, base)
			continue
		}
		if _, ok := ref[base]; ok {
			continue
		}
		m.insert(&block{base: base, size: 8})
		ref[base] = 8
		probe := uint64(r.IntN(32000))
		var want uint64
		found := false
		for b := range ref {
			if b <= probe && (!found || b > want) {
				want, found = b, true
			}
		}
		got := m.floor(probe)
		if (got != nil) != found || (found && got.base != want) {
			t.Fatalf("floor(%d) = %v, want %d (found %v)", probe, got, want, found)
		}
	}
	if m.n != len(ref) {
		t.Errorf("size %d, want %d", m.n, len(ref))
	}
}

func TestRecordFeatures(t *testing.T) {
	src := filepath.Join("testdata", "features.c")
	prog := build(t, src)
	trace, res := record(t, prog)
	if res.ExitCode != 0 {
		t.Fatalf("program %s", res.Exit)
	}
	evs := parseTrace(t, trace)
	mk := markers(t, src)

	mustFind(t, evs, "Create", "2", 0)
	mustFind(t, evs, "Create", "3", 0)
	mustFind(t, evs, "Join", "2", 0)
	mustFind(t, evs, "Join", "3", 0)
	mustFind(t, evs, "Enter", "first", 0)
	mustFind(t, evs, "Exit", "second", 0)
	for _, a := range []string{"RdLock", "WrLock", "RwUnlock"} {
		mustFind(t, evs, a, "rw", 0)
	}
	mustFind(t, evs, "TryLock", "m", 0)
	mustFind(t, evs, "Lock", "spin", 0)
	mustFind(t, evs, "Unlock", "spin", 0)
	mustFind(t, evs, "SemPost", "sem", 0)
	mustFind(t, evs, "SemWait", "sem", 0)
	if n := len(find(evs, "BarrierWait", "bar", 0)); n != 2 {
		t.Errorf("%d BarrierWait events, want 2", n)
	}

	// Variables: globals by DWARF name and type, heap blocks through
	// the pointer they were reached by, untyped heap relative to its block.
	mustFind(t, evs, "Read", "table[3]", mk["table-read"])
	mustFind(t, evs, "Write", "table[3]", mk["table-write"])
	mustFind(t, evs, "Write", "pair.b[2]", mk["pair"])
	mustFind(t, evs, "Write", "first::calls", mk["static"])
	mustFind(t, evs, "Write", "cfg->verbose", mk["verbose"])
	mustFind(t, evs, "Write", "cfg->limit", mk["limit-write"])
	mustFind(t, evs, "Read", "cfg->limit", mk["limit-read"])
	// A block reached through a void pointer: its allocation site and
	// the offset.
	mustFind(t, evs, "Write", fmt.Sprintf("calloc@features.c:%d+4", mk["opaque-alloc"]), mk["opaque"])
	for _, f := range []string{"cfg->name[0]", "cfg->name[3]"} {
		mustFind(t, evs, "Write", f, mk["memcpy"])
	}
	if got := find(evs, "Write", "cfg->name[4]", 0); len(got) > 0 {
		t.Errorf("memcpy of 4 bytes wrote a fifth: %v", got[0])
	}

	// A timed wait that times out: the mutex is released and taken
	// again, and it is no Wait (nothing woke it).
	tw := mk["timedwait"]
	if len(find(evs, "Unlock", "m", tw)) != 1 || len(find(evs, "Lock", "m", tw)) != 1 {
		t.Errorf("timed-out wait at line %d: want one Unlock and one Lock of m", tw)
	}
	if got := find(evs, "Wait", "", tw); len(got) > 0 {
		t.Errorf("timed-out wait recorded as %v", got[0])
	}

	// Heap: the realloc that moves frees the old block. Alloc and Free
	// name the block, with a '*' (never an access's name).
	if len(find(evs, "Alloc", "*", 0)) < 3 || len(find(evs, "Free", "*", 0)) < 3 {
		t.Errorf("want at least 3 Alloc and 3 Free events")
	}
	mustFind(t, evs, "Alloc", "*cfg", 0)
	mustFind(t, evs, "Free", "*cfg", 0)
	for _, e := range evs {
		if len(e.objs) > 0 && strings.HasPrefix(e.objs[0], "0x") {
			t.Errorf("raw address in the trace: %v", e)
		}
	}
	// The threads' own stacks are never recorded.
	for _, e := range evs {
		if len(e.objs) > 0 && strings.HasPrefix(e.objs[0], "stack:") {
			t.Errorf("stack access recorded: %v", e)
		}
	}
}

func TestRecordCxxThreads(t *testing.T) {
	src := filepath.Join("testdata", "threads.cpp")
	prog := build(t, src)
	trace, _ := record(t, prog)
	evs := parseTrace(t, trace)
	mk := markers(t, src)
	// std::thread creates and joins inside libstdc++: still seen.
	for _, th := range []string{"2", "3"} {
		if c := mustFind(t, evs, "Create", th, 0); len(c) > 0 && c[0].thread != "1" {
			t.Errorf("thread %s created by %s, want 1", th, c[0].thread)
		}
		mustFind(t, evs, "Join", th, 0)
	}
	if n := len(find(evs, "Write", "acct.balance", mk["add"])); n != 2 {
		t.Errorf("%d writes of acct.balance at line %d, want 2", n, mk["add"])
	}
	if n := len(find(evs, "Lock", "acct.mu", 0)); n != 2 {
		t.Errorf("%d Lock of acct.mu, want 2", n)
	}
	// The atomic is synchronisation, not data.
	mustFind(t, evs, "Signal", "atomic:hits*", 0)
	mustFind(t, evs, "Wait", "atomic:hits*", 0)
	for _, e := range evs {
		if (e.action == "Read" || e.action == "Write") && strings.HasPrefix(e.objs[0], "hits") {
			t.Errorf("atomic recorded as data: %v", e)
		}
	}
}

func TestRecordAtomicFlag(t *testing.T) {
	prog := build(t, exampleSource("atomic_flag.c"))
	trace, _ := record(t, prog)
	evs := parseTrace(t, trace)
	rel := mustFind(t, evs, "Signal", "atomic:ready", 0)
	acq := mustFind(t, evs, "Wait", "atomic:ready", 0)
	for _, e := range evs {
		if (e.action == "Read" || e.action == "Write") && (e.objs[0] == "ready" || e.objs[0] == "refs") {
			t.Errorf("atomic recorded as data: %v", e)
		}
	}
	// The reader spins on the flag; the recorder folds the spin into
	// one Wait per change.
	if len(acq) > 10 {
		t.Errorf("%d Wait events on ready: spin loop not folded", len(acq))
	}
	// The read of the message comes after the release the reader saw.
	if len(rel) > 0 {
		for _, e := range find(evs, "Read", "message.len", 0) {
			if e.seq < rel[0].seq {
				t.Errorf("%v before the release %v", e, rel[0])
			}
		}
	}
}

func TestRecordExamples(t *testing.T) {
	// Every example records a well-formed trace whose accesses carry the
	// source lines and names the predictor needs.
	tests := []struct {
		src  string
		args []string
		vars []string // variables that must be accessed by two threads
	}{
		{"bank.c", []string{"3"}, []string{"balance"}},
		{"apache_log.c", []string{"2", "3"}, []string{"buf->outcnt"}},
		{"mozilla_events.c", []string{"3"}, []string{"queue.count"}},
		{"splash_barrier.c", []string{"2", "2"}, []string{"grid[8]", "maxdiff"}},
		{"locked_counter.c", []string{"3", "2"}, []string{"counter"}},
		{"prodcons.c", []string{"4"}, []string{"count", "items[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			t.Parallel()
			prog := build(t, exampleSource(tt.src))
			trace, res := record(t, prog, tt.args...)
			if res.ExitCode != 0 {
				t.Fatalf("program %s", res.Exit)
			}
			evs := parseTrace(t, trace)
			for _, v := range tt.vars {
				threads := map[string]bool{}
				for _, e := range evs {
					if (e.action == "Read" || e.action == "Write") && e.objs[0] == v {
						threads[e.thread] = true
						if e.file != tt.src {
							t.Errorf("%v: want a line of %s", e, tt.src)
						}
					}
				}
				if len(threads) < 2 {
					t.Errorf("%s accessed by %d threads, want 2 or more", v, len(threads))
				}
			}
		})
	}
}

func TestRecordKill9(t *testing.T) {
	// A program killed with SIGKILL in the middle of its run leaves a
	// usable trace of everything up to the kill.
	prog := build(t, filepath.Join("testdata", "forever.c"))
	raw := t.TempDir()
	cmd := exec.Command(prog)
	cmd.Env = append(os.Environ(), TraceDirEnv+"="+raw)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "started\n" {
		cmd.Process.Kill()
		t.Fatalf("program said %q, %v", line, err)
	}
	time.Sleep(150 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("program ended with %v, not by SIGKILL", err)
	}
	var trace bytes.Buffer
	st, err := Convert(raw, &trace, ConvertOptions{})
	if err != nil {
		t.Fatalf("converting the log of a killed program: %v", err)
	}
	evs := parseTrace(t, trace.String())
	mk := markers(t, filepath.Join("testdata", "forever.c"))
	if st.Threads != 3 {
		t.Errorf("%d threads in the log, want 3", st.Threads)
	}
	// Both threads ran about 150 ms at one update each 0.5 ms.
	for _, th := range []string{"2", "3"} {
		n := 0
		for _, e := range find(evs, "Write", "hits", mk["write"]) {
			if e.thread == th {
				n++
			}
		}
		if n < 20 {
			t.Errorf("thread %s: %d writes of hits recorded before the kill, want ≥ 20", th, n)
		}
	}
}

func TestRecordCrash(t *testing.T) {
	src := filepath.Join("testdata", "crash.c")
	prog := build(t, src)
	trace, res := record(t, prog)
	if !strings.Contains(res.Exit, "signal 11") {
		t.Errorf("exit %q, want a SIGSEGV", res.Exit)
	}
	evs := parseTrace(t, trace)
	mustFind(t, evs, "Write", "before_crash", markers(t, src)["write"])
}

func TestNoRecordingWithoutEnv(t *testing.T) {
	prog := build(t, exampleSource("bank.c"))
	dir := t.TempDir()
	cmd := exec.Command(prog, "2")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "balance 40") {
		t.Fatalf("program without recording: %v: %s", err, out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files written without %s: %v", TraceDirEnv, ents)
	}
}
