package docsample

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	type cmd struct {
		line int
		text string
		out  string
	}
	tests := []struct {
		name     string
		md       string
		blocks   int
		abridged bool
		cmds     []cmd // nil: no sample
		err      string
	}{
		{name: "no sample", md: "text\n```\nmake run\n```\n", blocks: 1},
		{name: "session", md: "# t\n\n```\n$ mcpredict run a.csv\nline 1\n\nline 3\n$ echo $?\n1\n```\n", blocks: 1,
			cmds: []cmd{{4, "mcpredict run a.csv", "line 1\n\nline 3"}, {8, "echo $?", "1"}}},
		{name: "command without output", md: "```\n$ mcpredict run -o x a.csv\n```\n", blocks: 1,
			cmds: []cmd{{2, "mcpredict run -o x a.csv", ""}}},
		{name: "output", md: "```\nmake run\n```\n\n<!-- sample: ./bin/mcpredict run a.csv -->\n```\nbank.c\n  AV-1\n```\n", blocks: 2,
			cmds: []cmd{{5, "./bin/mcpredict run a.csv", "bank.c\n  AV-1"}}},
		{name: "abridged session", md: "<!-- sample abridged -->\n```\n$ mcpredict x\n{...}\n```\n", blocks: 1, abridged: true,
			cmds: []cmd{{3, "mcpredict x", "{...}"}}},
		{name: "abridged output", md: "<!-- sample abridged: mcpredict x -->\n```json\n{...}\n```\n", blocks: 1, abridged: true,
			cmds: []cmd{{1, "mcpredict x", "{...}"}}},
		{name: "indented fence", md: "1. step\n   ```\n   $ mcpredict x\n   out\n   ```\n", blocks: 1,
			cmds: []cmd{{3, "mcpredict x", "out"}}},
		{name: "longer closing fence, tilde inside", md: "````\n$ a\n~~~\n```\n`````\n", blocks: 1,
			cmds: []cmd{{2, "a", "~~~\n```"}}},
		{name: "not a fence: backticks in the info", md: "```x` y\n$ a\n", blocks: 0},
		{name: "comment not above a block", md: "<!-- sample: a -->\n\n```\nout\n```\n", err: "t.md:1: sample comment is not right above"},
		{name: "malformed comment", md: "<!-- sample a -->\n```\nout\n```\n", err: "t.md:1: malformed sample comment"},
		{name: "command twice", md: "<!-- sample: a -->\n```\n$ a\nout\n```\n", err: "t.md:1: the sample comment names a command and the block starts with one"},
		{name: "no command", md: "<!-- sample abridged -->\n```\nout\n```\n", err: "t.md:1: the sample comment names no command"},
		{name: "unclosed", md: "x\n```\n$ a\n", err: "t.md:2: fenced code block is not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, samples, err := Parse("t.md", []byte(tt.md))
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q...", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(blocks) != tt.blocks {
				t.Errorf("%d blocks, want %d", len(blocks), tt.blocks)
			}
			if tt.cmds == nil {
				if len(samples) != 0 {
					t.Errorf("%d samples, want none", len(samples))
				}
				return
			}
			if len(samples) != 1 {
				t.Fatalf("%d samples, want 1", len(samples))
			}
			s := samples[0]
			if s.Abridged != tt.abridged {
				t.Errorf("abridged = %v, want %v", s.Abridged, tt.abridged)
			}
			var got []cmd
			for _, c := range s.Commands {
				got = append(got, cmd{c.Line, c.Text, strings.Join(c.Output, "\n")})
			}
			if len(got) != len(tt.cmds) {
				t.Fatalf("commands %+v, want %+v", got, tt.cmds)
			}
			for i := range got {
				if got[i] != tt.cmds[i] {
					t.Errorf("command %d = %+v, want %+v", i, got[i], tt.cmds[i])
				}
			}
		})
	}
}

