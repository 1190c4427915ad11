package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
	"github.com/mcpredict/mcpredict/tracemodel"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// examples are the shipped traces with golden reports: three with bugs of
// one variable, one without bugs, and one with a bug of an atomic set.
func exampleNames() []string { return []string{"bank", "logbuf", "fig5", "condvar-handoff", "range"} }

// predictExample runs the model-checked analyses as `mcpredict run
// --analysis mcpatom,atomicset` does,
// with the native engine (no Spin needed, deterministic), on a shipped
// example, with everything that depends on the machine or the clock
// zeroed.
func predictExample(t *testing.T, name string) *bugs.Report {
	t.Helper()
	return predictTrace(t, filepath.Join("..", "examples", name+".csv"), "examples/"+name+".csv")
}

// racyCounter is the trace of examples/c/racy_counter_100.c, recorded with
// mcpredict record: hundreds of bugs of one counter in one function.
const racyCounter = "testdata/racy_counter_100.csv"

// predictTrace is predictExample of the trace at path, named name.
func predictTrace(t *testing.T, path, name string) *bugs.Report {
	t.Helper()
	ctx := context.Background()
	m, err := tracemodel.Open(ctx, path, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Name = name
	precise, _ := tracemodel.SemanticsOptions(tracemodel.SemanticsPrecise)
	as, err := all.Select(all.Options{}, "mcpatom,atomicset")
	if err != nil {
		t.Fatal(err)
	}
	check := predict.ModelChecker(predict.Options{Engine: predict.EngineNative, Jobs: 2, Version: "test", Project: precise})
	rep, err := analysis.Run(ctx, m, as, analysis.Options{CheckModels: check})
	if err != nil {
		t.Fatal(err)
	}
	rep.Stats.Elapsed = 0
	return rep
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s\n(run go test ./report -run %s -update if the change is intended)", path, got, t.Name())
	}
}

// sarifSchema compiles the SARIF 2.1.0 schema shipped in testdata.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	c.AssertFormat()
	const url = "sarif-schema-2.1.0.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validateSARIF checks a SARIF log against the schema.
func validateSARIF(t *testing.T, sch *jsonschema.Schema, log []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		t.Fatalf("SARIF output is not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("SARIF output does not validate against the 2.1.0 schema: %v", err)
	}
}

