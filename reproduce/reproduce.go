package reproduce

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/recorder"
)

// DeadlockTimeout bounds a directed run of a deadlock: it hangs when the
// schedule works.
const DeadlockTimeout = 10 * time.Second

// Candidate is a bug to reproduce, with the instances whose witnesses give
// its schedules.
type Candidate struct {
	Bug       bugs.Bug
	Instances []bugs.Violation
	// Relaxed is set for a bug only a relaxed model predicts.
	Relaxed bool
}

// CandidatesOf returns the bugs of a report as candidates, in report order,
// with up to maxInstances instances each. Suppressed bugs are left out.
func CandidatesOf(rep *bugs.Report, relaxed bool, maxInstances int) []Candidate {
	var out []Candidate
	for _, b := range rep.Bugs {
		if b.Suppressed {
			continue
		}
		c := Candidate{Bug: b, Relaxed: relaxed}
		for _, i := range b.Instances {
			if i >= 0 && i < len(rep.Violations) && len(c.Instances) < maxInstances {
				c.Instances = append(c.Instances, rep.Violations[i])
			}
		}
		out = append(out, c)
	}
	return out
}

// RankRelaxed orders the candidates of the relaxed models, the likeliest to
// matter first, and returns them in one list; models[i] holds the new
// candidates of the i-th least relaxed model (none of them in an earlier
// model's list). The order, by these keys in turn:
//
//  1. candidates between threads the program started before those of the
//     first thread (it mostly sets up and tears down: its candidates are
//     start-up code);
//  2. the round: a candidate's rank among the candidates of its object
//     (ObjectOf its directed instance's variables: a heap block, a global)
//     in the order of key 3,
//     so that no object has a second candidate tried before every object
//     has had one (a pool allocator's few words, hit by every request,
//     would otherwise fill the quota);
//  3. the models taken in turn, the least relaxed first (each model's
//     first candidate, then each one's second, ...), within a model those
//     with more instances first (a window the threads meet often), then in
//     report order.
func RankRelaxed(models ...[]Candidate) []Candidate {
	type ranked struct {
		c                 Candidate
		main              bool
		round, pos, model int
	}
	var all []ranked
	for m, cs := range models {
		for _, c := range cs {
			all = append(all, ranked{c: c, main: mainThread(c), model: m})
		}
	}
	// pos is the rank within the model (and tier): by instances, then in
	// report order.
	slices.SortStableFunc(all, func(a, b ranked) int {
		if a.model != b.model {
			return a.model - b.model
		}
		return b.c.Bug.Count - a.c.Bug.Count
	})
	n := map[[2]int]int{}
	for i := range all {
		k := [2]int{all[i].model, 0}
		if all[i].main {
			k[1] = 1
		}
		all[i].pos = n[k]
		n[k]++
	}
	key3 := func(a, b ranked) int {
		if a.pos != b.pos {
			return a.pos - b.pos
		}
		return a.model - b.model
	}
	slices.SortStableFunc(all, key3)
	taken := map[bool]map[string]int{false: {}, true: {}}
	for i := range all {
		k := objectKey(all[i].c)
		all[i].round = taken[all[i].main][k]
		taken[all[i].main][k]++
	}
	slices.SortStableFunc(all, func(a, b ranked) int {
		if a.main != b.main {
			if a.main {
				return 1
			}
			return -1
		}
		if a.round != b.round {
			return a.round - b.round
		}
		return key3(a, b)
	})
	out := make([]Candidate, len(all))
	for i, r := range all {
		out[i] = r.c
	}
	return out
}

// mainThread reports whether a candidate's directed instance involves the
// program's first thread.
func mainThread(c Candidate) bool {
	if len(c.Instances) == 0 {
		return false
	}
	v := c.Instances[0]
	return v.Local.ID == 1 || v.Remote.ID == 1
}

// objectKey names the objects a candidate is on, for RankRelaxed: ObjectOf
// its directed (first) instance's variables, or of its bug's, sorted.
func objectKey(c Candidate) string {
	objs := candidateObjects(c)
	slices.Sort(objs)
	return strings.Join(slices.Compact(objs), "\x00")
}

// generation matches what a trace adds to a name to tell the variables of
// one object apart: "#g" for the g-th generation of a variable
// (tracemodel), "#n" for the n-th block reached through the same pointer
// path, "#tT.n" and "#n" for the n-th block allocated at one site (by
// thread T) (the recorder's heap names).
var generation = regexp.MustCompile(`#(t[0-9]+\.)?[0-9]+`)

// varKey names a variable across its generations (its trace name without
// them): an order of accesses the recording never had is one of the
// variable, whichever generation a run gave it.
func varKey(name string) string { return generation.ReplaceAllString(name, "") }

