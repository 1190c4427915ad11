package report_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/report"
)

// setFiles names the source file of every access and location of rep by
// file(line).
func setFiles(rep *bugs.Report, file func(line int) string) {
	for i := range rep.Violations {
		v := &rep.Violations[i]
		for j := range v.Accesses {
			v.Accesses[j].File = file(v.Accesses[j].Line)
		}
		for j := range v.Interleaving {
			v.Interleaving[j].File = file(v.Interleaving[j].Line)
		}
	}
	for i := range rep.Bugs {
		for j := range rep.Bugs[i].Locations {
			l := &rep.Bugs[i].Locations[j]
			l.File = file(l.Line)
		}
	}
}

// artifactLocation is a SARIF artifactLocation.
type artifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

// artifactLocations returns every artifactLocation of a SARIF log but
// those of originalUriBaseIds, as "uri base", distinct and sorted, and the
// originalUriBaseIds.
func artifactLocations(t *testing.T, log []byte) ([]string, map[string]artifactLocation) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(log, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var bases map[string]artifactLocation
	var walk func(key string, n any)
	walk = func(key string, n any) {
		switch n := n.(type) {
		case map[string]any:
			if key == "originalUriBaseIds" {
				b, _ := json.Marshal(n)
				if err := json.Unmarshal(b, &bases); err != nil {
					t.Fatal(err)
				}
				return
			}
			if key == "artifactLocation" {
				uri, _ := n["uri"].(string)
				base, _ := n["uriBaseId"].(string)
				if s := uri + " " + base; !slices.Contains(out, s) {
					out = append(out, s)
				}
				return
			}
			for k, v := range n {
				walk(k, v)
			}
		case []any:
			for _, v := range n {
				walk(key, v)
			}
		}
	}
	walk("", doc)
	slices.Sort(out)
	return out, bases
}

// TestSARIFPaths checks the artifact URIs: relative to --src-root with
// base %SRCROOT% (absolute paths under it, or whose tail names a file under
// it, made relative; two files of one base name kept apart), relative
// paths as the trace names them, and absolute paths found nowhere as file:
// URIs.
func TestSARIFPaths(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"src/util.c", "lib/util.c"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("int x;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "checkout")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	// odd alternates the lines between two files.
	odd := func(a, b string) func(int) string {
		return func(line int) string {
			if line%2 == 1 {
				return a
			}
			return b
		}
	}
	same := func(f string) func(int) string { return func(int) string { return f } }
	tests := []struct {
		name    string
		srcRoot string
		file    func(int) string
		want    []string
	}{
		{"base names, no root", "", same("bank.c"), []string{"bank.c %SRCROOT%"}},
		{"relative paths, no root", "", odd("src/util.c", "./lib/util.c"), []string{"lib/util.c %SRCROOT%", "src/util.c %SRCROOT%"}},
		{"escaped", "", same("my src/a#b.c"), []string{"my%20src/a%23b.c %SRCROOT%"}},
		{"absolute, no root", "", same("/build/src/util.c"), []string{"file:///build/src/util.c "}},
		{"relative paths under the root", root, odd("src/util.c", "lib/util.c"), []string{"lib/util.c %SRCROOT%", "src/util.c %SRCROOT%"}},
		{"absolute under the root", root, odd(filepath.Join(root, "src/util.c"), filepath.Join(root, "lib/util.c")),
			[]string{"lib/util.c %SRCROOT%", "src/util.c %SRCROOT%"}},
		{"absolute under the root through a link", link, same(filepath.Join(root, "src/util.c")), []string{"src/util.c %SRCROOT%"}},
		{"root given through a link", root, same(filepath.Join(link, "lib/util.c")), []string{"lib/util.c %SRCROOT%"}},
		{"absolute from another machine", root, odd("/home/ci/work/proj/src/util.c", "/home/ci/work/proj/lib/util.c"),
			[]string{"lib/util.c %SRCROOT%", "src/util.c %SRCROOT%"}},
		{"absolute outside the root", root, same("/usr/include/nothing-here.h"), []string{"file:///usr/include/nothing-here.h "}},
	}
	sch := sarifSchema(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := predictExample(t, "bank")
			setFiles(rep, tt.file)
			var buf bytes.Buffer
			if err := report.WriteSARIF(&buf, rep, report.Options{Patterns: ltl.Builtin(), SrcRoot: tt.srcRoot}); err != nil {
				t.Fatal(err)
			}
			validateSARIF(t, sch, buf.Bytes())
			got, bases := artifactLocations(t, buf.Bytes())
			if !slices.Equal(got, tt.want) {
				t.Errorf("artifact locations %q, want %q", got, tt.want)
			}
			if tt.srcRoot == "" {
				if bases != nil {
					t.Errorf("originalUriBaseIds %v without a source root", bases)
				}
				return
			}
			abs, _ := filepath.Abs(tt.srcRoot)
			want := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs) + "/"}).String()
			if b := bases["%SRCROOT%"]; b.URI != want || len(bases) != 1 {
				t.Errorf("originalUriBaseIds %v, want %%SRCROOT%% = %s", bases, want)
			}
		})
	}
}

// TestSARIFCompact checks that the logs leave out what says nothing: no
// -1 placeholder, no empty array or object, no member equal to the
// schema's default; and that no line is indented more than its depth.
func TestSARIFCompact(t *testing.T) {
	for _, name := range append(exampleNames(), "racy_counter_100") {
		var rep *bugs.Report
		if name == "racy_counter_100" {
			rep = predictTrace(t, racyCounter, racyCounter)
		} else {
			rep = predictExample(t, name)
		}
		var buf bytes.Buffer
		if err := report.WriteSARIF(&buf, rep, report.Options{Patterns: ltl.Builtin()}); err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var walk func(path string, n any)
		walk = func(path string, n any) {
			switch n := n.(type) {
			case map[string]any:
				if strings.HasSuffix(path, "/properties") {
					return // the tool's own data
				}
				if len(n) == 0 {
					t.Errorf("%s: empty object at %s", name, path)
				}
				for k, v := range n {
					walk(path+"/"+k, v)
				}
			case []any:
				if len(n) == 0 && !strings.HasSuffix(path, "/results") {
					t.Errorf("%s: empty array at %s", name, path)
				}
				for _, v := range n {
					walk(path+"[]", v)
				}
			case float64:
				if n == -1 {
					t.Errorf("%s: -1 at %s", name, path)
				}
			case string:
				for _, d := range []string{"/language=en-US", "/importance=important", "/kind=fail"} {
					if strings.HasSuffix(path+"="+n, d) {
						t.Errorf("%s: default value at %s: %s", name, path, n)
					}
				}
			case bool:
				if n && strings.HasSuffix(path, "/enabled") {
					t.Errorf("%s: default value at %s", name, path)
				}
			}
		}
		walk("", doc)
		for _, d := range []string{`"newlineSequences"`, `"contents"`, `"isComprehensive"`} {
			if strings.Contains(buf.String(), d) {
				t.Errorf("%s: the default %s is written", name, d)
			}
		}
		for i, line := range strings.Split(buf.String(), "\n") {
			if indent := len(line) - len(strings.TrimLeft(line, " ")); indent > 20 {
				t.Errorf("%s: line %d indented by %d: %q", name, i+1, indent, line)
				break
			}
		}
	}
}
