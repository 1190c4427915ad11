package spinrunner

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// TestNeverClaimsAsLTL checks that the never claims the runner translates
// once, or takes from a table made ahead, give the verdicts and trails of
// spin's own translation of the ltl blocks, and that a second model with
// the same formulas translates none.
func TestNeverClaimsAsLTL(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"lost_update.pml", "locked.pml"} {
		m := readModel(t, file)
		var claims, formulas []string
		for _, line := range bytes.Split(m.Source, []byte("\n")) {
			if g := reLTLBlock.FindSubmatch(line); g != nil {
				claims = append(claims, string(g[1]))
				formulas = append(formulas, string(g[2]))
			}
		}
		m.Claims = claims
		// The table of this model's formulas, as the built-in one is made.
		table := map[string]string{}
		for _, f := range formulas {
			out, err := exec.Command(tools(t).Spin, "-f", "!("+f+")").CombinedOutput()
			body, ok := neverBody(out)
			if err != nil || !ok {
				t.Fatalf("spin -f %q: %v\n%s", f, err, out)
			}
			table[strings.TrimSpace(f)] = body
		}
		modes := []struct {
			name      string
			blocks    bool
			table     map[string]string
			translate int // spin -f runs of the first check
		}{
			{"ltl blocks", true, nil, 0},
			{"spin -f", false, nil, len(claims)}, // the formulas are distinct
			{"table", false, table, 0},
		}
		results := make([][]ClaimResult, len(modes))
		for i, mode := range modes {
			r, _ := newTestRunner(t, Options{})
			r.ltlBlocks = mode.blocks
			r.never.builtin = func() map[string]string { return mode.table }
			var stages stageCounter
			r.onStage = stages.hook
			for run := 0; run < 2; run++ {
				res, err := r.Check(context.Background(), m)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				results[i] = res.Claims
				want := 0
				if run == 0 {
					want = mode.translate
				}
				if got := stages.get(StageLTL); got != want {
					t.Errorf("%s, %s, check %d: spin -f ran %d times, want %d", file, mode.name, run+1, got, want)
				}
				stages = stageCounter{}
			}
		}
		for i := range modes[1:] {
			if !reflect.DeepEqual(results[0], results[i+1]) {
				t.Errorf("%s: spin's ltl blocks give\n%+v\nthe runner's never claims (%s)\n%+v", file, results[0], modes[i+1].name, results[i+1])
			}
		}
	}
}

// TestInlineClaims checks the rewriting itself: each ltl block becomes a
// never claim of its name on its own line, the lines stay where they were,
// and a formula spin -f cannot translate keeps its block.
func TestInlineClaims(t *testing.T) {
	src := []byte("int v;\nltl a { !<> (v==1) }\nltl b { bad }\nactive proctype p() { v = 1 }\n")
	var n neverClaims
	asked := 0
	translate := func(f string) ([]byte, error) {
		asked++
		if f == "!( bad )" {
			return nil, errors.New("syntax error")
		}
		return []byte("never  {    /* " + f + " */\nT0_init:\n\tdo\n\t:: (v==1) -> goto accept_all\n\tod;\naccept_all:\n\tskip\n}\n"), nil
	}
	got := string(n.inlineClaims(src, 1, translate))
	want := "int v;\nnever a { /* !( !<> (v==1) ) */ T0_init: do :: (v==1) -> goto accept_all od; accept_all: skip }\nltl b { bad }\nactive proctype p() { v = 1 }\n"
	if got != want {
		t.Errorf("inlineClaims:\n%s\nwant\n%s", got, want)
	}
	n.inlineClaims(src, 2, translate)
	if asked != 2 {
		t.Errorf("spin -f asked %d times for two formulas over two models, want 2", asked)
	}
}