// ObjectOf is the object a variable of a trace belongs to, for ranking: the
// heap block's allocation site, or the root of a global's or a pointer
// path's name, without the numbers that tell generations and blocks apart.
// "apr_pool_t.ref(malloc@apr_pools.c:330#t4.3)#2" and
// "apr_pool_t[1].sibling(malloc@apr_pools.c:330#t5.1)" are one object,
// "malloc@apr_pools.c:330"; "global_allocator->free[1]#67->first_avail" is
// "global_allocator". A pool allocator's fields, each with hundreds of
// candidates, then count as one object (Apache 2.0.46: 93 objects became
// 25, and the cache's own candidates moved from past the quota of 50 to
// 13th).
func ObjectOf(name string) string {
	name = generation.ReplaceAllString(name, "")
	// A heap block named by type: "T.field(alloc@site)".
	if i := strings.LastIndex(name, "("); i >= 0 && strings.HasSuffix(name, ")") && strings.Contains(name[i:], "@") {
		return name[i+1 : len(name)-1]
	}
	// A block named by its site: "alloc@site+off".
	if i := strings.Index(name, "@"); i >= 0 {
		if j := strings.IndexAny(name[i:], "+["); j >= 0 {
			return name[:i+j]
		}
		return name
	}
	// A global or a pointer path: its root.
	if i := strings.IndexAny(name, ".[-"); i > 0 {
		return name[:i]
	}
	return name
}

// Options configure Run.
type Options struct {
	Pause      time.Duration // the longest a thread is held (default 300 ms)
	RunTimeout time.Duration // a directed run is stopped after this (default: Recording.RunTimeout)
	RunsPerBug int           // directed runs per bug at most (default 4)
	MaxRuns    int           // directed runs in all at most (0: no limit)
	Budget     time.Duration // wall time for all the runs (0: no limit)
	Jobs       int           // directed runs side by side (default 1)
	Check      string        // a command run after each directed run; failing is a failed outcome
	// Controls is the number of runs without a schedule made first, to
	// tell whether the program fails on its own (0: none).
	Controls int
	// Explore is the number of exploring runs made once the candidates
	// are used up (0: none): schedules with change points chosen from the
	// recording (Explore). It stops at the first failure.
	Explore int
	// Seed makes the exploration's choices (0: 1).
	Seed int64
	// Stdin is a file given as standard input to every run ("": none,
	// an empty input).
	Stdin  string
	Argv   []string // the command to run instead of the recorded one
	Dir    string   // its working directory instead of the recorded one
	OutDir string   // where the schedules and reproducing traces go (created)
	// Progress, if set, is told of each run as it ends (from several
	// goroutines with Jobs > 1: it must be safe for that).
	Progress func(bug string, run int, o Outcome)
}

func (o *Options) defaults() {
	if o.Pause <= 0 {
		o.Pause = 300 * time.Millisecond
	}
	if o.RunsPerBug <= 0 {
		o.RunsPerBug = 4
	}
	if o.Jobs <= 0 {
		o.Jobs = 1
	}
}

// Result is the outcome of one candidate's directed runs.
type Result struct {
	Candidate
	Runs         []Outcome
	Reproduction bugs.Reproduction
}

// Results are what Run did: one result per candidate, the failures that
// are no candidate's (the exploration's, and those outside the window of
// the candidate a run was directed at), and the counts.
type Results struct {
	Candidates []Result
	Failures   []bugs.Failure
	Summary    bugs.ReproduceSummary
}

// budget hands out directed runs within --max-runs and --budget, and
// says which one ran out.
type budget struct {
	mu       sync.Mutex
	ctx      context.Context
	max      int
	deadline time.Time
	runs     int
	spent    string
}

// take reports whether one more run may be made, and counts it.
func (b *budget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.ctx.Err() != nil:
		return false
	case b.max > 0 && b.runs >= b.max:
		b.spent = "--max-runs"
		return false
	case !b.deadline.IsZero() && time.Now().After(b.deadline):
		b.spent = "--budget"
		return false
	}
	b.runs++
	return true
}

// Run makes the directed runs of the candidates, in order, within the
// budget, then the exploring runs, and returns what they did (not_tried
// for the candidates the budget left out, or an interruption). It fails
// only when the recording cannot be used at all (no command to run).
func Run(ctx context.Context, rec Recording, cands []Candidate, opts Options) (Results, error) {
	start := time.Now()
	var out Results
	opts.defaults()
	if len(opts.Argv) > 0 {
		rec.Argv = opts.Argv
	}
	if opts.Dir != "" {
		rec.Dir = opts.Dir
	}
	if len(rec.Argv) == 0 {
		return out, fmt.Errorf("trace %s: its header names no command (a trace not recorded by mcpredict record): give it after --", rec.Trace)
	}
	if opts.RunTimeout <= 0 {
		opts.RunTimeout = rec.RunTimeout()
	}
	warnings := recordingWarnings(rec, &opts)
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return out, err
	}
	plans, err := plan(rec, cands, opts)
	if err != nil {
		return out, err
	}
	control := controls(ctx, rec, opts)
	results := make([]Result, len(cands))
	b := &budget{ctx: ctx, max: opts.MaxRuns}
	if opts.Budget > 0 {
		b.deadline = time.Now().Add(opts.Budget)
	}
	take := b.take
	orders := sync.OnceValue(func() map[orderKey]bool {
		rc, err := openTrace(rec.Trace)
		if err != nil {
			return nil
		}
		defer rc.Close()
		m, _ := recordedOrders(rc)
		return m
	})
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < opts.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = runCandidate(ctx, cands[i], plans[i], opts, take, orders)
				control.apply(&results[i].Reproduction)
			}
		}()
	}
	for i := range cands {
		next <- i
	}
	close(next)
	wg.Wait()
	sameFailures(results)
	explainUntried(results, ctx.Err() != nil, b.spent)
	out.Candidates = results
	var fails failureSet
	for _, r := range results {
		for _, o := range r.Runs {
			if o.FailedOutside() {
				fails.add(o, r.Bug.ID, "")
			}
		}
	}
	var explored []Outcome
	if opts.Explore > 0 && ctx.Err() == nil && !anyFailed(results) && len(fails.list) == 0 {
		explored = explore(ctx, rec, cands, reproducedSchedules(results), opts, take, orders, &fails)
	}
	out.Failures = fails.failures(control)
	out.Summary = summarizeRuns(results, explored, b, ctx.Err() != nil, start)
	out.Summary.Warnings = warnings
	return out, nil
}

