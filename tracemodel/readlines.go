package tracemodel

import (
	"bufio"
	"context"
	"io"
	"sync"
)

// The text parse runs on two goroutines, three for a compressed trace
// (its decompression runs ahead on its own, aheadReader). A reader
// goroutine cuts the input into lines, enforces the line and size limits,
// and splits and checks each line on its own (preLine.parse); the
// caller's goroutine applies the lines in order to the builder
// (builder.take), which holds all the state of the trace. The lines travel
// in batches, a few ahead of the builder, so memory stays bounded.
//
// The builder sees exactly what the one-goroutine loop saw: one item per
// turn of the read loop, each with the line read in that turn (if any)
// and the error that ended the read (if any), and the turns' line numbers.

const (
	batchLines   = 4096      // turns of the read loop in one batch
	batchBytes   = 512 << 10 // bytes of line text in one batch
	batchesAhead = 3         // batches the reader may fill before the builder takes them
)

// readTurn is one turn of the read loop.
type readTurn struct {
	at      int  // the number of the line the turn reads: 1 + the lines before it
	hasLine bool // the turn read a line (line)
	line    preLine
	err     error // the error that ends the read, after line if any
}

// lineBatch is a run of turns; the lines' bytes are in buf.
type lineBatch struct {
	buf   []byte
	turns []readTurn
	last  bool // no batch follows
}

// lineReader is the reader goroutine of one parse.
type lineReader struct {
	full chan *lineBatch // filled batches, in order
	free chan *lineBatch // batches the builder is done with
	quit chan struct{}   // closed: the builder stops
	done chan struct{}   // closed when the reader goroutine has returned
	once sync.Once
}

// readLines starts the reader goroutine of trace name on r. The caller
// must call stop before it closes what r reads.
func readLines(ctx context.Context, r *bufio.Reader, name string, maxLine int, maxBytes int64) *lineReader {
	l := &lineReader{
		full: make(chan *lineBatch, batchesAhead),
		free: make(chan *lineBatch, batchesAhead+2),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range batchesAhead + 2 {
		l.free <- &lineBatch{}
	}
	go l.run(ctx, r, name, maxLine, maxBytes)
	return l
}

// next returns the next batch, in order; the last one has last set.
func (l *lineReader) next() *lineBatch { return <-l.full }

// release gives back a batch that the builder is done with.
func (l *lineReader) release(b *lineBatch) { l.free <- b }

// stop ends the reader goroutine and waits for it.
func (l *lineReader) stop() {
	l.once.Do(func() { close(l.quit) })
	<-l.done
}

func (l *lineReader) run(ctx context.Context, r *bufio.Reader, name string, maxLine int, maxBytes int64) {
	defer close(l.done)
	b := l.get()
	if b == nil {
		return
	}
	var long []byte
	lineNo := 0
	var total int64
	for {
		b.turns = append(b.turns, readTurn{at: lineNo + 1})
		turn := &b.turns[len(b.turns)-1]
		end := func(err error) { l.end(b, turn, err) }
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				if len(long) > maxLine {
					end(overLimit(name, lineNo+1, "line", int64(maxLine), "--max-line-bytes"))
					return
				}
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > maxLine {
			end(overLimit(name, lineNo+1, "line", int64(maxLine), "--max-line-bytes"))
			return
		}
		if total += int64(len(line)); maxBytes > 0 && total > maxBytes {
			end(overLimit(name, lineNo+1, "trace (decompressed)", maxBytes, "--max-trace-bytes"))
			return
		}
		if len(line) > 0 {
			lineNo++
			if lineNo&0xffff == 0 {
				if cerr := ctx.Err(); cerr != nil {
					end(cerr)
					return
				}
			}
			// The batch's buffer never grows, so that the fields of its
			// earlier lines stay where they are; a line that does not fit
			// gets its own.
			var text []byte
			if n := len(b.buf); n+len(line) <= cap(b.buf) {
				b.buf = append(b.buf, line...)
				text = b.buf[n:]
			} else {
				text = append([]byte(nil), line...)
			}
			turn.hasLine = true
			turn.line.parse(lineNo, text)
		}
		if err == io.EOF {
			end(nil)
			return
		}
		if err != nil {
			end(&ParseError{File: name, Line: lineNo + 1, Msg: "reading trace: " + readErrText(err)})
			return
		}
		if len(b.turns) == batchLines || len(b.buf) >= batchBytes-batchBytes/8 {
			if !l.send(b) {
				return
			}
			if b = l.get(); b == nil {
				return
			}
		}
	}
}

// end sends b as the last batch, its last turn ended by err (nil: the
// input's end).
func (l *lineReader) end(b *lineBatch, turn *readTurn, err error) {
	turn.err = err
	b.last = true
	l.send(b)
}

// get returns an empty batch, nil when the builder has stopped.
func (l *lineReader) get() *lineBatch {
	select {
	case b := <-l.free:
		if b.buf == nil {
			b.buf = make([]byte, 0, batchBytes)
			b.turns = make([]readTurn, 0, batchLines)
		}
		b.buf, b.turns, b.last = b.buf[:0], b.turns[:0], false
		return b
	case <-l.quit:
		return nil
	}
}

// send hands a batch to the builder; false when the builder has stopped.
func (l *lineReader) send(b *lineBatch) bool {
	select {
	case l.full <- b:
		return true
	case <-l.quit:
		return false
	}
}