func TestGolden(t *testing.T) {
	sch := sarifSchema(t)
	for _, name := range exampleNames() {
		t.Run(name, func(t *testing.T) {
			rep := predictExample(t, name)
			var text, js, sarif, html bytes.Buffer
			if err := report.WriteText(&text, rep); err != nil {
				t.Fatal(err)
			}
			if err := bugs.WriteJSON(&js, rep); err != nil {
				t.Fatal(err)
			}
			if err := report.WriteSARIF(&sarif, rep, report.Options{Patterns: ltl.Builtin()}); err != nil {
				t.Fatal(err)
			}
			if err := report.WriteHTML(&html, rep, report.Options{Patterns: ltl.Builtin(), SrcRoot: filepath.Join("testdata", "src")}); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".txt", text.Bytes())
			golden(t, name+".json", js.Bytes())
			golden(t, name+".sarif", sarif.Bytes())
			golden(t, name+".html", html.Bytes())
			validateSARIF(t, sch, sarif.Bytes())
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, name := range exampleNames() {
		rep := predictExample(t, name)
		var buf bytes.Buffer
		if err := bugs.WriteJSON(&buf, rep); err != nil {
			t.Fatal(err)
		}
		back, err := bugs.ReadJSON(&buf, name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep, back) {
			t.Errorf("%s: report changed through JSON:\n got %+v\nwant %+v", name, back, rep)
		}
	}
}

// TestSARIFContent checks what the schema cannot: one rule per analysis
// that explains its patterns, one result per group with its analysis's
// rule and the group id as fingerprint, every access of the example
// instance as a location, the source lines of every bug of the group as
// related locations, thread flows per thread whose execution orders
// interleave as the witness does, and the function names.
func TestSARIFContent(t *testing.T) {
	rep := predictExample(t, "bank")
	var buf bytes.Buffer
	if err := report.WriteSARIF(&buf, rep, report.Options{}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID   string `json:"id"`
						Help struct {
							Text string `json:"text"`
						} `json:"help"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID              string            `json:"ruleId"`
				RuleIndex           int               `json:"ruleIndex"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
				Locations           []sarifLoc        `json:"locations"`
				RelatedLocations    []sarifLoc        `json:"relatedLocations"`
				CodeFlows           []struct {
					ThreadFlows []struct {
						ID        string `json:"id"`
						Locations []struct {
							ExecutionOrder int      `json:"executionOrder"`
							Importance     string   `json:"importance"`
							Location       sarifLoc `json:"location"`
						} `json:"locations"`
					} `json:"threadFlows"`
				} `json:"codeFlows"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if got := len(run.Tool.Driver.Rules); got != len(rep.Analyses) {
		t.Fatalf("%d rules, want one per analysis (%d)", got, len(rep.Analyses))
	}
	for i, r := range run.Tool.Driver.Rules {
		if r.ID != rep.Analyses[i].Name {
			t.Errorf("rule %d: %s, want %s", i, r.ID, rep.Analyses[i].Name)
		}
		for _, k := range rep.Analyses[i].Kinds {
			if !strings.Contains(r.Help.Text, k.ID+" "+k.Name) {
				t.Errorf("rule %s: help text %q does not explain %s", r.ID, r.Help.Text, k.ID)
			}
		}
		if !strings.Contains(r.Help.Text, "Typical fix") {
			t.Errorf("rule %s: help text %q does not explain the patterns", r.ID, r.Help.Text)
		}
	}
	groups := bugs.Groups(rep.Bugs)
	if len(run.Results) != len(groups) {
		t.Fatalf("%d results, want one per group (%d)", len(run.Results), len(groups))
	}
	for i, res := range run.Results {
		g := groups[i]
		b := g.Members[0]
		v := rep.Violations[b.Instances[0]]
		if res.RuleID != b.Analysis || run.Tool.Driver.Rules[res.RuleIndex].ID != b.Analysis {
			t.Errorf("result %d: rule %s (index %d), want %s", i, res.RuleID, res.RuleIndex, b.Analysis)
		}
		if res.PartialFingerprints[report.FingerprintKey] != g.ID || len(res.PartialFingerprints) != 1 {
			t.Errorf("result %d: fingerprints %v, want %s", i, res.PartialFingerprints, g.ID)
		}
		if got, want := relatedLines(res.RelatedLocations), groupLines(g); !reflect.DeepEqual(got, want) {
			t.Errorf("result %d: related locations %v, want the distinct lines of the group's bugs %v", i, got, want)
		}
		if len(res.Locations) != len(v.Accesses) {
			t.Errorf("result %d: %d locations, want one per access (%d)", i, len(res.Locations), len(v.Accesses))
		}
		for j, l := range res.Locations {
			a := v.Accesses[j]
			if l.Physical.Artifact.URI != a.File || l.Physical.Region.StartLine != a.Line {
				t.Errorf("result %d location %d: %s:%d, want %s", i, j, l.Physical.Artifact.URI, l.Physical.Region.StartLine, a.Location())
			}
			if len(l.Logical) != 1 || l.Logical[0].Name != "deposit" || l.Logical[0].Kind != "function" {
				t.Errorf("result %d location %d: logical locations %+v, want function deposit", i, j, l.Logical)
			}
		}
		flows := res.CodeFlows[0].ThreadFlows
		if len(flows) != 2 || flows[0].ID != "thread "+v.Local.Handle || flows[1].ID != "thread "+v.Remote.Handle {
			t.Fatalf("result %d: thread flows %+v, want local then remote thread", i, flows)
		}
		// Merging the two flows by executionOrder gives back the witness.
		merged := make([]string, len(v.Interleaving))
		for _, f := range flows {
			last := 0
			for _, l := range f.Locations {
				if l.ExecutionOrder <= last {
					t.Errorf("result %d %s: execution orders not increasing", i, f.ID)
				}
				last = l.ExecutionOrder
				merged[l.ExecutionOrder-1] = f.ID + " " + l.Location.Message.Text
			}
		}
		for k, a := range v.Interleaving {
			if !strings.HasPrefix(merged[k], "thread "+a.Handle+" "+a.Action) {
				t.Errorf("result %d step %d: %q, want thread %s %s", i, k+1, merged[k], a.Handle, a.Action)
			}
		}
	}
}

// relatedLines are the "file:line" of SARIF locations, sorted.
func relatedLines(ls []sarifLoc) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s:%d", l.Physical.Artifact.URI, l.Physical.Region.StartLine))
	}
	sort.Strings(out)
	return out
}

// groupLines are the distinct "file:line" of the locations of a group's
// bugs, sorted.
func groupLines(g bugs.Group) []string {
	var out []string
	for _, b := range g.Members {
		for _, l := range b.Locations {
			if s := l.String(); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

type sarifLoc struct {
	Message struct {
		Text string `json:"text"`
	} `json:"message"`
	Physical struct {
		Artifact struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region struct {
			StartLine int `json:"startLine"`
		} `json:"region"`
	} `json:"physicalLocation"`
	Logical []struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	} `json:"logicalLocations"`
}

// TestSARIFGrouped checks the SARIF log of a report whose hundreds of bugs
// are one group: valid, one result, one location per access of its
// example instance, and its related locations within the schema's limits.
func TestSARIFGrouped(t *testing.T) {
	rep := predictTrace(t, racyCounter, racyCounter)
	var buf bytes.Buffer
	if err := report.WriteSARIF(&buf, rep, report.Options{Patterns: ltl.Builtin(), SrcRoot: "testdata/src"}); err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, sarifSchema(t), buf.Bytes())
	var log struct {
		Runs []struct {
			Results []struct {
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations        []sarifLoc `json:"locations"`
				RelatedLocations []sarifLoc `json:"relatedLocations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	groups := bugs.Groups(rep.Bugs)
	if len(groups) != 1 || len(log.Runs[0].Results) != 1 {
		t.Fatalf("%d groups, %d results; want one", len(groups), len(log.Runs[0].Results))
	}
	res, g := log.Runs[0].Results[0], groups[0]
	ex := rep.Violations[g.Members[0].Instances[0]]
	if len(res.Locations) != len(ex.Accesses) {
		t.Errorf("%d locations, want the %d accesses of the example", len(res.Locations), len(ex.Accesses))
	}
	if got, want := relatedLines(res.RelatedLocations), groupLines(g); !reflect.DeepEqual(got, want) {
		t.Errorf("related locations %v, want %v", got, want)
	}
	if want := fmt.Sprintf("%d bugs on counter, local thread in bump_all() (mcpatom, ", len(rep.Bugs)); !strings.HasPrefix(res.Message.Text, want) {
		t.Errorf("message %q, want it to start with %q", res.Message.Text, want)
	}
}

// TestSARIFSchemaRejects makes sure the validation has teeth: broken logs
// fail it.
func TestSARIFSchemaRejects(t *testing.T) {
	sch := sarifSchema(t)
	tests := []struct{ name, old, new string }{
		{"version", `"version": "2.1.0"`, `"version": "2.0.0"`},
		{"level", `"level": "warning"`, `"level": "severe"`},
		{"start line", `"startLine": 11`, `"startLine": 0`},
		{"unknown property", `"ruleId": "mcpatom"`, `"ruleId": "mcpatom", "bogus": 1`},
	}
	rep := predictExample(t, "bank")
	var buf bytes.Buffer
	if err := report.WriteSARIF(&buf, rep, report.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(buf.String(), tt.old) {
				t.Fatalf("log lacks %s", tt.old)
			}
			broken := strings.Replace(buf.String(), tt.old, tt.new, 1)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(broken))
			if err != nil {
				t.Fatal(err)
			}
			if sch.Validate(inst) == nil {
				t.Errorf("a log with %s validates", tt.new)
			}
		})
	}
}