// seedSchedule is the schedule of a candidate's run that showed the
// pattern without failing, and the lock acquisitions of that run up to
// its last remote step: the exploration holds threads at the next few
// (blind points), after the window.
type seedSchedule struct {
	Schedule
	locks int
}

// reproducedSchedules are the seeds of the candidates' runs that showed
// the pattern without failing, one per candidate, in order: the
// exploration puts change points on them (a bug of one more step than the
// pattern: the thread that read the half-done state goes on into code the
// recording never ran).
func reproducedSchedules(results []Result) []seedSchedule {
	var out []seedSchedule
	for _, r := range results {
		for _, o := range r.Runs {
			if o.Observation.Reproduced() && !o.Failed() && o.Err == nil {
				out = append(out, seedSchedule{o.Schedule, locksBefore(o.TracePath, o.Observation.Lines)})
				break
			}
		}
	}
	return out
}

// locksBefore counts the lock acquisitions of a directed run's trace
// before its last remote step (lines: L1, the remote steps, L2); 0 if the
// trace cannot be read.
func locksBefore(trace string, lines []int) int {
	if trace == "" || len(lines) < 2 {
		return 0
	}
	end := lines[len(lines)-2]
	rc, err := openTrace(trace)
	if err != nil {
		return 0
	}
	defer rc.Close()
	n := 0
	errStop := errors.New("past the window")
	scanEvents(rc, func(e event) error {
		if e.TraceLine >= end {
			return errStop
		}
		if e.kind() == 'L' {
			n++
		}
		return nil
	})
	return n
}

// recordingWarnings says what makes the directed runs differ from the
// recorded one: a rebuilt program, a lost standard input. It gives the
// runs the recorded input when opts has none.
func recordingWarnings(rec Recording, opts *Options) []string {
	var ws []string
	if rec.Build != "" && rec.Exe != "" {
		if now := recorder.BuildID(rec.Exe); now != "" && now != rec.Build {
			ws = append(ws, fmt.Sprintf("%s was rebuilt since it was recorded (build %s, recorded %s): sites whose lines moved miss, and their bugs are not reproduced; record it again", rec.Exe, now, rec.Build))
		}
	}
	if opts.Stdin == "" && rec.Stdin != "" {
		if _, err := os.Stat(rec.Stdin); err != nil {
			ws = append(ws, fmt.Sprintf("the recorded standard input %s is gone: the directed runs read an empty one (give it with --stdin)", rec.Stdin))
		} else {
			opts.Stdin = rec.Stdin
		}
	}
	return ws
}

// sameFailures takes back the failures of candidates whose pattern was
// not observed when their run failed the same way (failureID) as a run in
// which another candidate's pattern was, or as an earlier candidate's run
// that did not observe its pattern either: a deadlock that the holds of
// other candidates run into, an assertion that one root cause fires. The
// failure is reported once; the others are not reproduced, and say under
// which bug it is.
func sameFailures(results []Result) {
	observed := map[string]string{} // failure id -> bug
	for _, r := range results {
		for _, o := range r.Runs {
			if o.Failed() && o.Observation.Reproduced() {
				if _, ok := observed[o.failureID()]; !ok {
					observed[o.failureID()] = r.Bug.ID
				}
			}
		}
	}
	first := map[string]string{}    // failure id -> the first bug that failed so, unobserved
	folded := map[string][]string{} // bug -> the candidates whose failure it reports
	for i := range results {
		rp := &results[i].Reproduction
		if !rp.Failed || rp.Observed {
			continue
		}
		for _, o := range results[i].Runs {
			if !o.Failed() || o.Observation.Reproduced() {
				continue
			}
			id := o.failureID()
			why := "whose pattern was observed"
			bug, ok := observed[id]
			if !ok {
				bug, ok = first[id]
				why = "the first to fail so"
			}
			if !ok {
				first[id] = results[i].Bug.ID
				break
			}
			rp.Failed, rp.Window, rp.Status = false, nil, bugs.NotReproduced
			rp.Evidence = fmt.Sprintf("its run failed as %s's did, %s (%s): that failure is reported once, under %s\n%s", bug, why, o.Exit, bug, rp.Evidence)
			folded[bug] = append(folded[bug], results[i].Bug.ID)
			break
		}
	}
	interleavedElsewhere(results, folded)
	commonCause(results, folded)
	sayFolded(results, folded)
}

