//go:build !unix

package spinrunner

import (
	"io/fs"
	"os/exec"
)

// killGroupOnCancel keeps exec's default on systems without process groups:
// cancellation kills the direct child only.
func killGroupOnCancel(cmd *exec.Cmd) {}

// processAlive cannot tell a dead process here: every process counts as
// alive, so RemoveStale removes nothing.
func processAlive(pid int) bool { return true }

func ownedByMe(info fs.FileInfo) bool { return false }
