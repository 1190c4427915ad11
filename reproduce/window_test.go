package reproduce

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/recorder"
)

func TestParseRunLog(t *testing.T) {
	l := parseRunLog([]string{
		"start pause_ms=300 occurrence=1 prehold=0 unresolved=0 remote=1 points=0",
		"trigger occurrence=1 addr=0x10 size=4 locks=2 seq=7 ms=2",
		"hold after-unlock phase=2 step=L1 seq=9 ms=2",
		"remote step=1 addr=0x10 kind=R seq=10 ms=21",
		"release after-unlock after_ms=19 why=matched step=L1 seq=12 ms=21",
		"hold point=1 phase=0 seq=20 ms=30",
		"fatal signal=6 seq=25 ms=31 thread=1",
		"exit seq=26 ms=32 thread=1",
	})
	if !l.Armed || len(l.Holds) != 2 || l.Fatal != 6 || l.End == nil || l.End.Seq != 25 || l.End.Thread != "1" {
		t.Fatalf("log %+v", l)
	}
	if h := l.Holds[0]; !h.Released || h.Begin.Seq != 9 || h.End.Seq != 12 || h.Why != "matched" || h.AfterMs != 19 {
		t.Errorf("first hold %+v", h)
	}
	if h := l.lastHold(); h == nil || h.Where != "point=1" || h.Released {
		t.Errorf("last hold %+v, want point=1 still held", h)
	}
	if l.Status != -1 || l.endedWell() {
		t.Errorf("a process killed by a signal: status %d, ended well %v", l.Status, l.endedWell())
	}
	for _, tc := range []struct {
		line   string
		status int
		well   bool
	}{{"exit status=0 seq=26 ms=32 thread=1", 0, true}, {"exit status=1 seq=26 ms=32 thread=1", 1, false}, {"exit seq=26 ms=32 thread=1", -1, false}} {
		if l := parseRunLog([]string{tc.line}); l.Status != tc.status || l.endedWell() != tc.well || l.End == nil || l.End.Seq != 26 {
			t.Errorf("%q: %+v, ended well %v", tc.line, l, l.endedWell())
		}
	}
}

// trace builds a CSV trace of events "thread seq file-line action object".
func trace(lines ...string) string {
	var b strings.Builder
	b.WriteString("# a trace\n")
	for _, l := range lines {
		b.WriteString(strings.Join(strings.Fields(l), ", ") + "\n")
	}
	return b.String()
}