// commonCause folds a failed candidate into another when its failure was
// placed by the hold's mark alone (far from the hold, or judged after the
// program ended) and every run that failed the same way, whatever it was
// directed at and wherever its failure was placed, reordered the other
// candidate's variables but not all reordered its own: the common factor
// of the failure is the other's (Apache 25520 fails on its own in half of
// its runs; each failing run, and no other, reordered the log buffer's
// counter, while a candidate on requests_this_child reordered its own
// variable in its run only). The candidate keeps its status.
func commonCause(results []Result, folded map[string][]string) {
	runs := map[string][]map[string]bool{} // failure id -> the reordered variables of each run that failed so
	for _, r := range results {
		for _, o := range r.Runs {
			if ch, _ := o.Changed(); ch && o.Placement != nil {
				runs[o.failureID()] = append(runs[o.failureID()], o.Placement.reordered)
			}
		}
	}
	// in counts the runs of F that reordered one of vars.
	in := func(F []map[string]bool, vars []string) int {
		n := 0
		for _, re := range F {
			if slices.ContainsFunc(vars, func(v string) bool { return re[varKey(v)] }) {
				n++
			}
		}
		return n
	}
	failedAs := func(r Result) (Outcome, bool) {
		for _, o := range r.Runs {
			if o.Failed() && o.Placement != nil && o.Placement.window != nil {
				return o, true
			}
		}
		return Outcome{}, false
	}
	for i := range results {
		rp := &results[i].Reproduction
		o, ok := failedAs(results[i])
		if !rp.Failed || !ok || o.Placement.window.Why == "" {
			continue
		}
		id := o.failureID()
		F := runs[id]
		own := in(F, candidateVars(results[i].Candidate))
		if len(F) < 2 || own == len(F) {
			continue
		}
		for j := range results {
			x, ok := failedAs(results[j])
			if j == i || !results[j].Reproduction.Failed || !ok || x.failureID() != id || in(F, candidateVars(results[j].Candidate)) != len(F) {
				continue
			}
			bug := results[j].Bug.ID
			rp.Failed, rp.Window = false, nil
			rp.Evidence = fmt.Sprintf("its run failed as %d runs did; each of them reordered %s's variables, only %d its own: the failure is reported under %s\n%s", len(F), bug, own, bug, rp.Evidence)
			folded[bug] = append(folded[bug], results[i].Bug.ID)
			break
		}
	}
}

// sayFolded adds to the evidence of each bug that reports other
// candidates' failures which they are: their runs are not lost, even when
// the candidates are not shown (a relaxed candidate not reproduced).
func sayFolded(results []Result, folded map[string][]string) {
	for i := range results {
		ids := folded[results[i].Bug.ID]
		if len(ids) == 0 {
			continue
		}
		rp := &results[i].Reproduction
		rp.Evidence = fmt.Sprintf("%s\nruns directed at other candidates failed the same way, reported here once: %s",
			strings.TrimRight(rp.Evidence, "\n"), strings.Join(ids, ", "))
	}
}

// interleavedElsewhere folds a failed candidate whose pattern was observed
// into another: when near its run's failure only other variables were
// interleaved differently from the recording, and a candidate on those
// variables failed the same way, the failure is that candidate's (a
// correctly locked counter whose relaxed candidate held its thread in the
// window of the real lost update). The candidate stays reproduced: its
// pattern happened, the failure is not its.
func interleavedElsewhere(results []Result, folded map[string][]string) {
	culprit := map[string]string{} // failure id -> the first failed bug whose variables were interleaved near it
	type failed struct {
		i   int
		id  string
		own bool
		n   int // the variables interleaved near the failure
	}
	var fs []failed
	for i := range results {
		rp := &results[i].Reproduction
		if !rp.Failed || !rp.Observed {
			continue
		}
		vars := map[string]bool{}
		for _, v := range results[i].Bug.Vars {
			vars[ObjectOf(v)] = true
		}
		for _, o := range results[i].Runs {
			if !o.Failed() || !o.Observation.Reproduced() || o.Placement == nil || o.Placement.window == nil {
				continue
			}
			f := failed{i: i, id: o.failureID()}
			for _, s := range o.Placement.window.Interleaved {
				if obj, _, ok := strings.Cut(s, ": "); ok {
					f.n++
					f.own = f.own || vars[ObjectOf(obj)]
				}
			}
			if f.own {
				if _, ok := culprit[f.id]; !ok {
					culprit[f.id] = results[i].Bug.ID
				}
			}
			fs = append(fs, f)
			break
		}
	}
	for _, f := range fs {
		bug, ok := culprit[f.id]
		if f.own || f.n == 0 || !ok || bug == results[f.i].Bug.ID {
			continue
		}
		rp := &results[f.i].Reproduction
		rp.Failed, rp.Window = false, nil
		rp.Evidence = fmt.Sprintf("its pattern was observed and its run failed, but near the failure only %s's variables were interleaved differently from the recording: the failure is reported under %s\n%s", bug, bug, rp.Evidence)
		folded[bug] = append(folded[bug], results[f.i].Bug.ID)
	}
}

