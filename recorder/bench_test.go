package recorder

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkRecordOverhead measures the slowdown of a recorded program
// against the same program built without instrumentation. The kernel
// (testdata/bench.c: two threads multiplying a 256×256 matrix by a vector,
// 16 rounds, about 2.2 million recorded accesses) times itself, so
// process start-up and exit are left out. Metrics:
//
//	x-slowdown       recording vs. plain gcc -O1
//	x-idle-slowdown  built with mcpredict cc but not recording
//	ns/event         recording cost per recorded event
//	events/s-convert conversion of the raw log to the CSV trace
//
// Run it with: go test -run '^$' -bench RecordOverhead ./recorder
func BenchmarkRecordOverhead(b *testing.B) {
	benchOverhead(b, "bench.c", "2", "16")
}

// BenchmarkRecordOverheadStack is the same with a kernel whose traffic is
// mostly to the threads' own stacks (testdata/bench_stack.c: two threads
// smoothing arrays on their stacks, 16 blocks per round, 64 rounds, about
// 1.6 million loads and stores), adding to a struct on main's stack that
// main gave them once per round. The stack traffic is not recorded; only
// the shared struct is (about 3,000 events). Metrics as above;
// ns/event is meaningless here (few events), x-slowdown is the point.
//
// Run it with: go test -run '^$' -bench RecordOverheadStack ./recorder
func BenchmarkRecordOverheadStack(b *testing.B) {
	benchOverhead(b, "bench_stack.c", "2", "64")
}

func benchOverhead(b *testing.B, src string, args ...string) {
	requireTool(b, "gcc")
	src = filepath.Join("testdata", src)
	plain := filepath.Join(b.TempDir(), "bench-plain")
	if out, err := exec.Command("gcc", "-O1", "-o", plain, src, "-lpthread").CombinedOutput(); err != nil {
		b.Fatalf("gcc: %v\n%s", err, out)
	}
	rec := build(b, src)
	var tPlain, tIdle, tRec, tConv time.Duration
	events := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tPlain += kernelTime(b, plain, args, "")
		tIdle += kernelTime(b, rec, args, "")
		raw, err := os.MkdirTemp("", "mcpredict-bench-")
		if err != nil {
			b.Fatal(err)
		}
		tRec += kernelTime(b, rec, args, raw)
		start := time.Now()
		st, err := Convert(raw, io.Discard, ConvertOptions{})
		tConv += time.Since(start)
		os.RemoveAll(raw)
		if err != nil {
			b.Fatal(err)
		}
		events += st.Events
	}
	b.ReportMetric(float64(tRec)/float64(tPlain), "x-slowdown")
	b.ReportMetric(float64(tIdle)/float64(tPlain), "x-idle-slowdown")
	if events > 0 {
		b.ReportMetric(float64(tRec-tPlain)/float64(events), "ns/event")
		b.ReportMetric(float64(events)/tConv.Seconds(), "events/s-convert")
		b.ReportMetric(float64(events)/float64(b.N), "events")
	}
}

// kernelTime runs the benchmark program (recording into raw if not "")
// and returns the time it reports for its kernel.
func kernelTime(b *testing.B, prog string, args []string, raw string) time.Duration {
	b.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = os.Environ()
	if raw != "" {
		cmd.Env = append(cmd.Env, TraceDirEnv+"="+raw)
	}
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s: %v", prog, err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "kernel_ns" {
		b.Fatalf("%s printed %q", prog, out)
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return time.Duration(ns)
}
