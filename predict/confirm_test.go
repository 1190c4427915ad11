package predict

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// serverTrace is a generated server trace with seeded bugs: several models
// per bug, so that confirming one representative per bug sends fewer
// models to Spin than confirming every violating model.
func serverTrace(t *testing.T) *tracemodel.Model {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindServer, Seed: 3, Threads: 4, Phases: 3, Bugs: 4}); err != nil {
		t.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), &buf, "server", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConfirmModes: --confirm one runs Spin on one model per distinct bug
// and marks every bug confirmed; all runs it on every violating model;
// none never. The bugs are the same in every mode.
func TestConfirmModes(t *testing.T) {
	tools := fastTools(t)
	m := serverTrace(t)
	bugList := func(r *bugs.Report) string {
		var ids []string
		for _, b := range r.Bugs {
			ids = append(ids, fmt.Sprintf("%s:%d", b.ID, b.Count))
		}
		return strings.Join(ids, " ")
	}
	reports := map[Confirm]*bugs.Report{}
	for _, c := range []Confirm{ConfirmOne, ConfirmAll, ConfirmNone} {
		rep, err := Run(context.Background(), m, Options{Tools: tools, Jobs: 2, Confirm: c})
		if err != nil {
			t.Fatalf("confirm %s: %v", c, err)
		}
		reports[c] = rep
	}
	one, all, none := reports[ConfirmOne], reports[ConfirmAll], reports[ConfirmNone]
	if len(one.Bugs) < 2 {
		t.Fatalf("only %d bugs: the test needs several", len(one.Bugs))
	}
	if bugList(one) != bugList(all) || bugList(one) != bugList(none) {
		t.Errorf("bugs differ:\none  %s\nall  %s\nnone %s", bugList(one), bugList(all), bugList(none))
	}
	violating := map[string]bool{}
	for _, v := range one.Violations {
		h := []string{v.Local.Handle, v.Remote.Handle}
		slices.Sort(h)
		violating[v.Var+"/"+h[0]+"/"+h[1]] = true
	}
	for c, rep := range reports {
		for _, b := range rep.Bugs {
			if b.Confirmed != (c != ConfirmNone) {
				t.Errorf("confirm %s: bug %s confirmed=%v", c, b.ID, b.Confirmed)
			}
		}
	}
	if none.Stats.SpinModels != 0 || none.Stats.Confirmed != 0 {
		t.Errorf("confirm none: %d Spin models, %d confirmed", none.Stats.SpinModels, none.Stats.Confirmed)
	}
	if all.Stats.SpinModels != len(violating) {
		t.Errorf("confirm all: %d Spin models, want every violating model (%d)", all.Stats.SpinModels, len(violating))
	}
	if one.Stats.SpinModels > len(one.Bugs) || one.Stats.SpinModels >= all.Stats.SpinModels {
		t.Errorf("confirm one: %d Spin models for %d bugs (all: %d)", one.Stats.SpinModels, len(one.Bugs), all.Stats.SpinModels)
	}
	if one.Stats.Confirmed != len(one.Bugs) || one.Tool.Confirm != "one" {
		t.Errorf("confirm one: %d of %d bugs confirmed, tool.confirm=%q", one.Stats.Confirmed, len(one.Bugs), one.Tool.Confirm)
	}
}

// TestPlanLimits: a selection over MaxModels is refused before any model
// is listed, naming the count and the variable with most of them;
// ExcludeVars leaves variables out.
func TestPlanLimits(t *testing.T) {
	var b strings.Builder
	const threads = 3000 // 4.5 million pairs on x
	for i := range threads {
		fmt.Fprintf(&b, "%d, 0, a.c-1, Write, x\n%d, 0, a.c-2, Write, y%d\n", 100+i, 100+i, i%10)
	}
	m := parseText(t, "many.csv", b.String())
	_, err := Plan(context.Background(), m, Options{})
	var tooMany *TooManyModelsError
	if !errors.As(err, &tooMany) {
		t.Fatalf("err = %v, want *TooManyModelsError", err)
	}
	pairs := threads * (threads - 1) / 2
	const per = threads / 10 // threads per y variable
	ys := 10 * per * (per - 1) / 2
	if tooMany.Models != pairs+ys || tooMany.Largest != "x" || tooMany.Its != pairs {
		t.Errorf("%+v, want %d models, %d of them for x", tooMany, pairs+ys, pairs)
	}
	for _, want := range []string{"many.csv needs", "--max-models=1000000", "--exclude-vars"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	tasks, err := Plan(context.Background(), m, Options{ExcludeVars: []string{"x", "nothing*"}})
	if err != nil || len(tasks) != ys {
		t.Fatalf("exclude x: %d tasks, %v; want %d", len(tasks), err, ys)
	}
	for _, tk := range tasks {
		if tk.VarName == "x" {
			t.Fatal("x was excluded")
		}
	}
	tasks, err = Plan(context.Background(), m, Options{Vars: []string{"y*"}, ExcludeVars: []string{"y1"}, Threads: []string{"100"}})
	if err != nil || len(tasks) != per-1 {
		t.Errorf("y0 with thread 100: %d tasks, %v; want %d", len(tasks), err, per-1)
	}
	if _, err := Plan(context.Background(), m, Options{ExcludeVars: []string{"["}}); err == nil || !strings.Contains(err.Error(), "--exclude-vars") {
		t.Errorf("bad glob: %v", err)
	}
	// Cancelled: no tasks, ctx's error, for the variables' models and the
	// atomic sets' alike.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, o := range []Options{{ExcludeVars: []string{"x"}}, {ExcludeVars: []string{"x"}, Models: []Models{{Kind: SetModels, Patterns: SetModels.Builtin()}}, Sets: tracemodel.SetOptions{Declared: [][]string{{"y0", "y1"}}}}} {
		if tasks, err := Plan(ctx, m, o); !errors.Is(err, context.Canceled) || tasks != nil {
			t.Errorf("cancelled plan %+v: %d tasks, %v; want context.Canceled", o, len(tasks), err)
		}
	}
}

