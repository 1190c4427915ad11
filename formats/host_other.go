//go:build !linux

package formats

import "os/exec"

// setParentDeathSignal: only Linux has a parent-death signal; elsewhere the
// plugin notices that its parent is gone (formatplugin.Serve).
func setParentDeathSignal(*exec.Cmd) {}
