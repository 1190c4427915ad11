package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func model(guard int, name string) *tracemodel.PairModel {
	return &tracemodel.PairModel{
		Var:     name,
		Threads: [2]tracemodel.ThreadRef{{ID: 1, Handle: name + "a"}, {ID: 2, Handle: name + "b"}},
		Locks:   []tracemodel.LockRef{{Name: name + "lock"}},
		Steps: [2][]tracemodel.Step{
			{{Kind: tracemodel.StepRead, Events: []tracemodel.EventRef{{TraceLine: 3, File: name}}}, {Kind: tracemodel.StepWrite}},
			{{Kind: tracemodel.StepLock}, {Kind: tracemodel.StepWrite, Guard: guard}, {Kind: tracemodel.StepUnlock}},
		},
	}
}

func TestKey(t *testing.T) {
	pats := ltl.Builtin()
	a := Key(model(0, "x"), pats, "auto")
	if b := Key(model(0, "other"), pats, "auto"); a != b {
		t.Errorf("names, handles and source lines must not change the key")
	}
	for name, k := range map[string]string{
		"guard":    Key(model(1, "x"), pats, "auto"),
		"engine":   Key(model(0, "x"), pats, "spin"),
		"patterns": Key(model(0, "x"), pats[:3], "auto"),
	} {
		if k == a {
			t.Errorf("%s does not change the key", name)
		}
	}
	rw := model(0, "x")
	rw.Locks[0].RW = true
	if Key(rw, pats, "auto") == a {
		t.Errorf("lock kind does not change the key")
	}
	atomic := model(0, "x")
	atomic.Steps[0][1].Atomic = true
	if Key(atomic, pats, "auto") == a {
		t.Errorf("an atomic write does not change the key")
	}
	// The precise lost update has other terms and a plain last write.
	precise := append([]ltl.Pattern(nil), pats...)
	precise[2] = precise[2].Precise()
	plain := append([]ltl.Pattern(nil), precise...)
	plain[2].PlainLast = false
	if kp, kl := Key(model(0, "x"), precise, "auto"), Key(model(0, "x"), plain, "auto"); kp == a || kl == a || kp == kl {
		t.Errorf("the precise P3 and its plain last write do not change the key")
	}
	// A set model: which accesses are of the second variable, the
	// variables whose writes commute and a part's start past a boundary
	// change the verdicts, so the key (two sets whose variables were
	// accessed in another order shared a key, and one model got the
	// other's instances).
	sets := ltl.BothAssignments(ltl.BuiltinSets())
	set := func(edit func(pm *tracemodel.PairModel)) string {
		pm := model(0, "x")
		pm.Var2 = "y"
		pm.Steps[0][1].Second = true
		pm.Steps[1][1].Second = true
		edit(pm)
		return Key(pm, sets, "auto")
	}
	s := set(func(*tracemodel.PairModel) {})
	for name, k := range map[string]string{
		"second":       set(func(pm *tracemodel.PairModel) { pm.Steps[0][0].Second, pm.Steps[0][1].Second = true, false }),
		"only updates": set(func(pm *tracemodel.PairModel) { pm.OnlyUpdates[1] = true }),
		"broken":       set(func(pm *tracemodel.PairModel) { pm.Broken = true }),
	} {
		if k == s {
			t.Errorf("%s does not change the key", name)
		}
	}
}

func TestPutGetConcurrent(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := Key(model(0, "x"), ltl.Builtin(), "auto")
	if _, ok := d.Get(key); ok {
		t.Fatal("hit in an empty cache")
	}
	want := Entry{Engine: "spin", Spin: true, Verdicts: []Verdict{{Claim: "P1_1", Violated: true, Witness: []tracemodel.StepRef{{Thread: 0, Index: 0}, {Thread: 1, Index: 1}}}, {Claim: "P1_2"}}}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Put(key, want); err != nil {
				t.Error(err)
			}
			if got, ok := d.Get(key); ok && fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("partial entry read: %+v", got)
			}
		}()
	}
	wg.Wait()
	got, ok := d.Get(key)
	if !ok || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Get = %+v, %v", got, ok)
	}
	if n := d.Len(); n != 1 {
		t.Errorf("%d entries, want 1 (no temp files left)", n)
	}
	// A corrupt entry is a miss.
	os.WriteFile(d.file(key), []byte("{not json"), 0o644)
	if _, ok := d.Get(key); ok {
		t.Error("corrupt entry was a hit")
	}
	matches, _ := filepath.Glob(filepath.Join(d.path, "*", ".*.tmp-*"))
	if len(matches) > 0 {
		t.Errorf("temp files left: %v", matches)
	}
}
