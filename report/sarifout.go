package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The SARIF library fills every optional field of the objects it makes
// (-1 for indexes and offsets, empty arrays, "en-US", the default newline
// sequences), which more than doubles a log. WriteSARIF therefore rewrites
// its encoding: the fields that only repeat the schema's default or say
// nothing are left out, artifact URIs are made relative to the source root,
// and small objects are written on one line.

// sarifWidth is the line width up to which an object or array is written on
// one line.
const sarifWidth = 120

// sarifIndent is the indentation of each level of a SARIF log.
const sarifIndent = 1

// jsonNode is a JSON value that keeps the order of its object's members.
type jsonNode struct {
	kind    byte   // '{', '[', or 0 for a scalar
	scalar  string // the encoded scalar
	keys    []string
	members []*jsonNode // an object's values (by keys) or an array's elements
}

// parseJSON reads one JSON value, keeping the order of object members.
func parseJSON(data []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return parseNode(dec)
}

func parseNode(dec *json.Decoder) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &jsonNode{kind: byte(t)}
		for dec.More() {
			if n.kind == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &jsonNode{scalar: jsonString(t)}, nil
	case json.Number:
		return &jsonNode{scalar: t.String()}, nil
	case bool:
		return &jsonNode{scalar: fmt.Sprint(t)}, nil
	case nil:
		return &jsonNode{scalar: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// jsonString encodes s without escaping <, > and & (messages quote code).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string cannot fail
	return strings.TrimSuffix(b.String(), "\n")
}

// get returns the value of an object's member, or nil.
func (n *jsonNode) get(key string) *jsonNode {
	for i, k := range n.keys {
		if k == key {
			return n.members[i]
		}
	}
	return nil
}

// set sets the scalar value of an object's member, adding it at the end.
func (n *jsonNode) set(key, scalar string) {
	for i, k := range n.keys {
		if k == key {
			n.members[i] = &jsonNode{scalar: scalar}
			return
		}
	}
	n.keys = append(n.keys, key)
	n.members = append(n.members, &jsonNode{scalar: scalar})
}

// remove deletes an object's member.
func (n *jsonNode) remove(key string) {
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.members = append(n.members[:i], n.members[i+1:]...)
			return
		}
	}
}

// empty reports whether n is an empty object or array.
func (n *jsonNode) empty() bool { return n.kind != 0 && len(n.members) == 0 }

// sarifDefaults are members whose value is the one the SARIF 2.1.0 schema
// gives when the member is absent, by name and encoded value (the -1
// placeholders of indexes, offsets, ids and ranks, and the empty arrays,
// are handled apart). Levels stay: "warning" is the default, but a reader
// should not have to know it.
var sarifDefaults = map[string]string{
	"language":           `"en-US"`,
	"newlineSequences":   `["\r\n","\n"]`,
	"importance":         `"important"`,                          // threadFlowLocation
	"enabled":            `true`,                                 // reportingConfiguration
	"kind":               `"fail"`,                               // result
	"contents":           `["localizedData","nonLocalizedData"]`, // toolComponent
	"isComprehensive":    `false`,                                // toolComponent
	"noResponseReceived": `false`,                                // webResponse
}

// compactSARIF leaves out of a SARIF log's node the members that say
// nothing: -1 placeholders, empty arrays and objects, and values equal to
// the schema's defaults. Property bags are the tool's own data and kept as
// they are; a run's results are kept even when empty (no result means
// nothing was found, not that nothing was looked for).
func compactSARIF(n *jsonNode) {
	if n.kind == '[' {
		for _, m := range n.members {
			compactSARIF(m)
		}
		return
	}
	if n.kind != '{' {
		return
	}
	var keys []string
	var members []*jsonNode
	for i, k := range n.keys {
		m := n.members[i]
		if k != "properties" {
			compactSARIF(m)
		}
		switch {
		case k == "results":
		case m.kind == 0 && m.scalar == "-1":
			continue
		case m.empty():
			continue
		case sarifDefaults[k] != "" && sarifDefaults[k] == m.compact():
			continue
		}
		keys = append(keys, k)
		members = append(members, m)
	}
	n.keys, n.members = keys, members
}

// compact is the node's encoding on one line without spaces.
func (n *jsonNode) compact() string {
	var b strings.Builder
	n.writeFlat(&b, ":", ",")
	return b.String()
}

// writeFlat writes the node on one line with the given separators.
func (n *jsonNode) writeFlat(b *strings.Builder, colon, comma string) {
	if n.kind == 0 {
		b.WriteString(n.scalar)
		return
	}
	b.WriteByte(n.kind)
	for i, m := range n.members {
		if i > 0 {
			b.WriteString(comma)
		}
		if n.kind == '{' {
			b.WriteString(jsonString(n.keys[i]))
			b.WriteString(colon)
		}
		m.writeFlat(b, colon, comma)
	}
	if n.kind == '{' {
		b.WriteByte('}')
	} else {
		b.WriteByte(']')
	}
}

// flatLen is the length of the node written on one line (writeFlat with
// ": " and ", "), or a length over limit as soon as it exceeds it.
func (n *jsonNode) flatLen(limit int) int {
	if n.kind == 0 {
		return len(n.scalar)
	}
	l := 2
	for i, m := range n.members {
		if i > 0 {
			l += 2
		}
		if n.kind == '{' {
			l += len(jsonString(n.keys[i])) + 2
		}
		if l > limit {
			return l
		}
		l += m.flatLen(limit - l)
		if l > limit {
			return l
		}
	}
	return l
}

