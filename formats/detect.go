package formats

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpredict/mcpredict/formats/formatplugin"
)

// head returns the first formatplugin.DetectBytes of br's content,
// decompressed, without consuming br.
func head(br *bufio.Reader) []byte {
	raw, _ := br.Peek(formatplugin.DetectBytes)
	zr, closeZ, err := formatplugin.Decompress(bytes.NewReader(raw))
	if err != nil {
		return raw
	}
	defer closeZ()
	out, _ := io.ReadAll(io.LimitReader(zr, formatplugin.DetectBytes)) // a cut stream ends early: fine
	return out
}

// DetectCSV reports whether head looks like the built-in CSV format: its
// first event line (not blank, not a # comment) has at least five
// comma-separated fields, the fourth a known action.
func DetectCSV(head []byte) bool {
	for len(head) > 0 {
		line := head
		i := bytes.IndexByte(head, '\n')
		if i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		f := bytes.Split(line, []byte(","))
		return len(f) >= 5 && formatplugin.ActionCode(string(bytes.TrimSpace(f[3]))) != formatplugin.ActionProblem
	}
	return false
}

// extension is the file extension of name without compression suffixes
// (.gz, .zst, .zstd) and without the dot.
func extension(name string) string {
	for _, z := range []string{".gz", ".zst", ".zstd"} {
		name = strings.TrimSuffix(name, z)
	}
	return strings.TrimPrefix(filepath.Ext(name), ".")
}

// detect chooses the format of a trace from its head (content first), then
// from the extension of name. Plugins that fail are skipped with a warning.
//
// Content that is the built-in CSV is CSV without asking the plugins: every
// recorded and Pin trace is, a plugin that also claimed it would make them
// all ambiguous, and starting every plugin for every trace costs time
// (a batch of hundreds of traces) and leaves go-plugin's transport
// complaining on standard error when the plugins are stopped.
func (h *Host) detect(ctx context.Context, name string, hd []byte) (string, error) {
	if DetectCSV(hd) {
		return CSV, nil
	}
	type answer struct {
		match bool
		exts  []string
		err   error
	}
	answers := make([]answer, len(h.plugins))
	var wg sync.WaitGroup
	for i, p := range h.plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := p.Info(ctx)
			if err != nil {
				answers[i].err = err
				return
			}
			var r formatplugin.DetectReply
			err = p.call(ctx, "Detect", formatplugin.DetectArgs{Head: hd}, &r)
			answers[i] = answer{match: r.Match, exts: info.Extensions, err: err}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var byContent, tried, broken []string
	byExt := map[string]bool{}
	ext := extension(name)
	if ext == "csv" {
		byExt[CSV] = true
	}
	tried = append(tried, CSV)
	for i, p := range h.plugins {
		a := answers[i]
		if a.err != nil {
			h.warn(fmt.Sprintf("%v (skipped while detecting the format of %s)", a.err, name))
			broken = append(broken, p.name)
			continue
		}
		tried = append(tried, p.name)
		if a.match {
			byContent = append(byContent, p.name)
		}
		for _, e := range a.exts {
			if ext != "" && strings.EqualFold(strings.TrimPrefix(e, "."), ext) {
				byExt[p.name] = true
			}
		}
	}
	switch {
	case len(byContent) == 1:
		return byContent[0], nil
	case len(byContent) > 1:
		var both []string
		for _, n := range byContent {
			if byExt[n] {
				both = append(both, n)
			}
		}
		if len(both) == 1 {
			return both[0], nil
		}
		return "", &InputError{Msg: fmt.Sprintf("%s: ambiguous trace format: its content matches %s (tried %s); choose one with --input-format",
			name, strings.Join(byContent, ", "), triedText(tried, broken))}
	case len(byExt) == 1:
		for n := range byExt {
			return n, nil
		}
	}
	return "", &InputError{Msg: fmt.Sprintf("%s: unknown trace format: no format recognizes its content or its extension %q (tried %s); choose one with --input-format, see mcpredict formats",
		name, ext, triedText(tried, broken))}
}

func triedText(tried, broken []string) string {
	s := strings.Join(tried, ", ")
	if len(broken) > 0 {
		s += "; broken plugins skipped: " + strings.Join(broken, ", ")
	}
	return s
}
