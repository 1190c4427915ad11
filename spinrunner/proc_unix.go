//go:build unix

package spinrunner

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs the command in its own process group and makes
// context cancellation kill the whole group: gcc runs cc1/as/ld and spin runs
// the preprocessor through a shell, and killing only the direct child would
// leave those running (and writing into a directory being removed).
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
