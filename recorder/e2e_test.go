package recorder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// End-to-end: each example is compiled with `mcpredict cc`, recorded with
// `mcpredict record` and checked with `mcpredict run --format json`, all
// through the command line, as a user would. The test skips if the
// mcpredict command does not build.

// report is the part of the JSON report (bugs.WriteJSON) the tests read.
type report struct {
	Bugs []reportBug `json:"bugs"`
}

type reportBug struct {
	ID        string   `json:"id"`
	Pattern   string   `json:"pattern"`
	Vars      []string `json:"vars"`
	Analysis  string   `json:"analysis"`
	Occurred  bool     `json:"occurred"`
	Locations []struct {
		Role   string `json:"role"`
		Action string `json:"action"`
		File   string `json:"file"`
		Line   int    `json:"line"`
	} `json:"locations"`
}

func (b reportBug) String() string {
	var locs []string
	for _, l := range b.Locations {
		locs = append(locs, fmt.Sprintf("%s %s %s:%d", l.Role, l.Action, l.File, l.Line))
	}
	return fmt.Sprintf("%s on %v: %s", b.Pattern, b.Vars, strings.Join(locs, ", "))
}

// has reports whether the bug involves the access (role, action, line).
func (b reportBug) has(role, action, file string, line int) bool {
	for _, l := range b.Locations {
		if l.Role == role && l.Action == action && l.File == file && l.Line == line {
			return true
		}
	}
	return false
}

// access is an expected access of a predicted bug.
type access struct {
	role, action, marker string
}

// mcpredict builds the command into a temporary directory.
func mcpredict(t *testing.T) string {
	t.Helper()
	requireTool(t, "go")
	bin := filepath.Join(t.TempDir(), "mcpredict")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/mcpredict")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("mcpredict does not build (yet): %v\n%s", err, out)
	}
	return bin
}

