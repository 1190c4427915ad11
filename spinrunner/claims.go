package spinrunner

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// Never claims of the models' LTL formulas, translated once.
//
// `spin -a` translates every `ltl` block of a model into a never claim, the
// automaton of the negated formula. The formulas are the patterns' and do
// not depend on the model, but the translation was most of the time spin
// took on a model: a set model's 24 claims cost 0.3 s, its verifier's
// generation without them 0.04 s. The runner translates each formula once
// (`spin -f`, the same translation) and writes the claims into the model as
// never claims of the same names, each on the line of its ltl block, so
// that the model's line numbers do not change.

// reLTLBlock is an ltl block alone on its line: `ltl NAME { FORMULA }`.
var reLTLBlock = regexp.MustCompile(`^ltl ([A-Za-z_][A-Za-z0-9_]*) \{(.*)\}\s*$`)

// neverClaims holds the never claims translated so far, by formula.
type neverClaims struct {
	mu     sync.Mutex
	claims map[string]*neverClaim
	// builtin returns the claims made ahead (builtin.go), asked once,
	// before the first translation; nil: none.
	builtin     func() map[string]string
	builtinOnce sync.Once
	made        map[string]string
}

// neverClaim is the never claim of one formula; ok is false when spin could
// not translate it alone (the model's own spin -a then does, or says why).
type neverClaim struct {
	formula string
	once    sync.Once
	body    string // the claim without its "never" keyword: "{ ... }", on one line
	ok      bool
}

// of returns the entry of formula f, made on first use.
func (n *neverClaims) of(f string) *neverClaim {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.claims == nil {
		n.claims = map[string]*neverClaim{}
	}
	e := n.claims[f]
	if e == nil {
		e = &neverClaim{formula: f}
		n.claims[f] = e
	}
	return e
}

// inlineClaims returns the source with every ltl block that spin -f
// translates replaced by its never claim; translate runs spin -f on a
// formula and returns its output, at most jobs at a time. A block it cannot
// translate stays as it is.
func (n *neverClaims) inlineClaims(src []byte, jobs int, translate func(formula string) ([]byte, error)) []byte {
	if !bytes.Contains(src, []byte("\nltl ")) && !bytes.HasPrefix(src, []byte("ltl ")) {
		return src
	}
	lines := strings.SplitAfter(string(src), "\n")
	type block struct {
		line int
		name string
		e    *neverClaim
	}
	var blocks []block
	for i, line := range lines {
		if m := reLTLBlock.FindStringSubmatch(strings.TrimRight(line, "\n")); m != nil {
			blocks = append(blocks, block{i, m[1], n.of(m[2])})
		}
	}
	// The formulas not translated yet, in parallel: a set model has 24.
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(jobs, 1))
	for _, b := range blocks {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			b.e.once.Do(func() {
				if body, ok := n.madeAhead()[strings.TrimSpace(b.e.formula)]; ok {
					b.e.body, b.e.ok = body, true
					return
				}
				out, err := translate("!(" + b.e.formula + ")")
				if err == nil {
					b.e.body, b.e.ok = neverBody(out)
				}
			})
		})
	}
	wg.Wait()
	changed := false
	for _, b := range blocks {
		if !b.e.ok {
			continue
		}
		nl := ""
		if strings.HasSuffix(lines[b.line], "\n") {
			nl = "\n"
		}
		lines[b.line] = "never " + b.name + " " + b.e.body + nl
		changed = true
	}
	if !changed {
		return src
	}
	return []byte(strings.Join(lines, ""))
}

// neverBody turns spin -f's output, "never { /* f */ ... }" on several
// lines, into the claim's body on one line: Promela reads line ends as
// spaces, and a never claim has no preprocessor lines.
func neverBody(out []byte) (string, bool) {
	s := strings.TrimSpace(string(out))
	body, ok := strings.CutPrefix(s, "never")
	body = strings.TrimSpace(body)
	if !ok || !strings.HasPrefix(body, "{") || !strings.HasSuffix(body, "}") || strings.Contains(body, "#") || strings.Contains(body, "//") {
		return "", false
	}
	return strings.Join(strings.Fields(body), " "), true
}

// madeAhead returns the claims made ahead, asking for them on first use.
func (n *neverClaims) madeAhead() map[string]string {
	n.builtinOnce.Do(func() {
		if n.builtin != nil {
			n.made = n.builtin()
		}
	})
	return n.made
}