func TestPlace(t *testing.T) {
	recorded := map[orderKey]bool{{"a.c:10 Write", "a.c:20 Read"}: true, {"a.c:20 Read", "a.c:10 Write"}: true}
	// far is a trace whose failure comes n events after the hold (3 to
	// 7) ended, on thread 1's Read of z, or of the events given.
	far := func(n int, last ...string) string {
		lines := []string{"2 5 a.c-10 Write x", "1 6 a.c-20 Read x"}
		for i := 0; i < n; i++ {
			lines = append(lines, "3 "+strconv.Itoa(100+i)+" b.c-5 Write y")
		}
		if len(last) == 0 {
			last = []string{"1 90000 c.c-7 Read z"}
		}
		return trace(append(lines, last...)...)
	}
	// reordered: thread 2 writes x at a site the recorded run never had
	// before thread 1's read.
	reordered := []string{"2 89998 a.c-11 Write x", "1 89999 a.c-20 Read x"}
	held := func(begin, end uint64, fatalSeq uint64) runLog {
		l := runLog{Armed: true, Status: -1, Holds: []holdSpan{{Where: "before-lock", Begin: logPoint{Seq: begin}, End: logPoint{Seq: end, Ms: 10}, Released: end > 0, Why: "timeout"}}}
		if fatalSeq > 0 {
			l.End, l.Fatal = &logPoint{Seq: fatalSeq, Ms: 40, Thread: "1"}, 6
		}
		return l
	}
	crashed := func(l runLog) runLog {
		l.Fatal = 11
		return l
	}
	endedWell := func(l runLog) runLog {
		l.Fatal, l.Status = 0, 0
		return l
	}
	const newX = "a.c:20 Read by thread 1"
	x := []string{"x"}
	tests := []struct {
		name     string
		trace    string
		log      runLog
		vars     []string
		want     string
		events   int
		newOrder string
		why      string // what the placement says, in part ("": not checked)
	}{
		{"no hold", trace("1 1 a.c-1 Read x"), runLog{}, nil, bugs.AttrNoHold, 0, "", ""},
		{"while held", trace("2 5 a.c-10 Write x", "1 6 a.c-20 Read x"), held(4, 0, 6), nil, bugs.AttrWindow, 0, "", ""},
		{"just after", trace("2 5 a.c-10 Write x", "1 6 a.c-30 Read x"), held(3, 4, 6), nil, bugs.AttrWindow, 2, "a.c:30 Read by thread 1", ""},
		{"far, away from its objects", far(nearEvents + 10), held(3, 7, 90000), x, bugs.AttrOutside, nearEvents + 11, "", "left no mark on its variables"},
		// main's final check of a counter the hold reordered.
		{"far, on its reordered objects", far(nearEvents+10, reordered...), held(3, 7, 89999), x, bugs.AttrWindow, nearEvents + 12, newX, ""},
		// On its objects, but in orders the recorded run had: every
		// request of a server touches them.
		{"far, on its objects, as recorded", far(nearEvents+10, "2 89998 a.c-10 Write x", "1 89999 a.c-20 Read x"), held(3, 7, 89999), x, bugs.AttrOutside, nearEvents + 12, "", ""},
		// A crash a little further: what the window freed is used later.
		{"a crash, further", far(nearEvents + 10), crashed(held(3, 7, 90000)), x, bugs.AttrWindow, nearEvents + 11, "", ""},
		{"a crash, far, elsewhere", far(nearCrashEvents, append(reordered, "1 90000 c.c-7 Read z")...), crashed(held(3, 7, 90000)), x, bugs.AttrOutside, nearCrashEvents + 3, newX, "were accessed in an order the recorded run never had, and the access that crashed was not on its objects"},
		{"a crash, far, on its object", far(nearCrashEvents, reordered...), crashed(held(3, 7, 89999)), x, bugs.AttrWindow, nearCrashEvents + 2, newX, ""},
		// Judged after the process ended well: the distance says nothing.
		{"judged after, near, no mark", trace("2 5 a.c-10 Write x", "1 6 a.c-20 Read x", "1 9 c.c-7 Read z"), endedWell(held(3, 7, 9)), x, bugs.AttrOutside, 1, "", ""},
		{"judged after, far, marked", far(nearCrashEvents, append(reordered, "1 90000 c.c-7 Read z", "1 90001 c.c-8 Read z")...), endedWell(held(3, 7, 90001)), x, bugs.AttrWindow, nearCrashEvents + 4, newX, "judged after it ended: its variables were accessed"},
		{"judged after, far, another's mark", far(nearCrashEvents, append(reordered, "1 90000 c.c-7 Read z")...), endedWell(held(3, 7, 90000)), []string{"y"}, bugs.AttrOutside, nearCrashEvents + 3, newX, ""},
		// A prehold at some thread's first lock, and the schedule's L1
		// never came: no window of the candidate ever opened.
		{"only preheld, never armed", trace("2 5 a.c-10 Write x", "1 6 a.c-20 Read x"),
			runLog{Holds: []holdSpan{{Where: "prehold-lock", Begin: logPoint{Seq: 1}, End: logPoint{Seq: 1, Ms: 1}, Released: true, Why: "stuck"}},
				End: &logPoint{Seq: 6, Ms: 40, Thread: "1"}, Fatal: 11}, x, bugs.AttrNoHold, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objects []string
			for _, v := range tt.vars {
				objects = append(objects, ObjectOf(v))
			}
			p, err := place(strings.NewReader(tt.trace), tt.log, objects, tt.vars, recorded)
			if err != nil {
				t.Fatal(err)
			}
			if p.attribution != tt.want {
				t.Fatalf("attribution %s, want %s (%+v)", p.attribution, tt.want, p.window)
			}
			if p.window != nil && p.window.Events != tt.events {
				t.Errorf("%d events after the window, want %d", p.window.Events, tt.events)
			}
			got := ""
			if p.window != nil {
				got = strings.Join(p.window.Interleaved, "\n")
			}
			if (tt.newOrder == "") != (got == "") || !strings.Contains(got, tt.newOrder) {
				t.Errorf("interleaved %q, want %q", got, tt.newOrder)
			}
			if why := tt.why; why != "" && (p.window == nil || !strings.Contains(p.window.Why, why)) {
				t.Errorf("why %+v, want it to say %q", p.window, why)
			}
		})
	}
}

