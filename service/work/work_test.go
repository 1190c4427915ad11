package work

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
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

// TestDoEqualsRun checks every model of two traces through a JSON round
// trip, as a remote worker receives it, and compares with predict.Run: an
// example, and a generated server whose models are cut into parts at its
// barriers (small parts, so that the instances of a claim span parts).
func TestDoEqualsRun(t *testing.T) {
	ctx := context.Background()
	var server bytes.Buffer
	if _, err := gen.Write(ctx, &server, gen.Config{Kind: gen.KindServer, Seed: 1, Threads: 3, Phases: 12, Bugs: 4}); err != nil {
		t.Fatal(err)
	}
	bank, err := os.ReadFile("../../examples/bank.csv")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{"bank.csv": bank, "server.csv": server.Bytes()} {
		t.Run(name, func(t *testing.T) {
			m, err := tracemodel.Parse(ctx, bytes.NewReader(text), name, tracemodel.Options{})
			if err != nil {
				t.Fatal(err)
			}
			opts := predict.Options{Engine: predict.EngineNative, Jobs: 1, PartAccesses: 4, MaxInstances: 5}
			want, err := predict.Run(ctx, m, opts)
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := predict.Plan(context.Background(), m, opts)
			if err != nil {
				t.Fatal(err)
			}
			var c Checkers
			proj := predict.NewProjector(m, opts, tasks)
			results := make([]predict.PairResult, len(tasks))
			parts := 0
			for i, task := range tasks {
				pms, res, err := proj.Project(ctx, task)
				if err != nil {
					t.Fatal(err)
				}
				if res != nil {
					results[i] = *res
					continue
				}
				parts += len(pms)
				b, err := Encode(&Item{Job: "j", Task: i, Spec: SpecOf(opts), Models: pms})
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
				t.Errorf("%d violations, %d bugs; predict.Run: %d, %d", len(got.Violations), len(got.Bugs), len(want.Violations), len(want.Bugs))
				for i := range min(len(got.Violations), len(want.Violations)) {
					g, _ := json.Marshal(got.Violations[i])
					w, _ := json.Marshal(want.Violations[i])
					if !bytes.Equal(g, w) {
						t.Errorf("violation %d differs:\n got %.2000s\nwant %.2000s", i, g, w)
						break
					}
				}
			}
			if name == "server.csv" && parts <= len(tasks) {
				t.Errorf("%d parts for %d models: the server's models should be cut", parts, len(tasks))
			}
		})
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
		{"spin without tools", Item{Spec: Spec{Engine: predict.EngineAuto}, Models: []*tracemodel.PairModel{{}}}, "needs spin"},
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
