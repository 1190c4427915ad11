package reproduce

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
)

// lostUpdate are the steps of a P3 on item->count: read at m.c:11, the
// other thread's write at m.c:15, the local write at m.c:15.
var lostUpdate = []Step{
	{Role: "L1", Action: "Read", File: "m.c", Line: 11, Var: "item#5->count", Same: true},
	{Role: "R1", Action: "Write", File: "m.c", Line: 15, Var: "item#5->count", Same: true},
	{Role: "L2", Action: "Write", File: "m.c", Line: 15, Var: "item#5->count", Same: true},
}

func TestObserve(t *testing.T) {
	quoted := []Step{
		{Role: "L1", Action: "Read", File: "m.c", Line: 11, Var: "f(a, b)"},
		{Role: "R1", Action: "Write", File: "m.c", Line: 15, Var: "f(a, b)"},
		{Role: "L2", Action: "Write", File: "m.c", Line: 15, Var: "f(a, b)"},
	}
	onA := []Step{
		{Role: "L1", Action: "Read", File: "m.c", Line: 11, Var: "a"},
		{Role: "R1", Action: "Write", File: "m.c", Line: 15, Var: "a"},
		{Role: "L2", Action: "Write", File: "m.c", Line: 15, Var: "a"},
	}
	tests := []struct {
		trace string
		steps []Step
		want  []int
	}{
		// The other thread's write comes between: reproduced, whatever
		// generation number the item got in this run (#2 recorded).
		{"directed.csv", lostUpdate, []int{9, 13, 16}},
		// The other thread wrote another generation of the name (another
		// item at another address): not this item's update lost.
		{"othergen.csv", lostUpdate, nil},
		// One thread after the other: the write of thread 3 comes after
		// thread 2's update; thread 3's own read and write are no window
		// of thread 2.
		{"serial.csv", lostUpdate, nil},
		// A write of another variable between does not count.
		{"other.csv", onA, nil},
		{"quoted.csv", quoted, []int{2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.trace, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.trace))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			obs, err := Observe(f, tt.steps)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(obs.Lines, tt.want) {
				t.Errorf("Observe = %v, want %v", obs.Lines, tt.want)
			}
		})
	}
}

