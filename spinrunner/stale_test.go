//go:build unix

package spinrunner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoveStale: the work directory of a dead process is removed; those of
// a live process, of this process and without a PID are kept.
func TestRemoveStale(t *testing.T) {
	parent := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })

	mk := func(name string) string {
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sub", "pan.c"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	deadDir := mk(fmt.Sprintf("mcpredict-spin-%d-123", dead.Process.Pid))
	keep := []string{
		mk(fmt.Sprintf("mcpredict-spin-%d-456", live.Process.Pid)),
		mk(fmt.Sprintf("mcpredict-spin-%d-789", os.Getpid())),
		mk("mcpredict-spin-1234567"), // older versions: no PID
		mk("other-99999999-1"),
	}
	// A real work dir of this runner is named after this process.
	r := New(Tools{}, Options{})
	r.tmpParent = parent
	own, _, err := r.workDir("m")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(own), fmt.Sprintf("mcpredict-spin-%d-", os.Getpid())) {
		t.Errorf("work dir %s does not carry the PID", own)
	}
	keep = append(keep, own)

	n, err := RemoveStale(parent)
	if err != nil || n != 1 {
		t.Errorf("RemoveStale = %d, %v; want 1, nil", n, err)
	}
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Errorf("dir of a dead process still there: %v", err)
	}
	for _, d := range keep {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("kept dir %s: %v", d, err)
		}
	}
	if n, err := RemoveStale(parent); n != 0 || err != nil {
		t.Errorf("second RemoveStale = %d, %v", n, err)
	}
}
