package recorder

import (
	"bufio"
	"bytes"
	"container/heap"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The conversion of issue 38 (batched reading in a goroutine of its own,
// caches of names, indexes and locations, the DataRead index window as a
// ring, the trace written by a goroutine of its own, the temporary log
// freed as it is read) must write the same bytes as before. These tests
// convert real recordings both ways: the reference is the reader and the
// index window of before (kept here) with the caches off.

// refThreadReader reads the records of one thread log in order (refScan).
type refThreadReader struct {
	t    *rawThread
	f    *os.File
	r    *bufio.Reader
	next rawEvent
	ok   bool
	n    int64 // records read, for error messages
}

func openRefThreadReader(t *rawThread) (*refThreadReader, error) {
	f, err := os.Open(t.path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(headerSize, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	tr := &refThreadReader{t: t, f: f, r: bufio.NewReaderSize(f, 64<<10)}
	if err := tr.advance(); err != nil {
		f.Close()
		return nil, err
	}
	return tr, nil
}

// advance reads the next record. The log ends at EOF, at a partial record
// (the file was cut), or at a record whose sequence number is still 0
// (never written, or being written when the process died).
func (tr *refThreadReader) advance() error {
	var b [recSize]byte
	if _, err := io.ReadFull(tr.r, b[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			tr.ok = false
			return nil
		}
		return fmt.Errorf("%s: record %d: %w", tr.t.path, tr.n+1, err)
	}
	le := binary.LittleEndian
	sk := le.Uint64(b[0:])
	if sk == 0 {
		tr.ok = false
		return nil
	}
	tr.n++
	k := kind(sk >> 56)
	if k == 0 || k > kindMax {
		return fmt.Errorf("%s: record %d: unknown event kind %d", tr.t.path, tr.n, k)
	}
	tr.next = rawEvent{
		Seq:    sk & seqMask,
		Kind:   k,
		Thread: tr.t,
		PC:     le.Uint64(b[8:]),
		Addr:   le.Uint64(b[16:]),
		Extra:  le.Uint64(b[24:]),
	}
	switch k {
	case kDRead, kCRead:
		// extra = size | value << 8
		tr.next.Kind, tr.next.Data, tr.next.Copy = kRead, true, k == kCRead
		tr.next.Val, tr.next.Extra = tr.next.Extra>>8, tr.next.Extra&0xff
	case kDRead8, kCRead8:
		tr.next.Kind, tr.next.Data, tr.next.Copy, tr.next.Val = kRead8, true, k == kCRead8, tr.next.Extra
	}
	tr.ok = true
	return nil
}

// refReaderHeap orders thread readers by the sequence number of their next
// event.
type refReaderHeap []*refThreadReader

func (h refReaderHeap) Len() int           { return len(h) }
func (h refReaderHeap) Less(i, j int) bool { return h[i].next.Seq < h[j].next.Seq }
func (h refReaderHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refReaderHeap) Push(x any)        { *h = append(*h, x.(*refThreadReader)) }
func (h *refReaderHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// refScan is the reader of the log before issue 38 (a k-way merge over
// container/heap and bufio readers, one event at a time), kept as the
// reference of scanBatches.
func refScan(l *rawLog, fn func(evs []rawEvent) error) error {
	var h refReaderHeap
	defer func() {
		for _, tr := range h {
			tr.f.Close()
		}
	}()
	for _, t := range l.Threads {
		tr, err := openRefThreadReader(t)
		if err != nil {
			return err
		}
		if !tr.ok {
			tr.f.Close()
			continue
		}
		h = append(h, tr)
	}
	heap.Init(&h)
	for len(h) > 0 {
		tr := h[0]
		ev := tr.next
		if err := fn([]rawEvent{ev}); err != nil {
			return err
		}
		if err := tr.advance(); err != nil {
			return err
		}
		if tr.ok {
			heap.Fix(&h, 0)
		} else {
			tr.f.Close()
			heap.Pop(&h)
		}
	}
	return nil
}

// fastCase is a program recorded for the comparisons: the recorder's
// fixtures and examples that exercise the heap (malloc and --alloc-func
// blocks, names by path, type and site), stacks, TLS, atomics, memcpy
// expansion, C++, DataReads used as indexes, and a large kernel.
type fastCase struct {
	src   string
	alloc []AllocFunc
	args  []string
}

var fastCases = []fastCase{
	{src: "testdata/features.c"},
	{src: "testdata/churn.c"},
	{src: "testdata/atomic_chain.c"},
	{src: "testdata/big_copy.c"},
	{src: "testdata/threads.cpp"},
	{src: "testdata/typenames/typenames.c"},
	{src: "testdata/steer/steer.c"},
	{src: "testdata/bench_rec.c", args: []string{"6"}},
	{src: "../examples/c/rec_heap_names.c", args: []string{"2", "200"}},
	{src: "../examples/c/rec_stack_ctx.c", args: []string{"2", "200"}},
	{src: "../examples/c/rec_atomic_ref.c", args: []string{"1", "200"}},
	{src: "../examples/c/rec_tls.c", args: []string{"3"}},
	{src: "../examples/c/rec_pool_alloc.c", args: []string{"4"}, alloc: []AllocFunc{{Name: "pool_get", Arg: 2}, {Name: "pool_put", Free: true, Arg: 2}}},
	{src: "../examples/c/freelist_index_ok.c"},
	{src: "../examples/c/atomic_index.c", args: []string{"4", "400"}},
	{src: "../examples/c/kvserver.c"},
}

// recordRaw builds and runs a fastCase and returns the directory of its
// raw log, in dir.
func recordRaw(t *testing.T, c fastCase, dir string) string {
	t.Helper()
	requireTool(t, "gcc")
	src := filepath.FromSlash(c.src)
	if isCxxSource(src) {
		requireTool(t, "g++")
	}
	prog := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	var stderr bytes.Buffer
	args := []string{"-O1", "-o", prog, src}
	if err := CCWith(testContext(t), args, CCOptions{AllocFuncs: c.alloc}, testCacheDir(), false, &stderr, &stderr); err != nil {
		t.Fatalf("mcpredict cc %s: %v\n%s", src, err, stderr.String())
	}
	raw, err := os.MkdirTemp(dir, "raw-")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Record(testContext(t), io.Discard, RecordOptions{Program: prog, Args: c.args, RawDir: raw, Stdout: &out, Stderr: &out}); err != nil {
		t.Fatalf("recording %s: %v\n%s", prog, err, out.String())
	}
	return raw
}

// convertWith converts raw with the given reader, batch size and caches.
func convertWith(t *testing.T, raw string, opts ConvertOptions, scan func(*rawLog, func([]rawEvent) error) error, batch int, caches bool) (string, Stats) {
	t.Helper()
	oldScan, oldBatch, oldCaches := scanEvents, scanBatch, nameCaches
	scanEvents, scanBatch, nameCaches = scan, batch, caches
	defer func() { scanEvents, scanBatch, nameCaches = oldScan, oldBatch, oldCaches }()
	var b bytes.Buffer
	st, err := Convert(raw, &b, opts)
	if err != nil {
		t.Fatalf("converting %s: %v", raw, err)
	}
	return b.String(), st
}

// TestConvertMatchesReference converts each recording with the reference
// reader and no caches, and with the fast paths (small and default
// batches, the log freed as it is read, full paths, no function events):
// the traces must be the same bytes. The recordings are made in parallel,
// the conversions one at a time (they set the package's knobs).
func TestConvertMatchesReference(t *testing.T) {
	raws := make([]string, len(fastCases))
	dir := t.TempDir()
	t.Run("record", func(t *testing.T) {
		for i, c := range fastCases {
			t.Run(filepath.Base(c.src), func(t *testing.T) {
				t.Parallel()
				raws[i] = recordRaw(t, c, dir)
			})
		}
	})
	for i, c := range fastCases {
		raw := raws[i]
		if raw == "" {
			continue
		}
		t.Run(filepath.Base(c.src), func(t *testing.T) {
			for _, opts := range []ConvertOptions{{}, {FullPaths: true, NoFuncs: true}} {
				want, wantSt := convertWith(t, raw, opts, refScan, 1, false)
				if !strings.Contains(want, "# end: ") {
					t.Fatalf("reference conversion incomplete:\n%s", want)
				}
				for _, batch := range []int{1, 7, 4096} {
					got, st := convertWith(t, raw, opts, (*rawLog).scanBatches, batch, true)
					if got != want {
						t.Fatalf("batch %d, %+v: the trace differs from the reference at %s", batch, opts, firstDiff(want, got))
					}
					if !slices.Equal(st.Warnings, wantSt.Warnings) || st.Events != wantSt.Events {
						t.Errorf("batch %d: stats %+v, want %+v", batch, st, wantSt)
					}
				}
				// A copy of the log, freed as it is read (Record's
				// temporary log).
				cp := filepath.Join(t.TempDir(), "raw")
				if out, err := exec.Command("cp", "-r", raw, cp).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v\n%s", err, out)
				}
				o := opts
				o.Consume = true
				if got, _ := convertWith(t, cp, o, (*rawLog).scanBatches, 4096, true); got != want {
					t.Fatalf("consumed, %+v: the trace differs from the reference at %s", opts, firstDiff(want, got))
				}
			}
		})
	}
}

// firstDiff describes where two traces first differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("the end: %d lines, want %d", len(lb), len(la))
}

// writeSyntheticLog writes the raw log of process 7 into dir: a thread log
// per token with the given records (seq, kind) of 4-byte accesses, and
// tail appended to the first.
func writeSyntheticLog(t *testing.T, dir string, logs map[uint64][][2]uint64, tail []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "p7.meta"), []byte("mcprec 2\npid 7\nexe /nonexistent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for tok, recs := range logs {
		var b bytes.Buffer
		h := make([]byte, headerSize)
		copy(h, rawMagic)
		binary.LittleEndian.PutUint32(h[8:], rawVersion)
		binary.LittleEndian.PutUint32(h[12:], recSize)
		binary.LittleEndian.PutUint64(h[16:], tok)
		b.Write(h)
		for _, r := range recs {
			for _, v := range []uint64{r[1]<<56 | r[0], 0x1000, 0x2000 + 8*(r[0]%64), 4} {
				b.Write(binary.LittleEndian.AppendUint64(nil, v))
			}
		}
		if tok == 1 {
			b.Write(tail)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p7.t%d.bin", tok)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScanBatchesErrors: a log cut in the middle of a record ends there; a
// record of an unknown kind is an error after every event before it, with
// the reference reader's message.
func TestScanBatchesErrors(t *testing.T) {
	dir := t.TempDir()
	writeSyntheticLog(t, dir, map[uint64][][2]uint64{
		1: {{1, uint64(kRead)}, {3, uint64(kWrite)}, {5, uint64(kRead)}},
		2: {{2, uint64(kWrite)}, {4, uint64(kRead)}, {6, 63}, {7, uint64(kRead)}},
	}, []byte{1, 2, 3})
	l, err := openRawLog(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	collect := func(scan func(*rawLog, func([]rawEvent) error) error) ([]uint64, error) {
		var seqs []uint64
		err := scan(l, func(evs []rawEvent) error {
			for _, e := range evs {
				seqs = append(seqs, e.Seq)
			}
			return nil
		})
		return seqs, err
	}
	want, wantErr := collect(refScan)
	for _, batch := range []int{1, 2, 4096} {
		scanBatch = batch
		got, err := collect((*rawLog).scanBatches)
		scanBatch = 4096
		if !slices.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("batch %d: %v, %v; want %v, %v", batch, got, err, want, wantErr)
		}
	}
	if wantErr == nil || !strings.Contains(wantErr.Error(), "unknown event kind 63") {
		t.Errorf("reference error %v", wantErr)
	}
	// fn's error stops the scan.
	stop := errors.New("stop")
	n := 0
	err = l.scan(func(ev *rawEvent) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Errorf("scan after fn's error: %v after %d events", err, n)
	}
}

// failWriter fails once it has taken n bytes.
type failWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errDiskFull
	}
	return len(p), nil
}

// TestConvertWriteError: an error of the trace's writer, at the first
// chunk, a later one or the last, is Convert's error.
func TestConvertWriteError(t *testing.T) {
	dir := t.TempDir()
	var a, b [][2]uint64
	for seq := uint64(1); seq <= 80000; seq += 2 {
		a = append(a, [2]uint64{seq, uint64(kRead)})
		b = append(b, [2]uint64{seq + 1, uint64(kWrite)})
	}
	writeSyntheticLog(t, dir, map[uint64][][2]uint64{1: a, 2: b}, nil)
	var all bytes.Buffer
	if _, err := Convert(dir, &all, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, outChunk + 10, all.Len() - 1} {
		if _, err := Convert(dir, &failWriter{n: n}, ConvertOptions{}); !errors.Is(err, errDiskFull) {
			t.Errorf("writer failing after %d of %d bytes: %v", n, all.Len(), err)
		}
	}
	if _, err := Convert(dir, &failWriter{n: all.Len()}, ConvertOptions{}); err != nil {
		t.Errorf("writer taking all %d bytes: %v", all.Len(), err)
	}
}

// TestAppendSeq: the sequence numbers counted up in decimal are those
// strconv writes.
func TestAppendSeq(t *testing.T) {
	var c csvWriter
	seq := uint64(0)
	r := rand.New(rand.NewSource(1))
	var b []byte
	for i := 0; i < 200000; i++ {
		switch r.Intn(10) {
		case 0:
			seq = uint64(r.Int63n(1 << 56))
		case 1:
			seq -= uint64(r.Intn(3))
		case 2:
			seq = 999999 - uint64(r.Intn(10))
		default:
			seq += uint64(r.Intn(12))
		}
		b = c.appendSeq(b[:0], seq)
		if want := strconv.FormatUint(seq, 10); string(b) != want {
			t.Fatalf("appendSeq(%d) = %s", seq, b)
		}
	}
}

// refIndexWatch and refIndexUse are the DataRead index window before
// issue 38: every entry counts its accesses down.
type refIndexWatch struct {
	live int
	w    [indexWindow]struct {
		seq, val uint64
		left     int
	}
}

func refIndexUse(n *namer, ws map[uint64]*refIndexWatch, used map[uint64]bool, ev *rawEvent) {
	tok := ev.Thread.Token
	iw := ws[tok]
	if iw != nil && iw.live > 0 {
		var buf [4]uint64
		idxs := n.arrayIndexes(ev.Addr, buf[:0])
		for i := range iw.w {
			e := &iw.w[i]
			if e.left == 0 {
				continue
			}
			for _, x := range idxs {
				if e.val == x || e.val == x+1 {
					used[e.seq] = true
					e.left = 1
					break
				}
			}
			if e.left--; e.left == 0 {
				iw.live--
			}
		}
	}
	if !ev.Data || ev.Val > maxIndexValue {
		return
	}
	if iw == nil {
		iw = &refIndexWatch{}
		ws[tok] = iw
	}
	for i := range iw.w {
		if e := &iw.w[i]; e.left == 0 {
			e.seq, e.val, e.left = ev.Seq, ev.Val, indexWindow
			iw.live++
			return
		}
	}
}

// TestIndexUseMatchesReference: the first pass marks the same DataReads
// used as the reference window does, on the recordings.
func TestIndexUseMatchesReference(t *testing.T) {
	for _, c := range fastCases {
		t.Run(filepath.Base(c.src), func(t *testing.T) {
			t.Parallel()
			raw := recordRaw(t, c, t.TempDir())
			l, err := openRawLog(raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			lr := newLearned()
			n := newNamer(newProcSyms(l.Modules, false, nil), l, lr)
			ws, used := map[uint64]*refIndexWatch{}, map[uint64]bool{}
			reads := 0
			err = l.scan(func(ev *rawEvent) error {
				n.learn(ev)
				switch ev.Kind {
				case kRead, kWrite, kRead8:
					// learn changed nothing indexUse depends on after it.
					refIndexUse(n, ws, used, ev)
					if ev.Data {
						reads++
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for seq := range used {
				if !lr.indexUsed.has(seq) {
					t.Errorf("DataRead %d used by the reference only", seq)
				}
			}
			for i, w := range lr.indexUsed {
				for b := range 64 {
					if seq := uint64(i*64 + b); w&(1<<b) != 0 && !used[seq] {
						t.Errorf("DataRead %d used, not by the reference", seq)
					}
				}
			}
			t.Logf("%d DataReads, %d used as indexes", reads, len(used))
		})
	}
}

// TestIndexUseRandom drives the window and the reference with random
// accesses of three threads to an array of ints on the heap and random
// DataReads of small values: the same DataReads are used.
func TestIndexUseRandom(t *testing.T) {
	r := rand.New(rand.NewSource(38))
	intType := &dwarf.IntType{BasicType: dwarf.BasicType{CommonType: dwarf.CommonType{ByteSize: 4, Name: "int"}}}
	for round := 0; round < 50; round++ {
		l := &rawLog{Threads: []*rawThread{{Token: 1}, {Token: 2}, {Token: 3}}}
		for i, th := range l.Threads {
			th.idx = i
		}
		lr := newLearned()
		n := newNamer(newProcSyms(nil, false, nil), l, lr)
		n.heap.alloc(&block{base: 0x10000, size: 4 * 64, sizeKnown: true, id: 1, typ: intType})
		ws, used := map[uint64]*refIndexWatch{}, map[uint64]bool{}
		gap := 1 + r.Intn(24) // accesses between a DataRead and its use
		for seq := uint64(1); seq < 3000; seq++ {
			ev := rawEvent{Seq: seq, Kind: kRead, Thread: l.Threads[r.Intn(3)], Extra: 4}
			switch x := r.Intn(gap + 1); {
			case x == 0:
				ev.Data, ev.Val, ev.Addr = true, uint64(r.Intn(70)), 0x20000 // a count, outside the array
			case x < 3:
				ev.Addr = 0x10000 + 4*uint64(r.Intn(64)) // an element
			default:
				ev.Addr = 0x30000 // elsewhere
			}
			n.indexUse(&ev)
			refIndexUse(n, ws, used, &ev)
		}
		for seq := range used {
			if !lr.indexUsed.has(seq) {
				t.Fatalf("round %d: DataRead %d used by the reference only", round, seq)
			}
		}
		for i, w := range lr.indexUsed {
			for b := range 64 {
				if seq := uint64(i*64 + b); w&(1<<b) != 0 && !used[seq] {
					t.Fatalf("round %d: DataRead %d used, not by the reference", round, seq)
				}
			}
		}
	}
}