// explainUntried says in the evidence of each candidate left without a
// run why: an interruption, or the budget that ran out.
func explainUntried(results []Result, interrupted bool, spent string) {
	for i := range results {
		rp := &results[i].Reproduction
		if len(results[i].Runs) > 0 || rp.Status != bugs.NotTried || !strings.HasPrefix(rp.Evidence, "budget spent") {
			continue
		}
		switch {
		case interrupted:
			rp.Evidence = "interrupted before its first run"
		case spent != "":
			rp.Evidence = spent + " ran out before its first run"
		}
	}
}

// anyFailed reports whether a candidate's run failed: the program is
// exposed, and the exploration is left out.
func anyFailed(results []Result) bool {
	for _, r := range results {
		if r.Reproduction.Failed {
			return true
		}
	}
	return false
}

// summarizeRuns counts what the runs did.
func summarizeRuns(results []Result, explored []Outcome, b *budget, interrupted bool, start time.Time) bugs.ReproduceSummary {
	s := bugs.ReproduceSummary{Candidates: len(results), ExploreRuns: len(explored), Interrupted: interrupted,
		BudgetSpent: b.spent, Runs: b.runs, Elapsed: time.Since(start)}
	count := func(o Outcome) {
		switch {
		case o.Failed() || o.FailedOutside():
			s.FailedRuns++
		case o.Observation.Reproduced():
			s.ReproducedRuns++
		}
	}
	for _, r := range results {
		switch {
		case len(r.Runs) > 0:
			s.Tried++
		case r.Reproduction.Status == bugs.NotTried && !strings.HasPrefix(r.Reproduction.Evidence, "no schedule"):
			s.Untried++
		default:
			s.Undirected++
		}
		for _, o := range r.Runs {
			count(o)
		}
	}
	for _, o := range explored {
		count(o)
	}
	return s
}

// controlResult is what the runs without a schedule showed.
type controlResult struct {
	runs, changed int
	why           string // how the first that changed ended
}

// controls makes the control runs of the recording.
func controls(ctx context.Context, rec Recording, opts Options) controlResult {
	var c controlResult
	if opts.Controls <= 0 {
		return c
	}
	s := Schedule{Argv: rec.Argv, Dir: rec.Dir, Ended: rec.Ended, Check: opts.Check, Stdin: opts.Stdin}
	for i := 0; i < opts.Controls && ctx.Err() == nil; i++ {
		changed, why := controlRun(ctx, s, opts.OutDir, opts.RunTimeout)
		if ctx.Err() != nil {
			break
		}
		c.runs++
		if changed {
			c.changed++
			if c.why == "" {
				c.why = why
			}
		}
	}
	return c
}

// apply says in a failed bug's reproduction when the program also ended
// differently without a schedule: the failure may not be this bug's.
func (c controlResult) apply(rp *bugs.Reproduction) {
	rp.Controls, rp.ControlsChanged = c.runs, c.changed
	if rp.Failed && c.changed > 0 {
		rp.Evidence = fmt.Sprintf("but %d of %d runs without a schedule ended differently too (%s): the program fails on its own, and this failure may not be this bug's\n%s", c.changed, c.runs, c.why, rp.Evidence)
	}
}

// candidatePlan is the schedules to try for a candidate, or why there are
// none.
type candidatePlan struct {
	schedules []Schedule
	why       string
}

// plan builds every candidate's schedules, from one pass over the
// recorded trace.
func plan(rec Recording, cands []Candidate, opts Options) ([]candidatePlan, error) {
	var sites []siteKey
	var queries []lockQuery
	for _, c := range cands {
		for _, v := range c.Instances {
			steps, err := StepsOf(v)
			if err != nil {
				continue
			}
			sites = append(sites, keyOf(steps[0]))
			if l, r := anchors(v); r != nil && v.Pattern != "DL" {
				queries = append(queries, lockQuery{r.Handle, r.TraceLine}, lockQuery{l.Handle, l.TraceLine})
				for _, a := range remoteAccesses(v) {
					queries = append(queries, lockQuery{a.Handle, a.TraceLine})
				}
			}
		}
	}
	ix, err := indexRecording(rec.Trace, sites, queries)
	if err != nil {
		return nil, err
	}
	out := make([]candidatePlan, len(cands))
	for i, c := range cands {
		out[i] = planCandidate(rec, c, ix, opts)
	}
	return out, nil
}

// anchors returns the recorded accesses of v that L1 and R1 stand for: its
// first local and first remote access, or for a deadlock the held
// acquisitions of the cycle's first two threads (the first is the one
// that took its lock first: R1 is never before L1); nil if v has none.
func anchors(v bugs.Violation) (l1, r1 *bugs.Access) {
	if v.Pattern == "DL" {
		cyc, err := cycleOf(v)
		if err != nil {
			return nil, nil
		}
		return &cyc[0].held, &cyc[1].held
	}
	as := v.EssentialAccesses()
	for i := range as {
		switch {
		case as[i].Role == "local" && l1 == nil:
			l1 = &as[i]
		case as[i].Role == "remote" && r1 == nil:
			r1 = &as[i]
		}
	}
	if l1 == nil || r1 == nil {
		return nil, nil
	}
	return l1, r1
}