func TestSchedulePointsRoundTrip(t *testing.T) {
	s := Schedule{Bug: "explore", Pattern: "explore", Argv: []string{"./p"}, Stdin: "/tmp/in",
		Points: []Point{{Kind: 'L', File: "a.c", Line: 9, Occurrence: 2, Var: "m"}, {Kind: 'R', File: "b.c", Line: 3, Occurrence: 1, Var: "x.y"}, {Kind: blindPoint, Occurrence: 7}}}
	var b bytes.Buffer
	if err := s.Write(&b, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run1.sched")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSchedule(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stdin != s.Stdin || !slices.Equal(got.Points, s.Points) {
		t.Errorf("read back %+v, want %+v", got, s)
	}
}

func TestFailureIDStable(t *testing.T) {
	a := Outcome{Exit: "killed by signal 6 (aborted)", ExitCode: -1, Stderr: []string{"p: p.c:17: main: Assertion `g == 0' failed.", "pid 123"}}
	b := a
	b.Stderr = []string{"p: p.c:17: main: Assertion `g == 0' failed.", "pid 456"}
	c := a
	c.Stderr = []string{"p: p.c:18: main: Assertion `h == 0' failed."}
	if failureID(a, "p.c:17") != failureID(b, "p.c:17") {
		t.Error("the same failure has two ids")
	}
	if failureID(a, "p.c:17") == failureID(c, "p.c:17") || failureID(a, "p.c:17") == failureID(a, "p.c:9") {
		t.Error("two failures share an id")
	}
	var fs failureSet
	fs.add(a, "explore", "")
	fs.add(b, "explore", "")
	fs.add(c, "AV-1", "")
	if got := fs.failures(controlResult{}); len(got) != 2 || got[0].Runs != 2 || got[1].Source != "AV-1" {
		t.Errorf("failures %+v", got)
	}
}