// TestSARIFFiltered checks schema validity of the states a CI sees:
// suppressed results, a baseline, warnings and skipped lines, and a user
// pattern whose definition only the options know.
func TestSARIFFiltered(t *testing.T) {
	sch := sarifSchema(t)
	user, err := ltl.User("U1", "W1 R2 W1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(r *bugs.Report)
	}{
		{"suppressed", func(r *bugs.Report) {
			bugs.Suppress(r, []bugs.SuppressionRule{{Pattern: "P3", Var: "*", Location: "bank.c:11", Func: "*"}})
		}},
		{"baseline", func(r *bugs.Report) {
			base := predictExample(t, "bank")
			base.Bugs = base.Bugs[:1]
			bugs.ApplyBaseline(r, base, "base.json")
		}},
		{"notes", func(r *bugs.Report) {
			r.Warnings = []string{"a warning"}
			r.Skipped, r.Problems = 2, []string{"line 3: bad"}
		}},
		{"user pattern", func(r *bugs.Report) {
			r.Stats.Patterns = append(r.Stats.Patterns, "U1", "U2")
			r.Analyses[0].Kinds = append(r.Analyses[0].Kinds, bugs.FindingKind{ID: "U1"}, bugs.FindingKind{ID: "U2"})
		}},
		{"no analyses", func(r *bugs.Report) {
			r.Analyses = nil
			for i := range r.Bugs {
				r.Bugs[i].Analysis = ""
			}
		}},
		{"group partly suppressed", func(r *bugs.Report) {
			bugs.Suppress(r, []bugs.SuppressionRule{{Pattern: "P3", Var: "*", Location: "*:1373", Func: "*"}})
		}},
		{"group suppressed", func(r *bugs.Report) {
			bugs.Suppress(r, []bugs.SuppressionRule{{Pattern: "*", Var: "*", Location: "*", Func: "*"}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			example := "bank"
			if strings.HasPrefix(tt.name, "group") {
				example = "logbuf" // one group of three bugs
			}
			rep := predictExample(t, example)
			tt.change(rep)
			var buf bytes.Buffer
			if err := report.WriteSARIF(&buf, rep, report.Options{Patterns: append(ltl.Builtin(), user), SrcRoot: "testdata/src"}); err != nil {
				t.Fatal(err)
			}
			validateSARIF(t, sch, buf.Bytes())
		})
	}
}

// TestHTMLSelfContained checks that the page loads nothing: no script, no
// style sheet, image or font from elsewhere.
func TestHTMLSelfContained(t *testing.T) {
	for _, name := range exampleNames() {
		rep := predictExample(t, name)
		var buf bytes.Buffer
		if err := report.WriteHTML(&buf, rep, report.Options{SrcRoot: "testdata/src"}); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		for _, bad := range []string{"<script", "<link", "<img", "<iframe", "@import", "src=", "url(http", "href=\"http"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: page contains %q", name, bad)
			}
		}
		if got, want := strings.Count(page, `<svg class="swimlane"`), len(rep.Active()); got != want {
			t.Errorf("%s: %d diagrams, want %d", name, got, want)
		}
	}
}

// TestHTMLSnippets covers source snippets: highlighted lines, and a file
// that is not under the source root.
func TestHTMLSnippets(t *testing.T) {
	rep := predictExample(t, "bank")
	render := func(root string) string {
		var buf bytes.Buffer
		if err := report.WriteHTML(&buf, rep, report.Options{SrcRoot: root}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	page := render("testdata/src")
	for _, want := range []string{
		`<tr class="hit local remote"><td class="ln">11</td><td class="code">	long b = balance;</td>`,
		`<tr class="step"><td class="ln">10</td>`,
		`<tr><td class="ln">9</td><td class="code">{</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	empty := t.TempDir()
	if page := render(empty); !strings.Contains(page, "not found under "+empty) {
		t.Errorf("a missing source file is not reported")
	}
	if page := render(""); strings.Contains(page, `class="src"`) {
		t.Errorf("snippets without --src-root")
	}
}

// TestWriteErrors checks that a failing writer is reported.
func TestWriteErrors(t *testing.T) {
	rep := predictExample(t, "bank")
	for name, write := range map[string]func(io.Writer) error{
		"sarif": func(w io.Writer) error { return report.WriteSARIF(w, rep, report.Options{}) },
		"html":  func(w io.Writer) error { return report.WriteHTML(w, rep, report.Options{}) },
		"text":  func(w io.Writer) error { return report.WriteText(w, rep) },
	} {
		if err := write(failWriter{}); err == nil {
			t.Errorf("%s: no error from a failing writer", name)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestReachedDetail checks that a variable's path (Report.Reached, from a
// trace's "# reached:" lines) is shown by the text, HTML and SARIF reports.
func TestReachedDetail(t *testing.T) {
	rep := predictExample(t, "bank")
	if len(rep.Bugs) == 0 {
		t.Fatal("no bug in the bank example")
	}
	v := rep.Bugs[0].Vars[0]
	rep.SetReached(map[string]string{v: "accounts->next->" + v})
	want := v + " first reached as accounts->next->" + v
	var text, page, sarif bytes.Buffer
	if err := report.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&page, rep, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteSARIF(&sarif, rep, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), want) {
		t.Errorf("text report lacks %q", want)
	}
	if esc := html.EscapeString(want); !strings.Contains(page.String(), esc) {
		t.Errorf("HTML report lacks %q", esc)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Properties struct {
					ReachedAs map[string]string `json:"reachedAs"`
				} `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) == 0 || len(log.Runs[0].Results) == 0 || log.Runs[0].Results[0].Properties.ReachedAs[v] != "accounts->next->"+v {
		t.Errorf("SARIF: no reachedAs property with the path of %s", v)
	}
}
