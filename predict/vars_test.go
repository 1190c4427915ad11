package predict

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestVarsLiteralNames: --vars and --exclude-vars match a name with
// brackets as written before trying it as a glob.
func TestVarsLiteralNames(t *testing.T) {
	const trace = "1, 1, a.c-1, Read, table[0].refs\n2, 2, a.c-2, Write, table[0].refs\n" +
		"1, 3, a.c-1, Read, table0.refs\n2, 4, a.c-2, Write, table0.refs\n" +
		"1, 5, a.c-3, Read, t[1\n2, 6, a.c-4, Write, t[1\n"
	m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "t.csv", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tests := []struct {
		name       string
		vars, excl []string
		want       []string
		wantErr    string
	}{
		{"literal", []string{"table[0].refs"}, nil, []string{"table[0].refs"}, ""},
		{"escaped glob", []string{`table\[0\].*`}, nil, []string{"table[0].refs"}, ""},
		{"unbalanced, a name", []string{"t[1"}, nil, []string{"t[1"}, ""},
		{"excluded as written", nil, []string{"table[0].refs"}, []string{"t[1", "table0.refs"}, ""},
		{"unbalanced, no name", []string{"u[1"}, nil, nil, "--vars: bad pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks, err := Plan(context.Background(), m, Options{Vars: tt.vars, ExcludeVars: tt.excl})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, tk := range tasks {
				got[tk.VarName] = true
			}
			for _, w := range tt.want {
				if !got[w] {
					t.Errorf("no model of %s: %v", w, got)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("models of %v, want only %v", got, tt.want)
			}
		})
	}
}
