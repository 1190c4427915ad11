package txn

import (
	"context"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestStreamMatchesExtract: a Stream fed each event as the parser adds it
// (restarting at a late first Begin) ends with Extract's frames and
// transactions, except the End of frames left open (known only from the
// whole trace); Add's transaction and end of every event are TxnOf's and
// the transaction's Last, and Open says which transactions no event closed.
func TestStreamMatchesExtract(t *testing.T) {
	r := rand.New(rand.NewSource(39))
	restarts := 0
	for i := 0; i < 2000; i++ {
		trace := randomFrames(r, i%3 != 0)
		for _, o := range []Options{{}, {Atomic: []string{"f", "L"}}, {NotAtomic: []string{"g", "M"}}} {
			var s *Stream
			type placed struct {
				x    int32
				ends bool
			}
			var got []placed
			visit := func(m *tracemodel.Model, ev int32) bool {
				if s == nil {
					s = NewStream(m, o)
				}
				x, ends, restart := s.Add(ev)
				if restart {
					restarts++
					got = got[:0]
					for i := int32(0); i <= ev; i++ {
						x, ends, _ := s.Add(i)
						got = append(got, placed{x, ends})
					}
					return false
				}
				got = append(got, placed{x, ends})
				return false
			}
			m, err := tracemodel.Parse(context.Background(), strings.NewReader(trace), "t.csv", tracemodel.Options{Visit: visit})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Extract(context.Background(), m, o)
			if err != nil {
				t.Fatal(err)
			}
			set := s.Set()
			frames := append([]Frame(nil), set.Frames...)
			for k := range frames {
				if frames[k].End < 0 {
					frames[k].End = want.Frames[k].End
				}
			}
			if !reflect.DeepEqual(frames, want.Frames) || !reflect.DeepEqual(set.Txns, want.Txns) || set.Labels != want.Labels {
				t.Fatalf("options %+v: streamed frames %v txns %v, Extract's %v %v\n%s", o, frames, set.Txns, want.Frames, want.Txns, trace)
			}
			for ev, p := range got {
				x := want.TxnOf(int32(ev))
				closed := x >= 0 && !s.Open(x)
				if p.x != x || p.ends != (closed && want.Txns[x].Last == int32(ev)) {
					t.Fatalf("options %+v: event %d placed in %d (ends %v), TxnOf %d\n%s", o, ev, p.x, p.ends, x, trace)
				}
			}
		}
	}
	if restarts == 0 {
		t.Error("no stream restarted at a late Begin")
	}
}
