package main

import (
	"fmt"
	"io"

	"github.com/mcpredict/mcpredict/spinrunner"
)

// removeStaleWorkDirs removes the Spin work directories that killed
// mcpredict processes left in the temporary directory, saying so on
// stderr. A failure is only reported: it does not stop the command.
func removeStaleWorkDirs(stderr io.Writer, cmd string) {
	n, err := spinrunner.RemoveStale("")
	if n > 0 {
		fmt.Fprintf(stderr, "mcpredict %s: removed %d stale Spin work directories of dead processes\n", cmd, n)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpredict %s: %v\n", cmd, err)
	}
}
