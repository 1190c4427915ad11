package promela_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/promela"
	"github.com/mcpredict/mcpredict/tracemodel"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden emits the models of the shipped examples and compares them
// with testdata/*.pml. Regenerate with go test ./promela -run Golden -update.
func TestGolden(t *testing.T) {
	tests := []struct {
		golden, trace, v, t1, t2 string
		pats                     []string
	}{
		{"bank", "bank.csv", "balance", "201", "202", nil},
		{"condvar", "condvar-handoff.csv", "ready", "consumer", "producer", []string{"P1"}},
		{"barrier", "splash-barrier.csv", "a[0]", "2", "3", []string{"P2"}},
		{"third-thread", "third-thread.csv", "cfg", "t1", "t2", []string{"P2"}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			m, err := tracemodel.Open(context.Background(), filepath.Join("..", "examples", tc.trace), tracemodel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pm, err := m.Project(m.VarByName(tc.v), m.ThreadByHandle(tc.t1), m.ThreadByHandle(tc.t2), tracemodel.ProjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pats := ltl.Builtin()
			if tc.pats != nil {
				var sel []ltl.Pattern
				for _, p := range pats {
					for _, id := range tc.pats {
						if p.ID == id {
							sel = append(sel, p)
						}
					}
				}
				pats = sel
			}
			prog := promela.Emit(pm, predict.Claims(pats))
			got := strings.ReplaceAll(string(prog.Source), filepath.Join("..", "examples")+"/", "")
			path := filepath.Join("testdata", tc.golden+".pml")
			if *update {
				os.WriteFile(path, []byte(got), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("model differs from %s (run with -update to accept):\n%s", path, got)
			}
			// The line map points every statement line at its step.
			lines := strings.Split(string(prog.Source), "\n")
			n := 0
			for line, ref := range prog.Lines {
				n++
				text := lines[line-1]
				s := pm.Steps[ref.Thread][ref.Index]
				if !strings.Contains(text, "/* "+s.Kind.String()+" ") {
					t.Errorf("line %d %q does not hold step %v (%v)", line, text, ref, s.Kind)
				}
				if e := s.Events[0]; !strings.Contains(text, "trace line "+itoa(e.TraceLine)) {
					t.Errorf("line %d %q lacks its trace line %d", line, text, e.TraceLine)
				}
			}
			if n != len(pm.Steps[0])+len(pm.Steps[1]) {
				t.Errorf("%d mapped lines for %d steps", n, len(pm.Steps[0])+len(pm.Steps[1]))
			}
		})
	}
}

func itoa(i int) string {
	b := []byte{}
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestAtomicWrite: the write of an atomic read-modify-write sets
// ltl.AtomicBit in v beside its value, a plain write does not, and the
// precise lost update's claims require the bit clear at their last term.
func TestAtomicWrite(t *testing.T) {
	trace := "1, 1, a.c-1, Read, x\n1, 2, a.c-2, AtomicWrite, x\n2, 3, a.c-3, Write, x\n"
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "a.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pm, err := m.Project(m.VarByName("x"), 1, 2, tracemodel.ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := string(promela.Emit(pm, predict.Claims([]ltl.Pattern{ltl.Builtin()[2].Precise()})).Source)
	for _, tc := range []struct {
		what, text string
	}{
		{"the read", "v = (v & 1280) | 1; /* Read a.c:1 (trace line 1) */"},
		{"the atomic write", "v = (v & 1280) | 8257; /* Write a.c:2 (trace line 2, atomic) */"},
		{"the plain write", "v = (v & 640) | 66; /* Write a.c:3 (trace line 3) */"},
		{"the bit's comment", "/* 8192: the last access is the write of an atomic read-modify-write. */"},
		{"the claim's last term", "(((v & 255) == 65) && ((v & 10240) == 0))"},
	} {
		if !strings.Contains(src, tc.text) {
			t.Errorf("%s: no %q in\n%s", tc.what, tc.text, src)
		}
	}
}