// planCandidate lists a candidate's schedules, the likeliest first: each
// instance at the occurrence of its L1 in the recorded run, then the
// first instance at the first, second, ... occurrences.
func planCandidate(rec Recording, c Candidate, ix *recordedIndex, opts Options) candidatePlan {
	var p candidatePlan
	seen := map[string]bool{}
	add := func(s Schedule) {
		key := fmt.Sprint(s.Steps, s.Occurrence, s.Prehold)
		if !seen[key] && len(p.schedules) < opts.RunsPerBug {
			seen[key] = true
			p.schedules = append(p.schedules, s)
		}
	}
	var base []Schedule
	for _, v := range c.Instances {
		steps, err := StepsOf(v)
		if err != nil {
			p.why = err.Error()
			continue
		}
		s := Schedule{Bug: c.Bug.ID, Pattern: c.Bug.Pattern, Steps: steps, Pause: opts.Pause,
			Argv: rec.Argv, Dir: rec.Dir, Objects: rec.Objects(), Ended: rec.Ended, Check: opts.Check, Stdin: opts.Stdin}
		l1, r1 := anchors(v)
		if l1 == nil {
			p.why = "an instance without a local and a remote access"
			continue
		}
		s.Occurrence, _ = ix.occurrence(keyOf(steps[0]), l1.TraceLine)
		if r1.TraceLine < l1.TraceLine {
			// The remote thread ran first: hold it where it would take
			// the lock around its access (or at the access) until L1.
			s.Prehold = true
			l := r1.Executed()
			pre := Step{Role: "PRE", Action: r1.Action, File: l.File, Line: l.Line}
			if lk := ix.locks[lockQuery{r1.Handle, r1.TraceLine}]; lk != nil {
				pre = *lk
			}
			s.Steps = append(slices.Clone(s.Steps), pre)
		}
		if peer := peerStep(ix, v, l1); peer != nil {
			s.Steps = append(slices.Clone(s.Steps), *peer)
		}
		base = append(base, s)
		add(s)
	}
	if len(base) == 0 {
		return p
	}
	_, total := ix.occurrence(keyOf(base[0].Steps[0]), 0)
	for occ := 1; occ <= total && len(p.schedules) < opts.RunsPerBug; occ++ {
		s := base[0]
		s.Occurrence = occ
		add(s)
	}
	return p
}

// remoteAccesses are v's essential accesses by its remote thread.
func remoteAccesses(v bugs.Violation) []bugs.Access {
	var out []bugs.Access
	for _, a := range v.EssentialAccesses() {
		if a.Role == "remote" {
			out = append(out, a)
		}
	}
	return out
}

// peerStep returns the PEER step of an instance: where the local thread
// took the outermost lock it held at L1, when no remote thread of the
// instance took a lock at that code anywhere in the recording, and no
// remote access was made in L1's function or called from it (a remote
// thread running the local thread's code, as two clients that both call
// get() and then put(), would be held there before its own step). While the local
// thread is held, another thread about to take a lock there (a second
// setter running the local thread's code) is held before it, until the
// remote steps are made: its writes would hide the state the window
// shows (config_two_setters.c). Held at its write instead, inside the
// critical section, it would be let go at once, the remote thread
// blocking on its lock. nil when L1 held no lock.
func peerStep(ix *recordedIndex, v bugs.Violation, l1 *bugs.Access) *Step {
	lk := ix.locks[lockQuery{l1.Handle, l1.TraceLine}]
	if lk == nil {
		return nil
	}
	for _, a := range remoteAccesses(v) {
		if a.Func == l1.Func || slices.Contains(a.Stack, l1.Func) || ix.lockSites[a.Handle][siteKey{lk.File, lk.Line, 'L'}] {
			return nil // the remote thread may run the local thread's code
		}
	}
	peer := *lk
	peer.Role = "PEER"
	return &peer
}

// runCandidate makes a candidate's directed runs: until one fails, or
// after the run that follows the first that reproduced it (one more
// chance to fail, at an occurrence that has not reproduced it yet), or
// when its schedules or the budget are spent.
func runCandidate(ctx context.Context, c Candidate, p candidatePlan, opts Options, take func() bool, orders func() map[orderKey]bool) Result {
	res := Result{Candidate: c}
	rp := &res.Reproduction
	rp.Relaxed = c.Relaxed
	if len(p.schedules) == 0 {
		rp.Status, rp.Evidence = bugs.NotTried, "no schedule: "+p.why
		return res
	}
	dir := filepath.Join(opts.OutDir, c.Bug.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		rp.Status, rp.Evidence = bugs.NotTried, err.Error()
		return res
	}
	cc := &codeCache{}
	// One more chance to fail after the first run that reproduced it, at
	// another occurrence: the same window again shows the same state, and
	// which thread's window fails is what differs (the first of two
	// setters held, not the second).
	reproducedOcc := map[int]bool{}
	extra := 0
	for i, s := range p.schedules {
		if len(reproducedOcc) > 0 {
			if extra >= 1 {
				break
			}
			if reproducedOcc[s.Occurrence] {
				continue
			}
			extra++
		}
		if !take() {
			break
		}
		timeout := opts.RunTimeout
		if s.Pattern == "DL" {
			// A directed deadlock ends only at the time-out.
			timeout = min(timeout, DeadlockTimeout)
		}
		o := runSchedule(ctx, s, cc, dir, i+1, timeout, false)
		if ctx.Err() != nil {
			break // interrupted: the run says nothing
		}
		o.Place(candidateObjects(c), candidateVars(c), orders())
		res.Runs = append(res.Runs, o)
		if opts.Progress != nil {
			opts.Progress(c.Bug.ID, i+1, o)
		}
		if o.Err != nil && ctx.Err() != nil {
			break
		}
		if o.Observation.Reproduced() {
			reproducedOcc[s.Occurrence] = true
		}
		if o.Failed() {
			break
		}
		if o.TimedOut && !o.Observation.Reproduced() {
			// The schedule held the program into a hang that is not this
			// bug's pattern: its other schedules would too, each at the
			// cost of the time-out.
			break
		}
	}
	summarize(&res, ctx.Err() != nil)
	return res
}