func TestRewrite(t *testing.T) {
	md := "# x  \r\nkeep\n   ```\n   $ a\n   old\n   old\n\n   $ b\n   ```\n<!-- sample: c -->\n```\nold c\n```\nend without newline"
	_, samples, err := Parse("t.md", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 2 {
		t.Fatalf("%d samples, want 2", len(samples))
	}
	a, b, c := samples[0].Commands[0], samples[0].Commands[1], samples[1].Commands[0]
	got := string(Rewrite([]byte(md), []Replacement{
		{Command: a, Indent: "   ", Output: []string{"new", "", "new"}},
		{Command: c, Output: []string{"new c"}},
		{Command: b, Indent: "   ", Output: []string{"b out"}},
	}))
	want := "# x  \r\nkeep\n   ```\n   $ a\n   new\n\n   new\n   $ b\n   b out\n   ```\n<!-- sample: c -->\n```\nnew c\n```\nend without newline"
	if got != want {
		t.Errorf("Rewrite:\n%s\nwant:\n%s", got, want)
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"3 models, 30 claims, 1.282s, precise semantics", "3 models, 30 claims, <time>, precise semantics"},
		{"took 35ms; 2m3s; 1h0m0s; 120µs; 8ns", "took <time>; <time>; <time>; <time>; <time>"},
		{`"elapsed_ns": 552629,`, `"elapsed_ns": <time>,`},
		{`"version": "0.1.0-dev", "engine"`, `"version": "<version>", "engine"`},
		{"mcpredict v1.2.3 and 0.1.0-dev", "mcpredict <version> and <version>"},
		// Not durations or versions: ids, counts, section numbers, sizes.
		{"AV-61ebbb33d840 P3 (2 instances) §9.4.1 8MB 64 MB 10 claims", "AV-61ebbb33d840 P3 (2 instances) §9.4.1 8MB 64 MB 10 claims"},
		{"wrote /tmp/TestX123/001/main.json: ok", "wrote <tmp>: ok"},
		{"/var/tmp/x /tmpfoo", "/var/tmp/x /tmpfoo"},
		{"a  \nb\t\n\n\n", "a\nb"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMatchAbridged(t *testing.T) {
	got := `{
  "schema": "mcpredict.report/v1",
  "tool": {
    "name": "mcpredict",
    "version": "0.2.0",
    "engine": "native"
  },
  "stats": {"events": 6, "elapsed_ns": 1234},
  "bugs": [{"id": "AV-a251db691057", "count": 1}]
}`
	tests := []struct {
		name string
		want string
		ok   bool
		line int
	}{
		{"whole, rewrapped", `{"schema": "mcpredict.report/v1", "tool": {"name": "mcpredict", "version": "0.1.0-dev", "engine": "native"},
  "stats": {"events": 6, "elapsed_ns": 99}, "bugs": [{"id": "AV-a251db691057", "count": 1}]}`, true, 0},
		{"ellipses", "{\n  \"schema\": \"mcpredict.report/v1\",\n  ...\n  \"bugs\": [{\"id\": \"...\", ...}]\n}", true, 0},
		{"wrong id", "{\n  \"schema\": \"mcpredict.report/v1\", ...,\n  \"bugs\": [{\"id\": \"AV-866f23e0cd92\", ...}]\n}", false, 12},
		{"missing field", "{\n  \"schema\": \"mcpredict.report/v1\",\n  \"stats\": {...},\n  ...\n}", false, 12},
		{"output goes on", "{\n  \"schema\": \"mcpredict.report/v1\",\n  \"tool\"", false, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, line := MatchAbridged(strings.Split(tt.want, "\n"), 10, got)
			if ok != tt.ok || line != tt.line {
				t.Errorf("MatchAbridged = %v, %d; want %v, %d", ok, line, tt.ok, tt.line)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	got := Diff("a\nb\nc", "a\nc\nd")
	want := "  a\n- b\n  c\n+ d\n"
	if got != want {
		t.Errorf("Diff = %q, want %q", got, want)
	}
}
