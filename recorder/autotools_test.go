package recorder

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAutotools builds examples/autotools, a C project with autoconf and
// automake (a static library and two programs), as its README says:
// autoreconf -fi, ./configure CC="mcpredict cc --compiler=clang" (and
// CC="mcpredict cc", gcc), make; then records both programs in runs where
// no hit was lost, and checks that mcpredict run predicts hitcount's lost
// update at the lines of lib/pagestats.c, that mcpredict reproduce fails
// it (the program finds its hits lost and exits 1), and that the correct
// twin hitcount_ok has nothing reported and no failed run. The tools are
// required, not skipped: scripts/setup.sh installs them.
func TestAutotools(t *testing.T) {
	for _, tool := range []string{"autoreconf", "autoconf", "automake", "aclocal", "make", "ar", "gcc", "clang"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (scripts/setup.sh installs it)", tool)
		}
	}
	bin := mcpredict(t)
	src, err := filepath.Abs(filepath.Join("..", "examples", "autotools"))
	if err != nil {
		t.Fatal(err)
	}
	mk := markers(t, filepath.Join(src, "lib", "pagestats.c"))
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_CACHE_HOME="+filepath.Join(testCacheDir(), "xdg"))

	// autoreconf once; each compiler configures a copy of its output.
	gen := t.TempDir()
	copyTree(t, src, gen, func(rel string) bool {
		// The project's sources only, not what a build in the
		// repository's tree may have left there.
		switch filepath.Ext(rel) {
		case ".ac", ".am", ".c", ".h":
			return true
		}
		return false
	})
	start := time.Now()
	shell(t, gen, env, "autoreconf", "-fi")
	t.Logf("autoreconf -fi: %v", time.Since(start).Round(time.Millisecond))

	for _, tt := range []struct{ name, cc string }{
		{"clang", "mcpredict cc --compiler=clang"},
		{"gcc", "mcpredict cc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, gen, dir, func(rel string) bool { return !strings.HasPrefix(rel, "autom4te.cache") })
			start := time.Now()
			out := shell(t, dir, env, "./configure", "CC="+tt.cc)
			t.Logf("configure: %v", time.Since(start).Round(time.Millisecond))
			// automake's dependency tracking through mcpredict cc: -MT
			// -MD -MP -MF, with the compile.
			if !strings.Contains(out, "dependency style of "+tt.cc+"... gcc3") {
				t.Errorf("configure did not find gcc3 dependency tracking:\n%s", out)
			}
			start = time.Now()
			shell(t, dir, env, "make")
			t.Logf("make: %v", time.Since(start).Round(time.Millisecond))
			if deps, err := os.ReadFile(filepath.Join(dir, "lib", ".deps", "pagestats.Po")); err != nil || !bytes.Contains(deps, []byte("pagestats.h")) {
				t.Errorf("lib/.deps/pagestats.Po has no dependency on pagestats.h (%v):\n%s", err, deps)
			}
			for _, prog := range []string{"hitcount", "hitcount_ok"} {
				checkCRuntime(t, filepath.Join(dir, prog))
			}

			// hitcount: the lost update predicted, and failed.
			start = time.Now()
			trace, stderr := recordAt(t, bin, dir, env, "hitcount.csv", "./hitcount", "2")
			if strings.Contains(stderr, "warning") {
				t.Errorf("mcpredict record warned:\n%s", stderr)
			}
			evs := parseTrace(t, readFile(t, trace))
			const hits = "site.pages->hits" // /index.html, the first page registered
			for _, th := range []string{"2", "3"} {
				for _, a := range []struct {
					action string
					line   int
				}{{"Read", mk["get"]}, {"Write", mk["set"]}} {
					n := 0
					for _, e := range find(evs, a.action, hits, a.line) {
						if e.thread == th && e.file == "pagestats.c" {
							n++
						}
					}
					if n != 3 {
						t.Errorf("thread %s: %d %ss of %s at pagestats.c:%d, want 3", th, n, a.action, hits, a.line)
					}
				}
			}
			if interleaved(evs, hits) {
				t.Errorf("the recorded run interleaved the workers' accesses of %s: want a run where the bug did not happen", hits)
			}
			lost := func(b jsonBug) bool {
				return b.Pattern == "P3" && slices.Contains(b.Vars, hits) && b.has("local", "Read", "pagestats.c", mk["get"]) &&
					b.has("remote", "Write", "pagestats.c", mk["set"]) && b.has("local", "Write", "pagestats.c", mk["set"])
			}
			rep, code := runJSON(t, bin, dir, env, "run", "--format", "json", "--engine", "native", "--no-cache", "hitcount.csv")
			if code != 1 || !slices.ContainsFunc(rep.Bugs, lost) {
				t.Errorf("mcpredict run: exit %d, no lost update of %s at pagestats.c:%d and :%d:\n%s", code, hits, mk["get"], mk["set"], rep.list())
			}
			rep, code = runJSON(t, bin, dir, env, "reproduce", "--format", "json", "-o", "hitcount.json", "--engine", "native", "--no-cache", "hitcount.csv")
			if i := slices.IndexFunc(rep.Bugs, lost); code != 1 || i < 0 || rep.Bugs[i].Reproduction == nil || !rep.Bugs[i].Reproduction.Failed {
				t.Errorf("mcpredict reproduce: exit %d, the lost update of %s did not fail:\n%s", code, hits, rep.list())
			} else if ev := rep.Bugs[i].Reproduction.Evidence; !strings.Contains(ev, "exit status 1") {
				t.Errorf("the failed run's evidence does not say it exited 1:\n%s", ev)
			}
			t.Logf("hitcount: record, run, reproduce: %v", time.Since(start).Round(time.Millisecond))

			// hitcount_ok: nothing reported, no failed run.
			start = time.Now()
			recordAt(t, bin, dir, env, "hitcount_ok.csv", "./hitcount_ok", "2")
			if rep, code := runJSON(t, bin, dir, env, "run", "--format", "json", "--engine", "native", "--no-cache", "hitcount_ok.csv"); code != 0 || len(rep.Bugs) > 0 {
				t.Errorf("hitcount_ok: mcpredict run: exit %d:\n%s", code, rep.list())
			}
			rep, code = runJSON(t, bin, dir, env, "reproduce", "--format", "json", "-o", "hitcount_ok.json", "--engine", "native", "--no-cache", "hitcount_ok.csv")
			if code != 0 || len(rep.Bugs) > 0 || len(rep.Failures) > 0 || rep.Reproduce == nil || rep.Reproduce.FailedRuns > 0 {
				t.Errorf("hitcount_ok: mcpredict reproduce: exit %d, %d failing runs:\n%s", code, len(rep.Failures), rep.list())
			}
			t.Logf("hitcount_ok: record, run, reproduce: %v", time.Since(start).Round(time.Millisecond))
		})
	}
}