// runCLI runs the mcpredict binary and returns stdout and the exit status.
func runCLI(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(testContext(t), bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("mcpredict %s: %v", strings.Join(args, " "), err)
	}
	if code != 0 && code != 1 {
		t.Fatalf("mcpredict %s: exit status %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	return stdout.String(), code
}

func predict(t *testing.T, bin, trace string, extra ...string) ([]reportBug, int) {
	t.Helper()
	args := append([]string{"run", "--format", "json"}, extra...)
	out, code := runCLI(t, bin, append(args, trace)...)
	var rep report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("mcpredict run %s: bad JSON report: %v\n%s", trace, err, out)
	}
	if (code == 1) != (len(rep.Bugs) > 0) {
		t.Errorf("exit status %d with %d bugs", code, len(rep.Bugs))
	}
	return rep.Bugs, code
}

func TestEndToEnd(t *testing.T) {
	requireTool(t, "gcc")
	bin := mcpredict(t)
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(testCacheDir(), "xdg"))
	tests := []struct {
		src  string
		cc   []string // options of mcpredict cc
		args []string
		// The bug that must be predicted; pattern "" means the program
		// is correct and nothing may be reported.
		pattern, variable string
		accesses          []access
		// The recorded run must not show the bug: the threads' accesses
		// to the variable are not interleaved in the trace.
		notExhibited bool
	}{
		{
			src: "bank.c", args: []string{"2", "20000"},
			pattern: "P3", variable: "balance", notExhibited: true,
			accesses: []access{{"local", "Read", "read"}, {"remote", "Write", "write"}, {"local", "Write", "write"}},
		},
		{
			src: "apache_log.c", args: []string{"2", "3", "20000"},
			pattern: "P1", variable: "buf->outcnt", notExhibited: true,
			accesses: []access{{"local", "Read", "check"}, {"remote", "Write", "update"}, {"local", "Read", "reread"}},
		},
		{
			src: "mozilla_events.c", args: []string{"3", "20000"},
			pattern: "P2", variable: "queue.count", notExhibited: true,
			accesses: []access{{"local", "Write", "inc"}, {"remote", "Write", "drain-write"}, {"local", "Read", "recheck"}},
		},
		{src: "splash_barrier.c", args: []string{"2", "3"}},
		// Several critical sections per thread: a write published by an
		// unlock ends the region of P2, P4 and P5 (README, "The model").
		{src: "locked_counter.c", args: []string{"3", "5"}},
		// One item: with more, the ring buffer reuses a slot, and the
		// consumer's reads of it in two get() calls, around the
		// producer's write, are a P1 — read-first patterns span critical
		// sections on purpose (a check in one, the use in the next).
		{src: "prodcons.c", args: []string{"1", "20000"}},
		{src: "atomic_flag.c"},
		// Issue 10: a struct on main's stack, heap names without
		// addresses, an atomic reference count read plainly, TLS and
		// read-only data, a thread never joined, a pool allocator.
		{
			src: "rec_stack_ctx.c", args: []string{"2", "20000"},
			pattern: "P3", variable: "main::ctx.done", notExhibited: true,
			accesses: []access{{"local", "Read", "read"}, {"remote", "Write", "write"}, {"local", "Write", "write"}},
		},
		{
			src: "rec_heap_names.c", args: []string{"2", "20000"},
			pattern: "P3", variable: "node.count(calloc@rec_heap_names.c:52#4)", notExhibited: true,
			accesses: []access{{"local", "Read", "read"}, {"remote", "Write", "write"}, {"local", "Write", "write"}},
		},
		{
			src: "rec_atomic_ref.c", args: []string{"1", "20000"},
			pattern: "P2", variable: "shared->ref", notExhibited: true,
			accesses: []access{{"local", "Write", "dec"}, {"remote", "Write", "dec"}, {"local", "Read", "check"}},
		},
		{src: "rec_tls.c", args: []string{"3"}},
		// Compare-and-swap loops that read the counter plainly first
		// (APR's apr_atomic_inc32): no lost update.
		{src: "cas_counter_ok.c", args: []string{"200", "20000"}},
		{src: "rec_unjoined.c", args: []string{"3"}},
		{src: "rec_pool_alloc.c", args: []string{"5"}},
		{src: "rec_pool_alloc.c", cc: []string{"--alloc-func=pool_get:2", "--free-func=pool_put:2"}, args: []string{"5"}},
	}
	for _, tt := range tests {
		name := tt.src
		if len(tt.cc) > 0 {
			name += "+" + strings.Join(tt.cc, "+")
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := exampleSource(tt.src)
			prog := filepath.Join(dir, strings.TrimSuffix(tt.src, ".c"))
			cc := exec.Command(bin, append(append([]string{"cc"}, tt.cc...), "-O1", "-o", prog, src)...)
			cc.Env = env
			if out, err := cc.CombinedOutput(); err != nil {
				t.Fatalf("mcpredict cc: %v\n%s", err, out)
			}
			trace := filepath.Join(dir, "trace.csv")
			// The stagger keeps the threads apart in the recorded
			// run; on a very loaded machine it may not, so the run is
			// recorded again (a few times at most) until it shows no
			// interleaving of the buggy accesses.
			for attempt := 1; ; attempt++ {
				rec := exec.Command(bin, append([]string{"record", "-o", trace, "--", prog}, tt.args...)...)
				if out, err := rec.CombinedOutput(); err != nil {
					t.Fatalf("mcpredict record: %v\n%s", err, out)
				}
				data, err := os.ReadFile(trace)
				if err != nil {
					t.Fatal(err)
				}
				evs := parseTrace(t, string(data))
				if !tt.notExhibited || !interleaved(evs, tt.variable) {
					break
				}
				if attempt == 5 {
					t.Fatalf("every recorded run interleaved the accesses to %s", tt.variable)
				}
			}

			bugs, code := predict(t, bin, trace, "--engine", "native")
			if tt.pattern == "" {
				if code != 0 || len(bugs) > 0 {
					t.Errorf("correct program: exit status %d, bugs %v", code, bugs)
				}
				return
			}
			mk := markers(t, src)
			var found bool
			for _, b := range bugs {
				if b.Pattern != tt.pattern || !contains(b.Vars, tt.variable) {
					continue
				}
				ok := true
				for _, a := range tt.accesses {
					ok = ok && b.has(a.role, a.action, tt.src, mk[a.marker])
				}
				found = found || ok
			}
			if !found {
				t.Errorf("no %s on %s with accesses %v; predicted:\n%s", tt.pattern, tt.variable, tt.accesses, bugList(bugs))
			}
		})
	}
}