// TestRepresentatives: Spin confirms each bug on its smallest model part,
// one part covering every bug it has, and a bug confirmed already needs
// none.
func TestRepresentatives(t *testing.T) {
	// part returns a part of the given size and bugs; res, a result of
	// such parts (numbered in order).
	type part struct {
		steps int
		bugs  []string
	}
	p := func(steps int, ids ...string) part { return part{steps, ids} }
	res := func(parts ...part) PairResult {
		var r PairResult
		for k, pt := range parts {
			for _, id := range pt.bugs {
				r.Violations = append(r.Violations, bugs.Violation{BugID: id})
			}
			if len(pt.bugs) > 0 {
				r.Parts = append(r.Parts, PartBugs{Part: 2 * k, Steps: pt.steps, Bugs: pt.bugs})
			}
		}
		return r
	}
	type rep = representative
	for _, tc := range []struct {
		name      string
		results   []PairResult
		confirmed []string
		want      []rep
	}{
		{"the smallest model of a bug", []PairResult{res(p(900, "A")), res(p(30, "A")), res(p(50, "A"))}, nil, []rep{{1, 0}}},
		{"plan order among equals", []PairResult{res(p(40, "A")), res(p(40, "A"))}, nil, []rep{{0, 0}}},
		{"one model for two bugs", []PairResult{res(p(10, "A", "B")), res(p(5, "B")), res(p(100, "C"))}, nil, []rep{{0, 0}, {1, 0}, {2, 0}}},
		{"a small model covers a big one's bugs", []PairResult{res(p(100, "A", "B")), res(p(5, "A", "B"))}, nil, []rep{{1, 0}}},
		{"confirmed already", []PairResult{res(p(10, "A")), res(p(20, "B"))}, []string{"A"}, []rep{{1, 0}}},
		{"no violation", []PairResult{res(p(3)), {}}, nil, nil},
		{"the smallest part of a model", []PairResult{res(p(50, "A"), p(20, "A"), p(30, "A"))}, nil, []rep{{0, 1}}},
		{"parts of one model for different bugs", []PairResult{res(p(50, "A"), p(20, "B")), res(p(40, "A"))}, nil, []rep{{0, 1}, {1, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			confirmed := map[string]bool{}
			for _, id := range tc.confirmed {
				confirmed[id] = true
			}
			if got := representatives(tc.results, confirmed); !slices.Equal(got, tc.want) {
				t.Errorf("representatives = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConfirmMaxSteps: a bug whose smallest model is over ConfirmMaxSteps
// is not sent to Spin; it stays reported, unconfirmed, with a warning that
// names the bound.
func TestConfirmMaxSteps(t *testing.T) {
	tools := fastTools(t)
	m := serverTrace(t)
	rep, err := Run(context.Background(), m, Options{Tools: tools, Jobs: 2, ConfirmMaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Bugs) == 0 {
		t.Fatal("no bugs: the test needs some")
	}
	if rep.Stats.SpinModels != 0 || rep.Stats.Confirmed != 0 {
		t.Errorf("%d models to Spin, %d bugs confirmed; want none over the bound", rep.Stats.SpinModels, rep.Stats.Confirmed)
	}
	warned := 0
	for _, w := range rep.Warnings {
		if strings.Contains(w, "over --confirm-max-steps 1") {
			warned++
		}
	}
	if warned == 0 || warned > len(rep.Bugs) {
		t.Errorf("%d warnings about the bound for %d bugs: %q", warned, len(rep.Bugs), rep.Warnings)
	}
}
