package formats_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/formats"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// The real binaries, built once by TestMain: good holds mcpredict and the
// shipped plugins, bad the broken test plugins.
var good, bad string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "mcpredict-formats-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		good, bad = filepath.Join(dir, "good"), filepath.Join(dir, "bad")
		builds := [][]string{
			{filepath.Join(good, "mcpredict"), "../cmd/mcpredict"},
			{filepath.Join(good, "mcpredict-format-std"), "../plugins/std"},
			{filepath.Join(good, "mcpredict-format-jsonl"), "../plugins/jsonl"},
			{filepath.Join(good, "mcpredict-format-template"), "../plugins/template"},
			{filepath.Join(bad, "mcpredict-format-broken"), "./testdata/brokenplugin"},
			{filepath.Join(bad, "mcpredict-format-oldproto"), "-ldflags=-X main.protocolVersion=99", "./testdata/brokenplugin"},
		}
		for _, b := range builds {
			args := append([]string{"build", "-o"}, b...)
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(args, " "), err, out)
				return 1
			}
		}
		return m.Run()
	}())
}

// mcpredict runs the real binary in dir with only the plugins of pluginDirs
// (PATH holds nothing of ours).
func mcpredict(t *testing.T, dir, pluginDirs string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(good, "mcpredict"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin", "MCPREDICT_PLUGIN_DIR="+pluginDirs)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

var elapsed = regexp.MustCompile(`"elapsed_ns": [0-9]+`)

// report is the JSON report of a trace, without its (varying) elapsed time.
func report(t *testing.T, dir, trace string, extra ...string) string {
	t.Helper()
	args := append([]string{"run", "--engine", "native", "--no-cache", "--format", "json", trace}, extra...)
	code, out, errs := mcpredict(t, dir, good, args...)
	if code > 1 {
		t.Fatalf("mcpredict %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return elapsed.ReplaceAllString(out, `"elapsed_ns": 0`)
}

// The same execution written in CSV, STD and JSONL, each detected by its
// content alone (same file name), gives byte-identical JSON reports.
func TestSameExecutionSameReport(t *testing.T) {
	for _, ex := range []string{"bank.trace", "condvar-handoff.trace"} {
		t.Run(ex, func(t *testing.T) {
			want := report(t, "testdata/same/csv", ex)
			if !strings.Contains(want, `"schema": "mcpredict.report/v1"`) {
				t.Fatalf("no report: %s", want)
			}
			for _, f := range []string{"std", "jsonl"} {
				if got := report(t, "testdata/same/"+f, ex); got != want {
					t.Errorf("%s report differs from the CSV one:\n%s\nwant\n%s", f, got, want)
				}
				if got := report(t, "testdata/same/"+f, ex, "--input-format", f); got != want {
					t.Errorf("%s report with --input-format differs from the CSV one", f)
				}
			}
		})
	}
}

// CSV -> STD (or JSONL) -> report equals CSV -> report, comments and all:
// convert keeps the trace lines.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, ex := range []string{"bank", "logbuf", "fig5", "splash-barrier", "condvar-handoff"} {
		src, err := filepath.Abs("../examples/" + ex + ".csv")
		if err != nil {
			t.Fatal(err)
		}
		want := report(t, dir, src)
		for _, to := range []string{"std", "jsonl", "csv"} {
			conv := filepath.Join(dir, ex+".converted")
			if code, _, errs := mcpredict(t, dir, good, "convert", "--to", to, src, "-o", conv); code != 0 {
				t.Fatalf("convert %s --to %s: exit %d: %s", ex, to, code, errs)
			}
			got := strings.Replace(report(t, dir, conv), conv, src, 1)
			if got != want {
				t.Errorf("%s: CSV -> %s -> report differs from CSV -> report:\n%s", ex, to, got)
			}
		}
	}
}

func TestRAPIDOutput(t *testing.T) {
	code, out, errs := mcpredict(t, ".", good, "convert", "--to", "std", "--rapid", "../examples/condvar-handoff.csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !regexp.MustCompile(`^\S+\|(r|w|acq|rel|fork|join|begin|end)\([^|]*\)\|\S+$`).MatchString(line) {
			t.Errorf("not a RAPID STD line: %q", line)
		}
	}
	if !strings.Contains(errs, "dropped") {
		t.Errorf("no count of dropped events: %s", errs)
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad input read by a plugin is exit 2 naming the file and line; a broken
// plugin is exit 3 naming the plugin; no plugin process outlives mcpredict.
func TestFaults(t *testing.T) {
	dir := t.TempDir()
	both := bad + string(os.PathListSeparator) + good
	pidfile := filepath.Join(dir, "pids")
	tests := []struct {
		name    string
		plugins string
		args    []string
		code    int
		stderr  []string // substrings of standard error ("-s": s must not be one)
	}{
		{"unlock not held (std)", good, []string{"run", "--engine", "native", writeFile(t, dir, "unlock.std", "T1|acq(m)|a.c:1\nT1|rel(m)|a.c:2\nT1|rel(m)|a.c:3\n")},
			0, []string{"warning: ", "unlock.std:3: Unlock of m at a.c:3, which thread T1 does not hold: dropped"}},
		{"unlock not held (std) --strict-sync", good, []string{"run", "--strict-sync", writeFile(t, dir, "unlock.std", "T1|acq(m)|a.c:1\nT1|rel(m)|a.c:2\nT1|rel(m)|a.c:3\n")},
			2, []string{"unlock.std:3: Unlock of m, which thread T1 does not hold"}},
		{"join of unknown thread (jsonl)", good, []string{"run", "--engine", "native", writeFile(t, dir, "join.jsonl", `{"thread":1,"action":"Write","object":"x"}`+"\n\n"+`{"thread":1,"action":"Join","object":7}`+"\n")},
			0, []string{"join.jsonl:3: Join of unknown thread 7 at ? (it never appeared and was never created): dropped (no order)"}},
		{"join of unknown thread (jsonl) --strict-sync", good, []string{"run", "--strict-sync", writeFile(t, dir, "join.jsonl", `{"thread":1,"action":"Write","object":"x"}`+"\n\n"+`{"thread":1,"action":"Join","object":7}`+"\n")},
			2, []string{"join.jsonl:3: Join of unknown thread 7"}},
		{"bad STD line", good, []string{"run", writeFile(t, dir, "bad.std", "T1|w(x)|a.c:1\nT1|jump(x)|a.c:2\n")},
			2, []string{`bad.std:2: unknown operation "jump"`}},
		{"bad JSON line", good, []string{"run", "--input-format", "jsonl", writeFile(t, dir, "bad.json", `{"thread":1,"action":"Write","object":"x"}`+"\n{\n")},
			2, []string{"bad.json:2: bad JSON event"}},
		{"lenient skips plugin problems", good, []string{"run", "--engine", "native", "--lenient", writeFile(t, dir, "lenient.std", "T1|w(x)|a.c:1\nT1|jump(x)|a.c:2\nT2|w(x)|a.c:3\n")},
			0, nil},
		{"unknown format", good, []string{"run", writeFile(t, dir, "hello.txt", "hello world\n")},
			2, []string{"hello.txt: unknown trace format", "tried csv, jsonl, std, template"}},
		{"unknown format name", good, []string{"run", "--input-format", "xml", "../examples/bank.csv"},
			2, []string{`unknown trace format "xml"`, "known: csv, jsonl, std, template"}},
		{"problem record", both, []string{"run", "--input-format", "broken", writeFile(t, dir, "p.broken", "problem\n")},
			2, []string{"p.broken:2: bad event here"}},
		{"crash", both, []string{"run", "--input-format", "broken", writeFile(t, dir, "c.broken", "crash\n")},
			3, []string{"format plugin broken", "crashed", "boom: the broken plugin crashed"}},
		{"hang", both, []string{"run", "--plugin-timeout", "1s", "--input-format", "broken", writeFile(t, dir, "h.broken", "hang\n")},
			3, []string{"format plugin broken", "did not answer Next within 1s (--plugin-timeout)"}},
		{"malformed events", both, []string{"run", "--input-format", "broken", writeFile(t, dir, "m.broken", "malformed\n")},
			3, []string{"format plugin broken", "sent malformed events: action code 99"}},
		{"wrong protocol version", both, []string{"run", "--input-format", "oldproto", writeFile(t, dir, "o.broken", "x\n")},
			3, []string{"format plugin oldproto", "another protocol version"}},
		// CSV content is CSV without asking plugins, so detection is
		// exercised on content no format claims.
		{"broken plugins skipped in detection", both, []string{"run", "--engine", "native", writeFile(t, dir, "d.txt", "not a trace\n")},
			2, []string{"warning: format plugin oldproto", "unknown trace format"}},
		{"CSV content starts no plugin", both, []string{"run", "--engine", "native", "../examples/bank.csv"},
			1, []string{"-warning: format plugin oldproto"}},
		{"formats lists a broken plugin", both, []string{"formats"},
			3, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(pidfile)
			t.Setenv("MCPREDICT_TEST_PIDFILE", pidfile)
			start := time.Now()
			code, out, errs := mcpredict(t, ".", tc.plugins, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			for _, s := range tc.stderr {
				if not, ok := strings.CutPrefix(s, "-"); ok {
					if strings.Contains(errs, not) {
						t.Errorf("stderr has %q:\n%s", not, errs)
					}
				} else if !strings.Contains(errs, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errs)
				}
			}
			if time.Since(start) > 20*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
			assertNoPluginAlive(t, pidfile)
		})
	}
}

// assertNoPluginAlive checks that every pid in pidfile is gone.
func assertNoPluginAlive(t *testing.T, pidfile string) {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		alive := true
		for i := 0; i < 50 && alive; i++ {
			// A zombie is gone for our purpose: only its exit status is left.
			st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			alive = err == nil && !bytes.Contains(st, []byte(") Z "))
			if alive && syscall.Kill(pid, 0) != nil {
				alive = false
			}
			if alive {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if alive {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("plugin process %d outlived mcpredict", pid)
		}
	}
}

func TestFormatsList(t *testing.T) {
	code, out, errs := mcpredict(t, ".", good, "formats")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"csv ", "std ", "jsonl ", "template ", "1.0.0", "(built in)", filepath.Join(good, "mcpredict-format-std")} {
		if !strings.Contains(out, want) {
			t.Errorf("formats output lacks %q:\n%s", want, out)
		}
	}
}

// The template plugin reads its own format (it is the users' starting point).
func TestTemplatePlugin(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "t.tmpl", "# template format\n1 Write x main.c:10\n1 Create 2 main.c:11\n2 Read x worker.c:5\n2 Write x worker.c:6\n1 Read x main.c:12\n1 Write x main.c:13\n")
	code, _, errs := mcpredict(t, dir, good, "run", "--engine", "native", "--no-cache", p)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a violation): %s", code, errs)
	}
}

// Host in-process: a plugin on standard input, Close kills the plugins.
func TestHostDirect(t *testing.T) {
	h := formats.NewHost(formats.Config{Dirs: []string{good}, Timeout: 10 * time.Second})
	defer h.Close()
	m, format, err := h.Open(context.Background(), "testdata/same/std/bank.trace", "", tracemodel.Options{})
	if err != nil || format != "std" || len(m.Events) != 22 {
		t.Fatalf("Open: %v, format %q", err, format)
	}
	want, err := tracemodel.Open(context.Background(), "testdata/same/csv/bank.trace", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Events) != len(m.Events) || len(want.Vars) != len(m.Vars) {
		t.Fatalf("std model differs from the csv model")
	}
}
