package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis/all"
	"github.com/mcpredict/mcpredict/analysis/conflict"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// wholeFirst is the report of conflict --first on the whole model of path,
// as run made it before the read streamed.
func wholeFirst(t *testing.T, path string) *bugs.Report {
	t.Helper()
	m, err := tracemodel.Open(context.Background(), path, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	as, err := all.Select(all.Options{Conflict: conflict.Options{First: true}}, "conflict")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := run(context.Background(), m, as, predict.Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// findings are the parts of a report's violations that a stopped read must
// keep: ids, messages (without sidetrack's cross-reference), sites.
func findings(rep *bugs.Report) string {
	var b strings.Builder
	for _, bg := range rep.Bugs {
		fmt.Fprintf(&b, "bug %s %v\n", bg.ID, bg.Instances)
	}
	for _, v := range rep.Violations {
		msg, _, _ := strings.Cut(v.Message, " (also ")
		acc, _ := json.Marshal([]any{v.Accesses, v.Interleaving, v.Threads, v.Var})
		fmt.Fprintf(&b, "%s %s %s\n", v.BugID, msg, acc)
	}
	return b.String()
}

// TestRunFirstStreams: run --analysis conflict --first reads the trace as
// a stream and stops at the first cycle (a bad line after it is not read,
// one before it is the usual error), with the report of the whole model.
func TestRunFirstStreams(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "analysis", "conflict", "testdata", "rapid2.csv"))
	if err != nil {
		t.Fatal(err)
	}
	trace := string(data) + "t1, 0, tail.c-1, Read, own1\nt2, 0, tail.c-2, Read, own2\n"
	clean := writeTrace(t, "first.csv", trace)
	badAfter := writeTrace(t, "bad-after.csv", trace+"not an event\n")
	lines := strings.SplitAfter(trace, "\n")
	badBefore := writeTrace(t, "bad-before.csv", strings.Join(lines[:8], "")+"not an event\n"+strings.Join(lines[8:], ""))
	args := []string{"run", "--analysis", "conflict", "--first", "--engine", "native", "--format", "json"}
	for _, tc := range []struct {
		name, path string
		code       int
		stderr     string
	}{
		{"clean", clean, exitViolation, ""},
		{"bad line after the cycle", badAfter, exitViolation, ""},
		{"bad line before the cycle", badBefore, exitUsage, "bad-before.csv:9: missing field timestamp"},
	} {
		code, out, errs := runCLI(t, append(args, tc.path)...)
		if code != tc.code || !strings.Contains(errs, tc.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", tc.name, code, errs, tc.code, tc.stderr)
			continue
		}
		if code != exitViolation {
			continue
		}
		rep, err := bugs.ReadJSON(strings.NewReader(out), "report")
		if err != nil {
			t.Fatal(err)
		}
		want := wholeFirst(t, clean)
		if g, w := findings(rep), findings(want); g != w {
			t.Errorf("%s: streamed report\n%s\nwhole model's\n%s", tc.name, g, w)
		}
		if len(rep.Analyses) != 1 || !strings.Contains(rep.Analyses[0].Summary, "--first: the read stopped at line") {
			t.Errorf("%s: analyses %+v: want conflict's summary saying where the read stopped", tc.name, rep.Analyses)
		}
		if rep.Stats.Events >= want.Stats.Events {
			t.Errorf("%s: %d events read of %d", tc.name, rep.Stats.Events, want.Stats.Events)
		}
	}
	// Any other selection reads the whole trace.
	as, err := all.Select(all.Options{}, "sidetrack,conflict")
	if err != nil {
		t.Fatal(err)
	}
	af := analysisFlags{first: true}
	if af.firstStream(as) != nil {
		t.Error("sidetrack,conflict --first streams")
	}
	one, _ := all.Select(all.Options{}, "conflict")
	if (&analysisFlags{}).firstStream(one) != nil || af.firstStream(one) == nil {
		t.Error("conflict streams without --first, or not with it")
	}
	if got := streamed(nil, one); !reflect.DeepEqual(got, one) {
		t.Error("no stream: the selection changed")
	}
}
