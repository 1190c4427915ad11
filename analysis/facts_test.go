package analysis

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestHeldLockSize: the lock-set index views int32 slices as HeldLocks.
func TestHeldLockSize(t *testing.T) {
	if heldLockWords != 3 || unsafe.Sizeof(HeldLock{}) != 12 || unsafe.Alignof(HeldLock{}) > 4 {
		t.Errorf("HeldLock: %d bytes, aligned on %d", unsafe.Sizeof(HeldLock{}), unsafe.Alignof(HeldLock{}))
	}
}

// referenceLockSets is the lock-set replay with a slice per set (the
// index's first form), for TestLockSets.
func referenceLockSets(m *tracemodel.Model) (before [][]HeldLock, end [][]HeldLock) {
	cur := make([][]HeldLock, len(m.Threads))
	depth := map[[2]int32]int{}
	for i := range m.Events {
		e := &m.Events[i]
		t := e.Thread - 1
		before = append(before, cur[t])
		k := [2]int32{e.Thread, e.Obj}
		switch e.Kind {
		case tracemodel.Lock, tracemodel.TryLock, tracemodel.WrLock, tracemodel.RdLock:
			if depth[k]++; depth[k] > 1 {
				continue
			}
			ns := append(append([]HeldLock(nil), cur[t]...), HeldLock{Lock: e.Obj, Shared: e.Kind == tracemodel.RdLock, Acquired: int32(i)})
			cur[t] = ns
		case tracemodel.Unlock, tracemodel.RwUnlock:
			if depth[k] == 0 {
				continue
			}
			if depth[k]--; depth[k] > 0 {
				continue
			}
			var ns []HeldLock
			for _, h := range cur[t] {
				if h.Lock != e.Obj {
					ns = append(ns, h)
				}
			}
			cur[t] = ns
		}
	}
	return before, cur
}

// TestLockSets compares the index, kept in the heap and in a spilled
// model's files, with the reference replay on the shipped traces and
// generated ones of every kind: the holds before every event and at the
// end of every thread, and set ids that are equal only for equal holds.
func TestLockSets(t *testing.T) {
	traces := map[string][]byte{}
	files, _ := filepath.Glob("../examples/*.csv")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		traces[filepath.Base(f)] = b
	}
	for seed := range int64(40) {
		for _, c := range []gen.Config{
			{Kind: gen.KindRandom, Seed: seed, Events: 60},
			{Kind: gen.KindServer, Seed: seed, Threads: 3, Phases: 2, Bugs: 4},
		} {
			var buf bytes.Buffer
			if _, err := gen.Write(context.Background(), &buf, c); err != nil {
				t.Fatal(err)
			}
			traces[fmt.Sprintf("%s-%d", c.Kind, seed)] = buf.Bytes()
		}
	}
	dir := t.TempDir()
	for name, text := range traces {
		for _, spill := range []tracemodel.SpillMode{tracemodel.SpillNever, tracemodel.SpillAlways} {
			m, err := tracemodel.Parse(context.Background(), bytes.NewReader(text), name, tracemodel.Options{Spill: spill, SpillDir: dir, Lenient: true})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			l := computeLockSets(m)
			before, end := referenceLockSets(m)
			ids := map[int32][]HeldLock{}
			for i := range m.Events {
				got := l.Before(int32(i))
				if len(got) != len(before[i]) || len(got) > 0 && !reflect.DeepEqual(got, before[i]) {
					t.Fatalf("%s (%s): holds before event %d: %v, want %v", name, spill, i, got, before[i])
				}
				id := l.SetID(int32(i))
				if prev, ok := ids[id]; ok && !reflect.DeepEqual(prev, got) {
					t.Fatalf("%s: set %d is %v and %v", name, id, prev, got)
				}
				ids[id] = got
			}
			for tid := 1; tid <= len(m.Threads); tid++ {
				if got := l.AtEnd(tid); len(got) != len(end[tid-1]) || len(got) > 0 && !reflect.DeepEqual(got, end[tid-1]) {
					t.Fatalf("%s: thread %d ends holding %v, want %v", name, tid, got, end[tid-1])
				}
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
