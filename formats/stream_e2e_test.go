package formats_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstStreamsThroughPlugin: run --analysis conflict --first on a
// plugin's format (RAPID's STD) stops the plugin's read at the first
// cycle: a bad line after it is not read, one before it is the usual
// error naming the file and line; the finding is the one of the read to
// the end (the selection with sidetrack reads the whole trace).
func TestFirstStreamsThroughPlugin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "analysis", "conflict", "testdata", "rapid2.std"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tail := "T1|r(z)|30\nT2|r(z)|31\n"
	lines := strings.SplitAfter(string(data), "\n")
	clean := writeFile(t, dir, "clean.std", string(data)+tail)
	after := writeFile(t, dir, "after.std", string(data)+tail+"T1|jump(x)|40\n")
	before := writeFile(t, dir, "before.std", strings.Join(lines[:6], "")+"T1|jump(x)|40\n"+strings.Join(lines[6:], "")+tail)
	first := []string{"run", "--engine", "native", "--format", "json", "--analysis", "conflict", "--first"}
	id := func(out string) string {
		i := strings.Index(out, `"CS-`)
		if i < 0 {
			return ""
		}
		return out[i : i+17]
	}
	code, whole, errs := mcpredict(t, dir, good, "run", "--engine", "native", "--format", "json", "--analysis", "sidetrack,conflict", "--first", clean)
	if code != 1 || id(whole) == "" {
		t.Fatalf("sidetrack,conflict --first: exit %d, %s", code, errs)
	}
	for _, path := range []string{clean, after} {
		code, out, errs := mcpredict(t, dir, good, append(first, path)...)
		if code != 1 || id(out) != id(whole) || !strings.Contains(out, "the read stopped at line 14") {
			t.Errorf("%s: exit %d, finding %q (want %q), %s\n%s", filepath.Base(path), code, id(out), id(whole), errs, out)
		}
	}
	code, _, errs = mcpredict(t, dir, good, append(first, before)...)
	if code != 2 || !strings.Contains(errs, `before.std:7: unknown operation "jump"`) {
		t.Errorf("before.std: exit %d, %s", code, errs)
	}
}
