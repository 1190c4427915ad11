package formats

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel kill the plugin when mcpredict
// dies, even by SIGKILL (Close cannot run then).
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
