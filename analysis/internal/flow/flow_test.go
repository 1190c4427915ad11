package flow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

func parse(t *testing.T, trace string) *tracemodel.Model {
	t.Helper()
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "t.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sources runs a tracker over thread 1 of the trace and returns, for each
// Write, "line<-lines" of the reads that feed it ("~" marks weak flows).
func sources(t *testing.T, trace string, mode Mode) []string {
	t.Helper()
	m := parse(t, trace)
	var tr Tracker
	live := 0
	tr.Drop = func(Entry) { live-- }
	var out []string
	for _, ev := range m.Threads[0].Events {
		e := &m.Events[ev]
		tr.Step(e)
		line := m.Locs[e.Loc].Line
		switch e.Kind {
		case tracemodel.Read:
			tr.Read(e.Obj, int32(line))
			live++
		case tracemodel.Write:
			var srcs []string
			tr.Sources(e.Obj, mode, func(x Entry, strong bool) bool {
				s := fmt.Sprint(x.Tag)
				if !strong {
					s = "~" + s
				}
				srcs = append(srcs, s)
				return true
			})
			slices.Sort(srcs)
			out = append(out, fmt.Sprintf("%d<-%s", line, strings.Join(srcs, ",")))
		}
	}
	tr.Close()
	if live != 0 {
		t.Errorf("%d entries added but not dropped", live)
	}
	return out
}

func TestSources(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		mode  Mode
		want  []string
	}{
		{"same statement", `
1, 1, a.c-3, Read, x
1, 2, a.c-3, Write, y
1, 3, a.c-4, Write, z
`, Update, []string{"3<-3", "4<-"}},
		{"read-modify-write through a local", `
1, 1, a.c-3, Read, x
1, 2, a.c-4, Write, y
1, 3, a.c-5, Write, x
`, Update, []string{"4<-", "5<-~3"}},
		{"the latest read of the variable is written back", `
1, 1, a.c-3, Read, x
1, 2, a.c-4, Write, y
1, 3, a.c-5, Read, x
1, 4, a.c-6, Write, x
1, 5, a.c-7, Read, x
1, 6, a.c-7, Write, x
`, Update, []string{"4<-", "6<-~5", "7<-7"}},
		{"statement mode drops the local", `
1, 1, a.c-3, Read, x
1, 2, a.c-5, Write, x
`, Statement, []string{"5<-"}},
		{"invocation mode keeps every live read", `
1, 1, a.c-3, Read, x
1, 2, a.c-4, Write, y
`, Invocation, []string{"4<-~3"}},
		// incX (seeds/001 Fig. 1(b)): tmp = getX(); tmp += val; setX(tmp).
		{"returned into the caller, passed to a callee", `
1, 1, a.c-8, Enter, getX
1, 2, a.c-2, Read, x
1, 3, a.c-2, Exit, getX
1, 4, a.c-10, Enter, setX
1, 5, a.c-5, Write, x
1, 6, a.c-5, Exit, setX
`, Update, []string{"5<-~2"}},
		// setX(getX() + 1) on one line: the return value and the
		// argument are one statement of the caller.
		{"one statement through two calls", `
1, 1, a.c-8, Enter, getX
1, 2, a.c-2, Read, x
1, 3, a.c-2, Exit, getX
1, 4, a.c-8, Enter, setY
1, 5, a.c-5, Write, y
1, 6, a.c-5, Exit, setY
`, Statement, []string{"5<-2"}},
		{"a callee's reads return into the call's statement", `
1, 1, a.c-8, Enter, get
1, 2, a.c-2, Read, x
1, 3, a.c-3, Read, y
1, 4, a.c-3, Exit, get
1, 5, a.c-8, Write, x
1, 6, a.c-9, Write, y
`, Update, []string{"8<-2,3", "9<-~3"}},
		{"a new loop iteration ends the reads", `
1, 1, a.c-3, Read, x
1, 2, a.c-4, Write, y
1, 3, a.c-3, Read, w
1, 4, a.c-5, Write, x
`, Update, []string{"4<-", "5<-"}},
		{"reads before the loop stay live", `
1, 1, a.c-2, Read, x
1, 2, a.c-3, Read, y
1, 3, a.c-4, Write, z
1, 4, a.c-3, Read, y
1, 5, a.c-4, Write, x
`, Update, []string{"4<-", "4<-~2"}},
		{"a spin on one line is one iteration per read", `
1, 1, a.c-3, Read, flag
1, 2, a.c-3, Read, flag
1, 3, a.c-3, Read, flag
1, 4, a.c-4, Write, flag
`, Update, []string{"4<-~3"}},
		{"calls repeated from one line are iterations of the caller", `
1, 1, a.c-9, Enter, dep
1, 2, a.c-2, Read, b
1, 3, a.c-3, Exit, dep
1, 4, a.c-9, Enter, dep
1, 5, a.c-3, Write, b
1, 6, a.c-3, Exit, dep
`, Update, []string{"3<-"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sources(t, tc.trace, tc.mode)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCap: a frame keeps at most Cap live reads, and every read added is
// dropped once.
func TestCap(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "1, %d, a.c-3, Read, x%d\n", i, i)
	}
	m := parse(t, b.String())
	tr := Tracker{Cap: 16}
	added, dropped := 0, 0
	tr.Drop = func(Entry) { dropped++ }
	for _, ev := range m.Threads[0].Events {
		e := &m.Events[ev]
		tr.Step(e)
		tr.Read(e.Obj, 0)
		added++
	}
	n := 0
	tr.Live(func(Entry, bool) bool { n++; return true })
	if n > 16 || n == 0 {
		t.Errorf("%d live reads, want at most 16", n)
	}
	tr.Close()
	if added != dropped {
		t.Errorf("added %d, dropped %d", added, dropped)
	}
}

// TestLongLoop: a loop body of more than 32 source lines (the indexed
// path) still ends its reads at the next iteration (line 61 sees the
// last iteration's read of v10, once), and keeps the reads made before
// the loop.
func TestLongLoop(t *testing.T) {
	var b strings.Builder
	n := 0
	ev := func(line int, act, obj string) {
		n++
		fmt.Fprintf(&b, "1, %d, a.c-%d, %s, %s\n", n, line, act, obj)
	}
	ev(1, "Read", "before")
	for it := 0; it < 2; it++ {
		for l := 10; l < 50; l++ {
			ev(l, "Read", fmt.Sprintf("v%d", l))
		}
	}
	ev(60, "Write", "before")
	ev(61, "Write", "v10")
	got := sources(t, b.String(), Update)
	want := []string{"60<-~1", "61<-~10"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseMode(t *testing.T) {
	for s, want := range map[string]Mode{"": Update, "update": Update, "Statement": Statement, "invocation": Invocation} {
		got, err := ParseMode(s)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseMode("registers"); err == nil {
		t.Error("no error for an unknown mode")
	}
}
