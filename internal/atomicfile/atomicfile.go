// Package atomicfile writes files so that readers, and a crash, never see
// them half written: the content goes to a temporary file in the same
// directory, which is then renamed over the target.
//
// It does not fsync: the guarantee is against interrupted writers and
// concurrent readers, not against power loss.
package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Write writes the file at path with fn, atomically, with mode perm.
func Write(path string, perm os.FileMode, fn func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// A device, a FIFO, a terminal (-o /dev/null, -o /dev/stdout):
		// written in place; a rename would replace it with a file.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return errors.Join(fn(f), f.Close())
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := fn(tmp); err != nil {
		tmp.Close()
		return err
	}
	// CreateTemp makes the file private.
	if err := errors.Join(tmp.Chmod(perm), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
