package blocks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// spans returns each block as "thread:first-last" (trace lines).
func spans(t *testing.T, trace string, opts Options) []string {
	t.Helper()
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(strings.TrimLeft(trace, "\n")), "t.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := Find(m, opts)
	var out []string
	for i, b := range s.Blocks {
		out = append(out, fmt.Sprintf("%d:%d-%d", b.Thread, m.Events[b.First].Line, m.Events[b.Last].Line))
		for ev := b.First; ev <= b.Last; ev++ {
			if m.Events[ev].Thread == b.Thread && s.Of(ev) != int32(i) {
				t.Errorf("event %d of block %d has block %d", ev, i, s.Of(ev))
			}
		}
	}
	return out
}

func TestFind(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		opts  Options
		want  []string
	}{
		{"nested locks flatten", `
1, 1, a.c-1, Lock, m
1, 2, a.c-2, Lock, n
1, 3, a.c-3, Write, x
1, 4, a.c-4, Unlock, n
1, 5, a.c-5, Read, y
1, 6, a.c-6, Unlock, m
1, 7, a.c-7, Write, z
`, Options{}, []string{"1:1-6"}},
		{"a cond wait splits", `
1, 1, a.c-1, Lock, m
1, 2, a.c-2, Read, x
1, 3, a.c-3, Wait, c, m
1, 4, a.c-4, Read, x
1, 5, a.c-5, Unlock, m
2, 6, a.c-9, Signal, c
`, Options{}, []string{"1:1-2", "1:3-5"}},
		{"labels and atomic functions", `
1, 1, a.c-1, Begin, tx
1, 2, a.c-2, Write, x
1, 3, a.c-3, End, tx
1, 4, a.c-4, Enter, f
1, 5, a.c-5, Write, y
1, 6, a.c-6, Exit, f
1, 7, a.c-7, Enter, g
1, 8, a.c-8, Write, y
1, 9, a.c-9, Exit, g
`, Options{Atomic: []string{"f"}}, []string{"1:1-3", "1:4-6"}},
		{"threads apart", `
1, 1, a.c-1, Lock, m
2, 2, a.c-1, Lock, n
1, 3, a.c-2, Unlock, m
2, 4, a.c-2, Unlock, n
`, Options{}, []string{"1:1-3", "2:2-4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := spans(t, tc.trace, tc.opts); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
