package spinrunner

import (
	"flag"
	"os"
	"os/exec"
	"testing"

	"github.com/mcpredict/mcpredict/ltl"
)

var update = flag.Bool("update", false, "rewrite neverclaims.txt with the installed spin's claims")

// builtinFormulas lists the formulas of the built-in patterns' claims, as
// models carry them: each pattern in both views, a two-variable one in both
// assignments, then those of the precise forms that differ
// (ltl.Pattern.Precise: P3).
func builtinFormulas() []string {
	pats := ltl.BothAssignments(ltl.AllBuiltin())
	for _, p := range ltl.Builtin() {
		if q := p.Precise(); q.Source != p.Source {
			pats = append(pats, q)
		}
	}
	var fs []string
	for _, p := range pats {
		for local := 1; local <= 2; local++ {
			fs = append(fs, p.Formula(local))
		}
	}
	return fs
}

// TestBuiltinNeverClaims checks the table of claims made ahead against the
// installed spin: its version is the table's, and every built-in formula's
// claim is the one spin -f makes now. With -update it rewrites the table.
func TestBuiltinNeverClaims(t *testing.T) {
	spin := tools(t).Spin
	formulas := builtinFormulas()
	version, table := parseBuiltinClaims(builtinNeverClaims)
	installed := spinVersion(spin)
	if installed == "" {
		t.Fatalf("%s -V: no version", spin)
	}
	if !*update && version != installed {
		t.Fatalf("neverclaims.txt was made by %q, the installed spin is %q: run go test ./spinrunner -run TestBuiltinNeverClaims -update", version, installed)
	}
	fresh := map[string]string{}
	for _, f := range formulas {
		out, err := exec.Command(spin, "-f", "!( "+f+" )").CombinedOutput() // as a model's ltl block reads
		if err != nil {
			t.Fatalf("spin -f %q: %v\n%s", f, err, out)
		}
		body, ok := neverBody(out)
		if !ok {
			t.Fatalf("spin -f %q: no never claim in\n%s", f, out)
		}
		fresh[f] = body
	}
	if *update {
		if err := os.WriteFile("neverclaims.txt", formatBuiltinClaims(installed, formulas, fresh), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if len(table) != len(formulas) {
		t.Errorf("the table has %d claims, the built-in patterns %d formulas", len(table), len(formulas))
	}
	for _, f := range formulas {
		if table[f] != fresh[f] {
			t.Errorf("formula %s: the table's claim\n%s\nspin -f's\n%s", f, table[f], fresh[f])
		}
	}
	if got := builtinClaimsFor(spin); len(got) != len(formulas) {
		t.Errorf("builtinClaimsFor(%s) has %d claims, want %d", spin, len(got), len(formulas))
	}
	if got := builtinClaimsFor("/bin/false"); got != nil {
		t.Errorf("builtinClaimsFor of a spin of another version gives %d claims, want none", len(got))
	}
}
