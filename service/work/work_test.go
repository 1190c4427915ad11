package work

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		name       string
		item       Item
		compressed bool
	}{
		{"small", Item{Job: "j", Task: 3, Spec: Spec{Engine: predict.EngineNative}}, false},
		{"large", Item{Job: strings.Repeat("x", 64<<10), Task: 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Encode(&tt.item)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.HasPrefix(b, []byte(gzipMagic)); got != tt.compressed {
				t.Errorf("compressed = %v, want %v", got, tt.compressed)
			}
			var back Item
			if err := Decode(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tt.item) {
				t.Errorf("round trip changed the item")
			}
		})
	}
	if err := Decode([]byte{0x1f, 0x8b, 0}, &Item{}); err == nil {
		t.Error("Decode of a truncated gzip payload: no error")
	}
}

// TestDoEqualsRun checks every model of an example through a JSON round
// trip, as a remote worker receives it, and compares with predict.Run.
func TestDoEqualsRun(t *testing.T) {
	ctx := context.Background()
	m, err := tracemodel.Open(ctx, "../../examples/bank.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := predict.Options{Engine: predict.EngineNative, Jobs: 1}
	want, err := predict.Run(ctx, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := predict.Plan(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	var c Checkers
	results := make([]predict.PairResult, len(tasks))
	for i, task := range tasks {
		pm, err := m.Project(task.Var, task.T1, task.T2, opts.Project)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Encode(&Item{Job: "j", Task: i, Spec: SpecOf(opts), Model: pm})
		if err != nil {
			t.Fatal(err)
		}
		var it Item
		if err := Decode(b, &it); err != nil {
			t.Fatal(err)
		}
		r, err := c.Do(ctx, &it)
		if err != nil || r.Err != "" {
			t.Fatalf("task %d: %v %s", i, err, r.Err)
		}
		results[i] = r.Result
	}
	got := predict.Assemble(m, opts, tasks, results)
	gj, _ := json.Marshal(got.Violations)
	wj, _ := json.Marshal(want.Violations)
	if !bytes.Equal(gj, wj) || len(got.Bugs) != len(want.Bugs) || len(want.Bugs) == 0 {
		t.Errorf("violations differ from predict.Run:\n got %s\nwant %s", gj, wj)
	}
}

func TestDoErrors(t *testing.T) {
	ctx := context.Background()
	var c Checkers
	tests := []struct {
		name string
		item Item
		want string
	}{
		{"no model", Item{Spec: Spec{Engine: predict.EngineNative}}, "without a model"},
		{"spin without tools", Item{Spec: Spec{Engine: predict.EngineAuto}, Model: &tracemodel.PairModel{}}, "needs spin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := c.Do(ctx, &tt.item)
			if err != nil || !strings.Contains(r.Err, tt.want) {
				t.Errorf("Do = %+v, %v; want an error result containing %q", r, err, tt.want)
			}
		})
	}
}

func TestSpecKey(t *testing.T) {
	a := SpecOf(predict.Options{Engine: predict.EngineNative})
	b := SpecOf(predict.Options{Engine: predict.EngineNative})
	c := SpecOf(predict.Options{Engine: predict.EngineSpin})
	if a.Key() != b.Key() || a.Key() == c.Key() {
		t.Errorf("keys: %s %s %s", a.Key(), b.Key(), c.Key())
	}
	if len(a.Models) != 1 || len(a.Models[0].Patterns) != 5 || a.Models[0].Patterns[0].Help != "" {
		t.Errorf("SpecOf models: %+v", a.Models)
	}
}
