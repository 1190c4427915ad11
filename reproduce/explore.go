package reproduce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
)

// Exploring runs: once the candidates are used up, schedules that a PCT
// scheduler would try, chosen from the recording. PCT runs the threads by
// priority and lowers the running thread's priority at d-1 random points
// of the run; a bug of depth d is then found with a probability of at
// least 1/(n k^(d-1)) per run. Here a change point is an execution of a
// recorded site (a shared access or a lock acquisition, at its n-th
// execution by any thread), drawn at random from the recorded events, the
// events on the objects the candidates name weighted up; the runtime holds
// the thread that reaches it until no other thread can run (all blocked
// or ended) or the pause ends. A third of the change points are blind:
// the n-th lock acquisition of the run wherever it is, the only change
// points in code the recording never ran. The runs take 1, 2 and 3 change points in
// turn; the first that fails ends the exploration, after runs with each
// of its change points alone say which of them it needs. When candidates'
// runs showed their patterns without failing, every other run puts its
// change points on one of those schedules in turn (a directed window, then
// PCT's holds: 28-race_reach_61's thread reads main's half-done count,
// goes on to bump it itself, and main must assert while it is held).
//

// The weights of the recorded events as change points: an event on an
// object a candidate names, on an object two threads or more touched, on
// one only one thread touched (its own data, most often; but a thread
// that never ran in the recording touched nothing, and holding the others
// at their own accesses lets it run: main exiting before its threads
// started).
const (
	weightNamed  = 16
	weightShared = 4
	weightOwn    = 1
)

// createObject stands for the object of a thread creation's change points.
const createObject = "\x00create"

// maxPoolEvents bounds the recorded events kept to draw from: beyond it, a
// uniform sample of them (reservoir) is kept.
const maxPoolEvents = 1 << 20

// poolSite is a site of the recording that change points can be put at.
type poolSite struct {
	kind byte
	file string
	line int
	obj  string // the first object seen there
	bad  bool   // no code found for it
}

// pool is the recorded events change points are drawn from.
type pool struct {
	sites  []poolSite
	events []poolEvent
	total  float64 // the weights' sum
	locks  int     // the recorded lock acquisitions
}

// blindShare is the share of change points drawn as blind points (at the
// n-th lock acquisition of the run, n up to twice the recording's and
// blindSlack more): the runs' only points in code that never ran in the
// recording (threads that main's return cut short).
const (
	blindShare = 1.0 / 3
	blindSlack = 8
)

type poolEvent struct {
	site   int32
	occ    int32 // its rank among the executions of its site
	weight float32
}

