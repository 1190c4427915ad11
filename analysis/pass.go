package analysis

import (
	"fmt"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// A Pass is one analyzer's view of a run: the parsed trace, the shared
// facts (computed once per run, whichever analysis asks first), and where
// its findings go.
type Pass struct {
	Analyzer *Analyzer
	Model    *tracemodel.Model

	facts    *facts
	findings []Finding
	report   *bugs.Report
	summary  string
	byLine   map[int]int32 // EventAtLine, built on first use
}

// Order is the causal order of the trace (fact CausalOrder).
func (p *Pass) Order() *tracemodel.Order { return p.Model.SyncOrder() }

// LockSets are the locks held at every event (fact LockSets).
func (p *Pass) LockSets() *LockSetIndex { return p.facts.lockSets() }

// Periods are the thread periods (fact ThreadPeriods).
func (p *Pass) Periods() *Periods { return p.facts.threadPeriods() }

// Transactions are the marked regions, in order of their start (fact
// Transactions). The slice must not be modified.
func (p *Pass) Transactions() []Transaction { return p.facts.txs() }

// Report records a finding.
func (p *Pass) Report(f Finding) { p.findings = append(p.findings, f) }

// Summarize sets the one-line account of the analysis's work shown in the
// report's summary (sizes, limits reached).
func (p *Pass) Summarize(format string, args ...any) { p.summary = fmt.Sprintf(format, args...) }

// SetReport hands over a whole report made by the analysis itself (McPatom:
// predict.Run): its bugs, violations, statistics and undecided models
// become the base of the run's report, before the findings of the other
// analyses. At most one analysis of a run may call it.
func (p *Pass) SetReport(r *bugs.Report) { p.report = r }

// violation turns a finding into the report's form.
func (p *Pass) violation(f Finding) bugs.Violation {
	m := p.Model
	a := p.Analyzer
	k := a.kind(f.Kind)
	access := func(s Site) bugs.Access {
		e := &m.Events[s.Event]
		loc := m.Locs[e.Loc]
		ac := bugs.Access{
			Thread: int(e.Thread), Handle: m.Threads[e.Thread-1].Handle, Role: s.Role,
			Action: s.Action, File: loc.File, Line: loc.Line, TraceLine: int(e.Line),
			Essential: s.Essential, Object: s.Object,
		}
		if ac.Action == "" {
			ac.Action = e.Kind.String()
		}
		if e.Func != 0 {
			ac.Func = m.Objects[e.Func]
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
