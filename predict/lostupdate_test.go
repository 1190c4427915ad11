package predict

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestLostUpdateSearched: in the precise semantics the lost update P3 is a
// pattern, R1 A2* W2 A2* W1 with a plain W1, that the search looks for,
// not a filter of the witness it found. A lost update whose shortest
// witness re-reads the variable after the remote write is reported from
// the interleaving that does not (issue 47); one that exists only with
// the re-read, or only with an atomic read-modify-write as W1, is not.
// --semantics paper is McPatom's R1 A2* W2 A2* R1* W1, atomic writes
// included. Each case lists the local lines of thread 1's P3 instances,
// by the native engine and, when Spin is installed, by Spin's claims.
func TestLostUpdateSearched(t *testing.T) {
	engines := []Engine{EngineNative}
	tools, err := spinrunner.FindTools()
	if err == nil {
		engines = append(engines, EngineSpin)
		if tcc, err := exec.LookPath("tcc"); err == nil {
			tools.CC = tcc
		}
	}
	tests := []struct {
		name, trace      string
		precise, literal []string // the local lines of each P3 instance of local thread 1
	}{
		{
			// Thread 1 reads x twice under m, then writes it unlocked;
			// thread 0 (the model's first thread) updates it unlocked:
			// the second read, thread 0's write, the write of thread 1
			// is a lost update. The search's first interleaving that
			// ends at thread 1's write re-reads after thread 0's write.
			"re-read under a lock, write after it (issue 47)",
			"0 7 Read x\n1 1 Lock m\n1 2 Read x\n1 3 Read x\n1 4 Unlock m\n0 8 Write x\n1 5 Read y\n1 6 Write x\n",
			[]string{"3 6"}, []string{"2 3 6"},
		},
		{
			"re-read under a lock, thread 1 first",
			"1 1 Lock m\n1 2 Read x\n1 3 Read x\n1 4 Unlock m\n1 5 Read y\n1 6 Write x\n2 7 Read x\n2 8 Write x\n",
			[]string{"3 6"}, []string{"3 6"},
		},
		{
			// Thread 1's reads saw thread 0's write, and would have
			// seen the initial value before it: they stay after it in
			// the precise semantics (observed reads).
			"re-read under a lock, after the remote write",
			"0 7 Read x\n0 8 Write x\n1 1 Lock m\n1 2 Read x\n1 3 Read x\n1 4 Unlock m\n1 5 Read y\n1 6 Write x\n",
			nil, []string{"2 3 6"},
		},
		{
			// The check in one critical section, the increment in the
			// next: P1 reports the check, the increment loses nothing.
			"check, then an increment that re-reads",
			"1 1 Lock m\n1 2 Read x\n1 3 Unlock m\n1 4 Lock m\n1 5 Read x\n1 6 Write x\n1 7 Unlock m\n2 8 Lock m\n2 9 Write x\n2 10 Unlock m\n",
			nil, []string{"2 5 6"},
		},
		{
			// A compare-and-swap loop: the swap wrote from the value it
			// compared with.
			"atomic read-modify-write",
			"1 1 Read x\n1 2 AtomicWrite x\n2 3 Write x\n",
			nil, []string{"1 2"},
		},
		{
			// The atomic write is no lost update; the plain one after it
			// is.
			"atomic write, then a plain one",
			"1 1 Read x\n1 2 AtomicWrite x\n1 3 Read x\n1 4 Write x\n2 5 Write x\n",
			[]string{"3 4"}, []string{"1 2", "3 4"},
		},
		{
			// The remote write may be atomic: it is the local write that
			// loses it.
			"remote atomic write",
			"1 1 Read x\n1 2 Write x\n2 3 AtomicWrite x\n",
			[]string{"1 2"}, []string{"1 2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := parseText(t, "t.csv", expand(tc.trace))
			for _, sem := range []string{tracemodel.SemanticsPrecise, tracemodel.SemanticsPaper} {
				want := tc.precise
				if sem == tracemodel.SemanticsPaper {
					want = tc.literal
				}
				po, err := tracemodel.SemanticsOptions(sem)
				if err != nil {
					t.Fatal(err)
				}
				for _, eng := range engines {
					rep, err := Run(context.Background(), m, Options{Engine: eng, Tools: tools, Jobs: 1, Project: po})
					if err != nil {
						t.Fatalf("%s, %s: %v", sem, eng, err)
					}
					var got []string
					for _, v := range rep.Violations {
						if v.Pattern != "P3" || v.Local.Handle != "1" {
							continue
						}
						var lines []string
						for _, a := range v.Accesses {
							if a.Role == "local" {
								lines = append(lines, fmt.Sprint(a.Line))
							}
						}
						got = append(got, strings.Join(lines, " "))
					}
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Errorf("%s semantics, engine %s: P3 instances of local thread 1 at lines %q, want %q", sem, eng, got, want)
					}
				}
			}
		})
	}
}
