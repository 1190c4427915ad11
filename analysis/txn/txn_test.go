package txn

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

const mixed = `1, 1, ?, Enter, worker
1, 2, f.c-2, Enter, f
1, 3, f.c-3, Begin, L
1, 4, f.c-4, Write, x
1, 5, f.c-5, End, L
1, 6, f.c-6, Exit, f
1, 7, f.c-7, Enter, g
1, 8, f.c-8, Write, x
1, 9, f.c-9, Exit, g
`

// TestPrecedence: Atomic beats Begin/End, which beat the all-functions
// default; NotAtomic always wins; start routines are excluded.
func TestPrecedence(t *testing.T) {
	noLabels := strings.ReplaceAll(strings.ReplaceAll(mixed, "Begin, L", "Write, y"), "End, L", "Write, y")
	tests := []struct {
		trace string
		opts  Options
		want  []string
	}{
		{mixed, Options{}, []string{"L"}},
		{mixed, Options{Atomic: []string{"g", "worker"}}, []string{"worker"}},
		{mixed, Options{Atomic: []string{"f", "g"}, NotAtomic: []string{"f"}}, []string{"g"}},
		{noLabels, Options{}, []string{"f", "g"}},
		{noLabels, Options{NotAtomic: []string{"g"}}, []string{"f"}},
	}
	for _, tc := range tests {
		m, err := tracemodel.Parse(context.Background(), strings.NewReader(tc.trace), "t.csv", tracemodel.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Extract(context.Background(), m, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := range s.Txns {
			got = append(got, s.Name(int32(i)))
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%+v: got %v, want %v", tc.opts, got, tc.want)
		}
	}
}
