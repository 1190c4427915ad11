package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// cancelWriter collects output and cancels a context once it contains a
// string: the test's stand-in for a SIGINT at that moment.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	when   string
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(b)
	if strings.Contains(w.buf.String(), w.when) {
		w.cancel()
	}
	return n, err
}

func (w *cancelWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestBatchInterrupted: a batch interrupted after its first trace exits 4
// and says how many traces were not checked; run again, it finishes them.
func TestBatchInterrupted(t *testing.T) {
	traces, err := filepath.Glob("../../examples/*.csv")
	if err != nil || len(traces) < 3 {
		t.Fatalf("examples: %v %v", traces, err)
	}
	more, _ := filepath.Glob("../../examples/*/*.csv")
	traces = append(traces, more...)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errw := &cancelWriter{when: " events, ", cancel: cancel}
	var stdout bytes.Buffer
	args := []string{"batch", "--engine", "native", "--no-cache", "--out-dir", out, "../../examples"}
	code := dispatch(ctx, args, &stdout, errw)
	if code != exitInterrupted {
		t.Errorf("exit status %d, want %d\nstderr:\n%s", code, exitInterrupted, errw)
	}
	want := fmt.Sprintf("interrupted: %d of %d traces not checked", len(traces)-1, len(traces))
	if !strings.Contains(errw.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, errw)
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("%d not checked (interrupted)", len(traces)-1)) {
		t.Errorf("summary does not count the traces not checked:\n%s", stdout.String())
	}

	code, so, se := runCLI(t, args...)
	if code != exitViolation || !strings.Contains(so, fmt.Sprintf("%d traces (%d checked now, 1 from an earlier run)", len(traces), len(traces)-1)) {
		t.Errorf("resumed batch: exit %d\n%s\n%s", code, so, se)
	}
}
