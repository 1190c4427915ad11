package spinrunner

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"os/exec"
	"strings"
	"time"
)

// The never claims of the built-in patterns, made ahead.
//
// Every model's claims are the same few dozen formulas (five one-variable
// patterns, P3 also in its precise form, and six two-variable ones, each
// in both views), and spin -f
// took 13 ms a formula: 0.3 s on the first set model a run confirms, on
// the critical path of a run's confirmations. neverclaims.txt holds spin -f's
// translation of each, made by the Spin version its header names; a runner
// whose spin says it is that version (spin -V) takes the claims from it,
// and translates any other formula itself. The translation is the one
// spin -f gives, so a check's verdicts and trails do not change.
// Regenerate it with `go test ./spinrunner -run TestBuiltinNeverClaims
// -update` after a change to the patterns' formulas or to the Spin of the
// set-up.

//go:embed neverclaims.txt
var builtinNeverClaims []byte

// Lines of neverclaims.txt: a header line, then pairs of lines.
const (
	builtinSpinPrefix    = "spin: "
	builtinFormulaPrefix = "formula: "
	builtinNeverPrefix   = "never: "
)

// parseBuiltinClaims reads a table of never claims: the version line of the
// spin that made it, and each formula's claim body (neverBody's form).
func parseBuiltinClaims(data []byte) (version string, claims map[string]string) {
	claims = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	formula := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, builtinSpinPrefix):
			version = strings.TrimPrefix(line, builtinSpinPrefix)
		case strings.HasPrefix(line, builtinFormulaPrefix):
			formula = strings.TrimPrefix(line, builtinFormulaPrefix)
		case strings.HasPrefix(line, builtinNeverPrefix) && formula != "":
			claims[formula] = strings.TrimPrefix(line, builtinNeverPrefix)
			formula = ""
		}
	}
	return version, claims
}

// formatBuiltinClaims writes the table of the claims of formulas, in
// order, made by spin of the given version.
func formatBuiltinClaims(version string, formulas []string, claims map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# The never claims of mcpredict's built-in patterns, as `spin -f '!( FORMULA )'` makes them\n")
	b.WriteString("# (spinrunner/builtin.go). Made by: go test ./spinrunner -run TestBuiltinNeverClaims -update\n")
	b.WriteString(builtinSpinPrefix + version + "\n")
	for _, f := range formulas {
		b.WriteString(builtinFormulaPrefix + f + "\n")
		b.WriteString(builtinNeverPrefix + claims[f] + "\n")
	}
	return b.Bytes()
}

// spinVersion returns the first line of `spin -V`, "" when it fails.
func spinVersion(spin string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, spin, "-V").Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// builtinClaimsFor returns the table's claims when spin is the version that
// made it, nil otherwise.
func builtinClaimsFor(spin string) map[string]string {
	version, claims := parseBuiltinClaims(builtinNeverClaims)
	if version == "" || spinVersion(spin) != version {
		return nil
	}
	return claims
}
