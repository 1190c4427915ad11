package recorder

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// recordIn runs prog with recording, the raw log in raw ("" = a temporary
// directory), and returns the trace, the result and the program's output.
func recordIn(t *testing.T, raw, prog string, args ...string) (string, RecordResult, string) {
	t.Helper()
	var trace, out bytes.Buffer
	res, err := Record(testContext(t), &trace, RecordOptions{
		Program: prog, Args: args, Stdout: &out, Stderr: &out, RawDir: raw,
	})
	if err != nil {
		t.Fatalf("recording %s: %v\n%s", prog, err, out.String())
	}
	return trace.String(), res, out.String()
}

// checkSwitchUserTrace checks the events of testdata/switch_user.c: every
// worker's writes (lostWorker: but thread 2's), and the main thread's whole
// loop and its read after the joins, past its log's first window.
func checkSwitchUserTrace(t *testing.T, trace string, lostWorkers ...string) {
	t.Helper()
	src := filepath.Join("testdata", "switch_user.c")
	evs := parseTrace(t, trace)
	mk := markers(t, src)
	for _, th := range []string{"2", "3", "4"} {
		n := 0
		for _, e := range find(evs, "Write", "hits", mk["worker-write"]) {
			if e.thread == th {
				n++
			}
		}
		want := 100
		if contains(lostWorkers, th) {
			want = 0
		}
		if n != want {
			t.Errorf("thread %s: %d writes of hits, want %d", th, n, want)
		}
	}
	loop := 0
	for _, e := range find(evs, "Write", "", mk["main-loop"]) {
		if e.thread == "1" {
			loop++
		}
	}
	if loop != 40000 {
		t.Errorf("main thread: %d writes in its loop, want 40000", loop)
	}
	mustFind(t, evs, "Read", "hits", mk["after-join"])
}

// A program that starts as root and switches user (httpd's "User nobody")
// is recorded in full: the threads it starts afterwards create their logs,
// and the main thread grows the log it created as root.
func TestRecordSwitchUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching user needs root")
	}
	prog := build(t, filepath.Join("testdata", "switch_user.c"))
	for _, tc := range []struct{ name, raw string }{
		{"temporary raw directory", ""},
		// A -raw directory that record creates, in a directory the new
		// user cannot enter: the logs are opened relative to the
		// directory opened before the switch.
		{"-raw under a private directory", filepath.Join(t.TempDir(), "raw")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace, res, out := recordIn(t, tc.raw, prog)
			if res.ExitCode != 0 {
				t.Fatalf("program %s: %s", res.Exit, out)
			}
			if res.Lost != 0 || strings.Contains(out, "mcprec:") || strings.Contains(trace, "could not be written") {
				t.Errorf("lost %d logs; program output: %s\ntrace warnings: %q", res.Lost, out, res.Warnings)
			}
			checkSwitchUserTrace(t, trace)
		})
	}
}

// When the program switches to a user that may not write in an existing
// -raw directory, the threads it starts afterwards are lost, and the
// recording says so with the count, on standard error and in the trace.
func TestRecordSwitchUserLost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching user needs root")
	}
	prog := build(t, filepath.Join("testdata", "switch_user.c"))
	raw := filepath.Join(t.TempDir(), "raw")
	if err := os.Mkdir(raw, 0o755); err != nil {
		t.Fatal(err)
	}
	trace, res, out := recordIn(t, raw, prog)
	if res.ExitCode != 0 {
		t.Fatalf("program %s: %s", res.Exit, out)
	}
	want := fmt.Sprintf(`3 threads' events could not be written: permission denied on %s/p`, raw)
	if res.Lost != 3 || len(res.Warnings) == 0 || !strings.HasPrefix(res.Warnings[0], want) ||
		!strings.Contains(res.Warnings[0], ".t2.bin (creating the log of thread 2; also threads 3, 4); the trace lacks them") {
		t.Fatalf("lost %d, warnings %q; want 3 and %q...", res.Lost, res.Warnings, want)
	}
	if !strings.Contains(trace, "# warning: "+want) {
		t.Errorf("the trace's header lacks the warning:\n%s", head(trace, 12))
	}
	if strings.Contains(trace, "never ran") {
		t.Errorf("lost threads reported as never run:\n%s", head(trace, 12))
	}
	// The runtime said it too, with its count.
	if !strings.Contains(out, "mcprec: cannot create thread log, thread not recorded (open, errno 13; thread logs lost: 3)") {
		t.Errorf("runtime messages: %s", out)
	}
	// The main thread's log, created before the switch, still grew.
	checkSwitchUserTrace(t, trace, "2", "3", "4")
}

