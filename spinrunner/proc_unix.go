//go:build unix

package spinrunner

import (
	"errors"
	"io/fs"
	"os"
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

// processAlive reports whether a process with this PID exists. A process of
// another user (EPERM) exists too.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownedByMe reports whether the file belongs to the user of this process.
func ownedByMe(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
