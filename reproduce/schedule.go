package reproduce

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/recorder"
)

// Step is one access of a pattern that a schedule acts on, by its source
// site.
type Step struct {
	// Role is L1 (local, first), L2 (local, second), R1.. (remote, in
	// order; for a deadlock cycle, in any order), PRE (where a remote
	// thread is held before L1), PEER (where another thread taking a lock
	// is held while the local thread is: peerStep), or for a deadlock
	// cycle B1.. (where the thread of R1.. blocks: observed, not
	// directed).
	Role   string
	Action string // Read, Write; Lock for a PRE at a lock acquisition; Lock, Blocked for a deadlock
	File   string
	Line   int
	Var    string // the variable it accesses ("" for PRE)
	// Same is set when the access must touch the address of L1's.
	Same bool
}

func (s Step) kind() byte {
	switch k := kindOf(s.Action); k {
	case 'R', 'W', 'L', 'B':
		return k
	}
	return 'A'
}

// runtimeKind is the kind the runtime matches the step's site with: a
// blocked acquisition is an acquisition there.
func (s Step) runtimeKind() byte {
	if k := s.kind(); k != 'B' {
		return k
	}
	return 'L'
}

// directed reports whether the runtime acts on the step (the schedule
// file has its code ranges): every step but a deadlock's B1.., which only
// the directed run's trace is checked for.
func (s Step) directed() bool { return !strings.HasPrefix(s.Role, "B") }

func (s Step) String() string {
	v := ""
	if s.Var != "" {
		v = " " + s.Var
	}
	return fmt.Sprintf("%s %s %s:%d%s", s.Role, s.Action, s.File, s.Line, v)
}

// Schedule is one directed run of one bug: the steps to force, the
// occurrence of L1 to act on, how long a thread may be held, and the
// command to run.
type Schedule struct {
	Bug        string // the bug id
	Pattern    string // P3, M1, ...
	Steps      []Step
	Occurrence int           // act on the Occurrence-th execution of L1 (1: the first)
	Pause      time.Duration // the longest a thread is held
	// Prehold holds the first thread that reaches the PRE step before L1
	// happened, until it has (the remote thread ran first in the
	// recorded run).
	Prehold bool
	Argv    []string // the command
	Dir     string   // its working directory
	Objects []string // the ELF objects to map sites to code in
	Ended   string   // how the recorded run ended (the outcome to compare with)
	Check   string   // the --check command ("" if none)
	Stdin   string   // the file given as standard input ("" if none)
	// Points are the change points of an exploring schedule (Explore):
	// it has no steps the runtime acts on.
	Points []Point
}

// Point is a change point of an exploring schedule: the Occurrence-th
// execution of a site (by any thread) holds its thread before the access
// or the acquisition, until no other thread can run or the pause ends, as
// PCT lowers a thread's priority.
type Point struct {
	// Kind is R, W, L (a lock acquisition), C (the creator after a
	// thread creation), S (a created thread at its start), or N: no site,
	// the Occurrence-th lock acquisition of the run (blindPoint).
	Kind       byte
	File       string
	Line       int
	Occurrence int
	Var        string // the variable (or lock) it was on in the recording
}

func (p Point) String() string {
	if p.Kind == blindPoint {
		return fmt.Sprintf("N lock acquisition #%d of the run", p.Occurrence)
	}
	return fmt.Sprintf("%c %s:%d#%d %s", p.Kind, p.File, p.Line, p.Occurrence, p.Var)
}

// blindPoint is the kind of a change point at the n-th lock acquisition
// of the run, wherever it is: PCT's change points are steps of the run,
// and code that never ran in the recording has no recorded site.
const blindPoint = 'N'

// splitSteps returns the local thread's two steps and the remote steps,
// in order (a PRE step is none of them).
func splitSteps(steps []Step) (l1, l2 *Step, remote []Step) {
	for i := range steps {
		switch st := &steps[i]; {
		case st.Role == "L1":
			l1 = st
		case st.Role == "L2":
			l2 = st
		case strings.HasPrefix(st.Role, "R"):
			remote = append(remote, *st)
		}
	}
	return l1, l2, remote
}

