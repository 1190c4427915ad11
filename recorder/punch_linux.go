package recorder

import (
	"os"
	"syscall"
)

// punchHole frees bytes [off, off+n) of f (their disk blocks and page
// cache pages), keeping its size: what is read there afterwards is zeros.
func punchHole(f *os.File, off, n int64) error {
	const punchHole, keepSize = 0x02, 0x01 // FALLOC_FL_PUNCH_HOLE, FALLOC_FL_KEEP_SIZE
	return syscall.Fallocate(int(f.Fd()), punchHole|keepSize, off, n)
}
