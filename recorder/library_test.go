package recorder

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
)

func TestIsLibraryPath(t *testing.T) {
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"/usr/include/c++/12/bits/hashtable.h", true},
		{"/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h", true},
		{"/usr/lib/llvm-14/lib/clang/14.0.6/include/stdatomic.h", true},
		{"/usr/include/x86_64-linux-gnu/bits/pthreadtypes.h", true},
		{"/opt/gcc-13/include/c++/13.1.0/bits/shared_ptr_base.h", true},
		{"/usr/src/app/cache.cpp", false},
		{"/usr/local/src/app/cache.cpp", false},
		{"/home/me/app/cache.cpp", false},
		{"/tmp/build/../src/cache.hpp", false},
	} {
		if got := isLibraryPath(tt.path); got != tt.want {
			t.Errorf("isLibraryPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestLibraryAttribution records a cache on std::unordered_map and
// std::shared_ptr, whose every shared access is inside the standard
// library's headers, with g++ and clang++: the lost update of its client
// (a lookup and an insert in two lock scopes) fails in reproduce and is
// reported at the user's lines, the library's lines kept beside them, on
// the user's variable; the correct twin (one lock scope) has nothing.
func TestLibraryAttribution(t *testing.T) {
	bin := mcpredict(t)
	src, err := filepath.Abs(filepath.Join("testdata", "cxxlib", "cache.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	mk := markers(t, src)
	for _, cxx := range []string{"g++", "clang++"} {
		t.Run(cxx, func(t *testing.T) {
			requireTool(t, cxx)
			for _, split := range []bool{true, false} {
				dir := t.TempDir()
				prog := filepath.Join(dir, "cache")
				args := []string{"cc", "--compiler=" + cxx, "-O0", "-g", "-pthread", "-o", prog, src}
				if split {
					args = append(args, "-DSPLIT")
				}
				cmd := exec.CommandContext(testContext(t), bin, args...)
				cmd.Env = append(cmd.Environ(), "XDG_CACHE_HOME="+filepath.Join(testCacheDir(), "xdg"))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("mcpredict cc: %v\n%s", err, out)
				}
				trace, _ := recordCLI(t, bin, nil, prog)
				if !strings.Contains(trace, "# library: hashtable.h\n") || strings.Contains(trace, "# library: cache.cpp") {
					t.Errorf("the trace's library files are wrong:\n%s", grepLines(trace, "# library: "))
				}
				path := filepath.Join(dir, "t.csv")
				if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
					t.Fatal(err)
				}
				out, _ := runCLI(t, bin, "reproduce", "--quiet", "--explore", "0", "--format", "json", path)
				var rep bugs.Report
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatalf("%v:\n%.2000s", err, out)
				}
				failed := 0
				for _, b := range rep.Bugs {
					if b.Reproduction == nil || !b.Reproduction.Failed {
						continue
					}
					failed++
					if !split {
						t.Errorf("the correct twin has a failed bug %s on %v", b.ID, b.Vars)
						continue
					}
					for _, v := range b.Vars {
						if c := rep.Containers[v]; !strings.HasPrefix(c, "svc::g_cache.map_ (std::unordered_map internals)") {
							t.Errorf("%s: %s is in %q, want svc::g_cache.map_ (std::unordered_map internals)", b.ID, v, c)
						}
					}
					v := rep.Violations[b.Instances[0]]
					for _, a := range v.EssentialAccesses() {
						if a.File != "cache.cpp" || a.Line != mk["lookup"] && a.Line != mk["insert"] {
							t.Errorf("%s: %s %s at %s, want cache.cpp:%d or :%d", b.ID, a.Role, a.Action, a.Location(), mk["lookup"], mk["insert"])
						}
						if a.Library == nil || !strings.HasSuffix(a.Library.File, ".h") || a.Library.Func == "" {
							t.Errorf("%s: %s %s at %s: library site %+v, want a header's", b.ID, a.Role, a.Action, a.Location(), a.Library)
						}
						if !strings.HasPrefix(a.Func, "svc::Cache::") {
							t.Errorf("%s: %s %s in %q, want the user's svc::Cache method", b.ID, a.Role, a.Action, a.Func)
						}
					}
				}
				if split && failed == 0 {
					t.Errorf("no failed bug:\n%.3000s", out)
				}
				if !split && len(rep.Failures) > 0 {
					t.Errorf("the correct twin has %d failing runs", len(rep.Failures))
				}
				if !split {
					continue
				}
				text, _ := runCLI(t, bin, "reproduce", "--quiet", "--explore", "0", "--color", "never", path)
				for _, line := range strings.Split(text, "\n") {
					if strings.Contains(line, "; std::") || strings.Contains(line, "<- 0x") {
						t.Errorf("a name as the trace stores it, not as written: %s", line)
					}
					if strings.HasPrefix(strings.TrimSpace(line), "in ") && len(line) > 125 {
						t.Errorf("a call chain of %d characters: %s", len(line), line)
					}
				}
			}
		})
	}
}

// grepLines returns the lines of s that start with prefix.
func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestInlinedLibraryCode builds with -O1 and -O2, where std::lock_guard
// and std::atomic are inlined into the program's functions: their locks
// and atomic accesses are recorded at the program's lines that called
// them (two lock scopes of one function, two lines), not at the one line
// of the library's header they all come from.
func TestInlinedLibraryCode(t *testing.T) {
	bin := mcpredict(t)
	src, err := filepath.Abs(filepath.Join("testdata", "cxxlib", "inlined.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	mk := markers(t, src)
	for _, cxx := range []string{"g++", "clang++"} {
		for _, opt := range []string{"-O1", "-O2"} {
			t.Run(cxx+opt, func(t *testing.T) {
				requireTool(t, cxx)
				prog := filepath.Join(t.TempDir(), "inlined")
				cmd := exec.CommandContext(testContext(t), bin, "cc", "--compiler="+cxx, opt, "-g", "-pthread", "-o", prog, src)
				cmd.Env = append(cmd.Environ(), "XDG_CACHE_HOME="+filepath.Join(testCacheDir(), "xdg"))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("mcpredict cc: %v\n%s", err, out)
				}
				trace, _ := recordCLI(t, bin, nil, prog)
				evs := parseTrace(t, trace)
				locks := map[int]int{}
				atomics := map[int]int{}
				for _, e := range evs {
					switch {
					case e.action == "Lock" && len(e.objs) > 0 && e.objs[0] == "m":
						if e.file != "inlined.cpp" {
							t.Errorf("Lock of m at %s:%d, want inlined.cpp", e.file, e.line)
						}
						locks[e.line]++
					case len(e.objs) > 0 && strings.Contains(e.objs[0], "lim.active_") && e.file == "inlined.cpp":
						atomics[e.line]++
					}
				}
				if locks[mk["first"]] != 2 || locks[mk["second"]] != 2 {
					t.Errorf("locks by line %v, want 2 at each of lines %d and %d", locks, mk["first"], mk["second"])
				}
				if atomics[mk["load"]] == 0 || atomics[mk["store"]] == 0 {
					t.Errorf("lim.active_ by line of inlined.cpp %v, want lines %d and %d", atomics, mk["load"], mk["store"])
				}
			})
		}
	}
}
