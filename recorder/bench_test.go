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

// BenchmarkRecordSpeed measures what `mcpredict record` costs per
// recorded event on a memory-bound kernel (testdata/bench_rec.c: two
// threads loading and storing a shared global array, a mutex now and
// then; about 5.3 million events at the default 160 rounds, a few ms
// uninstrumented), the run and the conversion apart (issue 38: at most
// 200 ns per event together). The run is the recorded program's whole
// process, start to exit; the conversion writes the CSV trace to a file.
// Metrics:
//
//	ns/event-run      the recorded run, per trace event
//	ns/event-convert  the conversion to CSV, per trace event
//	ns/event-total    both
//	events/s-convert  the conversion's throughput
//	MB/s-convert      the CSV bytes it writes per second
//
// Run it with: go test -run '^$' -bench RecordSpeed -benchtime 3x ./recorder
// (BENCH_REC_ROUNDS=N changes the size).
func BenchmarkRecordSpeed(b *testing.B) {
	requireTool(b, "gcc")
	rounds := "160"
	if r := os.Getenv("BENCH_REC_ROUNDS"); r != "" {
		rounds = r
	}
	prog := build(b, filepath.Join("testdata", "bench_rec.c"))
	dir := b.TempDir()
	var tRun, tConv time.Duration
	events, bytes := 0, int64(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		raw := filepath.Join(dir, "raw")
		if err := os.MkdirAll(raw, 0o755); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(prog, rounds)
		cmd.Env = append(os.Environ(), TraceDirEnv+"="+raw)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", prog, err, out)
		}
		tRun += time.Since(start)
		out, err := os.Create(filepath.Join(dir, "trace.csv"))
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		// As mcpredict record converts its temporary raw log.
		st, err := Convert(raw, out, ConvertOptions{Consume: true})
		if err == nil {
			err = out.Close()
		}
		tConv += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if fi, err := os.Stat(out.Name()); err == nil {
			bytes += fi.Size()
		}
		events += st.Events
		os.RemoveAll(raw)
		os.Remove(out.Name())
	}
	if events > 0 {
		ev := float64(events)
		b.ReportMetric(float64(tRun)/ev, "ns/event-run")
		b.ReportMetric(float64(tConv)/ev, "ns/event-convert")
		b.ReportMetric(float64(tRun+tConv)/ev, "ns/event-total")
		b.ReportMetric(ev/tConv.Seconds(), "events/s-convert")
		b.ReportMetric(float64(bytes)/1e6/tConv.Seconds(), "MB/s-convert")
		b.ReportMetric(ev/float64(b.N), "events")
	}
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