// StepsOf returns the steps of a violation: its essential accesses in
// interleaving order, the first local one L1, the last local one L2, the
// remote ones between R1, R2, ... It fails for a violation that is not a
// two-thread pattern of one local and some remote accesses (a deadlock).
func StepsOf(v bugs.Violation) ([]Step, error) {
	if v.Pattern == "DL" {
		return deadlockSteps(v)
	}
	as := v.EssentialAccesses()
	var local, remote []bugs.Access
	for _, a := range as {
		if kindOf(a.Action) != 'R' && kindOf(a.Action) != 'W' {
			return nil, fmt.Errorf("%s: a %s is not an access a schedule can direct", v.Pattern, a.Action)
		}
		switch a.Role {
		case "local":
			local = append(local, a)
		case "remote":
			remote = append(remote, a)
		default:
			return nil, fmt.Errorf("%s: access of role %q", v.Pattern, a.Role)
		}
	}
	if len(local) < 2 || len(remote) == 0 || len(remote) > 4 {
		return nil, fmt.Errorf("%s: %d local and %d remote accesses: not a pattern a schedule can direct", v.Pattern, len(local), len(remote))
	}
	varOf := func(a bugs.Access) string {
		if a.Object != "" {
			return a.Object
		}
		return v.Var
	}
	first, last := local[0], local[len(local)-1]
	// A step is where the access's code is (in a library header, for
	// an access the report shows at the user's call).
	at := func(role string, a bugs.Access) Step {
		l := a.Executed()
		return Step{Role: role, Action: a.Action, File: l.File, Line: l.Line, Var: varOf(a), Same: varOf(a) == varOf(first)}
	}
	steps := []Step{at("L1", first)}
	for i, a := range remote {
		steps = append(steps, at("R"+strconv.Itoa(i+1), a))
	}
	steps = append(steps, at("L2", last))
	return steps, nil
}

// codeCache maps source lines to code ranges, an object's DWARF read once.
type codeCache struct {
	ranges map[string][]recorder.CodeRange // object|file|line
}

type siteRanges struct {
	object string
	ranges []recorder.CodeRange
}

// lookup returns the code of file:line in the first objects that have it.
func (c *codeCache) lookup(objects []string, file string, line int) ([]siteRanges, error) {
	if c.ranges == nil {
		c.ranges = map[string][]recorder.CodeRange{}
	}
	var out []siteRanges
	var firstErr error
	for _, obj := range objects {
		key := obj + "|" + file + "|" + strconv.Itoa(line)
		rs, ok := c.ranges[key]
		if !ok {
			var err error
			rs, err = recorder.LineCode(obj, file, line)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			c.ranges[key] = rs
		}
		if len(rs) > 0 {
			out = append(out, siteRanges{object: obj, ranges: rs})
		}
	}
	if len(out) == 0 {
		if firstErr != nil {
			return nil, fmt.Errorf("%s:%d: no code found: %v", file, line, firstErr)
		}
		return nil, fmt.Errorf("%s:%d: no code found in %s (rebuilt since it was recorded, or built without -g?)", file, line, strings.Join(objects, ", "))
	}
	return out, nil
}

// Write writes the schedule file: the directives the runtime reads
// (recorder/rt/mcprec_sched.c), with the code ranges of every step found
// in the DWARF of s.Objects, and the rest as keys the runtime ignores and
// ReadSchedule reads back.
func (s Schedule) Write(w io.Writer, cc *codeCache) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "mcpredict-schedule 1\n# %s %s: written by mcpredict reproduce; mcpredict replay runs it\n", s.Bug, s.Pattern)
	fmt.Fprintf(bw, "bug %s\npattern %s\n", s.Bug, s.Pattern)
	fmt.Fprintf(bw, "pause_ms %d\noccurrence %d\n", s.Pause.Milliseconds(), max(s.Occurrence, 1))
	pre := 0
	if s.Prehold {
		pre = 1
	}
	fmt.Fprintf(bw, "prehold %d\n", pre)
	argv, _ := json.Marshal(s.Argv)
	fmt.Fprintf(bw, "argv %s\ncwd %s\nended %s\n", argv, s.Dir, s.Ended)
	if s.Check != "" {
		fmt.Fprintf(bw, "check %s\n", s.Check)
	}
	if s.Stdin != "" {
		fmt.Fprintf(bw, "stdin %s\n", s.Stdin)
	}
	for _, o := range s.Objects {
		fmt.Fprintf(bw, "object %s\n", o)
	}
	for _, st := range s.Steps {
		same := 0
		if st.Same {
			same = 1
		}
		fmt.Fprintf(bw, "step %s %s %d %s:%d %s\n", st.Role, st.Action, same, st.File, st.Line, st.Var)
		if cc == nil || !st.directed() {
			continue
		}
		found, err := cc.lookup(s.Objects, st.File, st.Line)
		if err != nil {
			return fmt.Errorf("step %s: %w", st.Role, err)
		}
		for _, f := range found {
			for _, r := range f.ranges {
				fmt.Fprintf(bw, "site %s %c %d %s %x %x\n", st.Role, st.runtimeKind(), same, moduleName(s.Objects, f.object), r.Lo, r.Hi)
			}
		}
	}
	for i, p := range s.Points {
		if p.Kind == blindPoint {
			fmt.Fprintf(bw, "xpoint %d %c -:0 %d (any lock)\n", i, p.Kind, p.Occurrence)
			fmt.Fprintf(bw, "point %d %c - 0 0 %d\n", i, p.Kind, max(p.Occurrence, 1))
			continue
		}
		fmt.Fprintf(bw, "xpoint %d %c %s:%d %d %s\n", i, p.Kind, p.File, p.Line, p.Occurrence, p.Var)
		if cc == nil {
			continue
		}
		found, err := cc.lookup(s.Objects, p.File, p.Line)
		if err != nil {
			return fmt.Errorf("change point %d: %w", i, err)
		}
		for _, f := range found {
			for _, r := range f.ranges {
				fmt.Fprintf(bw, "point %d %c %s %x %x %d\n", i, p.Kind, moduleName(s.Objects, f.object), r.Lo, r.Hi, max(p.Occurrence, 1))
			}
		}
	}
	return bw.Flush()
}

