package tracemodel

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// mappedFile is an unlinked temporary file mapped shared, read-write, over
// a reservation of address space; size bytes of it are backed by reserved
// disk blocks.
type mappedFile struct {
	f    *os.File
	dir  string
	data []byte       // the whole reservation
	size atomic.Int64 // bytes reserved on disk (the trimmer reads it)
}

// newMappedFile makes the file in dir (os.TempDir() if "") and maps
// reserve bytes of address space over it.
func newMappedFile(dir string, reserve int64) (*mappedFile, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "mcpredict-spill-*")
	if err != nil {
		return nil, fmt.Errorf("spilling the trace: %w", err)
	}
	// Unlinked now: the open file and the mapping keep it alive, and
	// nothing is left behind by a crash or a kill -9.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("spilling the trace: %w", err)
	}
	reserve = (reserve + pageSize - 1) &^ (pageSize - 1)
	data, err := unix.Mmap(int(f.Fd()), 0, int(reserve), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("spilling the trace to %s: mapping %d bytes: %w", dir, reserve, err)
	}
	// Small folios: written under MADV_RANDOM, the file's pages go into the
	// page cache as single pages instead of the large folios (up to 2 MB)
	// that readahead makes, and a later fault maps the kernel's
	// fault-around (64 KB) instead of the whole folio. A scan that skips
	// through the file (a variable's accesses) made 1.9 MB resident at each
	// step with large folios, measured on Linux 6.18; the trimmer's bound
	// cannot hold against that between two looks. Advice only: an error
	// changes nothing but the sizes.
	_ = unix.Madvise(data, unix.MADV_RANDOM)
	return &mappedFile{f: f, dir: dir, data: data}, nil
}

// written ends the writing of the file: its pages are in the page cache as
// small folios, and readahead is back for the pages the kernel drops
// under memory pressure, which a scan reads back from the disk (a page at
// a time under MADV_RANDOM; they come back in large folios then).
func (mf *mappedFile) written() {
	if mf != nil {
		_ = unix.Madvise(mf.data, unix.MADV_NORMAL)
	}
}

const pageSize = 1 << 12

// reserve makes the first n bytes of the mapping usable, reserving their
// disk blocks: a full disk is an error here, not a SIGBUS at a write.
func (mf *mappedFile) reserve(n int64) error {
	n = min((n+pageSize-1)&^(pageSize-1), int64(len(mf.data)))
	size := mf.size.Load()
	if n <= size {
		return nil
	}
	err := unix.Fallocate(int(mf.f.Fd()), 0, size, n-size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		// A file system without fallocate: a sparse file, whose blocks
		// are allocated at the first write of each page.
		err = mf.f.Truncate(n)
	}
	if err != nil {
		var what string
		switch {
		case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
			what = "the temporary directory " + mf.dir + " is full"
		case errors.Is(err, unix.EFBIG):
			what = "the file size limit (ulimit -f) is reached in the temporary directory " + mf.dir
		}
		if what != "" {
			return fmt.Errorf("spilling the trace: %s (%d MB of this file reserved, %d MB more needed; --temp-dir chooses another directory, --spill never keeps the trace in memory): %w",
				what, size>>20, (n-size+(1<<20)-1)>>20, err)
		}
		return fmt.Errorf("spilling the trace to %s: %w", mf.dir, err)
	}
	mf.size.Store(n)
	return nil
}

// release drops the mapping's pages from the process's memory; they stay
// in the page cache and the file, and a later read faults them back.
func (mf *mappedFile) release() {
	if mf == nil {
		return
	}
	if size := mf.size.Load(); size > 0 {
		_ = unix.Madvise(mf.data[:size], unix.MADV_DONTNEED)
	}
}

func (mf *mappedFile) close() error {
	if mf == nil {
		return nil
	}
	err := unix.Munmap(mf.data)
	mf.data = nil
	return errors.Join(err, mf.f.Close())
}

// trimEvery is how often the trimmer looks at the resident size.
const trimEvery = 5 * time.Millisecond

// startTrimmer starts the goroutine that keeps the store's resident pages
// within maxResident: when the process's file-backed resident memory
// (/proc/self/statm's shared pages) passes it, every mapping is released
// (trimIfOver). Model.Close stops it.
func (s *spillStore) startTrimmer() {
	statm, err := os.Open("/proc/self/statm")
	if err != nil {
		return // no way to measure: the kernel still drops clean pages under pressure
	}
	s.statm = statm
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(trimEvery)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			s.trimIfOver()
		}
	}()
}

// trimIfOver releases the store's resident pages if they pass
// maxResident. The trimmer calls it every trimEvery, and the long scans of
// the events at most every paceEvery (Model.Pace).
func (s *spillStore) trimIfOver() {
	if s.statm == nil {
		return
	}
	s.statmMu.Lock()
	n, _ := s.statm.ReadAt(s.statmBuf[:], 0) // nothing read: no fields
	shared, ok := statmShared(s.statmBuf[:n])
	s.statmMu.Unlock()
	if ok && shared*pageSize > s.maxResident {
		s.trimNow()
	}
}

// statmShared returns the third field of /proc/self/statm: resident
// file-backed pages.
func statmShared(b []byte) (int64, bool) {
	f := bytes.Fields(b)
	if len(f) < 3 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[2]), 10, 64)
	return n, err == nil
}

// trimNow releases the store's resident pages.
func (s *spillStore) trimNow() {
	s.events.release()
	s.arena.Load().release()
	s.locks.Load().release()
	s.snapMu.Lock()
	for a := range s.snaps {
		a.mf.release()
	}
	s.snapMu.Unlock()
}

const spillSupported = true
