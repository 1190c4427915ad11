// Package testtrace generates traces for the service's tests and
// benchmarks: a main thread creates workers that each do an unprotected
// read-modify-write of every shared variable, so that every (variable,
// thread pair) is a model with violations.
package testtrace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Models returns the number of models Gen(workers, vars) has.
func Models(workers, vars int) int { return vars * workers * (workers - 1) / 2 }

// Gen returns the CSV text of a trace with the given number of worker
// threads and shared variables. salt changes the source line numbers, so
// that traces with different salts have different bugs.
func Gen(workers, vars, salt int) string {
	var b strings.Builder
	ts := 0
	ev := func(thread int, line int, action, obj string) {
		ts++
		fmt.Fprintf(&b, "%d, %d, gen.c-%d, %s, %s\n", thread, ts, line, action, obj)
	}
	for w := 1; w <= workers; w++ {
		ev(1, 5, "Create", fmt.Sprint(100+w))
	}
	for w := 1; w <= workers; w++ {
		for v := 0; v < vars; v++ {
			line := 10 + 10*v + salt
			ev(100+w, line, "Read", fmt.Sprintf("v%d", v))
			ev(100+w, line+1, "Write", fmt.Sprintf("v%d", v))
		}
	}
	return b.String()
}

// Write writes Gen's trace to dir/name and returns its path.
func Write(t testing.TB, dir, name string, workers, vars, salt int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(Gen(workers, vars, salt)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
