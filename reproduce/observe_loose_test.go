package reproduce

import (
	"reflect"
	"strings"
	"testing"
)

// TestObserveLooseWindowEndsAtNextSection: a loose match needs the other
// thread's access while the local thread can still be held after L1 (at
// most one release since, no acquisition). The shape of Apache 21285's
// directed runs, whose hold found no other thread: thread 2 inserts (L1,
// cache.c:177) and goes on through its request (locks taken and released),
// thread 3 inserts a request later, and thread 2's next request reads the
// size (cache.c:158): not the predicted window, not even loosely.
func TestObserveLooseWindowEndsAtNextSection(t *testing.T) {
	steps := []Step{
		{Role: "L1", Action: "Write", File: "cache.c", Line: 177, Var: "cache.size", Same: true},
		{Role: "R1", Action: "Write", File: "cache.c", Line: 177, Var: "cache.size", Same: true},
		{Role: "L2", Action: "Read", File: "cache.c", Line: 210, Var: "cache.size", Same: true},
	}
	const head = "2, 1, cache.c-170, Lock, lk\n" +
		"2, 2, cache.c-177, Write, cache.size\n" +
		"2, 3, cache.c-180, Unlock, lk\n"
	tests := []struct {
		name  string
		trace string
		want  []int // nil: not observed
	}{
		{"across later sections", head +
			"2, 4, pool.c-10, Lock, pool\n" +
			"2, 5, pool.c-12, Unlock, pool\n" +
			"3, 6, cache.c-170, Lock, lk\n" +
			"3, 7, cache.c-177, DataRead, cache.size\n" +
			"3, 8, cache.c-177, Write, cache.size\n" +
			"3, 9, cache.c-180, Unlock, lk\n" +
			"2, 10, cache.c-170, Lock, lk\n" +
			"2, 11, cache.c-158, DataRead, cache.size\n", nil},
		{"a second release", head +
			"2, 4, other.c-10, Unlock, other\n" +
			"3, 5, cache.c-173, Write, cache.size\n" +
			"2, 6, cache.c-158, DataRead, cache.size\n", nil},
		// Held after its release: the other thread's write at another site
		// comes in, then thread 2 reads the size again.
		{"held after the release", head +
			"3, 4, cache.c-173, Write, cache.size\n" +
			"2, 5, cache.c-158, DataRead, cache.size\n", []int{2, 4, 5}},
	}
	for _, tt := range tests {
		obs, err := ObserveLoose(strings.NewReader(tt.trace), steps, 0)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(obs.Lines, tt.want) {
			t.Errorf("%s: ObserveLoose = %v, want %v", tt.name, obs.Lines, tt.want)
		}
	}
}

// TestObserveLooseAtOccurrence: a loose match must be the schedule's
// window, opened by the occurrence-th execution of L1's site. The shape of
// aget-bug2's directed runs: workers each update the offset (L1's site)
// and read the total, and the schedule was armed at a later update than
// the first, where no other thread came in.
func TestObserveLooseAtOccurrence(t *testing.T) {
	steps := []Step{
		{Role: "L1", Action: "Write", File: "Download.c", Line: 140, Var: "wthread[1].offset"},
		{Role: "R1", Action: "Read", File: "Resume.c", Line: 81, Var: "wthread[1].offset"},
		{Role: "R2", Action: "Read", File: "Resume.c", Line: 83, Var: "bwritten"},
		{Role: "L2", Action: "Write", File: "Download.c", Line: 143, Var: "bwritten"},
	}
	trace := "" +
		"3, 1, Download.c-140, Write, wthread[1].offset\n" +
		"4, 2, Download.c-143, DataRead, bwritten\n" + // another worker's ordinary update
		"3, 3, Download.c-143, Write, bwritten\n" +
		"3, 4, Download.c-140, Write, wthread[1].offset\n" +
		"3, 5, Download.c-143, Write, bwritten\n"
	for _, tt := range []struct {
		occurrence int
		want       []int
	}{{0, []int{1, 2, 3}}, {1, []int{1, 2, 3}}, {2, nil}} {
		obs, err := ObserveLoose(strings.NewReader(trace), steps, tt.occurrence)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(obs.Lines, tt.want) {
			t.Errorf("occurrence %d: ObserveLoose = %v, want %v", tt.occurrence, obs.Lines, tt.want)
		}
	}
}

