//go:build !linux

package recorder

import (
	"errors"
	"os"
)

// punchHole frees bytes [off, off+n) of f; only Linux can.
func punchHole(f *os.File, off, n int64) error { return errors.ErrUnsupported }
