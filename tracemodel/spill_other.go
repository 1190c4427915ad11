//go:build !linux

package tracemodel

import "sync/atomic"

// Spilling needs Linux's fallocate and madvise; elsewhere SpillAuto keeps
// the trace in memory and SpillAlways is an error.

type mappedFile struct {
	dir  string
	data []byte
	size atomic.Int64
}

func newMappedFile(dir string, reserve int64) (*mappedFile, error) {
	return nil, ErrSpillUnsupported
}

func (mf *mappedFile) reserve(n int64) error { return ErrSpillUnsupported }
func (mf *mappedFile) release()              {}
func (mf *mappedFile) written()              {}
func (mf *mappedFile) close() error          { return nil }
func (s *spillStore) startTrimmer()          {}
func (s *spillStore) trimNow()               {}
func (s *spillStore) trimIfOver()            {}

const spillSupported = false
