package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
)

// asCLI is the environment variable that makes the test binary run as
// mcpredict (TestMain): a child process whose peak memory the test reads.
const asCLI = "MCPREDICT_TEST_AS_CLI"

// peakFile is the environment variable naming the file a child writes
// its peak resident memory to (VmHWM, in KiB). The rusage of a child is no
// measure: Linux keeps the high-water mark across exec, so a child forked
// from a large test process starts with the parent's.
const peakFile = "MCPREDICT_TEST_PEAK_FILE"

// writePeak writes this process's VmHWM to path ("" : nothing).
func writePeak(path string) {
	if path == "" {
		return
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			_ = os.WriteFile(path, []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB"))), 0o644)
		}
	}
}

// childRun is what runChild saw of a child mcpredict.
type childRun struct {
	code           int
	stdout, stderr string
	peakRSS        int64 // bytes
}

// runChild runs mcpredict as a child process (this test binary) and
// returns its exit status, output and peak resident memory. prefix is an
// optional command that runs it (prlimit).
func runChild(t *testing.T, prefix []string, args ...string) childRun {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append(prefix, self), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	peak := filepath.Join(t.TempDir(), "peak")
	cmd.Env = append(os.Environ(), asCLI+"=1", peakFile+"="+peak)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%v: %v", argv, err)
	}
	r := childRun{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
	if b, err := os.ReadFile(peak); err == nil {
		kb, _ := strconv.ParseInt(string(b), 10, 64)
		r.peakRSS = kb << 10
	}
	return r
}

// TestLargeTrace checks a trace of 2 M events spilled to disk against the
// same trace kept in memory: the same report, bug for bug and instance for
// instance, and a peak resident memory within --max-memory and below the
// in-memory run's. It runs without the race detector (make test runs it
// alone), where a child's memory is the program's.
func TestLargeTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("2 M events: make test runs it without -short and -race")
	}
	path := filepath.Join(t.TempDir(), "fft2m.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := gen.Config{Kind: gen.KindFFT, Threads: 8, Vars: 4096, Events: 2_000_000, Bugs: 1, Seed: 1}
	if _, err := gen.Write(context.Background(), f, cfg); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	const maxMemory = 256 << 20
	common := []string{"run", "--engine", "native", "--no-cache", "--format", "json", "--quiet"}
	mem := runChild(t, nil, append(common, "--spill", "never", "--max-memory", "0", path)...)
	disk := runChild(t, nil, append(common, "--spill", "always", "--max-memory", "256MiB", "--temp-dir", t.TempDir(), path)...)
	for name, r := range map[string]childRun{"in memory": mem, "spilled": disk} {
		if r.code != exitViolation {
			t.Fatalf("%s: exit %d, want %d (the seeded bug):\n%s", name, r.code, exitViolation, r.stderr)
		}
	}
	bugsOf := func(name, out string) []byte {
		var rep struct {
			Stats      struct{ Events int }
			Bugs       json.RawMessage
			Violations json.RawMessage
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rep.Stats.Events < 2_000_000 {
			t.Fatalf("%s: %d events", name, rep.Stats.Events)
		}
		return append(rep.Bugs, rep.Violations...)
	}
	if a, b := bugsOf("in memory", mem.stdout), bugsOf("spilled", disk.stdout); !bytes.Equal(a, b) {
		t.Fatalf("the spilled trace's report differs from the in-memory one's:\n in memory: %.2000s\n spilled:   %.2000s", a, b)
	}
	t.Logf("peak RSS: in memory %d MB, spilled %d MB (--max-memory %d MB)", mem.peakRSS>>20, disk.peakRSS>>20, maxMemory>>20)
	if mem.peakRSS == 0 || disk.peakRSS == 0 {
		t.Fatalf("no peak memory from the children (%s)", peakFile)
	}
	if disk.peakRSS > maxMemory || disk.peakRSS >= mem.peakRSS {
		t.Errorf("spilled run's peak RSS %d MB: want under --max-memory (%d MB) and the in-memory run's (%d MB)", disk.peakRSS>>20, maxMemory>>20, mem.peakRSS>>20)
	}
}

// TestSpillDiskFull: a temporary directory that cannot take the trace is
// a clear error naming the trace line and the directory, exit 3, never a
// crash (prlimit's file size limit stands in for a full disk: fallocate
// fails the same way, with EFBIG instead of ENOSPC).
func TestSpillDiskFull(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal("prlimit (util-linux) not found: it is part of every Debian system")
	}
	path := writeTrace(t, "t.csv", strings.Repeat("1, 1, a.c-1, Write, x\n2, 2, a.c-2, Read, x\n", 3000))
	dir := t.TempDir()
	r := runChild(t, []string{prlimit, "--fsize=65536", "--"}, "run", "--engine", "native", "--no-cache", "--spill", "always", "--temp-dir", dir, path)
	if r.code != exitInternal {
		t.Fatalf("exit %d, want %d:\n%s", r.code, exitInternal, r.stderr)
	}
	for _, want := range []string{path + ":1:", "spilling the trace", dir, "--temp-dir"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("%d files left in the temporary directory", len(left))
	}
}
