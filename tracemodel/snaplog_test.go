package tracemodel

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// replayOrder replays the whole trace into an order, its snapshots kept as
// rows (dense) or as persistent clocks: the synchronization order (v < 0)
// or the data-flow order of variable v.
func replayOrder(m *Model, v int32, dense bool) *Order {
	b := m.newOrderBuilder([2]int32{v, v})
	if !dense {
		for i := range b.clocks {
			b.clocks[i].width = 0
		}
	}
	if v >= 0 {
		b.withFlow, b.flow = true, make([]varFlow, len(m.Vars))
	}
	for i := range m.Events {
		b.event(&m.Events[i], int32(i))
	}
	return &Order{clocks: b.clocks}
}

// TestDenseSnapshots checks that an order whose snapshots are rows is the
// order whose snapshots are persistent clocks: every clock of every thread
// at every position, and every first dependence, for the synchronization
// order and the data-flow order of every variable.
func TestDenseSnapshots(t *testing.T) {
	n := 500
	if testing.Short() {
		n = 100
	}
	for seed := int64(0); seed < int64(n); seed++ {
		text := randomFlowTrace(seed)
		m := parse(t, text)
		if len(m.Threads) > denseThreads {
			t.Fatalf("seed %d: %d threads, too many for rows", seed, len(m.Threads))
		}
		for v := int32(-1); v < int32(len(m.Vars)); v++ {
			if v == 0 {
				continue
			}
			want, got := replayOrder(m, v, false), replayOrder(m, v, true)
			if got.clocks[0].width == 0 {
				t.Fatal("the dense replay keeps persistent clocks")
			}
			for tid := 1; tid <= len(m.Threads); tid++ {
				for other := 1; other <= len(m.Threads); other++ {
					if w, g := want.firstDependence(tid, other, math.MaxInt32), got.firstDependence(tid, other, math.MaxInt32); w != g {
						t.Fatalf("seed %d, variable %d: thread %d first depends on thread %d at %d, want %d\n%s", seed, v, tid, other, g, w, text)
					}
					// clockFrom, with its hint carried from one position to
					// the next, on both kinds of snapshots, then asked at
					// random positions.
					hints := [2]int{-1, -1}
					last := int32(len(m.Threads[tid-1].Events)) + 1
					r := rand.New(rand.NewSource(seed))
					for k := int32(0); k <= 2*last; k++ {
						pos := k
						if k > last {
							pos = r.Int31n(last + 1)
						}
						w := want.Clock(tid, pos, other)
						if g := got.Clock(tid, pos, other); w != g {
							t.Fatalf("seed %d, variable %d: thread %d at %d knows %d events of thread %d, want %d\n%s",
								seed, v, tid, pos, g, other, w, text)
						}
						for i, o := range [2]*Order{want, got} {
							if g := o.clockFrom(tid, pos, other, &hints[i]); g != w {
								t.Fatalf("seed %d, variable %d: clockFrom(%d, %d, %d) = %d, want %d", seed, v, tid, pos, other, g, w)
							}
						}
					}
				}
			}
		}
	}
}

// TestLazyOrder checks that a data-flow order replayed only as far as it
// is asked about (Model.DataflowOrder) is the order replayed to the end:
// every clock and first dependence, asked in a random order of threads and
// positions, on random traces with data flow (too short for checkpoints:
// TestCheckpointedDataflowOrder has those).
func TestLazyOrder(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 100
	}
	for seed := int64(0); seed < int64(n); seed++ {
		text := randomFlowTrace(seed)
		m := parse(t, text)
		r := rand.New(rand.NewSource(seed))
		for v := int32(1); v < int32(len(m.Vars)); v++ {
			want, got := replayOrder(m, v, true), m.DataflowOrder(int(v))
			type ask struct {
				tid, other int
				pos        int32
			}
			var asks []ask
			for tid := 1; tid <= len(m.Threads); tid++ {
				for other := 1; other <= len(m.Threads); other++ {
					for pos := int32(0); pos <= int32(len(m.Threads[tid-1].Events))+1; pos++ {
						asks = append(asks, ask{tid, other, pos})
					}
				}
			}
			r.Shuffle(len(asks), func(i, j int) { asks[i], asks[j] = asks[j], asks[i] })
			for _, a := range asks {
				if w, g := want.firstDependence(a.tid, a.other, math.MaxInt32), got.firstDependence(a.tid, a.other, a.pos); (w > 0 && w < a.pos) != (g > 0) || g > 0 && g != w {
					t.Fatalf("seed %d, variable %d: thread %d first depends on thread %d before %d at %d, want %d\n%s", seed, v, a.tid, a.other, a.pos, g, w, text)
				}
				if w, g := want.Clock(a.tid, a.pos, a.other), got.Clock(a.tid, a.pos, a.other); w != g {
					t.Fatalf("seed %d, variable %d: thread %d at %d knows %d events of thread %d, want %d\n%s",
						seed, v, a.tid, a.pos, g, a.other, w, text)
				}
			}
		}
	}
}

