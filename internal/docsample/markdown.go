package docsample

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// A Block is a fenced code block of a Markdown file.
type Block struct {
	File   string   // the file, as the caller named it
	Line   int      // line of the opening fence, from 1
	Info   string   // the info string after the opening fence ("json", "sh", ...)
	Indent string   // the opening fence's indentation
	Lines  []string // the content, without the fence's indentation
	// Comment is the sample comment on the line above the fence ("" if
	// none), without "<!-- " and " -->".
	Comment string
}

// contentLine is the file line (from 1) of the block's content line k (from 0).
func (b *Block) contentLine(k int) int { return b.Line + 1 + k }

// A Sample is a block whose output the test checks.
type Sample struct {
	Block    *Block
	Abridged bool
	Commands []*Command
}

// A Command is one command of a sample and the output the document shows.
type Command struct {
	Line   int      // the file line the command is written on, from 1
	Text   string   // the command, for sh
	Output []string // the output the document shows
	// first and end are the 0-based file lines of Output: [first, end).
	first, end int
}

var (
	fenceRE = regexp.MustCompile("^( {0,3})(`{3,}|~{3,})(.*)$")
	// commentRE is a sample comment: "<!-- sample[ abridged][: COMMAND] -->".
	commentRE = regexp.MustCompile(`^<!-- (sample(?: abridged)?(?:: .*?)?) -->$`)
)

// Parse returns the fenced code blocks of a Markdown file and its samples.
// A malformed sample (a sample comment with no block under it, a comment
// and a "$ " line both naming the command, an unclosed fence) is an error
// with the file and line.
func Parse(file string, data []byte) ([]*Block, []*Sample, error) {
	lines := strings.Split(string(data), "\n")
	var blocks []*Block
	var samples []*Sample
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		if strings.HasPrefix(strings.TrimSpace(line), "<!-- sample") {
			if !commentRE.MatchString(line) {
				return nil, nil, fmt.Errorf("%s:%d: malformed sample comment %q: want <!-- sample: COMMAND -->, <!-- sample abridged --> or <!-- sample abridged: COMMAND -->", file, i+1, line)
			}
			if i+1 >= len(lines) || !fenceRE.MatchString(lines[i+1]) {
				return nil, nil, fmt.Errorf("%s:%d: sample comment is not right above a fenced code block", file, i+1)
			}
			continue
		}
		m := fenceRE.FindStringSubmatch(line)
		if m == nil || m[2][0] == '`' && strings.Contains(m[3], "`") {
			continue
		}
		b := &Block{File: file, Line: i + 1, Indent: m[1], Info: strings.TrimSpace(m[3])}
		if i > 0 {
			if c := commentRE.FindStringSubmatch(strings.TrimRight(lines[i-1], " \t\r")); c != nil {
				b.Comment = c[1]
			}
		}
		fence := m[2]
		j := i + 1
		for ; j < len(lines); j++ {
			if isClosingFence(lines[j], fence) {
				break
			}
			l := strings.TrimSuffix(lines[j], "\r")
			b.Lines = append(b.Lines, trimIndent(l, len(b.Indent)))
		}
		if j == len(lines) {
			return nil, nil, fmt.Errorf("%s:%d: fenced code block is not closed", file, b.Line)
		}
		blocks = append(blocks, b)
		s, err := sample(b)
		if err != nil {
			return nil, nil, err
		}
		if s != nil {
			samples = append(samples, s)
		}
		i = j
	}
	return blocks, samples, nil
}

// isClosingFence reports whether line closes a block opened with fence.
func isClosingFence(line, fence string) bool {
	t := strings.TrimRight(line, " \t\r")
	u := strings.TrimLeft(t, " ")
	if len(t)-len(u) > 3 || len(u) < len(fence) {
		return false
	}
	return strings.Trim(u, fence[:1]) == ""
}

// trimIndent removes up to n leading spaces.
func trimIndent(s string, n int) string {
	for n > 0 && strings.HasPrefix(s, " ") {
		s, n = s[1:], n-1
	}
	return s
}

// sample returns the sample of a block, or nil if the block is none.
func sample(b *Block) (*Sample, error) {
	session := len(b.Lines) > 0 && strings.HasPrefix(b.Lines[0], "$ ")
	if b.Comment == "" && !session {
		return nil, nil
	}
	s := &Sample{Block: b}
	var cmd string
	if b.Comment != "" {
		rest := strings.TrimPrefix(b.Comment, "sample")
		if strings.HasPrefix(rest, " abridged") {
			s.Abridged = true
			rest = strings.TrimPrefix(rest, " abridged")
		}
		cmd = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
		switch {
		case cmd == "" && !session:
			return nil, fmt.Errorf("%s:%d: the sample comment names no command and the block has no \"$ \" line", b.File, b.Line-1)
		case cmd != "" && session:
			return nil, fmt.Errorf("%s:%d: the sample comment names a command and the block starts with one (\"$ \"): keep one", b.File, b.Line-1)
		}
	}
	if !session {
		s.Commands = []*Command{{
			Line:   b.Line - 1,
			Text:   cmd,
			Output: b.Lines,
			first:  b.Line,
			end:    b.Line + len(b.Lines),
		}}
		return s, nil
	}
	var c *Command
	for k, l := range b.Lines {
		if text, ok := strings.CutPrefix(l, "$ "); ok {
			c = &Command{Line: b.contentLine(k), Text: text, first: b.contentLine(k), end: b.contentLine(k)}
			s.Commands = append(s.Commands, c)
			continue
		}
		c.Output = append(c.Output, l)
		c.end++
	}
	return s, nil
}

// A Replacement is a new output for a command of a sample.
type Replacement struct {
	Command *Command
	Indent  string   // the block's indentation, put back on every line
	Output  []string // the new output, one string a line
}

// Rewrite returns data, the Markdown file the commands were parsed from,
// with the output of each command replaced. Every other byte is kept.
func Rewrite(data []byte, reps []Replacement) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	sort.Slice(reps, func(i, j int) bool { return reps[i].Command.first > reps[j].Command.first })
	for _, r := range reps {
		var repl [][]byte
		for _, l := range r.Output {
			if l != "" {
				l = r.Indent + l
			}
			repl = append(repl, []byte(l+"\n"))
		}
		c := r.Command
		lines = append(lines[:c.first], append(repl, lines[c.end:]...)...)
	}
	return bytes.Join(lines, nil)
}
