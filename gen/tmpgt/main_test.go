package gt

import (
	"bytes"
	"context"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func TestParseMany(t *testing.T) {
	ctx := context.Background()
	for seed := int64(0); seed < 200000; seed++ {
		var b bytes.Buffer
		if _, err := gen.Write(ctx, &b, gen.Config{Kind: "random", Seed: seed}); err != nil {
			t.Fatal(err)
		}
		m, err := tracemodel.Parse(ctx, &b, "x", tracemodel.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, b.String())
		}
		for _, sv := range m.SharedVars() {
			for _, p := range sv.Pairs {
				if _, err := m.Project(sv.Var, p[0], p[1], tracemodel.ProjectOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
