package reproduce

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/recorder"
)

// cycle is a deadlock violation of threads 2, 3, ...: thread i+2 holds
// locks[i], acquired at line held[i] (trace line traceLine[i]), and
// acquires locks[(i+1)%n] at line acquire[i].
func cycle(locks []string, held, acquire, traceLine []int) bugs.Violation {
	v := bugs.Violation{Pattern: "DL"}
	n := len(locks)
	for i := range locks {
		h := strconv.Itoa(i + 2)
		v.Accesses = append(v.Accesses,
			bugs.Access{Handle: h, Role: "held", Action: "Lock", File: "c.c", Line: held[i], Object: locks[i], TraceLine: traceLine[i], Essential: true},
			bugs.Access{Handle: h, Role: "acquire", Action: "Lock", File: "c.c", Line: acquire[i], Object: locks[(i+1)%n], TraceLine: traceLine[i] + 1, Essential: true})
	}
	return v
}

func TestDeadlockSteps(t *testing.T) {
	same := func(n, line int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = line
		}
		return out
	}
	forks := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "forks[" + strconv.Itoa(i) + "]"
		}
		return out
	}
	// A thread that holds another lock too: that acquisition is not
	// essential, not a step.
	extra := cycle([]string{"a", "b"}, []int{10, 20}, []int{11, 21}, []int{5, 9})
	extra.Accesses = append([]bugs.Access{{Handle: "2", Role: "held", Action: "Lock", File: "c.c", Line: 9, Object: "g", TraceLine: 4}}, extra.Accesses...)
	// A thread that appears twice is no cycle of distinct threads.
	twice := cycle([]string{"a", "b", "c"}, []int{10, 20, 30}, []int{11, 21, 31}, []int{1, 2, 3})
	twice.Accesses[4].Handle, twice.Accesses[5].Handle = "2", "2"
	// carter01: thread 3 (holding m, wanting l) took m first in the
	// recorded run, but thread 2 takes l while it holds m: it must go
	// first, or it blocks on m and the cycle never forms.
	gated := cycle([]string{"l", "m"}, []int{7, 16}, []int{10, 18}, []int{9, 5})
	gated.Accesses[0].Locks = []string{"m", "l"}
	odd := cycle([]string{"a", "b"}, []int{10, 20}, []int{11, 21}, []int{1, 2})
	odd.Accesses = odd.Accesses[:3]
	tests := []struct {
		name    string
		v       bugs.Violation
		want    []string
		wantErr string
	}{
		{"two threads", cycle([]string{"a", "b"}, []int{10, 20}, []int{11, 21}, []int{5, 9}),
			[]string{"L1 Lock c.c:10 a", "R1 Lock c.c:20 b", "L2 Blocked c.c:11 b", "B1 Blocked c.c:21 a"}, ""},
		// The second thread took its lock first in the recorded run: the
		// schedule arms on it (no pre-hold needed), in cycle order.
		{"two threads, the second first", cycle([]string{"a", "b"}, []int{10, 20}, []int{11, 21}, []int{9, 5}),
			[]string{"L1 Lock c.c:20 b", "R1 Lock c.c:10 a", "L2 Blocked c.c:21 a", "B1 Blocked c.c:11 b"}, ""},
		{"three threads rotated", cycle([]string{"a", "b", "c"}, []int{10, 20, 30}, []int{11, 21, 31}, []int{40, 7, 20}),
			[]string{"L1 Lock c.c:20 b", "R1 Lock c.c:30 c", "R2 Lock c.c:10 a",
				"L2 Blocked c.c:21 c", "B1 Blocked c.c:31 a", "B2 Blocked c.c:11 b"}, ""},
		{"five philosophers", cycle(forks(5), same(5, 36), same(5, 37), []int{25, 48, 71, 94, 117}),
			[]string{"L1 Lock c.c:36 forks[0]", "R1 Lock c.c:36 forks[1]", "R2 Lock c.c:36 forks[2]", "R3 Lock c.c:36 forks[3]", "R4 Lock c.c:36 forks[4]",
				"L2 Blocked c.c:37 forks[1]", "B1 Blocked c.c:37 forks[2]", "B2 Blocked c.c:37 forks[3]", "B3 Blocked c.c:37 forks[4]", "B4 Blocked c.c:37 forks[0]"}, ""},
		{"eight threads", cycle(forks(8), same(8, 36), same(8, 37), []int{1, 2, 3, 4, 5, 6, 7, 8}), nil, ""},
		{"another held lock", extra, []string{"L1 Lock c.c:10 a", "R1 Lock c.c:20 b", "L2 Blocked c.c:11 b", "B1 Blocked c.c:21 a"}, ""},
		{"the thread that needs the other's lock first", gated,
			[]string{"L1 Lock c.c:7 l", "R1 Lock c.c:16 m", "L2 Blocked c.c:10 m", "B1 Blocked c.c:18 l"}, ""},
		{"nine threads", cycle(forks(9), same(9, 36), same(9, 37), []int{1, 2, 3, 4, 5, 6, 7, 8, 9}), nil, "up to 8 threads"},
		{"a thread twice", twice, nil, "of its own"},
		{"odd", odd, nil, "3 acquisitions"},
		{"roles", bugs.Violation{Pattern: "DL", Accesses: []bugs.Access{{Handle: "2", Role: "local", Action: "Lock"}, {Handle: "2", Role: "local", Action: "Lock"},
			{Handle: "3", Role: "remote", Action: "Lock"}, {Handle: "3", Role: "remote", Action: "Lock"}}}, nil, "not the held"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := StepsOf(tt.v)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("StepsOf: err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range steps {
				got = append(got, s.String())
			}
			if tt.want == nil {
				// Only the shape: L1, R1..R(n-1), L2, B1..B(n-1).
				n := len(tt.v.EssentialAccesses()) / 2
				if len(steps) != 2*n || steps[n-1].Role != "R"+strconv.Itoa(n-1) || steps[n].Role != "L2" || steps[2*n-1].Role != "B"+strconv.Itoa(n-1) {
					t.Errorf("StepsOf = %q: want L1, R1..R%d, L2, B1..B%d", got, n-1, n-1)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("StepsOf =\n%q\nwant\n%q", got, tt.want)
			}
			// L1 and R1 anchor the schedule: R1 never before L1, so no
			// pre-hold, but where the first thread must go first (R1 is
			// then held before its acquisition until L1).
			l1, r1 := anchors(tt.v)
			if l1 == nil || r1 == nil || l1.File != steps[0].File || l1.Line != steps[0].Line || l1.Object != steps[0].Var || r1.Line != steps[1].Line || r1.Object != steps[1].Var {
				t.Errorf("anchors = %+v, %+v; want the accesses of %s and %s", l1, r1, steps[0], steps[1])
			} else if r1.TraceLine < l1.TraceLine && tt.v.Accesses[0].Locks == nil {
				t.Errorf("anchors: R1 (trace line %d) before L1 (%d)", r1.TraceLine, l1.TraceLine)
			}
		})
	}
}