// TestEndToEndSpin checks one example through Spin itself (the default
// engine confirms the native search's violations with Spin).
func TestEndToEndSpin(t *testing.T) {
	if testing.Short() {
		t.Skip("Spin compiles a model: skipped in -short")
	}
	requireTool(t, "gcc")
	requireTool(t, "spin")
	bin := mcpredict(t)
	prog := build(t, exampleSource("bank.c"))
	trace := filepath.Join(t.TempDir(), "bank.csv")
	if out, code := runCLI(t, bin, "record", "-o", trace, "--", prog, "1", "20000"); code != 0 {
		t.Fatalf("record: %d %s", code, out)
	}
	bugs, _ := predict(t, bin, trace, "--engine", "spin", "--patterns", "P3")
	mk := markers(t, exampleSource("bank.c"))
	for _, b := range bugs {
		if b.Pattern == "P3" && b.has("local", "Read", "bank.c", mk["read"]) && b.has("remote", "Write", "bank.c", mk["write"]) {
			return
		}
	}
	t.Errorf("Spin found no lost update on balance; predicted:\n%s", bugList(bugs))
}

// TestEndToEndKilled predicts from the trace of a program killed with
// SIGKILL while it ran.
func TestEndToEndKilled(t *testing.T) {
	requireTool(t, "gcc")
	bin := mcpredict(t)
	src := filepath.Join("testdata", "forever.c")
	trace := recordKilled(t, bin, src, "killed.csv", 30*time.Millisecond)
	bugs, _ := predict(t, bin, trace, "--engine", "native")
	mk := markers(t, src)
	for _, b := range bugs {
		if b.Pattern == "P3" && b.has("local", "Read", "forever.c", mk["read"]) && b.has("remote", "Write", "forever.c", mk["write"]) {
			return
		}
	}
	t.Errorf("no lost update on hits predicted from the killed run:\n%s", bugList(bugs))
}

// findChild returns the pid of the child of parent running prog.
// TestEndToEndDeadlocked records a program that deadlocks for real and is
// killed: the acquisitions that never returned are Blocked events, and
// the deadlock analysis reports the deadlock as one that occurred.
func TestEndToEndDeadlocked(t *testing.T) {
	requireTool(t, "gcc")
	bin := mcpredict(t)
	src := filepath.Join("testdata", "deadlocked.c")
	// Both threads are past the barrier: give them time to block.
	trace := recordKilled(t, bin, src, "deadlocked.csv", 300*time.Millisecond)
	text, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "Blocked"); n != 2 {
		t.Fatalf("%d Blocked events, want 2:\n%s", n, text)
	}
	bugs, _ := predict(t, bin, trace, "--analysis", "deadlock")
	mk := markers(t, src)
	for _, b := range bugs {
		if b.Analysis == "deadlock" && b.Occurred {
			for _, want := range []string{"wait-a", "wait-b", "held-a", "held-b"} {
				found := false
				for _, l := range b.Locations {
					found = found || l.File == "deadlocked.c" && l.Line == mk[want]
				}
				if !found {
					t.Errorf("the deadlock does not list the site @%s (line %d): %s", want, mk[want], b)
				}
			}
			return
		}
	}
	t.Errorf("no occurred deadlock reported:\n%s", bugList(bugs))
}