// writeIndented writes the node as it starts at column col of a line
// indented by indent: on the rest of that line if it fits in sarifWidth,
// else one member a line, indented by sarifIndent more spaces.
func (n *jsonNode) writeIndented(b *strings.Builder, indent, col int) {
	if n.kind == 0 || n.empty() || n.flatLen(sarifWidth-col) <= sarifWidth-col {
		n.writeFlat(b, ": ", ", ")
		return
	}
	inner := strings.Repeat(" ", indent+sarifIndent)
	b.WriteByte(n.kind)
	for i, m := range n.members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(inner)
		c := indent + sarifIndent
		if n.kind == '{' {
			k := jsonString(n.keys[i]) + ": "
			b.WriteString(k)
			c += len(k)
		}
		m.writeIndented(b, indent+sarifIndent, c)
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", indent))
	if n.kind == '{' {
		b.WriteByte('}')
	} else {
		b.WriteByte(']')
	}
}

// srcRootID is the uriBaseId of source paths relative to the source root:
// the base GitHub code scanning and other SARIF consumers resolve against
// the checkout.
const srcRootID = "%SRCROOT%"

// sourcePaths turns the source paths of a trace into SARIF artifact
// locations relative to the source root.
type sourcePaths struct {
	roots []string          // the root, absolute, and with symbolic links resolved
	found map[string]string // absolute path → path relative to the root, "" if none
}

func newSourcePaths(srcRoot string) *sourcePaths {
	s := &sourcePaths{found: map[string]string{}}
	if srcRoot == "" {
		return s
	}
	if abs, err := filepath.Abs(srcRoot); err == nil {
		s.roots = append(s.roots, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			s.roots = append(s.roots, real)
		}
	}
	return s
}

// relative returns the path of the absolute file relative to the root: the
// path under the root if it is under it, else the longest tail of the path
// that names a file under the root (a trace recorded with -full-paths in
// another checkout, or on another machine); ok is false if there is none.
func (s *sourcePaths) relative(file string) (string, bool) {
	if len(s.roots) == 0 {
		return "", false
	}
	if rel, ok := s.found[file]; ok {
		return rel, rel != ""
	}
	rel := ""
	candidates := []string{file}
	if real, err := filepath.EvalSymlinks(file); err == nil && real != file {
		candidates = append(candidates, real)
	}
	for _, c := range candidates {
		for _, root := range s.roots {
			if r, err := filepath.Rel(root, c); err == nil && r != "." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && r != ".." {
				rel = r
				break
			}
		}
		if rel != "" {
			break
		}
	}
	if rel == "" {
		parts := strings.Split(filepath.ToSlash(filepath.Clean(file)), "/")
		for i := 1; i < len(parts) && rel == ""; i++ {
			tail := filepath.Join(parts[i:]...)
			if tail == "" {
				continue
			}
			if fi, err := os.Stat(filepath.Join(s.roots[0], tail)); err == nil && fi.Mode().IsRegular() {
				rel = tail
			}
		}
	}
	s.found[file] = rel
	return rel, rel != ""
}

// rewrite sets an artifactLocation's uri and uriBaseId from the source
// path its uri names: relative to the root with base %SRCROOT% when it
// can be, else the absolute file: URI.
func (s *sourcePaths) rewrite(art *jsonNode) {
	u := art.get("uri")
	if u == nil || u.kind != 0 {
		return
	}
	var raw string
	if json.Unmarshal([]byte(u.scalar), &raw) != nil {
		return
	}
	parsed, err := url.Parse(raw)
	if err != nil || parsed.Path == "" || (parsed.Scheme != "" && parsed.Scheme != "file") {
		return
	}
	file := parsed.Path
	rel := ""
	if parsed.Scheme == "file" || path.IsAbs(file) {
		r, ok := s.relative(filepath.FromSlash(file))
		if !ok {
			art.set("uri", jsonString((&url.URL{Scheme: "file", Path: file}).String()))
			art.remove("uriBaseId")
			return
		}
		rel = filepath.ToSlash(r)
	} else {
		rel = path.Clean(file)
	}
	art.set("uri", jsonString((&url.URL{Path: rel}).String()))
	art.set("uriBaseId", jsonString(srcRootID))
}

// rewriteURIs rewrites every artifactLocation of a node but those of
// originalUriBaseIds (the root itself).
func (s *sourcePaths) rewriteURIs(n *jsonNode, key string) {
	switch {
	case key == "originalUriBaseIds" || key == "properties":
		return
	case key == "artifactLocation" && n.kind == '{':
		s.rewrite(n)
		return
	}
	for i, m := range n.members {
		k := key
		if n.kind == '{' {
			k = n.keys[i]
		}
		s.rewriteURIs(m, k)
	}
}

// writeCompactSARIF writes the JSON encoding of a SARIF log compacted.
func writeCompactSARIF(w io.Writer, encoded []byte, srcRoot string) error {
	root, err := parseJSON(encoded)
	if err != nil {
		return err
	}
	newSourcePaths(srcRoot).rewriteURIs(root, "")
	compactSARIF(root)
	var b strings.Builder
	root.writeIndented(&b, 0, 0)
	b.WriteByte('\n')
	_, err = io.WriteString(w, b.String())
	return err
}
