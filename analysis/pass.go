package analysis

import (
	"fmt"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// A Pass is one analyzer's view of a run: the parsed trace, the facts and
// the results of other analyzers it requires (computed once per run), and
// where its findings go.
type Pass struct {
	Analyzer *Analyzer
	Model    *tracemodel.Model
	// ResultOf holds the result of each analyzer that Analyzer requires,
	// and nothing else.
	ResultOf map[*Analyzer]any

	facts      *facts
	undeclared []Fact // facts asked for without being required
	findings   []Finding
	summary    string
	byLine     map[int]int32 // EventAtLine, built on first use
}

// requires reports whether the analyzer declared fact f, recording the
// access otherwise: the run then fails (Run).
func (p *Pass) requires(f Fact) bool {
	for _, r := range p.Analyzer.Requires {
		if r == Requirement(f) {
			return true
		}
	}
	p.undeclared = append(p.undeclared, f)
	return false
}

// Order is the causal order of the trace (fact CausalOrder); nil unless
// the analyzer requires it.
func (p *Pass) Order() *tracemodel.Order {
	if !p.requires(CausalOrder) {
		return nil
	}
	return p.Model.SyncOrder()
}

// LockSets are the locks held at every event (fact LockSets); nil unless
// the analyzer requires them.
func (p *Pass) LockSets() *LockSetIndex {
	if !p.requires(LockSets) {
		return nil
	}
	return p.facts.lockSets()
}

// Periods are the thread periods (fact ThreadPeriods); nil unless the
// analyzer requires them.
func (p *Pass) Periods() *Periods {
	if !p.requires(ThreadPeriods) {
		return nil
	}
	return p.facts.threadPeriods()
}

// Report records a finding.
func (p *Pass) Report(f Finding) { p.findings = append(p.findings, f) }

// Summarize sets the one-line account of the analysis's work shown in the
// report's summary (sizes, limits reached).
func (p *Pass) Summarize(format string, args ...any) { p.summary = fmt.Sprintf(format, args...) }

// violation turns a finding into the report's form.
func (p *Pass) violation(f Finding) bugs.Violation {
	m := p.Model
	a := p.Analyzer
	k := a.kind(f.Kind)
	access := func(s Site) bugs.Access {
		e := &m.Events[s.Event]
		r := m.Ref(e)
		ac := bugs.Access{
			Thread: int(e.Thread), Handle: m.Threads[e.Thread-1].Handle, Role: s.Role,
			Action: s.Action, File: r.File, Line: r.Line, Func: r.Func, TraceLine: int(e.Line),
			Essential: s.Essential, Object: s.Object, Source: r.Source, Library: r.Library,
		}
		if ac.Action == "" {
			ac.Action = e.Kind.String()
		}
		if ac.Object == "" {
			ac.Object = objectName(m, e)
		}
		return ac
	}
	v := bugs.Violation{
		Pattern: f.Kind, PatternName: k.Name, Claim: f.Kind, Engine: a.Name,
		Analysis: a.Name, Objects: f.Objects, Message: f.Message, Occurred: f.Occurred,
		Accesses: []bugs.Access{}, Interleaving: []bugs.Access{},
	}
	threads := f.Threads
	seen := map[int]bool{}
	for _, t := range threads {
		seen[t] = true
	}
	var locs []bugs.Access
	for _, s := range f.Sites {
		ac := access(s)
		v.Accesses = append(v.Accesses, ac)
		if !seen[ac.Thread] {
			seen[ac.Thread] = true
			threads = append(threads, ac.Thread)
		}
		if s.Essential {
			locs = append(locs, ac)
		}
	}
	sched := f.Schedule
	if len(sched) == 0 {
		sched = f.Sites
	}
	for _, s := range sched {
		ac := access(s)
		ac.Instance, ac.Essential = s.Essential, false
		v.Interleaving = append(v.Interleaving, ac)
	}
	for _, t := range threads {
		v.Threads = append(v.Threads, threadRef(m, t))
	}
	if len(v.Threads) > 0 {
		v.Local = v.Threads[0]
	}
	if len(v.Threads) > 1 {
		v.Remote = v.Threads[1]
	}
	for i, o := range f.Objects {
		if i > 0 {
			v.Var += ", "
		}
		v.Var += o
	}
	if locs == nil {
		locs = v.Accesses
	}
	prefix := a.IDPrefix
	if prefix == "" {
		prefix = a.Name
	}
	v.BugID = bugs.FindingID(prefix, a.Name+"/"+f.Kind, bugs.LocationsOf(locs))
	return v
}

// objectName is the name of an event's object: variable, lock, thread.
func objectName(m *tracemodel.Model, e *tracemodel.Event) string {
	switch e.Kind {
	case tracemodel.Read, tracemodel.Write:
		return m.Vars[e.Obj].Name
	case tracemodel.Create, tracemodel.Join:
		return m.Threads[e.Obj-1].Handle
	case tracemodel.Wait:
		if e.Obj2 != 0 {
			return m.Objects[e.Obj] + ", " + m.Objects[e.Obj2]
		}
	}
	return m.Objects[e.Obj]
}

// EventAtLine returns the index in Model.Events of the event on trace line
// n, for analyses whose results name events by trace line.
func (p *Pass) EventAtLine(n int) (int32, bool) {
	if p.byLine == nil {
		p.byLine = make(map[int]int32, len(p.Model.Events))
		for i := range p.Model.Events {
			p.byLine[int(p.Model.Events[i].Line)] = int32(i)
		}
	}
	ev, ok := p.byLine[n]
	return ev, ok
}