// threeCycle are the steps of a cycle of three threads: a at c.c:10 then
// b at c.c:11; b at c.c:20 then c at c.c:21; c at c.c:30 then a at c.c:31.
var threeCycle = []Step{
	{Role: "L1", Action: "Lock", File: "c.c", Line: 10, Var: "a"},
	{Role: "R1", Action: "Lock", File: "c.c", Line: 20, Var: "b"},
	{Role: "R2", Action: "Lock", File: "c.c", Line: 30, Var: "c"},
	{Role: "L2", Action: "Blocked", File: "c.c", Line: 11, Var: "b"},
	{Role: "B1", Action: "Blocked", File: "c.c", Line: 21, Var: "c"},
	{Role: "B2", Action: "Blocked", File: "c.c", Line: 31, Var: "a"},
}

func TestObserveCycle(t *testing.T) {
	const header = "# a directed run\n"
	// The cycle: each thread holds its lock and blocks on the next one's
	// (the Blocked events in another order than the acquisitions).
	deadlocked := header + `1, 1, c.c-5, Create, 2
2, 2, c.c-10, Lock, a
3, 3, c.c-20, Lock, b
4, 4, c.c-30, Lock, c
4, 5, c.c-31, Blocked, a, Lock
2, 6, c.c-11, Blocked, b, Lock
3, 7, c.c-21, Blocked, c, Lock
`
	// Thread 3 let b go before it blocked: no cycle.
	released := strings.Replace(deadlocked, "3, 7, c.c-21, Blocked, c, Lock\n", "3, 7, c.c-20, Unlock, b\n3, 8, c.c-21, Blocked, c, Lock\n", 1)
	// Thread 4 never blocked (it took a after all: the run went on).
	notBlocked := strings.Replace(deadlocked, "4, 5, c.c-31, Blocked, a, Lock\n", "", 1)
	// Thread 2 blocked holding another lock than the one of L1.
	otherLock := strings.Replace(deadlocked, "2, 2, c.c-10, Lock, a\n", "2, 2, c.c-10, Lock, z\n", 1)
	// One thread played two parts: the cycle needs threads of their own.
	oneThread := header + `2, 1, c.c-10, Lock, a
2, 2, c.c-20, Lock, b
2, 3, c.c-11, Blocked, b, Lock
3, 4, c.c-30, Lock, c
3, 5, c.c-31, Blocked, a, Lock
`
	// A schedule written before the B steps (two threads): R1 by another
	// thread between L1 and L2 is enough, as it was.
	oldSteps := []Step{
		{Role: "L1", Action: "Lock", File: "c.c", Line: 10, Var: "a"},
		{Role: "R1", Action: "Lock", File: "c.c", Line: 20, Var: "b"},
		{Role: "L2", Action: "Blocked", File: "c.c", Line: 11, Var: "b"},
	}
	old := header + `2, 1, c.c-10, Lock, a
3, 2, c.c-20, Lock, b
2, 3, c.c-11, Blocked, b, Lock
`
	oldLate := header + `2, 1, c.c-10, Lock, a
2, 2, c.c-11, Blocked, b, Lock
3, 3, c.c-20, Lock, b
`
	tests := []struct {
		name  string
		trace string
		steps []Step
		want  []int
	}{
		{"deadlocked", deadlocked, threeCycle, []int{3, 4, 5, 7, 8, 6}},
		{"released", released, threeCycle, nil},
		{"not blocked", notBlocked, threeCycle, nil},
		{"other lock", otherLock, threeCycle, nil},
		{"one thread, two parts", oneThread, threeCycle, nil},
		{"old schedule", old, oldSteps, []int{2, 3, 4}},
		{"old schedule, R1 after L2", oldLate, oldSteps, nil},
		// A new schedule wants the other thread blocked too.
		{"two threads, the other not blocked", old, append(oldSteps[:3:3], Step{Role: "B1", Action: "Blocked", File: "c.c", Line: 21, Var: "a"}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, err := Observe(strings.NewReader(tt.trace), tt.steps)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(obs.Lines, tt.want) {
				t.Errorf("Observe = %v, want %v", obs.Lines, tt.want)
			}
			if obs, _ := ObserveLoose(strings.NewReader(tt.trace), tt.steps, 0); obs.Reproduced() {
				t.Errorf("ObserveLoose = %v: a deadlock is never observed loosely", obs.Lines)
			}
		})
	}
}

