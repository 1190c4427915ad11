package recorder

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildSystem builds a multi-file project with make and
// CC="mcpredict cc …": a static library made with ar (the program's own
// pool allocator, named with --alloc-func), a shared library compiled
// with -fPIC (holding the buggy global), and the program; then records
// and predicts.
func TestBuildSystem(t *testing.T) {
	requireTool(t, "gcc")
	requireTool(t, "make")
	requireTool(t, "ar")
	bin := mcpredict(t)
	dir := t.TempDir()
	srcDir := filepath.Join("testdata", "buildsys")
	ents, err := os.ReadDir(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(srcDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cc := bin + " cc --alloc-func=pool_get:2 --free-func=pool_put:2"
	mk := exec.CommandContext(testContext(t), "make", "-C", dir, "CC="+cc)
	mk.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(testCacheDir(), "xdg"))
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	app := filepath.Join(dir, "app")

	// The allocator in the static library was wrapped.
	f, err := elf.Open(app)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	wrapped := map[string]bool{}
	for _, s := range syms {
		wrapped[s.Name] = true
	}
	for _, s := range []string{"pool_get", realPrefix + "pool_get", "pool_put", realPrefix + "pool_put"} {
		if !wrapped[s] {
			t.Errorf("app has no symbol %s", s)
		}
	}

	trace, stderr := recordCLI(t, bin, nil, app, "2", "20000")
	if strings.Contains(stderr, "warning") {
		t.Errorf("mcpredict record warned:\n%s", stderr)
	}
	evs := parseTrace(t, trace)
	stats := markers(t, filepath.Join(srcDir, "stats.c"))
	main := markers(t, filepath.Join(srcDir, "main.c"))
	// The shared library's global, named from its own DWARF, and its
	// lines.
	for _, th := range []string{"2", "3"} {
		n := 0
		for _, e := range find(evs, "Write", "stats_total", stats["write"]) {
			if e.thread == th && e.file == "stats.c" {
				n++
			}
		}
		if n != 2 {
			t.Errorf("thread %s: %d writes of stats_total at stats.c:%d, want 2", th, n, stats["write"])
		}
	}
	// Each item the pool hands out is a block of its own, named after
	// the call of pool_get in main.c and, its type known from the
	// worker's struct item *it, its field.
	for _, th := range []string{"2", "3"} {
		for k := 1; k <= 2; k++ {
			name := fmt.Sprintf("pool_get@main.c:%d#t%s.%d", main["get"], th, k)
			mustFind(t, evs, "Alloc", "*"+name, main["get"])
			mustFind(t, evs, "Free", "*"+name, 0)
			mustFind(t, evs, "Write", "item.value("+name+")", 0)
		}
	}
	mustFind(t, evs, "Enter", "stats_record", 0)

	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	bugs, _ := predict(t, bin, path, "--engine", "native")
	for _, b := range bugs {
		if b.Pattern == "P3" && contains(b.Vars, "stats_total") &&
			b.has("local", "Read", "stats.c", stats["read"]) && b.has("remote", "Write", "stats.c", stats["write"]) {
			return
		}
	}
	t.Errorf("no lost update on stats_total predicted:\n%s", bugList(bugs))
}
