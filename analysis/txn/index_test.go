package txn

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// reference is the extraction as it was before Set kept no per-event
// arrays: thread by thread, the innermost frame and the transaction of
// every event.
type reference struct {
	frames           []Frame
	txns             []Txn
	labels           bool
	frameOf, txnOfEv []int32
}

func extractReference(m *tracemodel.Model, opts Options) *reference {
	s := &reference{frameOf: make([]int32, len(m.Events)), txnOfEv: make([]int32, len(m.Events))}
	for i := range m.Events {
		if m.Events[i].Kind == tracemodel.Begin {
			s.labels = true
			break
		}
	}
	not, only := set(opts.NotAtomic), set(opts.Atomic)
	atomic := func(kind FrameKind, name string, start bool) bool {
		switch {
		case not[name]:
			return false
		case len(only) > 0:
			return only[name]
		case s.labels:
			return kind == Label
		}
		return kind == Func && !start && name != "main"
	}
	for ti := range m.Threads {
		th := &m.Threads[ti]
		var funcs, labels []int32
		nAtomic, cur := 0, int32(-1)
		innermost := func() int32 {
			f, l := int32(-1), int32(-1)
			if k := len(funcs); k > 0 {
				f = funcs[k-1]
			}
			if k := len(labels); k > 0 {
				l = labels[k-1]
			}
			if f < 0 || (l >= 0 && s.frames[l].Start > s.frames[f].Start) {
				return l
			}
			return f
		}
		for i, ev := range th.Events {
			e := &m.Events[ev]
			closed := int32(-1)
			switch e.Kind {
			case tracemodel.Enter, tracemodel.Begin:
				kind := Func
				if e.Kind == tracemodel.Begin {
					kind = Label
				}
				name := m.Objects[e.Obj]
				f := int32(len(s.frames))
				s.frames = append(s.frames, Frame{Parent: innermost(), Thread: int32(ti + 1), Kind: kind, Name: name, Start: ev, End: -1,
					Atomic: atomic(kind, name, i == 0 && e.Loc == 0 && kind == Func)})
				if kind == Func {
					funcs = append(funcs, f)
				} else {
					labels = append(labels, f)
				}
				if s.frames[f].Atomic {
					if nAtomic == 0 {
						cur = int32(len(s.txns))
						s.txns = append(s.txns, Txn{Thread: int32(ti + 1), Frame: f, First: ev, Last: ev})
					}
					nAtomic++
				}
			case tracemodel.Exit:
				if k := len(funcs); k > 0 {
					closed, funcs = funcs[k-1], funcs[:k-1]
				}
			case tracemodel.End:
				for k := len(labels) - 1; k >= 0; k-- {
					if s.frames[labels[k]].Name == m.Objects[e.Obj] {
						closed = labels[k]
						labels = append(labels[:k], labels[k+1:]...)
						break
					}
				}
			}
			if closed >= 0 {
				s.frames[closed].End = ev
				s.frameOf[ev] = closed
			} else {
				s.frameOf[ev] = innermost()
			}
			s.txnOfEv[ev] = cur
			if cur >= 0 {
				s.txns[cur].Last = ev
			}
			if closed >= 0 && s.frames[closed].Atomic {
				if nAtomic--; nAtomic == 0 {
					cur = -1
				}
			}
		}
		if k := len(th.Events); k > 0 {
			for _, f := range append(funcs, labels...) {
				s.frames[f].End = th.Events[k-1]
			}
		}
	}
	// Transactions by First, as Extract orders them.
	idx := make([]int32, len(s.txns))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Compare(s.txns[a].First, s.txns[b].First) })
	perm := make([]int32, len(idx))
	txns := make([]Txn, len(idx))
	for n, old := range idx {
		txns[n], perm[old] = s.txns[old], int32(n)
	}
	s.txns = txns
	for i, x := range s.txnOfEv {
		if x >= 0 {
			s.txnOfEv[i] = perm[x]
		}
	}
	return s
}

// randomFrames is a random trace of 1-4 threads whose events open and
// close function and label frames in any order (an Exit or End without an
// open frame, an End of a label that is not the innermost, frames left
// open, a start routine at "?", a first Begin long after the first
// function frames), with accesses between them.
func randomFrames(r *rand.Rand, labels bool) string {
	var b strings.Builder
	threads := 1 + r.Intn(4)
	pos := make([]int, threads+1)
	n := 5 + r.Intn(80)
	lateBegin := r.Intn(3) == 0
	for i := 1; i <= n; i++ {
		t := 1 + r.Intn(threads)
		pos[t]++
		loc := fmt.Sprintf("f.c-%d", 1+r.Intn(30))
		var action, obj string
		switch k := r.Intn(10); {
		case pos[t] == 1 && r.Intn(2) == 0:
			action, obj, loc = "Enter", "worker", "?"
		case k < 2:
			action, obj = "Enter", []string{"f", "g", "main", "h"}[r.Intn(4)]
		case k < 4:
			action, obj = "Exit", "f"
		case k < 6 && labels && (!lateBegin || i > n/2):
			action, obj = []string{"Begin", "End"}[r.Intn(2)], []string{"L", "M"}[r.Intn(2)]
		default:
			action, obj = []string{"Read", "Write"}[r.Intn(2)], []string{"x", "y"}[r.Intn(2)]
		}
		fmt.Fprintf(&b, "%d, %d, %s, %s, %s\n", t, i, loc, action, obj)
	}
	return b.String()
}