func TestStepsOf(t *testing.T) {
	acc := func(role, action string, line int, obj string) bugs.Access {
		return bugs.Access{Role: role, Action: action, File: "s.c", Line: line, Object: obj, Essential: true}
	}
	tests := []struct {
		name    string
		v       bugs.Violation
		want    []string
		wantErr bool
	}{
		{"P3", bugs.Violation{Pattern: "P3", Var: "x", Accesses: []bugs.Access{
			acc("local", "Read", 1, ""), {Role: "remote", Action: "Read", File: "s.c", Line: 1}, acc("remote", "Write", 2, ""), acc("local", "Write", 2, "")}},
			[]string{"L1 Read s.c:1 x", "R1 Write s.c:2 x", "L2 Write s.c:2 x"}, false},
		{"set", bugs.Violation{Pattern: "M1", Var: "lo+hi", Accesses: []bugs.Access{
			acc("local", "Read", 1, "lo"), acc("remote", "Write", 5, "lo"), acc("remote", "Write", 6, "hi"), acc("local", "Read", 2, "hi")}},
			[]string{"L1 Read s.c:1 lo", "R1 Write s.c:5 lo", "R2 Write s.c:6 hi", "L2 Read s.c:2 hi"}, false},
		{"deadlock", bugs.Violation{Pattern: "DL", Accesses: []bugs.Access{acc("local", "Lock", 1, "a"), acc("remote", "Lock", 2, "b")}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := StepsOf(tt.v)
			if (err != nil) != tt.wantErr {
				t.Fatalf("StepsOf: err = %v, want error %v", err, tt.wantErr)
			}
			var got []string
			for _, s := range steps {
				got = append(got, s.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("StepsOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScheduleRoundTrip(t *testing.T) {
	s := Schedule{Bug: "AV-1", Pattern: "P3", Steps: append(lostUpdate, Step{Role: "PRE", Action: "Lock", File: "m.c", Line: 10}),
		Occurrence: 3, Pause: 250 * time.Millisecond, Prehold: true, Argv: []string{"./load.sh", "a b"}, Dir: "/tmp/x",
		Objects: []string{"/tmp/x/prog"}, Ended: "exit status 0", Check: "test -s out"}
	var buf bytes.Buffer
	if err := s.Write(&buf, nil); err != nil {
		t.Fatal(err)
	}
	path := readBack(t, s, buf.Bytes())
	if err := os.WriteFile(path, []byte("mcpredict-schedule 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSchedule(path); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Errorf("a schedule of another version: err = %v, want one naming line 1", err)
	}
}

func TestReadRecording(t *testing.T) {
	rec, err := ReadRecording(filepath.Join("testdata", "directed.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := Recording{Trace: filepath.Join("testdata", "directed.csv"), Argv: []string{"./prog", "1"}, Dir: "/tmp/x",
		Exe: "/tmp/x/prog", Modules: []string{"/lib/x86_64-linux-gnu/libc.so.6"}, Ended: "exit status 0"}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("ReadRecording = %+v, want %+v", rec, want)
	}
	if rec.ExitCode() != 0 {
		t.Errorf("ExitCode = %d, want 0", rec.ExitCode())
	}
}

func TestChanged(t *testing.T) {
	tests := []struct {
		name string
		o    Outcome
		want bool
	}{
		{"same exit", Outcome{Exit: "exit status 0", Schedule: Schedule{Ended: "exit status 0"}}, false},
		{"exit 1", Outcome{Exit: "exit status 1", ExitCode: 1, Schedule: Schedule{Ended: "exit status 0"}}, true},
		{"signal", Outcome{Exit: "killed by signal 6 (aborted)", ExitCode: -1, Schedule: Schedule{Ended: "exit status 0"}}, true},
		{"assert", Outcome{Exit: "exit status 0", Stderr: []string{"prog: m.c:9: main: Assertion `n == 2' failed."}, Schedule: Schedule{Ended: "exit status 0"}}, true},
		{"check", Outcome{Exit: "exit status 0", CheckFailed: true, Schedule: Schedule{Ended: "exit status 0"}}, true},
		{"hang", Outcome{Exit: "timed out after 1m0s (killed by signal 15)", ExitCode: -1, TimedOut: true, Schedule: Schedule{Ended: "exit status 0"}}, true},
	}
	for _, tt := range tests {
		if got, why := tt.o.Changed(); got != tt.want {
			t.Errorf("%s: Changed = %v (%s), want %v", tt.name, got, why, tt.want)
		}
	}
}

func TestObserveLoose(t *testing.T) {
	steps := []Step{
		{Role: "L1", Action: "Write", File: "p.c", Line: 44, Var: "g_cfg->nworkers"},
		{Role: "R1", Action: "Read", File: "p.c", Line: 72, Var: "g_cfg->nworkers"},
		{Role: "R2", Action: "Read", File: "p.c", Line: 76, Var: "g_cfg->port"},
		{Role: "L2", Action: "Write", File: "p.c", Line: 45, Var: "g_cfg->port"},
	}
	read := func(fn func(io.Reader, []Step) (Observation, error)) Observation {
		f, err := os.Open(filepath.Join("testdata", "loose.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		obs, err := fn(f, steps)
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}
	if obs := read(Observe); obs.Reproduced() {
		t.Errorf("Observe = %v: the reader never read nworkers or port", obs.Lines)
	}
	obs := read(func(r io.Reader, steps []Step) (Observation, error) { return ObserveLoose(r, steps, 0) })
	// The read of the pointer g_cfg (line 4) is not one of the object it
	// points to; the read of g_cfg->magic is.
	if want := []int{3, 5, 7}; !reflect.DeepEqual(obs.Lines, want) || !obs.Loose {
		t.Errorf("ObserveLoose = %v (loose %v), want %v: the read of g_cfg->magic between", obs.Lines, obs.Loose, want)
	}
}

// TestRunGroupStopsEverything: a directed run that hangs is stopped after
// its time-out with every process it started (a server a script left
// running), and so is one whose context is cancelled.
func TestRunGroupStopsEverything(t *testing.T) {
	for _, cancelIt := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		out, errw := &tailWriter{max: 1024}, &tailWriter{max: 1024}
		// The child ignores SIGTERM: only SIGKILL ends it.
		cmd := command([]string{"/bin/sh", "-c", "trap '' TERM; sleep 100 & sleep 100"}, "", nil, out, errw)
		timeout := 300 * time.Millisecond
		if cancelIt {
			timeout = time.Minute
			time.AfterFunc(300*time.Millisecond, cancel)
		}
		start := time.Now()
		timedOut, _ := runGroup(ctx, cmd, timeout)
		cancel()
		if timedOut == cancelIt {
			t.Errorf("cancel %v: timedOut = %v", cancelIt, timedOut)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("cancel %v: stopped after %v", cancelIt, d)
		}
		// No process of the group is left: signal 0 to the group fails.
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(-cmd.Process.Pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("cancel %v: processes of group %d still run", cancelIt, cmd.Process.Pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// readBack writes a schedule file's text, reads it, requires schedule s,
// and returns the file's path.
func readBack(t *testing.T, s Schedule, text []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sched")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSchedule(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, s)
	}
	return path
}

// TestPeerStep: the PEER step of an instance is where its local thread took
// the lock it held at L1, unless a remote thread may pass there on its way
// to its own step.
func TestPeerStep(t *testing.T) {
	l1 := bugs.Access{Handle: "2", Role: "local", Action: "Write", File: "c.c", Line: 51, Func: "switch_config", TraceLine: 10, Essential: true}
	remote := func(fn string, line int, stack ...string) bugs.Access {
		return bugs.Access{Handle: "4", Role: "remote", Action: "Read", File: "c.c", Line: line, Func: fn, TraceLine: 20, Stack: stack, Essential: true}
	}
	l2 := bugs.Access{Handle: "2", Role: "local", Action: "Write", File: "c.c", Line: 55, Func: "switch_config", TraceLine: 30, Essential: true}
	lockAt := func(line int) *Step { return &Step{Role: "PRE", Action: "Lock", File: "c.c", Line: line} }
	sites := func(lines ...int) map[string]map[siteKey]bool {
		m := map[siteKey]bool{}
		for _, l := range lines {
			m[siteKey{"c.c", l, 'L'}] = true
		}
		return map[string]map[siteKey]bool{"4": m}
	}
	tests := []struct {
		name      string
		r         bugs.Access
		locks     map[lockQuery]*Step
		lockSites map[string]map[siteKey]bool // the remote thread's
		wantAt    int                         // the PEER step's line, 0 for none
	}{
		{"an auditor elsewhere", remote("auditor", 70), map[lockQuery]*Step{{"2", 10}: lockAt(50), {"4", 20}: lockAt(69)}, sites(69), 50},
		{"L1 under no lock", remote("auditor", 70), map[lockQuery]*Step{{"4", 20}: lockAt(69)}, sites(69), 0},
		{"the remote thread takes the same lock there", remote("auditor", 70), map[lockQuery]*Step{{"2", 10}: lockAt(50), {"4", 20}: lockAt(50)}, sites(50), 0},
		{"the remote thread took that lock before, elsewhere", remote("put", 80), map[lockQuery]*Step{{"2", 10}: lockAt(50), {"4", 20}: lockAt(79)}, sites(50, 79), 0},
		{"the remote access in L1's function", remote("switch_config", 55), map[lockQuery]*Step{{"2", 10}: lockAt(50), {"4", 20}: lockAt(54)}, sites(54), 0},
		{"the remote access called from L1's function", remote("set_limit", 60, "set_limit", "switch_config", "admin"), map[lockQuery]*Step{{"2", 10}: lockAt(50), {"4", 20}: lockAt(59)}, sites(59), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := bugs.Violation{Pattern: "M5", Var: "mode+limit", Accesses: []bugs.Access{l1, tt.r, l2}}
			got := peerStep(&recordedIndex{locks: tt.locks, lockSites: tt.lockSites}, v, &l1)
			switch {
			case tt.wantAt == 0 && got != nil:
				t.Errorf("peerStep = %v, want none", *got)
			case tt.wantAt != 0 && (got == nil || got.Role != "PEER" || got.Line != tt.wantAt):
				t.Errorf("peerStep = %v, want PEER at line %d", got, tt.wantAt)
			}
		})
	}
}