// copyTree copies the regular files of src whose path relative to src
// keep accepts into dst, with their modification times (make must not
// find configure older than configure.ac).
func copyTree(t *testing.T, src, dst string, keep func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || d.IsDir() || !keep(rel) {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, data, info.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(out, info.ModTime(), info.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// shell runs a command in dir and returns its output; it must succeed.
func shell(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(testContext(t), name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// recordAt runs mcpredict record -o trace -- prog args in dir, as the
// README does, and returns the trace's path and record's stderr. The
// recorded run must have exited 0.
func recordAt(t *testing.T, bin, dir string, env []string, trace, prog string, args ...string) (string, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(testContext(t), bin, append([]string{"record", "-o", trace, "--", prog}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpredict record %s: %v\n%s", prog, err, stderr.String())
	}
	path := filepath.Join(dir, trace)
	if text := readFile(t, path); !strings.Contains(text, "# ended: exit status 0\n") {
		t.Fatalf("%s did not exit 0 in the recorded run:\n%s", prog, stderr.String())
	}
	return path, stderr.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// jsonReport is the part of run's and reproduce's JSON report that
// TestAutotools reads.
type jsonReport struct {
	Bugs      []jsonBug `json:"bugs"`
	Failures  []any     `json:"failures"`
	Reproduce *struct {
		FailedRuns int `json:"failed_runs"`
	} `json:"reproduce"`
}

type jsonBug struct {
	reportBug
	Reproduction *struct {
		Status   string `json:"status"`
		Failed   bool   `json:"failed"`
		Evidence string `json:"evidence"`
	} `json:"reproduction"`
}

func (r jsonReport) list() string {
	var b strings.Builder
	for _, x := range r.Bugs {
		b.WriteString("  " + x.String())
		if x.Reproduction != nil {
			b.WriteString(" [" + x.Reproduction.Status)
			if x.Reproduction.Failed {
				b.WriteString(", failed")
			}
			b.WriteString("]")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// runJSON runs mcpredict in dir with a JSON report, on standard output or
// in the file given with -o, and returns it with the exit status (0 or 1).
func runJSON(t *testing.T, bin, dir string, env []string, args ...string) (jsonReport, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(testContext(t), bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 && code != 1 {
		t.Fatalf("mcpredict %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	data := stdout.Bytes()
	if i := slices.Index(args, "-o"); i >= 0 {
		data = []byte(readFile(t, filepath.Join(dir, args[i+1])))
	}
	var rep jsonReport
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("mcpredict %s: bad JSON report: %v\n%s", strings.Join(args, " "), err, data)
	}
	return rep, code
}

// checkCRuntime checks that a C program built by mcpredict cc links the
// recorder runtime, not the compiler's ThreadSanitizer runtime.
func checkCRuntime(t *testing.T, prog string) {
	t.Helper()
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if libs, _ := f.ImportedLibraries(); slices.ContainsFunc(libs, func(l string) bool { return strings.HasPrefix(l, "libtsan") }) {
		t.Errorf("%s links libtsan: %q", prog, libs)
	}
	syms, _ := f.Symbols()
	if !slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == "__mcprec_range" }) {
		t.Errorf("%s has no recorder runtime", prog)
	}
}