// TestCycleScheduleFile: a deadlock schedule's file has the code of the
// steps the runtime acts on (L1, R.., L2), not of the B steps it only
// observes, and reads back as written.
func TestCycleScheduleFile(t *testing.T) {
	obj := "/tmp/x/prog"
	cc := &codeCache{ranges: map[string][]recorder.CodeRange{}}
	for i, st := range threeCycle {
		cc.ranges[obj+"|"+st.File+"|"+strconv.Itoa(st.Line)] = []recorder.CodeRange{{Lo: uint64(0x1000 + 0x10*i), Hi: uint64(0x1008 + 0x10*i)}}
	}
	s := Schedule{Bug: "DL-1", Pattern: "DL", Steps: threeCycle, Occurrence: 1, Pause: 300 * time.Millisecond,
		Argv: []string{"./prog"}, Dir: "/tmp/x", Objects: []string{obj}, Ended: "exit status 0"}
	var buf bytes.Buffer
	if err := s.Write(&buf, cc); err != nil {
		t.Fatal(err)
	}
	var sites []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "site" {
			sites = append(sites, f[1]+" "+f[2])
		}
	}
	if want := []string{"L1 L", "R1 L", "R2 L", "L2 L"}; !reflect.DeepEqual(sites, want) {
		t.Errorf("site lines %q, want %q\n%s", sites, want, buf.String())
	}
	readBack(t, s, buf.Bytes())
}
