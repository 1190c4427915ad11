package tracemodel

import (
	"context"
	"strings"
	"testing"
)

// TestAtomicSets checks the inference: variables accessed in one region
// are a set, a polled flag is in none, and a declared set is kept.
func TestAtomicSets(t *testing.T) {
	// Thread 201 writes data and len, then sets ready; 202 polls ready
	// twice at one line, then reads data and len.
	const trace = `100, 1, h.c-1, Create, 201
100, 2, h.c-2, Create, 202
201, 3, h.c-10, Write, data
201, 4, h.c-11, Write, len
201, 5, h.c-12, Write, ready
202, 6, h.c-20, Read, ready
202, 7, h.c-20, Read, ready
202, 8, h.c-21, Read, data
202, 9, h.c-22, Read, len
`
	m, err := Parse(context.Background(), strings.NewReader(trace), "h.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := func(opts SetOptions) []string {
		sets, err := m.AtomicSets(m.SharedVars(), opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range sets {
			out = append(out, s.Names[0]+"+"+s.Names[1])
		}
		return out
	}
	if got := strings.Join(names(SetOptions{}), " "); got != "data+len" {
		t.Errorf("inferred sets %q, want data+len (ready is polled)", got)
	}
	if got := strings.Join(names(SetOptions{MaxPartners: -1, Declared: [][]string{{"ready", "d*"}}}), " "); got != "data+ready" {
		t.Errorf("declared sets %q, want data+ready", got)
	}
	if _, err := m.AtomicSets(m.SharedVars(), SetOptions{Declared: [][]string{{"nosuch"}}}); err == nil {
		t.Error("a declared glob that matches nothing is accepted")
	}
}
