package deadlock_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/deadlock"
	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// run runs the deadlock analysis alone on a trace file.
func run(t *testing.T, path string, opts deadlock.Options) *bugs.Report {
	t.Helper()
	m, err := tracemodel.Open(context.Background(), path, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Run(context.Background(), m, []*analysis.Analyzer{deadlock.New(opts)}, analysis.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// summary is the golden form of a report's deadlocks: per bug its id,
// locks, whether it occurred, and each thread's sites.
func summary(rep *bugs.Report) string {
	var b strings.Builder
	for _, bug := range rep.Bugs {
		fmt.Fprintf(&b, "%s %s locks=%s occurred=%v count=%d\n", bug.ID, bug.Pattern, strings.Join(bug.Vars, ","), bug.Occurred, bug.Count)
		v := rep.Violations[bug.Instances[0]]
		for _, a := range v.Accesses {
			fmt.Fprintf(&b, "  thread %s %s %s %s %s\n", a.Handle, a.Role, a.Action, a.Object, a.Location())
		}
		fmt.Fprintf(&b, "  %s\n", v.Message)
	}
	if len(rep.Bugs) == 0 {
		b.WriteString("no deadlock\n")
	}
	fmt.Fprintf(&b, "summary: %s\n", rep.Analyses[0].Summary)
	return b.String()
}

// TestFixtures checks every trace of testdata (the papers' figures, each
// cited in its comment) against its golden file; -update rewrites them.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".csv")
		t.Run(name, func(t *testing.T) {
			got := summary(run(t, f, deadlock.Options{}))
			golden := strings.TrimSuffix(f, ".csv") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s: got\n%s\nwant\n%s", f, got, want)
			}
		})
	}
}

// TestVerdicts states what each figure must give, independently of the
// goldens.
func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		file     string
		bugs     int
		occurred bool
		locks    string
	}{
		{"wang-fig9.2", 1, false, "13,14"}, // Figure 9.2: thread 1 (13 -> 14) and thread 4 (14 -> 13) only
		{"wang-ex5.3", 1, false, "l1,l2"},  // example (5.3)
		{"gate", 0, false, ""},             // the PDL condition: gate lock g
		{"periods", 0, false, ""},          // create, join, barrier
		{"single-thread", 0, false, ""},    // one thread, re-entrant locking
		{"rwlock", 1, false, "m2,rw2"},     // read-read does not block; read-held g is no gate
		{"occurred", 1, true, "a,b"},       // the recording ended in it
	} {
		rep := run(t, filepath.Join("testdata", tc.file+".csv"), deadlock.Options{})
		if len(rep.Bugs) != tc.bugs {
			t.Errorf("%s: %d bugs, want %d:\n%s", tc.file, len(rep.Bugs), tc.bugs, summary(rep))
			continue
		}
		if tc.bugs == 0 {
			continue
		}
		b := rep.Bugs[0]
		vars := append([]string(nil), b.Vars...)
		if got := strings.Join(sorted(vars), ","); got != tc.locks || b.Occurred != tc.occurred || !strings.HasPrefix(b.ID, "DL-") {
			t.Errorf("%s: bug %s locks %s occurred %v, want locks %s occurred %v", tc.file, b.ID, got, b.Occurred, tc.locks, tc.occurred)
		}
	}
}

func sorted(ss []string) []string {
	for i := range ss {
		for j := i + 1; j < len(ss); j++ {
			if ss[j] < ss[i] {
				ss[i], ss[j] = ss[j], ss[i]
			}
		}
	}
	return ss
}

// TestIDsStable: the id of a deadlock depends on its code locations only,
// not on thread handles, lock addresses, trace lines or which thread the
// cycle starts with.
func TestIDsStable(t *testing.T) {
	src, err := os.ReadFile("testdata/wang-ex5.3.csv")
	if err != nil {
		t.Fatal(err)
	}
	base := run(t, "testdata/wang-ex5.3.csv", deadlock.Options{}).Bugs[0].ID
	// Other handles and lock names, the threads in the other order, a
	// comment line shifting every trace line.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(src)), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		th, rest, _ := strings.Cut(l, ",")
		l = "0x7f0" + th + "," + strings.NewReplacer("l1", "0xdead", "l2", "0xbeef").Replace(rest)
		lines = append(lines, l)
	}
	swapped := append(append([]string{"# shifted"}, lines[5:]...), lines[:5]...)
	dir := t.TempDir()
	p := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(p, []byte(strings.Join(swapped, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, p, deadlock.Options{}).Bugs[0].ID; got != base {
		t.Errorf("id %s, want %s", got, base)
	}
}

// TestMaxCycle: the philosophers' five-lock ring is found with cycles of
// up to 5 locks and not with 4 (the bound is documented).
func TestMaxCycle(t *testing.T) {
	var b bytes.Buffer
	const n = 5
	ev := 0
	for i := 0; i < n; i++ {
		for _, l := range []string{
			fmt.Sprintf("%d, %d, ph.c-10, Lock, fork%d", i+1, ev, i),
			fmt.Sprintf("%d, %d, ph.c-11, Lock, fork%d", i+1, ev+1, (i+1)%n),
			fmt.Sprintf("%d, %d, ph.c-12, Unlock, fork%d", i+1, ev+2, (i+1)%n),
			fmt.Sprintf("%d, %d, ph.c-13, Unlock, fork%d", i+1, ev+3, i),
		} {
			b.WriteString(l + "\n")
		}
		ev += 4
	}
	p := filepath.Join(t.TempDir(), "ph.csv")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := len(run(t, p, deadlock.Options{MaxCycle: 5}).Bugs); got != 1 {
		t.Errorf("MaxCycle 5: %d bugs, want 1", got)
	}
	if got := len(run(t, p, deadlock.Options{MaxCycle: 4}).Bugs); got != 0 {
		t.Errorf("MaxCycle 4: %d bugs, want 0", got)
	}
}
