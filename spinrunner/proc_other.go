//go:build !unix

package spinrunner

import "os/exec"

// killGroupOnCancel keeps exec's default on systems without process groups:
// cancellation kills the direct child only.
func killGroupOnCancel(cmd *exec.Cmd) {}