// runSchedule writes schedule n of a bug and runs it once.
// The run's directory is removed unless it reproduced the bug or keep is
// set.
func runSchedule(ctx context.Context, s Schedule, cc *codeCache, dir string, n int, timeout time.Duration, keep bool) Outcome {
	path := filepath.Join(dir, fmt.Sprintf("run%d.sched", n))
	f, err := os.Create(path)
	if err == nil {
		err = s.Write(f, cc)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return Outcome{Schedule: s, SchedulePath: path, Err: fmt.Errorf("writing the schedule: %w", err)}
	}
	work := filepath.Join(dir, fmt.Sprintf("run%d", n))
	if err := os.MkdirAll(work, 0o755); err != nil {
		return Outcome{Schedule: s, SchedulePath: path, Err: err}
	}
	o := directedRun(ctx, s, path, work, timeout, keep)
	if o.TracePath == "" && o.FailTrace == "" && !keep {
		os.RemoveAll(work)
	}
	return o
}

// summarize sets a result's reproduction from its runs: the first failed
// run decides, else the first reproducing one, else the last.
func summarize(res *Result, interrupted bool) {
	rp := &res.Reproduction
	rp.Runs = len(res.Runs)
	if rp.Runs == 0 {
		rp.Status, rp.Evidence = bugs.NotTried, "budget spent before its first run (--max-runs, --budget) or interrupted"
		return
	}
	if interrupted {
		defer func() { rp.Evidence = "interrupted: the runs after these were not made\n" + rp.Evidence }()
	}
	pick := -1
	for i, o := range res.Runs {
		if o.Failed() {
			pick = i
			break
		}
		if pick < 0 && o.Observation.Reproduced() {
			pick = i
		}
	}
	if pick < 0 {
		last := res.Runs[len(res.Runs)-1]
		rp.Status = bugs.NotReproduced
		rp.Evidence = notReproducedEvidence(last)
		return
	}
	o := res.Runs[pick]
	rp.Status, rp.Failed, rp.Schedule = bugs.Reproduced, o.Failed(), o.SchedulePath
	rp.Observed = o.Observation.Reproduced()
	if !rp.Observed {
		rp.Status = bugs.NotReproduced
	}
	if o.Placement != nil {
		rp.Window = o.Placement.window
	}
	rp.Evidence = reproducedEvidence(o)
}

func reproducedEvidence(o Outcome) string {
	var b strings.Builder
	if ch, why := o.Changed(); ch {
		fmt.Fprintf(&b, "the run failed: %s\n", why)
		if d := o.childDied(); d != "" {
			fmt.Fprintf(&b, "%s\n", d)
		}
	} else {
		fmt.Fprintf(&b, "the run ended as the recorded one: %s\n", o.Exit)
	}
	if o.Observation.Reproduced() {
		fmt.Fprintf(&b, "pattern observed at lines %s of %s (occurrence %d of %s)\n", joinInts(o.Observation.Lines), o.TracePath, o.Schedule.Occurrence, o.Schedule.Steps[0])
	} else {
		fmt.Fprintf(&b, "pattern not observed in order in the failing run's trace %s (occurrence %d of %s): %s\n", o.FailTrace, o.Schedule.Occurrence, o.Schedule.Steps[0], unobservedWhy(o))
	}
	if p := o.Placement; p != nil && p.window != nil {
		w := p.window
		if strings.HasPrefix(w.Hold, "held at") && strings.Contains(w.Hold, "until the program ended") {
			fmt.Fprintf(&b, "the program failed while a thread was %s\n", w.Hold)
		} else {
			fmt.Fprintf(&b, "the failure came %d events and %d ms after the hold ended (%s)\n", w.Events, w.Ms, w.Hold)
		}
		if w.Why != "" {
			fmt.Fprintf(&b, "why: %s\n", w.Why)
		}
		for _, l := range w.Interleaved {
			fmt.Fprintf(&b, "interleaved differently: %s\n", l)
		}
	}
	for _, l := range o.RuntimeLog {
		if strings.HasPrefix(l, "release") || strings.HasPrefix(l, "remote") || (!o.Observation.Reproduced() && strings.HasPrefix(l, "trigger")) {
			fmt.Fprintf(&b, "schedule: %s\n", l) // which hold, and what ended it
		}
	}
	if o.Observation.Ended {
		fmt.Fprintf(&b, "the program ended after the remote steps, the local thread still held after L1: its second access never ran\n")
	}
	if o.Observation.Loose {
		fmt.Fprintf(&b, "the other thread came in on the same object at other sites (it read another value and went another way): %s\n", strings.Join(o.Observation.Remote, "; "))
	}
	for _, l := range o.Stderr {
		if failureRE.MatchString(l) || len(o.Stderr) <= 3 {
			fmt.Fprintf(&b, "stderr: %s\n", l)
		}
	}
	return strings.TrimSpace(b.String())
}

