package docsample

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// A normalization replaces what varies from run to run.
type normalization struct {
	re   *regexp.Regexp
	repl string
}

var normalizations = func() []normalization {
	tmp := []string{regexp.QuoteMeta(os.TempDir())}
	if os.TempDir() != "/tmp" {
		tmp = append(tmp, "/tmp")
	}
	const unit = `(?:h|ms|m|s|µs|us|ns)`
	return []normalization{
		// Paths under the temporary directory: first, before their
		// digits look like durations.
		{regexp.MustCompile(`(?m)(^|[\s"'=(:])(?:` + strings.Join(tmp, "|") + `)(?:/[^\s"'(),:;]*)?\b`), "${1}<tmp>"},
		// Versions: "version": "0.1.0-dev" in JSON and SARIF, v1.2.3 and
		// 0.1.0-dev elsewhere (not 9.4.1, a section number). Before
		// durations: "0.1.0-dev" is none.
		{regexp.MustCompile(`("\w*[vV]ersion":\s*")[^"]*"`), `${1}<version>"`},
		{regexp.MustCompile(`\bv\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?\b|\b\d+\.\d+\.\d+-[0-9A-Za-z.]+\b`), "<version>"},
		// Go durations: 1.282s, 35ms, 2m3s, 1h0m0s, 120µs.
		{regexp.MustCompile(`\b(?:\d+(?:\.\d+)?` + unit + `)+\b`), "<time>"},
		// Durations in JSON: "elapsed_ns": 552629.
		{regexp.MustCompile(`("\w*_ns":\s*)\d+`), "${1}<time>"},
	}
}()

// Normalize returns s with durations, versions and temporary paths
// replaced by <time>, <version> and <tmp>, without trailing blanks on a
// line and without trailing empty lines.
func Normalize(s string) string {
	for _, n := range normalizations {
		s = n.re.ReplaceAllString(s, n.repl)
	}
	return strings.Join(trimLines(strings.Split(s, "\n")), "\n")
}

// trimLines drops the trailing blanks of every line and the trailing
// empty lines.
func trimLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " \t\r")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// OutputLines returns a command's output as the lines a document shows:
// trailing blanks and trailing empty lines dropped.
func OutputLines(out string) []string { return trimLines(strings.Split(out, "\n")) }

// Diff returns a line diff from want to got: "-" lines only in want, "+"
// lines only in got, "  " lines in both. It is an LCS diff, quadratic,
// meant for outputs of a few hundred lines.
func Diff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	// lcs[i][j]: length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			fmt.Fprintf(&sb, "  %s\n", a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&sb, "- %s\n", a[i])
			i++
		default:
			fmt.Fprintf(&sb, "+ %s\n", b[j])
			j++
		}
	}
	return sb.String()
}

// tokenRE splits an abridged sample and an output into tokens: JSON
// strings, the ellipsis, punctuation and runs of anything else.
var tokenRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|\.\.\.|[{}\[\]:,]|[^\s{}\[\]:,"]+`)

// A token is a token of an abridged sample and the line it is on.
type token struct {
	text string
	line int // from 1, in the Markdown file
}

func (t token) wild() bool { return t.text == "..." || t.text == `"..."` }

// MatchAbridged reports whether got, a command's output, matches the
// abridged sample want, whose first line is line firstLine of its file:
// token by token, "..." and "\"...\"" standing for any tokens. Both are
// normalized first. If it does not match, line is the line of want from
// which nothing in got matches (or of want's last line, when got goes on
// after everything of want matched).
func MatchAbridged(want []string, firstLine int, got string) (ok bool, line int) {
	var pat []token
	for k, l := range strings.Split(Normalize(strings.Join(want, "\n")), "\n") {
		for _, t := range tokenRE.FindAllString(l, -1) {
			pat = append(pat, token{t, firstLine + k})
		}
	}
	txt := tokenRE.FindAllString(Normalize(got), -1)
	// prev[j], cur[j]: pat[:j] matches the tokens of got read so far
	// (without, with the current one).
	prev := make([]bool, len(pat)+1)
	cur := make([]bool, len(pat)+1)
	prev[0] = true
	for j := 1; j <= len(pat) && pat[j-1].wild(); j++ {
		prev[j] = true
	}
	furthest := lastTrue(prev)
	for _, t := range txt {
		cur[0] = false
		for j := 1; j <= len(pat); j++ {
			if pat[j-1].wild() {
				cur[j] = prev[j] || cur[j-1]
			} else {
				cur[j] = prev[j-1] && pat[j-1].text == t
			}
		}
		prev, cur = cur, prev
		furthest = max(furthest, lastTrue(prev))
	}
	if prev[len(pat)] {
		return true, 0
	}
	if len(pat) == 0 {
		return false, firstLine
	}
	if furthest == len(pat) {
		return false, pat[len(pat)-1].line
	}
	return false, pat[furthest].line
}

// lastTrue returns the last index of a true element of v, or 0.
func lastTrue(v []bool) int {
	for j := len(v) - 1; j > 0; j-- {
		if v[j] {
			return j
		}
	}
	return 0
}
