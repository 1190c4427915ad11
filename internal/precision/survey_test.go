package precision

import (
	"errors"
	"strings"
	"testing"
)

func TestWriteSurvey(t *testing.T) {
	p := &Program{Name: "a.c"}
	tests := []struct {
		name string
		row  Survey
		want string
	}{
		{"kinds counted and sorted", Survey{Program: p, Bugs: map[string][]Bug{
			"x": {{Pattern: "view"}, {Pattern: "P3"}, {Pattern: "view"}}, "y": {}}},
			"| a.c | 3 (P3, 2× view) | none | - |"},
		{"error", Survey{Program: p, Err: errors.New("boom")}, "| a.c | error | error | error |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteSurvey(&b, []string{"x", "y", "z"}, []Survey{tt.row}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			if lines[0] != "| program | x | y | z |" || lines[2] != tt.want {
				t.Errorf("table:\n%s\nwant row %s", b.String(), tt.want)
			}
		})
	}
}
