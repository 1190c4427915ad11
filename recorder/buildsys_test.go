package recorder

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuildSystem builds a multi-file project with make and
// CC="mcpredict cc …", with gcc and with clang: a static library made
// with ar (the program's own pool allocator, named with --alloc-func), a
// shared library compiled with -fPIC (holding the buggy global), and the
// program; then records and predicts.
func TestBuildSystem(t *testing.T) {
	requireTool(t, "make")
	requireTool(t, "ar")
	bin := mcpredict(t)
	for _, tt := range []struct{ name, cc string }{
		{"gcc", "mcpredict cc"},
		{"clang", "mcpredict cc --compiler=clang"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			requireTool(t, tt.name)
			buildSystem(t, bin, strings.Replace(tt.cc, "mcpredict", bin, 1))
		})
	}
}

func buildSystem(t *testing.T, bin, cc string) {
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
	cc += " --alloc-func=pool_get:2 --free-func=pool_put:2"
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

// TestCMake builds examples/cmake, a C++17 project with a static library
// of C++ and C, with CMake and mcpredict cc as its C and C++ compilers,
// as the README says, with g++ and with clang++: then the bug's trace
// names the C++ globals and functions as the source does, with their
// lines, the lost update is predicted, and the correct twin has no bug.
func TestCMake(t *testing.T) {
	requireTool(t, "cmake")
	requireTool(t, "make")
	bin := mcpredict(t)
	src, err := filepath.Abs(filepath.Join("..", "examples", "cmake"))
	if err != nil {
		t.Fatal(err)
	}
	cache := markers(t, filepath.Join(src, "cache.cpp"))
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_CACHE_HOME="+filepath.Join(testCacheDir(), "xdg"))
	tests := []struct {
		cc, cxx string
		options []string // cmake's, as the README gives them
		lambda  string   // the compiler's name of the clients' lambda
	}{
		{"gcc", "g++", []string{`-DCMAKE_C_COMPILER=mcpredict;cc`, `-DCMAKE_CXX_COMPILER=mcpredict;cc;--compiler=g++`}, "main::{lambda()#1}::operator()"},
		{"clang", "clang++", []string{`-DCMAKE_C_COMPILER=mcpredict;cc;--compiler=clang`, `-DCMAKE_CXX_COMPILER=mcpredict;cc;--compiler=clang++`}, "main::$_0::operator()"},
	}
	for _, tt := range tests {
		t.Run(tt.cxx, func(t *testing.T) {
			requireTool(t, tt.cc)
			requireTool(t, tt.cxx)
			build := t.TempDir()
			for _, args := range [][]string{append([]string{"-S", src, "-B", build}, tt.options...), {"--build", build}} {
				cmd := exec.CommandContext(testContext(t), "cmake", args...)
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("cmake %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			prog := filepath.Join(build, "cache_demo")
			checkCxxRuntime(t, prog)

			trace, stderr := recordCLI(t, bin, nil, prog, "2")
			if strings.Contains(stderr, "warning") {
				t.Errorf("mcpredict record warned:\n%s", stderr)
			}
			evs := parseTrace(t, trace)
			for _, th := range []string{"2", "3"} {
				for _, a := range []struct {
					action, variable string
					line             int
				}{
					{"Read", "svc::g_cache.entries_[0].value", cache["lookup"]},
					{"Write", "svc::g_cache.entries_[0].value", cache["insert"]},
					{"Write", "svc::g_stats.lookups", 0},
					{"Lock", "svc::g_cache.mu_", 0},
					{"Enter", "svc::Cache::lookup", 0},
					{"Enter", "svc::record_hits", 0},
					{"Enter", tt.lambda, 0},
					{"Enter", "serve", 0}, // the C file
				} {
					n := 0
					for _, e := range find(evs, a.action, a.variable, a.line) {
						if e.thread == th && (a.line == 0 || e.file == "cache.cpp") {
							n++
						}
					}
					if n == 0 {
						t.Errorf("thread %s: no %s %s at line %d", th, a.action, a.variable, a.line)
					}
				}
			}
			for _, e := range evs {
				if len(e.objs) > 0 && (strings.Contains(e.objs[0], "_Z") || strings.Contains(e.objs[0], "kSlots") ||
					strings.HasPrefix(e.objs[0], "g_cache") || strings.HasPrefix(e.objs[0], "sancov.")) {
					t.Errorf("a mangled, static-member, unqualified or generated name: %v", e)
				}
			}

			path := filepath.Join(t.TempDir(), "t.csv")
			if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
				t.Fatal(err)
			}
			bugs, _ := predict(t, bin, path, "--engine", "native")
			found := false
			for _, b := range bugs {
				if b.Pattern == "P3" && contains(b.Vars, "svc::g_cache.entries_[0].value") &&
					b.has("local", "Read", "cache.cpp", cache["lookup"]) && b.has("remote", "Write", "cache.cpp", cache["insert"]) {
					found = true
				}
			}
			if !found {
				t.Errorf("no lost update on svc::g_cache.entries_[0].value predicted:\n%s", bugList(bugs))
			}

			trace, _ = recordCLI(t, bin, nil, filepath.Join(build, "cache_demo_ok"), "2")
			mustFind(t, parseTrace(t, trace), "Write", "svc::g_cache.entries_[0].value", cache["add"])
			if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
				t.Fatal(err)
			}
			if bugs, _ := predict(t, bin, path, "--engine", "native"); len(bugs) > 0 {
				t.Errorf("cache_demo_ok: bugs predicted:\n%s", bugList(bugs))
			}
		})
	}
}

// checkCxxRuntime checks that a program built by mcpredict cc links the
// C++ library and the recorder runtime, not the compiler's ThreadSanitizer
// runtime.
func checkCxxRuntime(t *testing.T, prog string) {
	t.Helper()
	checkCRuntime(t, prog)
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	if !slices.ContainsFunc(libs, func(l string) bool { return strings.HasPrefix(l, "libstdc++") }) {
		t.Errorf("%s does not link libstdc++: %q", prog, libs)
	}
	syms, _ := f.Symbols()
	if slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == "__sanitizer_set_report_path" }) {
		t.Errorf("%s has the compiler's sanitizer runtime", prog)
	}
}
