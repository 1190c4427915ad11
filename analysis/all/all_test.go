package all

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestEveryAnalysisThroughTheFramework runs the registry's analyses other
// than McPatom on bank.csv and checks that each one's findings become bugs
// of the report with its id prefix, kinds and source locations.
func TestEveryAnalysisThroughTheFramework(t *testing.T) {
	m, err := tracemodel.Open(context.Background(), filepath.Join("..", "..", "examples", "bank.csv"), tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		list  string
		bugs  []string // "ID-prefix kind locations"
		names []string
	}{
		{"deadlock", nil, []string{"deadlock"}},
		{"sidetrack", []string{
			"ST after bank.c:10,bank.c:14,bank.c:10",
			"ST before bank.c:14,bank.c:10,bank.c:14",
		}, []string{"sidetrack"}},
		{"block", []string{"BA view bank.c:11,bank.c:15,bank.c:15"}, []string{"block"}},
		{"svd", nil, []string{"svd"}},
		{"hldr", nil, []string{"hldr"}},
		{"stale", []string{"SA update bank.c:11,bank.c:15,bank.c:15"}, []string{"stale"}},
		{"lockset", nil, []string{"lockset"}},
		{"reduction", []string{"RD cs-cs bank.c:12,bank.c:14"}, []string{"reduction"}},
		{"commitnode", []string{"CN view bank.c:11,bank.c:15,bank.c:11,bank.c:15"}, []string{"commitnode"}},
	}
	for _, tc := range tests {
		as, err := Select(Options{}, tc.list)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := analysis.Run(context.Background(), m, as, analysis.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.list, err)
		}
		var got []string
		for _, b := range rep.Bugs {
			var locs []string
			for _, l := range b.Locations {
				locs = append(locs, l.String())
			}
			got = append(got, strings.SplitN(b.ID, "-", 2)[0]+" "+b.Pattern+" "+strings.Join(locs, ","))
			if b.Analysis != tc.list {
				t.Errorf("%s: bug %s has analysis %q", tc.list, b.ID, b.Analysis)
			}
		}
		if strings.Join(got, "\n") != strings.Join(tc.bugs, "\n") {
			t.Errorf("%s: bugs\n%s\nwant\n%s", tc.list, strings.Join(got, "\n"), strings.Join(tc.bugs, "\n"))
		}
		if len(rep.Analyses) != 1 || rep.Analyses[0].Name != tc.names[0] {
			t.Errorf("%s: analyses %+v", tc.list, rep.Analyses)
		}
	}
}

// TestDeclaredFacts runs every analysis of the registry on traces with
// locks, transactions, atomic sets and a deadlock: analysis.Run fails when
// an analyzer asks its Pass for a fact it does not require (and gives it
// nil), and ResultOf holds only the results of required analyzers, so a
// clean run shows that each uses only what it declares.
func TestDeclaredFacts(t *testing.T) {
	for _, trace := range []string{
		"../../examples/bank.csv", "../../examples/logbuf.csv", "../../examples/splash-barrier.csv",
		"../../predict/testdata/range.csv", "../deadlock/testdata/gate.csv", "../deadlock/testdata/periods.csv",
	} {
		m, err := tracemodel.Open(context.Background(), filepath.FromSlash(trace), tracemodel.Options{})
		if err != nil {
			t.Fatal(err)
		}
		as := Analyzers(Options{})
		for _, a := range as {
			if err := a.Validate(); err != nil {
				t.Error(err)
			}
		}
		check := predict.ModelChecker(predict.Options{Engine: predict.EngineNative, Jobs: 2})
		rep, err := analysis.Run(context.Background(), m, as, analysis.Options{CheckModels: check})
		if err != nil {
			t.Fatalf("%s: %v", trace, err)
		}
		if len(rep.Analyses) != len(as) {
			t.Errorf("%s: analyses %+v", trace, rep.Analyses)
		}
	}
}

// TestConflictWithSideTrack: conflict and sidetrack run on the same
// transactions, and a conflict finding on a transaction that sidetrack
// reports names sidetrack's finding (SideTrack paper §6: its in-errors
// are what Velodrome finds; Figure 3(b)).
func TestConflictWithSideTrack(t *testing.T) {
	m, err := tracemodel.Open(context.Background(), filepath.FromSlash("../conflict/testdata/fig3b_in.csv"), tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	as, err := Select(Options{}, "sidetrack,conflict")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Run(context.Background(), m, as, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range rep.Bugs {
		got = append(got, strings.SplitN(b.ID, "-", 2)[0]+" "+b.Pattern)
		if b.Analysis == "conflict" && !strings.Contains(rep.Violations[b.Instances[0]].Message, "(also sidetrack: in-error on lock m)") {
			t.Errorf("conflict's finding does not name sidetrack's: %s", rep.Violations[b.Instances[0]].Message)
		}
	}
	if strings.Join(got, ",") != "ST in,CS cycle" {
		t.Errorf("bugs %v, want ST in, CS cycle", got)
	}
}
