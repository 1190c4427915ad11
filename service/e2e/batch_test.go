package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchCommand runs `mcpredict batch` as a user would: exit statuses,
// resumption and the comparison with a previous batch.
func TestBatchCommand(t *testing.T) {
	traces := t.TempDir()
	for _, f := range []string{"bank.csv", "fig5.csv", "condvar-handoff.csv"} {
		copyFile(t, filepath.Join(repo, "examples", f), filepath.Join(traces, f))
	}
	out1 := filepath.Join(t.TempDir(), "night1")
	out2 := filepath.Join(t.TempDir(), "night2")
	run := func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"batch", "--engine", "native", "--no-cache"}, args...)...)
		cmd.Env = env()
		b, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			return ee.ExitCode(), string(b)
		case err != nil:
			t.Fatal(err)
		}
		return 0, string(b)
	}
	tests := []struct {
		name     string
		args     []string
		status   int
		contains []string
	}{
		{"first batch", []string{"--out-dir", out1, "--formats", "text,sarif", traces}, 1,
			[]string{"3 traces (3 checked now, 0 from an earlier run), 0 errors", "bank.csv"}},
		{"resumed: nothing to do", []string{"--out-dir", out1, traces}, 1,
			[]string{"finished earlier, skipped", "3 traces (0 checked now, 3 from an earlier run)"}},
		{"compared: no new bug", []string{"--out-dir", out2, "--previous", out1, traces}, 0,
			[]string{"0 new, 0 fixed"}},
		{"bad trace", []string{"--out-dir", t.TempDir(), filepath.Join(repo, "examples", "bank.csv"), writeBad(t)}, 2,
			[]string{"bad.csv:1:"}},
		{"no input", []string{"--out-dir", t.TempDir(), filepath.Join(traces, "none*.csv")}, 2,
			[]string{"no such file"}},
		{"usage", nil, 2, []string{"want at least one DIR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := run(tt.args...)
			if status != tt.status {
				t.Errorf("exit status %d, want %d:\n%s", status, tt.status, out)
			}
			for _, want := range tt.contains {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
	for _, f := range []string{"summary.json", "summary.txt", "reports/bank.csv.json", "reports/bank.csv.text", "reports/bank.csv.sarif"} {
		if _, err := os.Stat(filepath.Join(out1, f)); err != nil {
			t.Error(err)
		}
	}
}

func writeBad(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(p, []byte("1, 1, a.c-1, Frobnicate, x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
