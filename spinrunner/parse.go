package spinrunner

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// panReport is what one pan run says about one claim.
type panReport struct {
	errors      int
	haveErrors  bool // the "errors: N" line was present
	stored      int64
	depth       int
	truncated   bool   // "error: max search depth too small"
	outOfMemory bool   // -DMEMLIM bound or malloc failure
	notComplete bool   // "Warning: Search not completed"
	errMsg      string // text of the first "pan:1: ..." line, if any
}

var (
	reErrors = regexp.MustCompile(`depth reached (\d+), errors: (\d+)`)
	reStored = regexp.MustCompile(`^\s*([0-9.eE+]+) states, stored`)
	rePanErr = regexp.MustCompile(`^pan:\d+: (.*?)(?: \(at depth \d+\))?$`)
	reLTL    = regexp.MustCompile(`^ltl (\S+):`)
	reClaims = regexp.MustCompile(`the model contains \d+ never claims: (.*)$`)
	reNever  = regexp.MustCompile(`\bnever\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{`)
	// A step of a replay, as `spin -t -p` prints it ("proc  1 (t1:1)") or
	// `pan -r -v` ("proc  2 (t1)", then "trans {...}").
	reStep    = regexp.MustCompile(`^\s*(\d+):\s+proc\s+(\d+)\s+\(([^():]+)(?::\d+)?\)\s+(.+):(-?\d+)\s+\(state \d+\)(?:\s+trans \{[^}]*\})?\s+\[(.*)\]\s*$`)
	reAssert  = regexp.MustCompile(`^pan:\d+: assertion violated\s+(.*?)(?: \(at depth \d+\))?$`)
	reSpinErr = regexp.MustCompile(`^spin: (.+):\d+, Error: (.*)$`)
)

// parsePan reads the verdict and statistics out of pan's output.
func parsePan(out []byte) (panReport, error) {
	var r panReport
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "error: max search depth too small"):
			r.truncated = true
		case strings.HasPrefix(line, "pan: reached -DMEMLIM bound"),
			strings.HasPrefix(line, "pan: out of memory"):
			r.outOfMemory = true
		case strings.HasPrefix(line, "Warning: Search not completed"):
			r.notComplete = true
		}
		if m := rePanErr.FindStringSubmatch(line); m != nil && r.errMsg == "" {
			r.errMsg = m[1]
		}
		if m := reErrors.FindStringSubmatch(line); m != nil {
			r.depth, _ = strconv.Atoi(m[1])
			r.errors, _ = strconv.Atoi(m[2])
			r.haveErrors = true
		}
		if m := reStored.FindStringSubmatch(line); m != nil {
			// pan prints the count with %9.8g: large counts come in
			// exponent form.
			f, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				return r, fmt.Errorf("parsing %q: %w", line, err)
			}
			r.stored = int64(f)
		}
	}
	if err := sc.Err(); err != nil {
		return r, fmt.Errorf("reading pan output: %w", err)
	}
	return r, nil
}

// isClaimViolation tells a counterexample to the claim apart from other
// errors pan reports the same way (VECTORSZ too small, array index out of
// range, …), which are failures of the model, not verdicts.
func isClaimViolation(msg string) bool {
	return strings.HasPrefix(msg, "assertion violated") ||
		strings.HasPrefix(msg, "acceptance cycle") ||
		strings.HasPrefix(msg, "claim violated")
}

// definedClaims lists the claims a model defines: the ltl blocks spin -a
// echoes, the list it prints when there are several claims, and named never
// claims in the source. pan ignores -N when a model has a single claim (and
// runs without any claim when there is none), so a claim name must be
// checked here or a misspelt name would silently check something else.
func definedClaims(spinOut, source []byte) map[string]bool {
	names := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(spinOut))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := reLTL.FindStringSubmatch(line); m != nil {
			names[m[1]] = true
		}
		if m := reClaims.FindStringSubmatch(line); m != nil {
			for _, n := range strings.Split(m[1], ",") {
				names[strings.TrimSpace(n)] = true
			}
		}
	}
	for _, m := range reNever.FindAllSubmatch(source, -1) {
		names[string(m[1])] = true
	}
	return names
}

// spinErrors returns spin's "file:line, Error: …" lines: spin does not
// always exit non-zero after reporting them.
func spinErrors(out []byte) []string {
	var errs []string
	for _, line := range strings.Split(string(out), "\n") {
		if reSpinErr.MatchString(line) {
			errs = append(errs, line)
		}
	}
	return errs
}

// trail is a parsed replay.
type trail struct {
	steps     []TrailStep
	ended     bool   // saw "spin: trail ends after N steps"
	modelFail string // an "Error:" spin reported in the model file itself
}

// parseTrail extracts the statements the processes execute from the output
// of `spin -t -p`. It keeps only lines of the model file (the never claim
// lives in _spin_nvr.tmp), drops init, and merges the lines a d_step prints
// for each of its statements into one step per (step, proc, line). It stops
// at the end of the trail, after which spin dumps the final process states.
// parseTrail reads the replay of a trail of the given claim: the steps of the
// model's processes, not those of init or of the claim. A trail that ends on
// an assert of a process is a failing assertion of the model itself.
func parseTrail(out []byte, file, claim string) (trail, error) {
	var t trail
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "spin: trail ends after") {
			t.ended = true
			break
		}
		if m := reSpinErr.FindStringSubmatch(line); m != nil && m[1] == file && t.modelFail == "" {
			t.modelFail = m[2]
			continue
		}
		// pan replays a claim violation as the failed assert of the never
		// claim, always a negation "!(...)"; any other failed assertion is
		// the model's own.
		if a := reAssert.FindStringSubmatch(line); a != nil && !strings.HasPrefix(a[1], "!") && t.modelFail == "" {
			t.modelFail = "assertion violated " + a[1]
			continue
		}
		m := reStep.FindStringSubmatch(line)
		if m == nil || m[4] != file || m[3] == ":init:" || m[3] == claim {
			continue
		}
		step, err1 := strconv.Atoi(m[1])
		proc, err2 := strconv.Atoi(m[2])
		ln, err3 := strconv.Atoi(m[5])
		if err1 != nil || err2 != nil || err3 != nil {
			return t, fmt.Errorf("bad trail line %q", line)
		}
		if n := len(t.steps); n > 0 {
			last := &t.steps[n-1]
			if last.Step == step && last.Proc == proc && last.Line == ln {
				last.Stmt += "; " + m[6]
				continue
			}
		}
		t.steps = append(t.steps, TrailStep{Step: step, Proc: proc, ProcName: m[3], Line: ln, Stmt: m[6]})
	}
	if err := sc.Err(); err != nil {
		return t, fmt.Errorf("reading replay output: %w", err)
	}
	return t, nil
}
