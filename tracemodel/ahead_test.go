package tracemodel

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"
)

// TestAheadReader checks that aheadReader reads what its source holds, in
// order, for sizes around its chunks; that an error of the source comes
// after the bytes before it; and that Close stops it before the end.
func TestAheadReader(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, aheadChunk - 1, aheadChunk, aheadChunk + 1, 3*aheadChunk + 17, 2*aheadChunks*aheadChunk + 5} {
		data := make([]byte, n)
		r.Read(data)
		for _, src := range []struct {
			name string
			r    io.Reader
		}{
			{"whole", bytes.NewReader(data)},
			{"one byte at a time", iotest.OneByteReader(bytes.NewReader(data))},
			{"half", iotest.HalfReader(bytes.NewReader(data))},
		} {
			if n > aheadChunk+1 && src.name == "one byte at a time" {
				continue
			}
			a := newAheadReader(src.r)
			got, err := io.ReadAll(iotest.HalfReader(a))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%d bytes, %s: read %d bytes (err %v), not the source's", n, src.name, len(got), err)
			}
			a.Close()
		}
		broken := errors.New("broken input")
		a := newAheadReader(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(broken)))
		got, err := io.ReadAll(a)
		if !errors.Is(err, broken) || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes then an error: read %d bytes, error %v", n, len(got), err)
		}
		a.Close()
		// Closed early: the goroutine stops (Close waits for it).
		a = newAheadReader(bytes.NewReader(data))
		a.Read(make([]byte, 1))
		a.Close()
	}
}
