package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
	"github.com/mcpredict/mcpredict/tracemodel"
)

var native = predict.Options{Engine: predict.EngineNative, Jobs: 2}

// copyExamples copies the example traces into a fresh directory.
func copyExamples(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob("../../examples/*.csv")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		copyFile(t, f, filepath.Join(dir, filepath.Base(f)))
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// counting wraps a checker and counts the traces it checks.
func counting(c Checker, n *atomic.Int64) Checker {
	return func(ctx context.Context, path string) (*bugs.Report, error) {
		n.Add(1)
		return c(ctx, path)
	}
}

func TestResume(t *testing.T) {
	traces := copyExamples(t)
	out := filepath.Join(t.TempDir(), "out")
	all, _ := filepath.Glob(filepath.Join(traces, "*.csv"))

	// Interrupted after three traces.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	interrupting := func(ctx context.Context, path string) (*bugs.Report, error) {
		if n.Add(1) > 3 {
			cancel()
			return nil, ctx.Err()
		}
		return Local(native, tracemodel.Options{})(ctx, path)
	}
	sum, err := Run(ctx, Config{Inputs: []string{traces}, Out: out, Check: interrupting, OptionsKey: "k"})
	if !errors.Is(err, context.Canceled) || sum == nil {
		t.Fatalf("interrupted run: %v", err)
	}
	if sum.Totals.Checked != 3 || !sum.Finished.IsZero() {
		t.Errorf("interrupted run: %+v, finished %v", sum.Totals, sum.Finished)
	}

	// Resumed: only the rest is checked.
	var n2 atomic.Int64
	sum, err = Run(context.Background(), Config{Inputs: []string{traces}, Out: out, Check: counting(Local(native, tracemodel.Options{}), &n2), OptionsKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if int(n2.Load()) != len(all)-3 || sum.Totals.Resumed != 3 || sum.Totals.Checked != len(all)-3 {
		t.Errorf("resumed run checked %d, totals %+v; want %d checked", n2.Load(), sum.Totals, len(all)-3)
	}
	for _, tr := range sum.Traces {
		if !tr.finished() || !exists(filepath.Join(out, tr.Report)) {
			t.Errorf("trace %s: %+v", tr.Path, tr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "summary.txt")); err != nil || !strings.Contains(string(b), "bank.csv") {
		t.Errorf("summary.txt: %v\n%s", err, b)
	}

	tests := []struct {
		name    string
		prepare func()
		options string
		want    int // traces checked
	}{
		{"nothing changed", func() {}, "k", 0},
		{"one trace modified", func() {
			p := filepath.Join(traces, "fig5.csv")
			os.Chtimes(p, time.Now(), time.Now().Add(time.Hour))
		}, "k", 1},
		{"other options", func() {}, "k2", len(all)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.prepare()
			var n atomic.Int64
			if _, err := Run(context.Background(), Config{Inputs: []string{traces}, Out: out, Check: counting(Local(native, tracemodel.Options{}), &n), OptionsKey: tt.options}); err != nil {
				t.Fatal(err)
			}
			if int(n.Load()) != tt.want {
				t.Errorf("checked %d traces, want %d", n.Load(), tt.want)
			}
		})
	}
}

func bugIDs(t *testing.T, path string) []string {
	t.Helper()
	rep, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range rep.Active() {
		ids = append(ids, b.ID)
	}
	return ids
}

func TestCompare(t *testing.T) {
	night1 := copyExamples(t)
	out1 := filepath.Join(t.TempDir(), "n1")
	if _, err := Run(context.Background(), Config{Inputs: []string{night1}, Out: out1, Check: Local(native, tracemodel.Options{})}); err != nil {
		t.Fatal(err)
	}
	// Night 2: fig5.csv now behaves like the mutant, logbuf.csv is gone,
	// a new trace appears, and one trace is broken.
	night2 := copyExamples(t)
	copyFile(t, "../../examples/fig5-mutant.csv", filepath.Join(night2, "fig5.csv"))
	os.Remove(filepath.Join(night2, "logbuf.csv"))
	copyFile(t, "../../examples/bank.csv", filepath.Join(night2, "bank2.csv"))
	os.WriteFile(filepath.Join(night2, "broken.csv"), []byte("1, 1, a.c-1, Frobnicate, x\n"), 0o644)
	out2 := filepath.Join(t.TempDir(), "n2")
	sum, err := Run(context.Background(), Config{Inputs: []string{night2}, Out: out2, Check: Local(native, tracemodel.Options{}), Previous: out1,
		Formats: map[string]Renderer{"text": report.WriteText}})
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Compare
	if c == nil {
		t.Fatal("no comparison")
	}
	before := bugIDs(t, filepath.Join(out1, "reports", "fig5.csv.json"))
	after := bugIDs(t, filepath.Join(out2, "reports", "fig5.csv.json"))
	var wantNew, wantFixed []string
	for _, id := range after {
		if !slices.Contains(before, id) {
			wantNew = append(wantNew, id)
		}
	}
	for _, id := range before {
		if !slices.Contains(after, id) {
			wantFixed = append(wantFixed, id)
		}
	}
	wantNew = append(wantNew, bugIDs(t, filepath.Join(out2, "reports", "bank2.csv.json"))...)
	ids := func(l []BugChange) []string {
		var out []string
		for _, b := range l {
			out = append(out, b.ID)
		}
		sort.Strings(out)
		return out
	}
	sort.Strings(wantNew)
	sort.Strings(wantFixed)
	if len(wantNew) == 0 || len(wantFixed) == 0 {
		t.Fatalf("the example change should add and remove bugs: new %v fixed %v", wantNew, wantFixed)
	}
	if !slices.Equal(ids(c.New), wantNew) || !slices.Equal(ids(c.Fixed), wantFixed) {
		t.Errorf("new %v fixed %v; want new %v fixed %v", ids(c.New), ids(c.Fixed), wantNew, wantFixed)
	}
	if !slices.Equal(c.NewTraces, []string{"bank2.csv"}) || !slices.Equal(c.Missing, []string{"logbuf.csv"}) {
		t.Errorf("new traces %v, missing %v", c.NewTraces, c.Missing)
	}
	var broken *Trace
	for i := range sum.Traces {
		if sum.Traces[i].Key == "broken.csv" {
			broken = &sum.Traces[i]
		}
	}
	if broken == nil || broken.Status != StatusError || !broken.BadInput || !strings.Contains(broken.Error, "broken.csv:1:") {
		t.Errorf("broken trace: %+v", broken)
	}
	if sum.Totals.Errors != 1 || sum.Totals.BadInputs != 1 {
		t.Errorf("totals: %+v", sum.Totals)
	}
	if !exists(filepath.Join(out2, "reports", "bank.csv.text")) {
		t.Error("extra format not written")
	}
	var txt strings.Builder
	if err := WriteText(&txt, sum); err != nil || !strings.Contains(txt.String(), "new    "+wantNew[0]) {
		t.Errorf("text summary: %v\n%s", err, txt.String())
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.csv", "b.csv.gz", "notes.txt", "sub/c.csv", "sub/deeper/a.csv", ".hidden/x.csv", "a.csv.reproduce/AV-1/run1/trace-9.csv"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "a.csv"), nil, 0o644)
	tests := []struct {
		name    string
		args    []string
		match   []string
		want    []string // keys
		wantErr string
	}{
		{"directory", []string{dir}, nil, []string{"a.csv", "b.csv.gz", "sub__c.csv", "sub__deeper__a.csv"}, ""},
		{"glob", []string{filepath.Join(dir, "*.csv*")}, nil, []string{"a.csv", "b.csv.gz"}, ""},
		{"file twice", []string{filepath.Join(dir, "a.csv"), filepath.Join(dir, "a.csv")}, nil, []string{"a.csv"}, ""},
		{"same base name", []string{filepath.Join(dir, "a.csv"), filepath.Join(other, "a.csv")}, nil, []string{"a.csv", "a.csv~2"}, ""},
		{"match", []string{dir}, []string{"*.txt"}, []string{"notes.txt"}, ""},
		{"missing", []string{filepath.Join(dir, "none")}, nil, nil, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.match
			if m == nil {
				m = DefaultMatch()
			}
			ins, err := discover(tt.args, m)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, in := range ins {
				keys = append(keys, in.key)
			}
			if !slices.Equal(keys, tt.want) {
				t.Errorf("keys %v, want %v", keys, tt.want)
			}
		})
	}
}

// TestGroups checks that the summary counts the groups of each trace's
// bugs, and the distinct groups over all traces.
func TestGroups(t *testing.T) {
	traces := t.TempDir()
	copyFile(t, "../../examples/logbuf.csv", filepath.Join(traces, "logbuf.csv"))
	copyFile(t, "../../examples/bank.csv", filepath.Join(traces, "bank.csv"))
	out := filepath.Join(t.TempDir(), "out")
	sum, err := Run(context.Background(), Config{Inputs: []string{traces}, Out: out, Check: Local(native, tracemodel.Options{}), OptionsKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]int{}
	for _, tr := range sum.Traces {
		groups[filepath.Base(tr.Path)] = tr.Groups
		if len(tr.GroupIDs) != tr.Groups || tr.Bugs < tr.Groups {
			t.Errorf("%s: %d bugs in %d groups, ids %v", tr.Path, tr.Bugs, tr.Groups, tr.GroupIDs)
		}
	}
	// logbuf: bugs of buf->outcnt in one function; bank: of balance in one.
	if groups["logbuf.csv"] != 1 || groups["bank.csv"] != 1 || sum.Totals.Groups != 2 {
		t.Errorf("groups %v, totals %+v; want one per trace, 2 in all", groups, sum.Totals)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	want := fmt.Sprintf("%d distinct bugs in 2 groups", sum.Totals.Bugs)
	if err != nil || !strings.Contains(string(b), want) || !strings.Contains(string(b), "GROUPS") {
		t.Errorf("summary.txt: %v\n%s\nwant %q", err, b, want)
	}
}

// reproducedReport is a report of mcpredict reproduce of trace with a bug
// per id, whose reproduction state is states[id] (bugs.StateFailed, a
// status, or "" for none).
func reproducedReport(trace string, ids []string, states map[string]string) *bugs.Report {
	r := &bugs.Report{Schema: bugs.SchemaVersion, Trace: trace}
	for i, id := range ids {
		loc := bugs.Location{Role: "local", Action: "Read", File: "a.c", Line: 10 + i}
		r.Violations = append(r.Violations, bugs.Violation{Var: "x", Pattern: "P3", PatternName: "lost update", BugID: id,
			Accesses: []bugs.Access{{Role: "local", Action: "Read", File: "a.c", Line: 10 + i}}})
		b := bugs.Bug{ID: id, Pattern: "P3", PatternName: "lost update", Vars: []string{"x"}, Count: 1, Instances: []int{i},
			Locations: []bugs.Location{loc}}
		switch s := states[id]; s {
		case "":
		case bugs.StateFailed:
			b.Reproduction = &bugs.Reproduction{Status: bugs.Reproduced, Failed: true, Runs: 2}
		default:
			b.Reproduction = &bugs.Reproduction{Status: s, Runs: 1}
		}
		r.Bugs = append(r.Bugs, b)
	}
	return r
}

// TestBatchReproduction checks that the nightly comparison shows the
// reproduction state of the new and fixed bugs, failed ones first, and
// nothing more for reports without reproductions.
func TestBatchReproduction(t *testing.T) {
	traces := t.TempDir()
	os.WriteFile(filepath.Join(traces, "t.csv"), []byte("x"), 0o644)
	night := func(prev string, ids []string, states map[string]string) (*Summary, string) {
		out := filepath.Join(t.TempDir(), "out")
		check := func(_ context.Context, path string) (*bugs.Report, error) {
			return reproducedReport(path, ids, states), nil
		}
		sum, err := Run(context.Background(), Config{Inputs: []string{traces}, Out: out, Check: check, Previous: prev})
		if err != nil {
			t.Fatal(err)
		}
		return sum, out
	}
	_, plain := night("", []string{"AV-a", "AV-b"}, nil)
	_, repro := night("", []string{"AV-a", "AV-b"}, map[string]string{"AV-a": bugs.Reproduced, "AV-b": bugs.NotReproduced})
	tests := []struct {
		name   string
		prev   string
		states map[string]string
		want   []string // lines of the comparison, in order
		json   []string // BugChange.Reproduction of new, then fixed bugs
	}{
		{"plain", plain, nil, []string{
			"compared with " + plain + ": 3 new, 1 fixed, 1 unchanged",
			"  new    AV-c P3 (lost update) at a.c:11 on x in t.csv",
			"  new    AV-d P3 (lost update) at a.c:12 on x in t.csv",
			"  new    AV-e P3 (lost update) at a.c:13 on x in t.csv",
			"  fixed  AV-b P3 (lost update) at a.c:11 on x in t.csv",
		}, []string{"", "", "", ""}},
		{"reproduced", repro, map[string]string{"AV-a": bugs.StateFailed, "AV-d": bugs.StateFailed, "AV-e": bugs.NotTried}, []string{
			"compared with " + repro + ": 3 new (1 failed), 1 fixed, 1 unchanged",
			"  new    AV-d P3 (lost update) at a.c:12 on x in t.csv [failed]",
			"  new    AV-c P3 (lost update) at a.c:11 on x in t.csv",
			"  new    AV-e P3 (lost update) at a.c:13 on x in t.csv [not tried]",
			"  fixed  AV-b P3 (lost update) at a.c:11 on x in t.csv [not reproduced]",
		}, []string{"failed", "", "not_tried", "not_reproduced"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum, _ := night(tt.prev, []string{"AV-a", "AV-c", "AV-d", "AV-e"}, tt.states)
			var txt strings.Builder
			if err := WriteText(&txt, sum); err != nil {
				t.Fatal(err)
			}
			want := "\n" + strings.Join(tt.want, "\n") + "\n"
			if !strings.HasSuffix(txt.String(), want) {
				t.Errorf("summary:\n%s\nwant it to end with:%s", txt.String(), want)
			}
			var got []string
			for _, c := range append(slices.Clone(sum.Compare.New), sum.Compare.Fixed...) {
				got = append(got, c.Reproduction)
			}
			if !slices.Equal(got, tt.json) {
				t.Errorf("reproduction states %q, want %q", got, tt.json)
			}
		})
	}
}