// unobservedWhy says, from the runtime's log, how far a failed run that
// did not show the pattern got through its schedule.
func unobservedWhy(o Outcome) string {
	armed, remote, released := false, 0, ""
	for _, l := range o.RuntimeLog {
		switch {
		case strings.HasPrefix(l, "trigger"):
			armed = true
		case strings.HasPrefix(l, "remote"):
			remote++
		case strings.HasPrefix(l, "release") && !strings.HasPrefix(l, "release bystander") && released == "":
			released = l
		}
	}
	_, _, want := splitSteps(o.Schedule.Steps)
	switch {
	case !armed:
		return "its first access was never reached at that occurrence"
	case remote >= len(want) && remote > 0:
		return "the remote steps were made, and the program failed before the local thread's second access"
	case released != "":
		return fmt.Sprintf("%d of %d remote steps were made before the held thread was let go (%s)", remote, len(want), released)
	}
	return fmt.Sprintf("%d of %d remote steps were made while the thread was held", remote, len(want))
}

func notReproducedEvidence(o Outcome) string {
	if o.Err != nil {
		return o.Err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the pattern was not in the directed runs' traces (last run: %s)\n", o.Exit)
	held, armed := false, false
	for _, l := range o.RuntimeLog {
		if strings.HasPrefix(l, "error") || strings.HasPrefix(l, "release") {
			fmt.Fprintf(&b, "runtime: %s\n", l)
			held = true
		}
		armed = armed || strings.HasPrefix(l, "trigger")
	}
	switch {
	case !held && armed:
		fmt.Fprintf(&b, "runtime: %s reached at occurrence %d, its thread held until the run ended\n", o.Schedule.Steps[0], o.Schedule.Occurrence)
	case !held:
		fmt.Fprintf(&b, "runtime: %s never reached at occurrence %d\n", o.Schedule.Steps[0], o.Schedule.Occurrence)
	}
	if ch, why := o.Changed(); ch {
		fmt.Fprintf(&b, "the run ended differently all the same: %s\n", why)
	}
	return strings.TrimSpace(b.String())
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// Apply writes the results into the report: each bug tried gets its
// Reproduction; a relaxed candidate whose directed run failed (observed or
// not) or, with relaxedReproduced, that was reproduced at all, is added,
// with its instances, marked Relaxed; the report's other bugs (an analysis
// reproduce does not direct, such as deadlocks) are marked not_tried; the
// failures and the counts go into the report as they are.
//
// A relaxed candidate that was reproduced but changed nothing is left out
// by default: relaxed models drop rules that say which interleavings the
// program can take with the values it read, so a run forced into one can
// show the pattern harmlessly (a flag polled again after it was set); only
// a changed outcome sets it apart from that noise.
func Apply(rep *bugs.Report, res Results, relaxedReproduced bool) {
	results := res.Candidates
	rep.Failures = append(rep.Failures, res.Failures...)
	sum := res.Summary
	rep.Reproduce = &sum
	byID := map[string]*bugs.Reproduction{}
	for i := range results {
		r := &results[i]
		if r.Relaxed {
			if !r.Reproduction.Failed && !(relaxedReproduced && r.Reproduction.Status == bugs.Reproduced) {
				continue
			}
			b := r.Bug
			b.Instances = nil
			for _, v := range r.Instances {
				b.Instances = append(b.Instances, len(rep.Violations))
				rep.Violations = append(rep.Violations, v)
			}
			b.Count = len(b.Instances)
			b.Confirmed = false
			rp := r.Reproduction
			b.Reproduction = &rp
			rep.Bugs = append(rep.Bugs, b)
			continue
		}
		rp := r.Reproduction
		byID[r.Bug.ID] = &rp
	}
	for i := range rep.Bugs {
		b := &rep.Bugs[i]
		if b.Reproduction != nil {
			continue
		}
		if rp := byID[b.ID]; rp != nil {
			b.Reproduction = rp
		} else {
			b.Reproduction = &bugs.Reproduction{Status: bugs.NotTried, Evidence: "not a pattern reproduce directs, or suppressed"}
		}
	}
}

// Replay runs a schedule once more, in dir, its code ranges looked up
// afresh in its objects (the program may have been rebuilt with the same
// source lines).
func Replay(ctx context.Context, s Schedule, dir string, timeout time.Duration) Outcome {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Outcome{Schedule: s, Err: err}
	}
	return runSchedule(ctx, s, &codeCache{}, dir, 1, timeout, true)
}

// Evidence says what a run of a schedule showed, as a reproduction's
// evidence does.
func (o Outcome) Evidence() string {
	if len(o.Schedule.Steps) == 0 {
		f := bugs.Failure{Why: o.Exit, Attribution: bugs.AttrWindow}
		if _, why := o.Changed(); why != "" {
			f.Why = why
		}
		return failureEvidence(o, f, "")
	}
	if o.Observation.Reproduced() || o.Failed() {
		return reproducedEvidence(o)
	}
	return notReproducedEvidence(o)
}