// recordKilled builds src, records it, waits for it to print "started",
// then for settle, kills the program (not the recorder) with SIGKILL and
// returns the trace the recorder wrote.
func recordKilled(t *testing.T, bin, src, name string, settle time.Duration) string {
	t.Helper()
	prog := build(t, src)
	trace := filepath.Join(t.TempDir(), name)
	cmd := exec.Command(bin, "record", "-o", trace, "--", prog)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "started\n" {
		cmd.Process.Kill()
		t.Fatalf("program said %q, %v", line, err)
	}
	time.Sleep(settle)
	// Kill the recorded program, not mcpredict record: it must notice
	// and write the trace.
	pid := findChild(t, cmd.Process.Pid, prog)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcpredict record after the kill: %v", err)
	}
	return trace
}

func findChild(t *testing.T, parent int, prog string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid …
			s := string(stat)
			i := strings.LastIndex(s, ")")
			if i < 0 {
				continue
			}
			var ppid int
			var state string
			if _, err := fmt.Sscan(s[i+1:], &state, &ppid); err != nil || ppid != parent {
				continue
			}
			if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == prog {
				var pid int
				fmt.Sscan(e.Name(), &pid)
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no child of %d runs %s", parent, prog)
	return 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func bugList(bugs []reportBug) string {
	var b strings.Builder
	for _, x := range bugs {
		b.WriteString("  " + x.String() + "\n")
	}
	return b.String()
}

// TestBlockedInOrder records a thread that blocks for good on a lock main
// holds while main goes on and exits: the Blocked event is written where
// the wait began, in sequence order, before main's later events (it used
// to be written at the end, out of order, and the trace was refused).
func TestBlockedInOrder(t *testing.T) {
	bin := mcpredict(t)
	prog := build(t, filepath.Join("testdata", "blocked_exit.c"))
	for attempt := 1; ; attempt++ {
		trace, _ := record(t, prog)
		evs := parseTrace(t, trace) // checks the sequence order
		blocked, later := -1, 0
		for i, ev := range evs {
			switch {
			case ev.action == "Blocked":
				blocked = i
			case blocked >= 0 && ev.action == "Write" && ev.objs[0] == "after":
				later++
			}
		}
		if blocked >= 0 {
			if later == 0 {
				t.Errorf("no write of after follows the Blocked event:\n%s", trace)
			}
			file := filepath.Join(t.TempDir(), "blocked.csv")
			if err := os.WriteFile(file, []byte(trace), 0o644); err != nil {
				t.Fatal(err)
			}
			if bugs, code := predict(t, bin, file, "--engine", "native"); code != 0 {
				t.Errorf("mcpredict run: exit status %d, bugs %v", code, bugs)
			}
			return
		}
		if attempt == 5 {
			t.Fatalf("the waiter never blocked in 5 runs:\n%s", trace)
		}
	}
}

// TestBigCopy: a memcpy of 70 KB of shared structs is in the trace, every
// field of every element read and written (not its first 64 variables).
func TestBigCopy(t *testing.T) {
	prog := build(t, filepath.Join("testdata", "big_copy.c"))
	trace, res := record(t, prog)
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %q", res.Warnings)
	}
	var reads, writes int
	for _, e := range parseTrace(t, trace) {
		if e.file != "big_copy.c" || e.line != markers(t, filepath.Join("testdata", "big_copy.c"))["copy"] {
			continue
		}
		switch {
		case e.action == "Read" && strings.HasPrefix(e.objs[0], "live["):
			reads++
		case e.action == "Write" && strings.HasPrefix(e.objs[0], "saved["):
			writes++
		}
	}
	// 4,375 elements of 3 fields each.
	if want := 4375 * 3; reads != want || writes != want {
		t.Errorf("the copy is %d reads and %d writes in the trace, want %d each", reads, writes, want)
	}
}