// TestLazyOrderConcurrent asks a lazily replayed data-flow order from
// several goroutines at once, as the models of one variable do (under
// -race it finds an unguarded replay).
func TestLazyOrderConcurrent(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		text := randomFlowTrace(seed)
		m := parse(t, text)
		for v := int32(1); v < int32(len(m.Vars)); v++ {
			want, got := replayOrder(m, v, true), m.DataflowOrder(int(v))
			var wg sync.WaitGroup
			errs := make(chan string, 4)
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewSource(seed*4 + int64(g)))
					for range 200 {
						tid := 1 + r.Intn(len(m.Threads))
						other := 1 + r.Intn(len(m.Threads))
						pos := int32(r.Intn(len(m.Threads[tid-1].Events) + 2))
						if w, g := want.Clock(tid, pos, other), got.Clock(tid, pos, other); w != g {
							errs <- fmt.Sprintf("seed %d, variable %d: thread %d at %d knows %d events of thread %d, want %d", seed, v, tid, pos, g, other, w)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatal(e)
			}
		}
	}
}

// TestSnapLog adds more than two chunks of random snapshots to logs in the
// heap and in a file, takes prefixes of them at and between chunk
// boundaries, appends to the prefixes, and requires every position and
// component to be the reference's, and the logs they were cut from
// unchanged.
func TestSnapLog(t *testing.T) {
	const nt = 9
	r := rand.New(rand.NewSource(1))
	type snap struct {
		pos  int32
		vals [nt]int32
	}
	var ref []snap
	var vc vclock
	pos := int32(0)
	for range 2*chunkRows + 77 {
		pos += 1 + int32(r.Intn(3))
		var s snap
		s.pos = pos
		for c := range nt {
			if r.Intn(3) == 0 {
				vc, _ = vc.set(c, vc.get(c)+int32(r.Intn(5)))
			}
			s.vals[c] = vc.get(c)
		}
		ref = append(ref, s)
	}
	check := func(name string, l *snapLog, want []snap) {
		t.Helper()
		if l.len() != len(want) {
			t.Fatalf("%s: %d snapshots, want %d", name, l.len(), len(want))
		}
		for i, s := range want {
			if l.pos(i) != s.pos {
				t.Fatalf("%s: snapshot %d at %d, want %d", name, i, l.pos(i), s.pos)
			}
			if l.at(s.pos) != i || l.at(s.pos-1) != i-1 && (i == 0 || want[i-1].pos != s.pos-1) {
				t.Fatalf("%s: at(%d) = %d, want %d", name, s.pos, l.at(s.pos), i)
			}
			for c := range nt {
				if g := l.get(i, c); g != s.vals[c] {
					t.Fatalf("%s: snapshot %d component %d = %d, want %d", name, i, c, g, s.vals[c])
				}
			}
		}
	}
	rowOf := func(s snap) vclock {
		var v vclock
		for c, x := range s.vals {
			v, _ = v.set(c, x)
		}
		return v
	}
	store := &spillStore{dir: t.TempDir()}
	for _, file := range []bool{false, true} {
		var arena *snapArena
		if file {
			arena = &snapArena{store: store, bound: int64(4*chunkRows) * (nt + 1) * 4}
			store.snaps = map[*snapArena]bool{arena: true}
		}
		logs := newSnapLogs(nt, arena)
		l := &logs[0]
		for _, s := range ref {
			l.add(s.pos, rowOf(s))
		}
		if file && (arena.mf == nil || store.snapBytes == 0) {
			t.Fatal("the rows are not in the file")
		}
		check(fmt.Sprint("file ", file), l, ref)
		for _, n := range []int{0, 1, chunkRows - 1, chunkRows, chunkRows + 1, 2 * chunkRows} {
			p := l.prefix(n)
			check(fmt.Sprint("file ", file, " prefix ", n), &p, ref[:n])
			// Appending to the prefix leaves l as it is.
			more := ref[n:][:min(len(ref)-n, chunkRows+3)]
			for _, s := range more {
				s.vals[0]++
				p.add(s.pos, rowOf(s))
			}
			check(fmt.Sprint("file ", file, " after prefix ", n), l, ref)
		}
		if file {
			arena.close()
			if arena.mf != nil || store.snapBytes != 0 || len(store.snaps) != 0 {
				t.Fatalf("close left the file: %d bytes, %d arenas", store.snapBytes, len(store.snaps))
			}
		}
	}
}

