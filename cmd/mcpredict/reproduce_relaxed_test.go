package main

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
)

// relaxedReport is a report with one P2 bug per id, each with one instance
// between threads 2 and 3 on a variable of its own.
func relaxedReport(ids ...string) *bugs.Report {
	rep := &bugs.Report{}
	for i, id := range ids {
		rep.Violations = append(rep.Violations, bugs.Violation{Var: "v_" + id, Pattern: "P2", BugID: id})
		rep.Violations[i].Local.ID, rep.Violations[i].Remote.ID = 2, 3
		rep.Bugs = append(rep.Bugs, bugs.Bug{ID: id, Pattern: "P2", Count: 1, Vars: []string{"v_" + id}, Instances: []int{i}})
	}
	return rep
}

func TestRelaxedCandidates(t *testing.T) {
	modelOf := func(o predict.Options) string {
		switch p := o.Project; {
		case p.NoBoundaries:
			return "boundaries"
		case !p.ObservedReads:
			return "reads"
		}
		return "dataflow"
	}
	internal := errors.New("the witness of claim M3_1_yx does not contain pattern M3")
	for _, tc := range []struct {
		name     string
		failing  string // the model whose run fails
		max      int
		want     []string
		warnings []string
	}{
		{name: "all models", max: 50, want: []string{"d1", "r1", "b1", "d2", "b2"}},
		{name: "quota", max: 3, want: []string{"d1", "r1", "b1"}},
		{name: "no quota", max: 0, want: []string{}},
		{name: "reads fails", failing: "reads", max: 50, want: []string{"d1", "b1", "d2", "r1", "b2"},
			warnings: []string{"warning: relaxed model reads: " + internal.Error()}},
		{name: "dataflow fails", failing: "dataflow", max: 50, want: []string{"d1", "b1", "r1", "b2", "d2"},
			warnings: []string{"warning: relaxed model dataflow: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runModel := func(ctx context.Context, o predict.Options) (*bugs.Report, error) {
				m := modelOf(o)
				if o.Engine != predict.EngineNative {
					t.Errorf("model %s run with engine %q", m, o.Engine)
				}
				if m == tc.failing {
					return nil, internal
				}
				switch m {
				case "dataflow":
					return relaxedReport("known", "d1", "d2"), nil
				case "reads":
					// d1 and d2 again: tried as dataflow's when that model ran.
					return relaxedReport("d1", "r1", "d2"), nil
				}
				return relaxedReport("d1", "b1", "r1", "b2", "d2"), nil
			}
			var stderr strings.Builder
			rf := &reproduceFlags{relaxedTimeout: time.Minute, maxRelaxed: tc.max}
			opts := predict.Options{Engine: predict.EngineSpin}
			opts.Project.Dataflow, opts.Project.ObservedReads, opts.Project.Handoffs = true, true, true
			got, err := relaxedCandidates(context.Background(), runModel, opts, relaxedReport("known"), relaxations, rf, &stderr)
			if err != nil {
				t.Fatalf("relaxedCandidates: %v", err)
			}
			ids := []string{}
			for _, c := range got {
				ids = append(ids, c.Bug.ID)
				if !c.Relaxed {
					t.Errorf("%s: not marked relaxed", c.Bug.ID)
				}
			}
			if !reflect.DeepEqual(ids, tc.want) {
				t.Errorf("candidates %v, want %v", ids, tc.want)
			}
			for _, w := range tc.warnings {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q does not say %q", stderr.String(), w)
				}
			}
			if len(tc.warnings) == 0 && stderr.Len() > 0 {
				t.Errorf("unexpected stderr %q", stderr.String())
			}
		})
	}
}

// An interruption while a relaxed model runs ends reproduce's candidate
// search: it is no model's failure.
func TestRelaxedCandidatesInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	runModel := func(ctx context.Context, o predict.Options) (*bugs.Report, error) {
		cancel()
		return nil, ctx.Err()
	}
	var stderr strings.Builder
	rf := &reproduceFlags{relaxedTimeout: time.Minute, maxRelaxed: 50}
	if _, err := relaxedCandidates(ctx, runModel, predict.Options{}, relaxedReport(), relaxations, rf, &stderr); !errors.Is(err, context.Canceled) {
		t.Errorf("relaxedCandidates after an interruption: %v, want context.Canceled", err)
	}
}