// TestExtractMatchesReference: the frames, the transactions and every
// event's innermost frame and transaction are those of the per-event
// extraction, on random traces under each kind of option, with TxnOf asked
// in trace order, in reverse and at random (its hint).
func TestExtractMatchesReference(t *testing.T) {
	opts := []Options{
		{},
		{Atomic: []string{"f", "L"}},
		{NotAtomic: []string{"g", "M"}},
		{Atomic: []string{"main", "worker"}},
	}
	r := rand.New(rand.NewSource(38))
	for i := 0; i < 3000; i++ {
		trace := randomFrames(r, i%3 != 0)
		m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "t.csv", tracemodel.Options{})
		if err != nil {
			t.Fatalf("%v\n%s", err, trace)
		}
		for _, o := range opts {
			ref := extractReference(m, o)
			s, err := Extract(context.Background(), m, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameSet(m, s, ref, r); err != nil {
				t.Fatalf("options %+v: %v\n%s", o, err, trace)
			}
		}
	}
}

func sameSet(m *tracemodel.Model, s *Set, ref *reference, r *rand.Rand) error {
	if s.Labels != ref.labels {
		return fmt.Errorf("labels %v, want %v", s.Labels, ref.labels)
	}
	// Frames are in another order: compare them by their first event.
	start := func(fs []Frame, f int32) int32 {
		if f < 0 {
			return -1
		}
		return fs[f].Start
	}
	byStart := map[int32]Frame{}
	for _, f := range ref.frames {
		f.Parent = start(ref.frames, f.Parent)
		byStart[f.Start] = f
	}
	if len(s.Frames) != len(ref.frames) {
		return fmt.Errorf("%d frames, want %d", len(s.Frames), len(ref.frames))
	}
	for _, f := range s.Frames {
		f.Parent = start(s.Frames, f.Parent)
		if byStart[f.Start] != f {
			return fmt.Errorf("frame %+v, want %+v", f, byStart[f.Start])
		}
	}
	if len(s.Txns) != len(ref.txns) {
		return fmt.Errorf("%d transactions, want %d", len(s.Txns), len(ref.txns))
	}
	for i, x := range s.Txns {
		w := ref.txns[i]
		if x.Thread != w.Thread || x.First != w.First || x.Last != w.Last || s.Frames[x.Frame].Start != ref.frames[w.Frame].Start {
			return fmt.Errorf("transaction %d: %+v, want %+v", i, x, w)
		}
	}
	n := int32(len(m.Events))
	orders := [][]int32{make([]int32, n), make([]int32, n)}
	for i := int32(0); i < n; i++ {
		orders[0][i], orders[1][i] = i, n-1-i
	}
	orders = append(orders, make([]int32, n))
	for i, v := range r.Perm(int(n)) {
		orders[2][i] = int32(v)
	}
	for _, order := range orders {
		for _, ev := range order {
			if got, want := s.TxnOf(ev), ref.txnOfEv[ev]; got != want {
				return fmt.Errorf("TxnOf(%d) = %d, want %d", ev, got, want)
			}
			if got, want := start(s.Frames, s.FrameOf(ev)), start(ref.frames, ref.frameOf[ev]); got != want {
				return fmt.Errorf("FrameOf(%d) starts at %d, want %d", ev, got, want)
			}
		}
	}
	return nil
}

// TestIndexFollowsFrames: a Set's memory follows the frames, not the
// events: a long trace without frames has no entry at all, and with every
// worker's barrier phase a transaction, one span per transaction and at
// most three frame marks per frame.
func TestIndexFollowsFrames(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 256, Events: 200_000}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		phases bool
	}{{"no frames", false}, {"phases", true}} {
		data := buf.Bytes()
		if tc.phases {
			data = phases(data)
		}
		m, err := tracemodel.Parse(context.Background(), bytes.NewReader(data), "fft.csv", tracemodel.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Extract(context.Background(), m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		spans, marks := 0, 0
		for i := range s.th {
			spans += len(s.th[i].spans)
			marks += len(s.th[i].marks)
		}
		if tc.phases && len(s.Txns) < 100 {
			t.Fatalf("%s: %d transactions", tc.name, len(s.Txns))
		}
		if spans != len(s.Txns) || marks > 3*len(s.Frames) {
			t.Errorf("%s: %d events, %d frames, %d transactions: %d spans, %d marks", tc.name, len(m.Events), len(s.Frames), len(s.Txns), spans, marks)
		}
	}
}

// phases makes each worker's barrier phase of a gen fft trace a Begin/End
// transaction (End before its BarrierWait, Begin before its next event).
func phases(data []byte) []byte {
	var out bytes.Buffer
	open := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ", ")
		if strings.HasPrefix(line, "#") || len(f) < 4 {
			continue
		}
		if t := f[0]; t != "main" {
			if !open[t] && f[3] != "BarrierWait" {
				out.WriteString(t + ", 0, fft.c-0, Begin, phase\n")
				open[t] = true
			}
			if open[t] && f[3] == "BarrierWait" {
				out.WriteString(t + ", 0, fft.c-0, End, phase\n")
				open[t] = false
			}
		}
		out.WriteString(line + "\n")
	}
	return out.Bytes()
}