// A thread log the runtime cannot create (a directory in its place) is a
// loud warning with the count, from record and from record -from-raw, and
// in the trace; the thread is not said to have never run.
func TestRecordLostLog(t *testing.T) {
	src := filepath.Join("testdata", "switch_user.c")
	prog := build(t, src)
	raw := filepath.Join(t.TempDir(), "raw")
	trace, res, out := recordIn(t, raw, prog, "stay", "lose")
	if res.ExitCode != 0 {
		t.Fatalf("program %s: %s", res.Exit, out)
	}
	want := fmt.Sprintf(`1 thread's events could not be written: is a directory on %s/p%d.t2.bin (creating the log of thread 2); the trace lacks them (docs/recorder.md, "Programs that switch user, and lost thread logs")`,
		raw, res.PID)
	if res.Lost != 1 || len(res.Warnings) == 0 || res.Warnings[0] != want {
		t.Fatalf("lost %d, warnings %q\nwant %q", res.Lost, res.Warnings, want)
	}
	if !strings.Contains(trace, "# warning: "+want+"\n") || strings.Contains(trace, "never ran") {
		t.Errorf("trace header:\n%s", head(trace, 12))
	}
	checkSwitchUserTrace(t, trace, "2")

	// The command line: record, and record -from-raw of the same log.
	bin := mcpredict(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"record", "-raw", filepath.Join(dir, "raw"), "-o", filepath.Join(dir, "t.csv"), "--", prog, "stay", "lose"},
		{"record", "-from-raw", raw, "-o", filepath.Join(dir, "t2.csv")},
	} {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(testContext(t), bin, args...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("mcpredict %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "mcpredict record: WARNING: EVENTS LOST: 1 thread's events could not be written: is a directory on ") {
			t.Errorf("mcpredict %s: standard error lacks the warning:\n%s", strings.Join(args, " "), stderr.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "t2.csv")); err != nil || !strings.Contains(string(b), "# warning: "+want+"\n") {
		t.Errorf("record -from-raw: the trace lacks the warning (%v):\n%s", err, head(string(b), 12))
	}
}

// head returns the first n lines of s.
func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// The lost-log warning groups the threads by cause, in token order, and
// says how far a log that could not grow got.
func TestLostWarning(t *testing.T) {
	got := lostWarning([]lostLog{
		{Token: 5, Offset: 1 << 20, Err: syscall.ENOSPC, Step: "grow", Path: "/r/p1.t5.bin"},
		{Token: 3, Err: syscall.EACCES, Step: "open", Path: "/r/p1.t3.bin"},
		{Token: 2, Err: syscall.EACCES, Step: "open", Path: "/r/p1.t2.bin"},
		{Token: 1, Offset: 2 << 20, Err: syscall.EACCES, Step: "open", Path: "/r/p1.t1.bin"},
	})
	want := `4 threads' events could not be written: permission denied on /r/p1.t1.bin (reopening the log of thread 1 after its first 65532 events); ` +
		`permission denied on /r/p1.t2.bin (creating the log of thread 2; also thread 3); ` +
		`no space left on device on /r/p1.t5.bin (growing the log of thread 5 after its first 32764 events); ` +
		`the trace lacks them (docs/recorder.md, "Programs that switch user, and lost thread logs")`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The meta file's lines.
	dir := t.TempDir()
	meta := "mcprec 2\npid 1\nexe /bin/x\nfuncs 1\nlost 3 0 13 open /r/p1.t3.bin\nlost 5 1048576 28 grow /r/a dir/p1.t5.bin\n"
	if err := os.WriteFile(filepath.Join(dir, "p1.meta"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := openRawLog(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantLost := []lostLog{{3, 0, syscall.EACCES, "open", "/r/p1.t3.bin"}, {5, 1 << 20, syscall.ENOSPC, "grow", "/r/a dir/p1.t5.bin"}}
	if !slices.Equal(l.Lost, wantLost) {
		t.Errorf("lost %+v, want %+v", l.Lost, wantLost)
	}
}
