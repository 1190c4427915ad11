package tracemodel

import (
	"io"
	"sync"
)

// aheadChunk is the size of the chunks aheadReader reads ahead;
// aheadChunks of them are in flight.
const (
	aheadChunk  = 256 << 10
	aheadChunks = 4
)

// aheadReader reads its source on a goroutine of its own, a few chunks
// ahead of its reader: a compressed trace's decompression, on the parse's
// reader goroutine, which also cuts and checks the lines, made it the
// slower of the parse's two goroutines (readlines.go), a third of the read
// of a gzipped server trace.
type aheadReader struct {
	full chan aheadRead // chunks read, in order
	free chan []byte    // chunks the reader is done with
	quit chan struct{}  // closed by Close
	done chan struct{}  // closed when the goroutine has returned
	once sync.Once

	cur  []byte // the rest of the chunk being read
	held []byte // that chunk, to give back
	err  error  // the error after cur, once it is read
}

// aheadRead is a chunk read and the error that ended the read after it.
type aheadRead struct {
	b   []byte
	err error
}

// newAheadReader starts reading src ahead; Close stops it.
func newAheadReader(src io.Reader) *aheadReader {
	a := &aheadReader{
		full: make(chan aheadRead, aheadChunks),
		free: make(chan []byte, aheadChunks+1),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range aheadChunks + 1 {
		a.free <- make([]byte, aheadChunk)
	}
	go a.run(src)
	return a
}

func (a *aheadReader) run(src io.Reader) {
	defer close(a.done)
	for {
		var buf []byte
		select {
		case buf = <-a.free:
		case <-a.quit:
			return
		}
		n, err := 0, error(nil)
		for n < len(buf) && err == nil {
			var k int
			k, err = src.Read(buf[n:])
			n += k
		}
		select {
		case a.full <- aheadRead{b: buf[:n], err: err}:
		case <-a.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read reads what the goroutine read, in order, then its error.
func (a *aheadReader) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.held != nil {
			a.free <- a.held[:cap(a.held)]
		}
		c := <-a.full
		a.cur, a.held, a.err = c.b, c.b, c.err
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// Close stops the goroutine and waits for it; it returns nil.
func (a *aheadReader) Close() error {
	a.once.Do(func() { close(a.quit) })
	<-a.done
	return nil
}