// explorePool reads the recording's accesses and lock acquisitions,
// weighting up those on objects two threads touch and more those on named
// objects (ObjectOf names).
func explorePool(trace string, named map[string]bool, rng *rand.Rand) (*pool, error) {
	rc, err := openTrace(trace)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	type raw struct {
		site, occ int32
		obj       string
	}
	siteIx := map[siteKey]int32{}
	var sites []poolSite
	var counts []int32
	threads := map[string]map[string]bool{} // object -> threads
	var evs []raw
	seen, locks := 0, 0
	add := func(e event, k byte) {
		key := siteKey{e.File, e.Line, k}
		i, ok := siteIx[key]
		if !ok {
			i = int32(len(sites))
			siteIx[key] = i
			sites = append(sites, poolSite{kind: k, file: e.File, line: e.Line, obj: e.Object})
			counts = append(counts, 0)
		}
		counts[i]++
		ts := threads[e.Object]
		if ts == nil {
			ts = map[string]bool{}
			threads[e.Object] = ts
		}
		if len(ts) < 2 {
			ts[e.Thread] = true
		}
		r := raw{site: i, occ: counts[i], obj: e.Object}
		seen++
		switch {
		case len(evs) < maxPoolEvents:
			evs = append(evs, r)
		default:
			if j := rng.IntN(seen); j < maxPoolEvents {
				evs[j] = r
			}
		}
	}
	err = scanEvents(rc, func(e event) error {
		if e.File == "" || e.File == "?" || e.Line <= 0 || e.Object == "" {
			return nil
		}
		switch k := e.kind(); {
		case k == 'R' || k == 'W' || k == 'L':
			add(e, k)
			if k == 'L' {
				locks++
			}
		case e.Action == "Create":
			// The creator once the thread exists, and the new thread
			// before its first step: a thread that never ran in the
			// recording (main returned first) runs, or runs last.
			e.Object = createObject
			add(e, 'C')
			add(e, 'S')
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p := &pool{sites: sites, locks: locks}
	for _, r := range evs {
		w := float32(weightOwn)
		switch {
		case named[ObjectOf(r.obj)]:
			w = weightNamed
		case len(threads[r.obj]) >= 2 || r.obj == createObject:
			w = weightShared
		}
		p.events = append(p.events, poolEvent{site: r.site, occ: r.occ, weight: w})
		p.total += float64(w)
	}
	return p, nil
}

// pick draws d change points at distinct events, by weight, skipping
// sites found bad; fewer when the pool has fewer.
func (p *pool) pick(rng *rand.Rand, d int) []Point {
	var out []Point
	used := map[int]bool{}
	blind := map[int]bool{}
	for tries := 0; len(out) < d && tries < 20*d && p.total > 0; tries++ {
		if rng.Float64() < blindShare {
			n := 1 + rng.IntN(2*p.locks+blindSlack)
			if !blind[n] {
				blind[n] = true
				out = append(out, Point{Kind: blindPoint, Occurrence: n})
			}
			continue
		}
		x := rng.Float64() * p.total
		i := 0
		for ; i < len(p.events)-1; i++ {
			x -= float64(p.events[i].weight)
			if x < 0 {
				break
			}
		}
		e := p.events[i]
		if used[i] || p.sites[e.site].bad {
			continue
		}
		used[i] = true
		s := p.sites[e.site]
		v := s.obj
		if v == createObject {
			v = "(thread)"
		}
		out = append(out, Point{Kind: s.kind, File: s.file, Line: s.line, Occurrence: int(e.occ), Var: v})
	}
	// In the order of the recording: the runtime does not care, the
	// reader does.
	slices.SortFunc(out, func(a, b Point) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// markBad leaves a site without code out of later draws.
func (p *pool) markBad(file string, line int) {
	for i := range p.sites {
		if p.sites[i].file == file && p.sites[i].line == line {
			p.sites[i].bad = true
		}
	}
}

// namedObjects are the objects the candidates are on (ObjectOf names).
func namedObjects(cands []Candidate) map[string]bool {
	m := map[string]bool{}
	for _, c := range cands {
		for _, o := range candidateObjects(c) {
			m[o] = true
		}
	}
	return m
}

// candidateObjects are the objects of a candidate's directed instance (or
// of its bug), as ObjectOf names them.
func candidateObjects(c Candidate) []string {
	var out []string
	for _, n := range candidateVars(c) {
		out = append(out, ObjectOf(n))
	}
	return out
}

// candidateVars are the variables of a candidate's first instance (the
// bug's, when it has none), as the trace names them.
func candidateVars(c Candidate) []string {
	if len(c.Instances) > 0 {
		return c.Instances[0].ObjectNames()
	}
	return c.Bug.Vars
}

// explore makes the exploring runs, within the budget, and adds their
// failure (the first) to fails. It returns the runs made.
func explore(ctx context.Context, rec Recording, cands []Candidate, seeds []seedSchedule, opts Options, take func() bool, orders func() map[orderKey]bool, fails *failureSet) []Outcome {
	seed := opts.Seed
	if seed == 0 {
		seed = 1
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6d63707265646963))
	p, err := explorePool(rec.Trace, namedObjects(cands), rng)
	if err != nil || p.total == 0 {
		return nil
	}
	dir := filepath.Join(opts.OutDir, "explore")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil
	}
	cc := &codeCache{}
	var runs []Outcome
	n := 0
	for i := 0; i < opts.Explore && ctx.Err() == nil; i++ {
		var s Schedule
		var pts []Point
		seeded := len(seeds) > 0 && i%2 == 1
		if seeded {
			// The seed's window, then holds at the lock acquisitions of
			// the run just after it (code the recording may never have
			// run), in turn: the first, the first two, the second, the
			// second and third, ...
			j := i / 2
			seed := seeds[j%len(seeds)]
			k := j / len(seeds)
			first := seed.locks + 1 + k/2
			pts = []Point{{Kind: blindPoint, Occurrence: first}}
			if k%2 == 1 {
				pts = append(pts, Point{Kind: blindPoint, Occurrence: first + 1})
			}
			s = seed.Schedule
			s.Points = pts
		} else {
			if pts = validPoints(p, rng, 1+i%3, rec.Objects(), cc); len(pts) == 0 {
				break
			}
			s = exploreSchedule(rec, opts, pts)
		}
		if !take() {
			break
		}
		n++
		o := runSchedule(ctx, s, cc, dir, n, opts.RunTimeout, false)
		if ctx.Err() != nil {
			break
		}
		o.Place(nil, nil, orders())
		runs = append(runs, o)
		if opts.Progress != nil {
			opts.Progress("explore", n, o)
		}
		if ch, _ := o.Changed(); !ch {
			continue
		}
		if seeded {
			fails.add(o, "explore", fmt.Sprintf("the window of %s with the holds at %s", s.Bug, pointList(pts)))
			break
		}
		pinned, more := pin(ctx, rec, opts, pts, cc, dir, &n, take)
		runs = append(runs, more...)
		fails.add(o, "explore", pinned)
		break
	}
	return runs
}

// pointList names change points, for a report.
func pointList(pts []Point) string {
	names := make([]string, len(pts))
	for i, p := range pts {
		names[i] = p.String()
	}
	return strings.Join(names, ", ")
}

// validPoints draws d change points whose sites have code in the
// recorded objects.
func validPoints(p *pool, rng *rand.Rand, d int, objects []string, cc *codeCache) []Point {
	for tries := 0; tries < 10; tries++ {
		pts := p.pick(rng, d)
		ok := len(pts) > 0
		for _, pt := range pts {
			if pt.Kind == blindPoint {
				continue
			}
			if _, err := cc.lookup(objects, pt.File, pt.Line); err != nil {
				p.markBad(pt.File, pt.Line)
				ok = false
			}
		}
		if ok {
			return pts
		}
	}
	return nil
}

func exploreSchedule(rec Recording, opts Options, pts []Point) Schedule {
	return Schedule{Bug: "explore", Pattern: "explore", Points: pts, Pause: opts.Pause, Argv: rec.Argv, Dir: rec.Dir,
		Objects: rec.Objects(), Ended: rec.Ended, Check: opts.Check, Stdin: opts.Stdin}
}

// pin runs the schedule of a failing exploration with each of its change
// points alone, and says which the failure needs.
func pin(ctx context.Context, rec Recording, opts Options, pts []Point, cc *codeCache, dir string, n *int, take func() bool) (string, []Outcome) {
	if len(pts) == 1 {
		return "the hold at " + pts[0].String(), nil
	}
	var runs []Outcome
	for _, pt := range pts {
		if ctx.Err() != nil || !take() {
			return "not pinned: the budget ran out", runs
		}
		*n++
		o := runSchedule(ctx, exploreSchedule(rec, opts, []Point{pt}), cc, dir, *n, opts.RunTimeout, false)
		runs = append(runs, o)
		if opts.Progress != nil {
			opts.Progress("explore (pin)", *n, o)
		}
		if ch, _ := o.Changed(); ch {
			return fmt.Sprintf("the hold at %s alone fails (run %d)", pt, *n), runs
		}
	}
	return "the holds together: none alone failed", runs
}

// failureSet collects failures, one per way of failing.
type failureSet struct {
	byID map[string]int
	list []bugs.Failure
}

// numbersRE finds what in a way of failing varies between runs: numbers
// (a pid, an address, a count).
var numbersRE = regexp.MustCompile(`0x[0-9a-f]+|[0-9]+`)

// add adds a failed run, from source (a bug id, or "explore").
func (fs *failureSet) add(o Outcome, source, pinned string) {
	_, why := o.Changed()
	f := bugs.Failure{Ended: o.Exit, Why: why, Source: source, Pinned: pinned, Runs: 1,
		Schedule: o.SchedulePath, Trace: o.FailTrace, Attribution: bugs.AttrWindow}
	site := ""
	if p := o.Placement; p != nil {
		f.Attribution, f.Window, site = p.attribution, p.window, p.lastSite
	}
	f.ID = o.failureID()
	f.Evidence = failureEvidence(o, f, site)
	f.Site = site
	if fs.byID == nil {
		fs.byID = map[string]int{}
	}
	if i, ok := fs.byID[f.ID]; ok {
		fs.list[i].Runs++
		return
	}
	fs.byID[f.ID] = len(fs.list)
	fs.list = append(fs.list, f)
}

// failures returns the failures, saying in each when runs without a
// schedule failed too.
func (fs *failureSet) failures(c controlResult) []bugs.Failure {
	out := slices.Clone(fs.list)
	for i := range out {
		if c.changed > 0 {
			out[i].Evidence = fmt.Sprintf("but %d of %d runs without a schedule ended differently too (%s): the program fails on its own\n%s", c.changed, c.runs, c.why, out[i].Evidence)
		}
	}
	return out
}

// failureID names the way a run failed (failureID).
func (o Outcome) failureID() string {
	site := ""
	if p := o.Placement; p != nil {
		site = p.lastSite
		if o.TimedOut && len(p.blocked) > 0 {
			site = "blocked at " + strings.Join(p.blocked, ", ")
		}
	}
	return failureID(o, site)
}

// failureID names a way of failing: how the run ended (the exit status,
// the signal, a hang), the failure message without its numbers, and the
// failing thread's last site (for a hang in a deadlock, where the threads
// blocked).
func failureID(o Outcome, site string) string {
	end := "exit " + strconv.Itoa(o.ExitCode)
	switch {
	case o.TimedOut:
		end = "hang"
	case o.ExitCode < 0:
		end = o.Exit
	}
	msg := ""
	for _, l := range o.Stderr {
		if failureRE.MatchString(l) {
			msg = numbersRE.ReplaceAllString(l, "#")
			break
		}
	}
	if o.CheckFailed {
		msg += "|check"
	}
	h := sha256.Sum256([]byte(end + "\x00" + msg + "\x00" + site))
	return "FAIL-" + hex.EncodeToString(h[:6])
}

// failureEvidence says what a failed run showed.
func failureEvidence(o Outcome, f bugs.Failure, site string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the run failed: %s\n", f.Why)
	if d := o.childDied(); d != "" {
		fmt.Fprintf(&b, "%s\n", d)
	}
	switch f.Attribution {
	case bugs.AttrNoHold:
		fmt.Fprintf(&b, "no thread was held in this run (or only before its first step, which never came): the failure came without the schedule\n")
	case bugs.AttrOutside:
		fmt.Fprintf(&b, "outside any window: the failure came %d events and %d ms after the last hold ended (%s)\n", f.Window.Events, f.Window.Ms, f.Window.Hold)
	default:
		if w := f.Window; w != nil {
			fmt.Fprintf(&b, "the failure came %d events and %d ms after the hold ended (%s)\n", w.Events, w.Ms, w.Hold)
		}
	}
	if w := f.Window; w != nil && w.Why != "" {
		fmt.Fprintf(&b, "why: %s\n", w.Why)
	}
	if site != "" {
		fmt.Fprintf(&b, "the failing thread's last access: %s\n", site)
	}
	if w := f.Window; w != nil {
		for _, l := range w.Interleaved {
			fmt.Fprintf(&b, "interleaved differently: %s\n", l)
		}
	}
	if len(o.Schedule.Points) > 0 {
		var ps []string
		for _, p := range o.Schedule.Points {
			ps = append(ps, p.String())
		}
		fmt.Fprintf(&b, "change points: %s\n", strings.Join(ps, "; "))
	}
	if f.Pinned != "" {
		fmt.Fprintf(&b, "pinned: %s\n", f.Pinned)
	}
	for _, l := range o.Stderr {
		if failureRE.MatchString(l) || len(o.Stderr) <= 3 {
			fmt.Fprintf(&b, "stderr: %s\n", l)
		}
	}
	return strings.TrimSpace(b.String())
}
