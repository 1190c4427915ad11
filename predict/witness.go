package predict

import (
	"fmt"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// WitnessContext is how many witness steps before an instance's first
// access a violation's Interleaving keeps.
const WitnessContext = 200

// FromWitness builds the violation of pattern pat, seen with local thread
// local (1 or 2), from the steps a checker executed (a Spin trail or the
// native search's witness) in pm: the instance's accesses and the
// interleaving mapped back to the trace and the source, the essential
// accesses marked, and the bug id. The violation names no analysis
// (Assemble does). It fails when the witness does not show the pattern.
func FromWitness(pm *tracemodel.PairModel, pat ltl.Pattern, local int, executed []tracemodel.StepRef, engine string) (bugs.Violation, error) {
	return fromWitness(pm, pat, local, executed, engine, true)
}

// fromWitness is FromWitness; without interleaving, the violation's
// interleaving is left out as bugs.Violation.OmitInterleaving leaves it:
// a server's thousands of instances keep a few (trimInterleavings), and
// building the others' was a tenth of a run's time.
func fromWitness(pm *tracemodel.PairModel, pat ltl.Pattern, local int, executed []tracemodel.StepRef, engine string, interleaving bool) (bugs.Violation, error) {
	pm.ResolveEvents()
	start, end, err := witnessMatch(pm, pat, local, executed)
	if err != nil {
		return bugs.Violation{}, err
	}
	v := bugs.Violation{
		Var:         pm.Var,
		Local:       pm.Threads[local-1],
		Remote:      pm.Threads[2-local],
		Pattern:     pat.ID,
		PatternName: pat.Name,
		Claim:       pat.ClaimName(local),
		Engine:      engine,
	}
	// The violation of a set model lists both variables, x of the pattern
	// first; each access names its variable.
	varOf := func(s *tracemodel.Step) string { return "" }
	if pm.Var2 != "" {
		v.Objects = []string{pm.Var, pm.Var2}
		if pat.Swapped {
			v.Objects = []string{pm.Var2, pm.Var}
		}
		v.Var = v.Objects[0] + ", " + v.Objects[1]
		varOf = func(s *tracemodel.Step) string {
			if !s.Kind.IsAccess() {
				return ""
			}
			if s.Second {
				return pm.Var2
			}
			return pm.Var
		}
	}
	// obs[i] is the state after executed[i-1]. Several steps can stand for
	// one event (a cond Wait's release, boundary and reacquire; an unlock and
	// its publish): each event is listed once.
	lastLine := [2]int{-1, -1}
	from := max(0, start-1-WitnessContext)
	v.Elided = from
	for i, r := range executed {
		if i+1 > end {
			break
		}
		if i < from {
			continue
		}
		s := &pm.Steps[r.Thread][r.Index]
		if len(s.Events) == 1 && s.Events[0].TraceLine == lastLine[r.Thread] {
			continue
		}
		if n := len(s.Events); n > 0 {
			lastLine[r.Thread] = s.Events[n-1].TraceLine
		}
		inInstance := i+1 >= start && s.Kind.IsAccess()
		role := "remote"
		if r.Thread+1 == local {
			role = "local"
		}
		for _, e := range s.Events {
			a := bugs.Access{
				Thread: pm.Threads[r.Thread].ID, Handle: pm.Threads[r.Thread].Handle, Role: role,
				Action: e.Action, File: e.File, Line: e.Line, Func: e.Func, TraceLine: e.TraceLine, Source: e.Source, Atomic: e.Atomic,
				Instance: inInstance, Object: varOf(s), Library: e.Library,
			}
			if interleaving {
				v.Interleaving = append(v.Interleaving, a)
			}
			if inInstance {
				a.Instance = false
				v.Accesses = append(v.Accesses, a)
			}
		}
	}
	for i := range v.Accesses {
		v.Accesses[i].Essential = isEssential(pat, v.Accesses[i])
	}
	v.BugID = bugID(pat, v.EssentialAccesses())
	if !interleaving {
		v.MarkInterleavingOmitted()
	}
	return v, nil
}

// witnessMatch finds the instance of pat (local thread local) in the steps
// a checker executed: the indexes into them, from 1, of its first and last
// access (the claims' observations after each step).
func witnessMatch(pm *tracemodel.PairModel, pat ltl.Pattern, local int, executed []tracemodel.StepRef) (start, end int, err error) {
	for _, r := range executed {
		if r.Thread < 0 || r.Thread > 1 || r.Index < 0 || r.Index >= len(pm.Steps[r.Thread]) {
			return 0, 0, fmt.Errorf("witness step %d/%d outside the model", r.Thread, r.Index)
		}
	}
	// The claims' observations after each step, matched as they come:
	// state k is the one after executed[k-1].
	cur := ltl.Obs{Brk1: pm.Broken, Brk2: pm.Broken}
	m := pat.Matcher(local)
	start, ok := m.Next(cur)
	for k := 0; !ok && k < len(executed); k++ {
		r := executed[k]
		s := &pm.Steps[r.Thread][r.Index]
		tid := int16(r.Thread + 1)
		switch s.Kind {
		case tracemodel.StepRead, tracemodel.StepWrite:
			cur.V = tid
			if s.Kind == tracemodel.StepWrite {
				cur.V += 64
			}
			if s.Second {
				cur.V += ltl.VarBit
			}
			cur.Atomic = s.Kind == tracemodel.StepWrite && s.Atomic
			cur = setFlag(cur, r.Thread, false, false)
			cur = setFlag(cur, r.Thread, true, false)
		case tracemodel.StepBoundary:
			cur = setFlag(cur, r.Thread, false, true)
		case tracemodel.StepPublish:
			cur = setFlag(cur, r.Thread, true, true)
		}
		if start, ok = m.Next(cur); ok {
			end = k + 1
		}
	}
	if !ok {
		return 0, 0, fmt.Errorf("model %s threads %s,%s: the witness of claim %s does not contain pattern %s (%s)",
			pm.Var, pm.Threads[0].Handle, pm.Threads[1].Handle, pat.ClaimName(local), pat.ID, pat.Source)
	}
	// The match may start on a state that only repeats the value of the
	// access that set it (another step ran in between); the instance starts
	// at that access.
	for start > 1 && !pm.Steps[executed[start-1].Thread][executed[start-1].Index].Kind.IsAccess() {
		start--
	}
	return start, end, nil
}

// setFlag sets thread's brk flag, or its pub flag if pub, to b.
func setFlag(o ltl.Obs, thread int, pub, b bool) ltl.Obs {
	switch {
	case thread == 0 && pub:
		o.Pub1 = b
	case thread == 0:
		o.Brk1 = b
	case pub:
		o.Pub2 = b
	default:
		o.Brk2 = b
	}
	return o
}

// isEssential tells the accesses that make an instance this bug: every local
// access (the region that should have been atomic) and the remote accesses
// of the kinds the pattern's unstarred remote terms need (the writes of
// P1-P3 and P5, the reads of P4). Remote accesses that a starred term only
// allows (A2*) depend on the witness the checker happened to find; leaving
// them out makes the same bug found twice, or by another engine, one bug.
func isEssential(pat ltl.Pattern, a bugs.Access) bool {
	if a.Role == "local" {
		return true
	}
	for _, t := range pat.Terms {
		if t.Side == ltl.Remote && t.Quant != ltl.Star &&
			(t.Access == ltl.Any || (t.Access == ltl.Read) == (a.Action == "Read")) {
			return true
		}
	}
	return false
}

// bugID is the stable id of the bug of a violation of pat with the
// essential accesses as (bugs.PatternID): the key of a built-in pattern is
// its family (M1 and M2 are one bug) or id; that of a user pattern its
// text, not its position on the command line.
func bugID(pat ltl.Pattern, as []bugs.Access) string {
	key := pat.ID
	if pat.Family != "" {
		key = pat.Family
	}
	if !ltl.IsBuiltin(key) {
		key = pat.Source
	}
	return bugs.PatternID(key, as)
}

// Annotate adds the context of the trace (the locks held, the call chain,
// the thread's creation site: tracemodel.Context) to the essential accesses
// of each bug's first instance: what the reports show of a bug, found by
// reading back from each access, so only for those few. Accesses that have
// it already are left as they are.
func Annotate(m *tracemodel.Model, rep *bugs.Report) {
	cs := m.Contexts()
	for _, b := range rep.Bugs {
		if len(b.Instances) == 0 || b.Instances[0] >= len(rep.Violations) {
			continue
		}
		v := &rep.Violations[b.Instances[0]]
		for i := range v.Accesses {
			a := &v.Accesses[i]
			if !a.Essential || a.Stack != nil || a.Locks != nil || a.Created != "" {
				continue
			}
			c, ok := cs.At(a.TraceLine)
			if !ok {
				continue
			}
			a.Locks, a.Stack, a.StackLibrary = c.Locks, c.Stack, c.StackLibrary
			if c.Created != (tracemodel.Loc{}) {
				a.Created = c.Created.String()
			}
			if c.Allocated != (tracemodel.Loc{}) {
				a.Allocated = c.Allocated.String()
			}
		}
	}
}
