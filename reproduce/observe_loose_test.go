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
		obs, err := ObserveLoose(strings.NewReader(tt.trace), steps)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !reflect.DeepEqual(obs.Lines, tt.want) {
			t.Errorf("%s: ObserveLoose = %v, want %v", tt.name, obs.Lines, tt.want)
		}
	}
}