// TestObserveEnded: a run that ends after the remote steps, the local
// thread still held after L1, has the pattern when the remote steps only
// read (they saw the state between the local thread's two accesses: aget's
// save_log saving a torn total, then exiting); not when the local thread
// went on to other things, nor when a remote step writes (the harm is then
// at L2, which never ran).
func TestObserveEnded(t *testing.T) {
	reads := []Step{
		{Role: "L1", Action: "Read", File: "Download.c", Line: 140, Var: "wthread[1].offset", Same: true},
		{Role: "R1", Action: "Read", File: "Resume.c", Line: 81, Var: "wthread[1].offset", Same: true},
		{Role: "R2", Action: "Read", File: "Resume.c", Line: 83, Var: "bwritten"},
		{Role: "L2", Action: "Write", File: "Download.c", Line: 143, Var: "bwritten"},
	}
	lost := []Step{
		{Role: "L1", Action: "Read", File: "c.c", Line: 1, Var: "n", Same: true},
		{Role: "R1", Action: "Write", File: "c.c", Line: 9, Var: "n", Same: true},
		{Role: "L2", Action: "Write", File: "c.c", Line: 2, Var: "n", Same: true},
	}
	const held = "3, 1, Download.c-140, Read, wthread[1].offset\n" +
		"3, 2, Download.c-140, Write, wthread[1].offset\n"
	const saved = "2, 3, Resume.c-81, Read, wthread[1].offset\n" +
		"2, 4, Resume.c-83, Read, bwritten\n" +
		"2, 5, Resume.c-90, Write, h\n"
	tests := []struct {
		name  string
		steps []Step
		trace string
		want  []int
	}{
		{"ended while held", reads, held + saved, []int{1, 3, 4}},
		{"went on", reads, held + saved + "3, 6, Download.c-142, Lock, bwritten_mutex\n", nil},
		{"a remote step too few", reads, held + "2, 3, Resume.c-81, Read, wthread[1].offset\n", nil},
		{"a remote write", lost, "1, 1, c.c-1, Read, n\n2, 2, c.c-9, Write, n\n", nil},
	}
	for _, tt := range tests {
		obs, err := Observe(strings.NewReader(tt.trace), tt.steps)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(obs.Lines, tt.want) || obs.Ended != (tt.want != nil) {
			t.Errorf("%s: Observe = %v (ended %v), want %v", tt.name, obs.Lines, obs.Ended, tt.want)
		}
	}
}

// TestNotReproducedEvidence: the evidence of a run without the pattern
// says what the runtime did: a hold and what ended it, L1 reached and its
// thread held until the program ended (no release: aget's SIGINT thread
// exits while the worker is held), or L1 never reached.
func TestNotReproducedEvidence(t *testing.T) {
	s := Schedule{Steps: []Step{{Role: "L1", Action: "Read", File: "d.c", Line: 140, Var: "off"}}, Occurrence: 3}
	for _, tt := range []struct {
		log  []string
		want string
	}{
		{[]string{"start", "trigger occurrence=3", "hold before-lock phase=2", "release before-lock after_ms=300 why=timeout"}, "runtime: release before-lock after_ms=300 why=timeout"},
		{[]string{"start", "trigger occurrence=3", "hold before-lock phase=2", "remote step=1"}, "reached at occurrence 3, its thread held until the run ended"},
		{[]string{"start"}, "never reached at occurrence 3"},
	} {
		got := notReproducedEvidence(Outcome{Schedule: s, RuntimeLog: tt.log, Exit: "exit status 0"})
		if !strings.Contains(got, tt.want) {
			t.Errorf("runtime log %q: evidence\n%s\nwant it to say %q", tt.log, got, tt.want)
		}
	}
}