// moduleName is how a schedule names the object code is in: "-" for the
// executable (the first object), else its base name.
func moduleName(objects []string, object string) string {
	if len(objects) == 0 || object != objects[0] {
		return filepath.Base(object)
	}
	return "-"
}

// ReadSchedule reads a schedule file written by Write.
func ReadSchedule(path string) (Schedule, error) {
	var s Schedule
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		key, val, _ := strings.Cut(line, " ")
		bad := func(err error) error { return fmt.Errorf("schedule %s:%d: %s: %v", path, n, key, err) }
		var err error
		switch key {
		case "mcpredict-schedule":
			if val != "1" {
				err = fmt.Errorf("version %q, this mcpredict reads 1", val)
			}
		case "bug":
			s.Bug = val
		case "pattern":
			s.Pattern = val
		case "pause_ms":
			var ms int
			ms, err = strconv.Atoi(val)
			s.Pause = time.Duration(ms) * time.Millisecond
		case "occurrence":
			s.Occurrence, err = strconv.Atoi(val)
		case "prehold":
			s.Prehold = val == "1"
		case "argv":
			err = json.Unmarshal([]byte(val), &s.Argv)
		case "cwd":
			s.Dir = val
		case "ended":
			s.Ended = val
		case "check":
			s.Check = val
		case "stdin":
			s.Stdin = val
		case "xpoint":
			var p Point
			p, err = parsePoint(val)
			s.Points = append(s.Points, p)
		case "object":
			s.Objects = append(s.Objects, val)
		case "step":
			var st Step
			st, err = parseStep(val)
			s.Steps = append(s.Steps, st)
		}
		if err != nil {
			return s, bad(err)
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	if (len(s.Steps) == 0 && len(s.Points) == 0) || len(s.Argv) == 0 {
		return s, fmt.Errorf("schedule %s: no steps or no command: not a schedule written by mcpredict reproduce", path)
	}
	return s, nil
}

// parsePoint reads an xpoint line: IDX KIND FILE:LINE OCC [VAR].
func parsePoint(val string) (Point, error) {
	f := strings.SplitN(val, " ", 5)
	if len(f) < 4 || len(f[1]) != 1 {
		return Point{}, fmt.Errorf("want IDX KIND FILE:LINE OCC [VAR], got %q", val)
	}
	p := Point{Kind: f[1][0]}
	i := strings.LastIndexByte(f[2], ':')
	if i <= 0 {
		return p, fmt.Errorf("bad site %q", f[2])
	}
	p.File = f[2][:i]
	var err error
	if p.Line, err = strconv.Atoi(f[2][i+1:]); err != nil {
		return p, fmt.Errorf("bad line in %q", f[2])
	}
	if p.Occurrence, err = strconv.Atoi(f[3]); err != nil {
		return p, fmt.Errorf("bad occurrence %q", f[3])
	}
	if p.Kind == blindPoint {
		return Point{Kind: blindPoint, Occurrence: p.Occurrence}, nil
	}
	if len(f) == 5 {
		p.Var = f[4]
	}
	return p, nil
}

func parseStep(val string) (Step, error) {
	f := strings.SplitN(val, " ", 5)
	if len(f) < 4 {
		return Step{}, fmt.Errorf("want ROLE ACTION SAME FILE:LINE [VAR], got %q", val)
	}
	st := Step{Role: f[0], Action: f[1], Same: f[2] == "1"}
	i := strings.LastIndexByte(f[3], ':')
	if i <= 0 {
		return st, fmt.Errorf("bad site %q", f[3])
	}
	st.File = f[3][:i]
	line, err := strconv.Atoi(f[3][i+1:])
	if err != nil {
		return st, fmt.Errorf("bad line in %q", f[3])
	}
	st.Line = line
	if len(f) == 5 {
		st.Var = f[4]
	}
	return st, nil
}

// MaxCycle is the most threads of a lock-order cycle a schedule directs.
const MaxCycle = 8

// cycleThread is one thread of a lock-order cycle: its acquisition of the
// lock it holds, and the acquisition (of the next thread's lock) that
// blocks.
type cycleThread struct{ held, acquire bugs.Access }

// cycleOf returns the threads of a deadlock's cycle, in cycle order (each
// acquires the lock the next one holds) from the thread that must take
// its held lock first: one that takes it while holding the lock another
// thread of the cycle holds in it (carter01: a thread takes l under m,
// then lets m go, and the other holds m when it wants l; started with the
// other, the first would block on m and the cycle never forms), else the
// one that took its held lock first in the recorded run. The schedule
// arms on that thread, and the others are held as they come.
func cycleOf(v bugs.Violation) ([]cycleThread, error) {
	as := v.EssentialAccesses()
	n := len(as) / 2
	if len(as)%2 != 0 || n < 2 {
		return nil, fmt.Errorf("DL: %d acquisitions: not a cycle of threads, each holding a lock and acquiring the next", len(as))
	}
	if n > MaxCycle {
		return nil, fmt.Errorf("DL: a cycle of %d threads; cycles of up to %d threads are directed", n, MaxCycle)
	}
	cyc := make([]cycleThread, n)
	seen := map[string]bool{}
	first := 0
	for i := range cyc {
		h, a := as[2*i], as[2*i+1]
		if h.Role != "held" || a.Role != "acquire" || h.Handle != a.Handle || seen[h.Handle] {
			return nil, fmt.Errorf("DL: acquisition %d is not the held and the blocking acquisition of a thread of its own", i+1)
		}
		seen[h.Handle] = true
		cyc[i] = cycleThread{h, a}
	}
	held := map[string]bool{}
	for _, t := range cyc {
		held[t.held.Object] = true
	}
	// needs reports whether thread i takes its held lock while holding
	// another thread's held lock (the locks of its context, when known).
	needs := func(i int) bool {
		for _, l := range cyc[i].held.Locks {
			if l != cyc[i].held.Object && held[l] {
				return true
			}
		}
		return false
	}
	for i := range cyc {
		switch {
		case needs(i) && !needs(first):
			first = i
		case needs(i) == needs(first) && cyc[i].held.TraceLine < cyc[first].held.TraceLine:
			first = i
		}
	}
	return append(cyc[first:], cyc[:first]...), nil
}

// deadlockSteps are the steps of a lock-order cycle of N threads: the
// first thread's acquisition of its held lock (L1), the other threads'
// acquisitions of theirs (R1..R(N-1), made in any order), the first
// thread's acquisition that then blocks (L2, observed as Blocked), and the
// others' (B1..B(N-1), observed only). Each thread is held before its
// next acquisition until every other holds its lock; each then waits for
// the next one's.
func deadlockSteps(v bugs.Violation) ([]Step, error) {
	cyc, err := cycleOf(v)
	if err != nil {
		return nil, err
	}
	step := func(role, action string, a bugs.Access) Step {
		l := a.Executed()
		return Step{Role: role, Action: action, File: l.File, Line: l.Line, Var: a.Object}
	}
	steps := []Step{step("L1", "Lock", cyc[0].held)}
	for k, t := range cyc[1:] {
		steps = append(steps, step("R"+strconv.Itoa(k+1), "Lock", t.held))
	}
	steps = append(steps, step("L2", "Blocked", cyc[0].acquire))
	for k, t := range cyc[1:] {
		steps = append(steps, step("B"+strconv.Itoa(k+1), "Blocked", t.acquire))
	}
	return steps, nil
}
