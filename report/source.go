package report

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
)

// maxSourceSize bounds the source files read for snippets: a trace may name
// a generated or binary file, which is not worth embedding.
const maxSourceSize = 8 << 20

// snippet is a run of source lines of one file around some locations.
type snippet struct {
	File    string
	Missing string // why the file could not be shown; Lines is then empty
	Lines   []srcLine
}

type srcLine struct {
	N    int
	Text string
	// Class is "" for context, "step" for a line of a synchronization step
	// or of an access outside the instance, "hit local", "hit remote" or
	// "hit local remote" for a line of the instance's accesses.
	Class string
	Note  string // what happens on this line, e.g. "201 Read, 202 Write"
}

// sourceCache reads each source file once per rendering.
type sourceCache struct {
	root  string
	files map[string][]string
	errs  map[string]string
}

func newSourceCache(root string) *sourceCache {
	return &sourceCache{root: root, files: map[string][]string{}, errs: map[string]string{}}
}

// lines returns the lines of a trace's source file, looked up under the
// root (an absolute path is tried as it is first, then by its base name
// under the root, for traces recorded on another machine).
func (c *sourceCache) lines(file string) ([]string, string) {
	if ls, ok := c.files[file]; ok {
		return ls, ""
	}
	if e, ok := c.errs[file]; ok {
		return nil, e
	}
	var candidates []string
	if filepath.IsAbs(file) {
		candidates = append(candidates, file, filepath.Join(c.root, filepath.Base(file)))
	} else {
		candidates = append(candidates, filepath.Join(c.root, file))
	}
	msg := fmt.Sprintf("not found under %s", c.root)
	for _, p := range candidates {
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		if fi.Size() > maxSourceSize {
			msg = fmt.Sprintf("%s is larger than %d MiB", p, maxSourceSize>>20)
			break
		}
		data, err := os.ReadFile(p)
		if err != nil {
			msg = err.Error()
			break
		}
		var ls []string
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), maxSourceSize)
		for sc.Scan() {
			ls = append(ls, strings.TrimRight(sc.Text(), "\r"))
		}
		c.files[file] = ls
		return ls, ""
	}
	c.errs[file] = msg
	return nil, msg
}

// snippets returns, for each file of the interleaving in order of first
// appearance, the lines of its steps with context lines around them;
// overlapping or adjacent ranges are merged into one snippet.
func (c *sourceCache) snippets(v bugs.Violation, context int) []snippet {
	type mark struct {
		roles map[string]bool
		notes []string
	}
	var files []string
	marks := map[string]map[int]*mark{}
	for _, a := range v.Interleaving {
		if a.File == "" || a.Line <= 0 {
			continue
		}
		if marks[a.File] == nil {
			marks[a.File] = map[int]*mark{}
			files = append(files, a.File)
		}
		m := marks[a.File][a.Line]
		if m == nil {
			m = &mark{roles: map[string]bool{}}
			marks[a.File][a.Line] = m
		}
		if a.Instance {
			m.roles[a.Role] = true
		}
		note := a.Handle + " " + a.Action
		if !containsString(m.notes, note) {
			m.notes = append(m.notes, note)
		}
	}
	var out []snippet
	for _, f := range files {
		ls, missing := c.lines(f)
		if missing != "" {
			out = append(out, snippet{File: f, Missing: missing})
			continue
		}
		var hits []int
		for n := range marks[f] {
			hits = append(hits, n)
		}
		sort.Ints(hits)
		for _, r := range mergeRanges(hits, context, len(ls)) {
			sn := snippet{File: f}
			for n := r[0]; n <= r[1]; n++ {
				l := srcLine{N: n, Text: ls[n-1]}
				if m := marks[f][n]; m != nil {
					l.Note = strings.Join(m.notes, ", ")
					l.Class = "step"
					for _, role := range []string{"local", "remote"} {
						if m.roles[role] {
							l.Class = "hit"
							break
						}
					}
					for _, role := range []string{"local", "remote"} {
						if m.roles[role] {
							l.Class += " " + role
						}
					}
				}
				sn.Lines = append(sn.Lines, l)
			}
			out = append(out, sn)
		}
		if len(hits) > 0 && hits[len(hits)-1] > len(ls) {
			out = append(out, snippet{File: f, Missing: fmt.Sprintf("line %d is past the end of the file (%d lines): is it the source of this trace?", hits[len(hits)-1], len(ls))})
		}
	}
	return out
}

// mergeRanges turns sorted line numbers into [from, to] ranges with context
// lines on each side, clipped to the file and merged when they touch.
func mergeRanges(lines []int, context, n int) [][2]int {
	var out [][2]int
	for _, l := range lines {
		if l > n {
			break
		}
		from, to := max(1, l-context), min(n, l+context)
		if k := len(out); k > 0 && from <= out[k-1][1]+1 {
			out[k-1][1] = max(out[k-1][1], to)
			continue
		}
		out = append(out, [2]int{from, to})
	}
	return out
}