// TestSpilledOrders checks the orders of a spilled model, whose rows are
// in files, against a replay in the heap: the synchronization order and
// every variable's data-flow order, replayed from checkpoints, and that
// Close gives back every file.
func TestSpilledOrders(t *testing.T) {
	if !spillSupported {
		t.Skip("no spilling on this system")
	}
	dir := t.TempDir()
	fds := openFiles(t)
	files := 0
	for seed := int64(0); seed < 60; seed++ {
		text := randomFlowTrace(seed)
		m, err := Parse(context.Background(), strings.NewReader(text), "t.csv", Options{Spill: SpillAlways, SpillDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		m.flowCk = &flowCheckpoints{every: 1 + int(seed%5)}
		for v := int32(-1); v < int32(len(m.Vars)); v++ {
			if v == 0 {
				continue
			}
			want := replayOrder(m, v, false)
			got := m.sync
			if v > 0 {
				got = m.order(v)
			}
			if got.arena == nil {
				t.Fatalf("seed %d, variable %d: the order's rows are not for a file", seed, v)
			}
			files += btoi(got.arena.mf != nil)
			for tid := 1; tid <= len(m.Threads); tid++ {
				for other := 1; other <= len(m.Threads); other++ {
					for pos := int32(0); pos <= int32(len(m.Threads[tid-1].Events)); pos++ {
						if w, g := want.Clock(tid, pos, other), got.Clock(tid, pos, other); w != g {
							t.Fatalf("seed %d, variable %d: thread %d at %d knows %d events of thread %d, want %d\n%s",
								seed, v, tid, pos, g, other, w, text)
						}
					}
				}
			}
			if v > 0 && seed%2 == 0 {
				got.Release()
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if files == 0 {
		t.Error("no order's rows went to a file")
	}
	if n := openFiles(t); n > fds {
		t.Errorf("%d files open after Close, %d before", n, fds)
	}
}

// openFiles returns the number of the process's open files.
func openFiles(t *testing.T) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(fds)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLockOpSize: a lockOp is three int32s, as the lock operations' file
// holds it (placeLockOps), and a server trace keeps one per lock operation.
func TestLockOpSize(t *testing.T) {
	if lockOpSize != 12 || unsafe.Sizeof(lockOp{})%4 != 0 || unsafe.Alignof(lockOp{}) > 4 {
		t.Errorf("lockOp: %d bytes, aligned on %d", unsafe.Sizeof(lockOp{}), unsafe.Alignof(lockOp{}))
	}
}

// TestSnapLogAtFrom checks atFrom against at for every hint, on a log of
// snapshots with gaps between their positions: hints behind, at and far
// before the answer (past the short forward scan), and out of range.
func TestSnapLogAtFrom(t *testing.T) {
	var l snapLog
	for p := int32(3); p < 400; p += 1 + p%7 {
		l.poss = append(l.poss, p)
	}
	l.n = len(l.poss)
	for pos := int32(0); pos < 410; pos++ {
		want := l.at(pos)
		for h := -2; h <= l.n+1; h++ {
			if got := l.atFrom(pos, h); got != want {
				t.Fatalf("atFrom(%d, hint %d) = %d, want %d", pos, h, got, want)
			}
		}
	}
}
