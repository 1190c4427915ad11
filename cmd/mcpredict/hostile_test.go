package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// peakHeap runs fn and returns the highest live heap it saw above the heap
// before, sampled every few milliseconds (an under-estimate of at most one
// sample's growth).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	stop := make(chan struct{})
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if h := read(); h > base && h-base > peak {
				peak = h - base
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	return peak
}

// writeFile writes size bytes produced by fill (called with a writer) to a
// file, compressed by wrap when set.
func writeFile(t *testing.T, name string, fill func(w *bufio.Writer), wrap func(f *os.File) (interface {
	Write([]byte) (int, error)
	Close() error
}, error)) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w *bufio.Writer
	var closer func() error
	if wrap != nil {
		zw, err := wrap(f)
		if err != nil {
			t.Fatal(err)
		}
		w, closer = bufio.NewWriterSize(zw, 1<<20), zw.Close
	} else {
		w = bufio.NewWriterSize(f, 1<<20)
	}
	fill(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if closer != nil {
		if err := closer(); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func gzipped(f *os.File) (interface {
	Write([]byte) (int, error)
	Close() error
}, error) {
	return gzip.NewWriterLevel(f, gzip.BestCompression)
}

func zstded(f *os.File) (interface {
	Write([]byte) (int, error)
	Close() error
}, error) {
	return zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
}

func zeros(n int) func(w *bufio.Writer) {
	return func(w *bufio.Writer) {
		buf := make([]byte, 1<<20)
		for left := n; left > 0; left -= len(buf) {
			w.Write(buf[:min(left, len(buf))])
		}
	}
}

// TestHostileInput: each hostile trace is refused with exit 2 and a message
// naming the file, the line and the limit (or is checked), within a stated
// bound of memory, never a crash or a hang. The bounds are of live heap
// above the test's own; the inputs are far larger than the bounds, so a
// reader that buffers them fails the test.
func TestHostileInput(t *testing.T) {
	threads := 1_000_000
	if testing.Short() {
		threads = 100_000 // the race detector makes the full size a minute
	}
	const mb = 1 << 20
	tests := []struct {
		name   string
		file   func(t *testing.T) string
		args   []string
		code   int
		stderr []string
		heapMB uint64 // bound of the live heap growth
	}{
		{"gzip bomb of zeros (256 MB, no newline)",
			func(t *testing.T) string { return writeFile(t, "bomb.csv.gz", zeros(256*mb), gzipped) },
			nil, 2, []string{"bomb.csv.gz:1:", "line over the limit of 1048576 bytes", "--max-line-bytes"}, 64},
		{"zstd bomb of zeros, long line limit",
			func(t *testing.T) string { return writeFile(t, "bomb.csv.zst", zeros(256*mb), zstded) },
			[]string{"--max-line-bytes", "4194304"}, 2, []string{"bomb.csv.zst:1:", "line over the limit of 4194304 bytes"}, 64},
		{"gzip bomb of zeros in short lines",
			func(t *testing.T) string {
				return writeFile(t, "zerolines.csv.gz", func(w *bufio.Writer) {
					line := append(make([]byte, 99), '\n')
					for range 1_000_000 {
						w.Write(line)
					}
				}, gzipped)
			},
			nil, 2, []string{"zerolines.csv.gz:1:", "NUL byte at column 1"}, 16},
		{"10 MB line",
			func(t *testing.T) string {
				return writeFile(t, "long.csv", func(w *bufio.Writer) {
					w.WriteString("1, 1, a.c-1, Write, x\n1, 1, a.c-2, Write, ")
					w.WriteString(strings.Repeat("y", 10*mb))
					w.WriteString("\n")
				}, nil)
			},
			nil, 2, []string{"long.csv:2:", "line over the limit of 1048576 bytes", "--max-line-bytes"}, 48},
		{"gzip bomb of valid lines over --max-events",
			func(t *testing.T) string {
				return writeFile(t, "lines.csv.gz", func(w *bufio.Writer) {
					for range 2_000_000 {
						w.WriteString("1, 1, a.c-1, Write, x\n")
					}
				}, gzipped)
			},
			[]string{"--max-events", "100000"}, 2, []string{"lines.csv.gz:100001:", "more than 100000 events", "--max-events"}, 64},
		{"decompressed size over --max-trace-bytes",
			func(t *testing.T) string {
				return writeFile(t, "big.csv.gz", func(w *bufio.Writer) {
					for range 1_000_000 {
						w.WriteString("1, 1, a.c-1, Write, x\n")
					}
				}, gzipped)
			},
			[]string{"--max-trace-bytes", "1000000"}, 2, []string{"big.csv.gz:", "over the limit of 1000000 bytes", "--max-trace-bytes"}, 64},
		{"NUL bytes in a name",
			func(t *testing.T) string {
				return writeTrace(t, "nul.csv", "1, 1, a.c-1, Write, x\n2, 1, a.c-1, Write, x\x00y\n")
			},
			nil, 2, []string{"nul.csv:2:", "NUL byte at column"}, 16},
		{fmt.Sprintf("%d threads on one variable: refused by --max-models", threads),
			func(t *testing.T) string {
				return writeFile(t, "threads.csv", func(w *bufio.Writer) {
					for i := range threads {
						fmt.Fprintf(w, "t%d, 1, a.c-1, Write, x\n", i)
					}
				}, nil)
			},
			nil, 2, []string{"threads.csv needs", "--max-models=1000000"}, 1024},
		{fmt.Sprintf("%d threads, one variable each: checked", threads),
			func(t *testing.T) string {
				return writeFile(t, "own.csv", func(w *bufio.Writer) {
					for i := range threads {
						fmt.Fprintf(w, "t%d, 1, a.c-1, Write, x%d\n", i, i)
					}
				}, nil)
			},
			nil, 0, nil, 1024},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.file(t)
			args := append([]string{"run", "--engine", "native", "--no-cache", "--quiet"}, tc.args...)
			args = append(args, p)
			var code int
			var stderr bytes.Buffer
			done := make(chan struct{})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			peak := peakHeap(func() {
				defer close(done)
				code = dispatch(ctx, args, &bytes.Buffer{}, &stderr)
			})
			<-done
			if ctx.Err() != nil {
				t.Fatalf("hung: still running after 5 minutes")
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q does not say %q", stderr.String(), want)
				}
			}
			if peak > tc.heapMB*mb {
				t.Errorf("live heap grew by %d MB, bound %d MB", peak/mb, tc.heapMB)
			}
			t.Logf("exit %d, heap +%d MB: %s", code, peak/mb, strings.TrimSpace(stderr.String()))
		})
	}
}