// TestReproduceRestore records testdata/restore.c, whose recorded run is
// clean, and reproduces it with no candidate: the exploration must make
// main's assertion fire (a failure found by change points alone, pinned
// on its hold), and the program written with one critical section must
// never fail.
func TestReproduceRestore(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	src, _ := filepath.Abs(filepath.Join("testdata", "restore.c"))
	exe := filepath.Join(dir, "restore")
	var out bytes.Buffer
	if err := recorder.CC(ctx, []string{"-O1", "-g", "-o", exe, src}, "", recorder.DefaultCacheDir(), false, &out, &out); err != nil {
		t.Fatalf("mcpredict cc: %v\n%s", err, out.String())
	}
	for _, tc := range []struct {
		arg      string
		wantFail bool
	}{{"bug", true}, {"ok", false}} {
		t.Run(tc.arg, func(t *testing.T) {
			tracePath := filepath.Join(dir, tc.arg+".csv")
			var tr bytes.Buffer
			if _, err := recorder.Record(ctx, &tr, recorder.RecordOptions{Program: exe, Args: []string{tc.arg}, Dir: dir,
				Stdout: &out, Stderr: &out, Timeout: 10 * time.Second}); err != nil {
				t.Fatalf("recording: %v\n%s", err, out.String())
			}
			if !strings.Contains(tr.String(), "# ended: exit status 0\n") {
				t.Fatalf("the recorded run was not clean:\n%s", out.String())
			}
			if err := os.WriteFile(tracePath, tr.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			rec, err := ReadRecording(tracePath)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(ctx, rec, nil, Options{Explore: 30, OutDir: filepath.Join(dir, tc.arg+".runs"), Controls: 1})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantFail {
				if len(res.Failures) != 1 {
					t.Fatalf("%d failures after %d exploring runs, want 1", len(res.Failures), res.Summary.ExploreRuns)
				}
				f := res.Failures[0]
				if f.Source != "explore" || !strings.Contains(f.Evidence, "Assertion") || f.Pinned == "" || f.Schedule == "" {
					t.Errorf("failure %+v", f)
				}
				t.Logf("found in %d exploring runs: %s\n%s", res.Summary.ExploreRuns, f.Pinned, f.Evidence)
				return
			}
			if len(res.Failures) != 0 || res.Summary.FailedRuns != 0 {
				t.Errorf("the correct program failed: %+v", res.Failures)
			}
			if res.Summary.ExploreRuns != 30 {
				t.Errorf("%d exploring runs, want 30", res.Summary.ExploreRuns)
			}
		})
	}
}

func TestExplainUntried(t *testing.T) {
	untried := func() []Result {
		return []Result{
			{Runs: []Outcome{{}}, Reproduction: bugs.Reproduction{Status: bugs.NotReproduced, Runs: 1}},
			{Reproduction: bugs.Reproduction{Status: bugs.NotTried, Evidence: "budget spent before its first run (--max-runs, --budget) or interrupted"}},
			{Reproduction: bugs.Reproduction{Status: bugs.NotTried, Evidence: "no schedule: DL: a cycle of 9 threads"}},
		}
	}
	for _, tc := range []struct {
		interrupted bool
		spent, want string
	}{{false, "--max-runs", "--max-runs ran out before its first run"}, {true, "", "interrupted before its first run"}} {
		rs := untried()
		explainUntried(rs, tc.interrupted, tc.spent)
		if rs[1].Reproduction.Evidence != tc.want || !strings.HasPrefix(rs[2].Reproduction.Evidence, "no schedule") {
			t.Errorf("evidence %q, %q; want %q", rs[1].Reproduction.Evidence, rs[2].Reproduction.Evidence, tc.want)
		}
		s := summarizeRuns(rs, nil, &budget{spent: tc.spent, runs: 1}, tc.interrupted, time.Now())
		if s.Tried != 1 || s.Untried != 1 || s.BudgetSpent != tc.spent || s.Interrupted != tc.interrupted {
			t.Errorf("summary %+v", s)
		}
	}
}

// TestInterleavedElsewhere: two candidates whose runs failed the same way
// with their patterns observed, near a failure where only the first's
// variable was interleaved differently: the failure is the first's, the
// second stays reproduced, not failed. A candidate whose own variable was
// interleaved keeps its failure.
func TestInterleavedElsewhere(t *testing.T) {
	run := func(interleaved ...string) Outcome {
		return Outcome{Exit: "exit status 1", ExitCode: 1, Schedule: Schedule{Ended: "exit status 0"},
			Observation: Observation{Lines: []int{1, 2, 3}},
			Placement:   &placement{attribution: bugs.AttrWindow, window: &bugs.Window{Interleaved: interleaved}, lastSite: "bk.c:47"}}
	}
	result := func(id, v string, o Outcome) Result {
		return Result{Candidate: Candidate{Bug: bugs.Bug{ID: id, Vars: []string{v}}}, Runs: []Outcome{o},
			Reproduction: bugs.Reproduction{Status: bugs.Reproduced, Failed: true, Observed: true}}
	}
	hits := "pg.hits: bk.c:30 Write by thread 3, then bk.c:30 Write by thread 2"
	rs := []Result{
		result("AV-lookups", "lookups", run(hits)),
		result("AV-hits", "pg.hits", run(hits)),
		result("AV-both", "lookups", run(hits, "lookups: bk.c:14 Write by thread 3, then bk.c:14 Read by thread 2")),
	}
	sameFailures(rs)
	if ev := rs[1].Reproduction.Evidence; !strings.Contains(ev, "failed the same way, reported here once: AV-lookups") {
		t.Errorf("AV-hits does not say whose failure it reports: %q", ev)
	}
	if rp := rs[0].Reproduction; rp.Failed || rp.Status != bugs.Reproduced || !strings.Contains(rp.Evidence, "under AV-hits") {
		t.Errorf("the candidate on lookups: %+v, want reproduced, its failure under AV-hits", rp)
	}
	if !rs[1].Reproduction.Failed {
		t.Errorf("AV-hits lost its failure: %+v", rs[1].Reproduction)
	}
	if !rs[2].Reproduction.Failed {
		t.Errorf("a candidate whose own variable was interleaved lost its failure: %+v", rs[2].Reproduction)
	}
}

// TestCommonCause: runs that fail the same way, judged after the program
// ended: each reordered the log counter, one also requests_this_child. The
// candidate on the counter keeps the failure, the other is folded under
// it; two candidates whose runs reordered only their own variables both
// keep theirs.
func TestCommonCause(t *testing.T) {
	run := func(why string, attribution string, reordered ...string) Outcome {
		re := map[string]bool{}
		for _, v := range reordered {
			re[v] = true
		}
		return Outcome{Exit: "exit status 1", ExitCode: 1, Schedule: Schedule{Ended: "exit status 0"},
			Observation: Observation{Lines: []int{1, 2, 3}},
			Placement:   &placement{attribution: attribution, window: &bugs.Window{Why: why}, reordered: re}}
	}
	result := func(id, v string, os ...Outcome) Result {
		return Result{Candidate: Candidate{Bug: bugs.Bug{ID: id, Vars: []string{v}}}, Runs: os,
			Reproduction: bugs.Reproduction{Status: bugs.Reproduced, Failed: true, Observed: true}}
	}
	const judged = "judged after it ended"
	rs := []Result{
		result("AV-outcnt", "buf.outcnt#3", run(judged, bugs.AttrWindow, "buf.outcnt")),
		result("AV-requests", "requests_this_child", run(judged, bugs.AttrWindow, "buf.outcnt", "requests_this_child")),
		result("AV-idlers", "idlers", run(judged, bugs.AttrOutside, "buf.outcnt")),
	}
	sameFailures(rs)
	if !rs[0].Reproduction.Failed || !strings.Contains(rs[0].Reproduction.Evidence, "reported here once: AV-requests") {
		t.Errorf("AV-outcnt: %+v", rs[0].Reproduction)
	}
	if rp := rs[1].Reproduction; rp.Failed || rp.Status != bugs.Reproduced || !strings.Contains(rp.Evidence, "reported under AV-outcnt") {
		t.Errorf("AV-requests: %+v, want reproduced, its failure under AV-outcnt", rp)
	}

	// Near the hold (no why): the window's own evidence, never folded.
	rs = []Result{
		result("AV-outcnt", "buf.outcnt", run(judged, bugs.AttrWindow, "buf.outcnt")),
		result("AV-requests", "requests_this_child", run("", bugs.AttrWindow, "buf.outcnt", "requests_this_child")),
	}
	sameFailures(rs)
	if !rs[1].Reproduction.Failed {
		t.Errorf("a failure near its hold was folded: %+v", rs[1].Reproduction)
	}
	rs = []Result{
		result("AV-a", "a", run(judged, bugs.AttrWindow, "a")),
		result("AV-b", "b", run(judged, bugs.AttrWindow, "b")),
	}
	sameFailures(rs)
	if !rs[0].Reproduction.Failed || !rs[1].Reproduction.Failed {
		t.Errorf("two causes, each its own: %+v, %+v", rs[0].Reproduction, rs[1].Reproduction)
	}
}

// TestChildDied: a load script that exits 1 after its server crashed says
// which process died of what; a run killed by the signal itself does not
// say it twice.
func TestChildDied(t *testing.T) {
	crashed := runLog{Fatal: 11, End: &logPoint{Seq: 789836, Thread: "6"}, Status: -1}
	if got := (Outcome{ExitCode: 1, Log: crashed}).childDied(); got != "a process of the run died of signal 11 (segmentation fault) in thread 6, after event 789836" {
		t.Errorf("script's run: %q", got)
	}
	if got := (Outcome{ExitCode: -1, Exit: "killed by signal 11", Log: crashed}).childDied(); got != "" {
		t.Errorf("the command itself killed: %q", got)
	}
	if got := (Outcome{ExitCode: 1, Log: runLog{Status: 1, End: &logPoint{Seq: 5}}}).childDied(); got != "" {
		t.Errorf("exit(1): %q", got)
	}
}
