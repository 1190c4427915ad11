package spinrunner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// workDirPrefix starts the name of every temporary work directory:
// mcpredict-spin-<pid>-<random>, where pid is the process that created it.
const workDirPrefix = "mcpredict-spin-"

// RemoveStale removes the temporary work directories under parent (""
// means os.TempDir()) left by processes that no longer run: a process
// killed with SIGKILL cannot remove its own. A directory is removed only if
// its name carries the PID of a process that does not exist and, on Unix,
// it belongs to this user; directories of live processes, of this process,
// and those named without a PID (older versions) are kept. It returns the
// number of directories removed; an error is returned for those that could
// not be, after trying them all.
func RemoveStale(parent string) (removed int, err error) {
	if parent == "" {
		parent = os.TempDir()
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0, fmt.Errorf("removing stale work dirs: %w", err)
	}
	var errs []error
	for _, e := range entries {
		pid, ok := workDirPID(e.Name())
		if !ok || pid == os.Getpid() || !e.IsDir() { // IsDir: not a symbolic link
			continue
		}
		dir := filepath.Join(parent, e.Name())
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() || !ownedByMe(info) || processAlive(pid) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing stale work dir: %w", err))
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// workDirPID returns the PID in a work directory name
// mcpredict-spin-<pid>-<random>.
func workDirPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, workDirPrefix)
	if !ok {
		return 0, false
	}
	pidText, random, ok := strings.Cut(rest, "-")
	if !ok || random == "" {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}
