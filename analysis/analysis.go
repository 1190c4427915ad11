// Package analysis is the framework that the analyses of a trace plug into,
// in the style of golang.org/x/tools/go/analysis: an Analyzer declares its
// name, documentation, the paper it comes from, the facts of the parsed
// trace it needs (causal order, lock sets, thread periods, transactions)
// and the kinds of findings it reports; a driver (Run) runs a list of
// analyzers on one parsed trace and merges their findings into one
// bugs.Report, with stable bug ids, so that deduplication, suppressions,
// baselines, diff and every report format (text, JSON, SARIF, HTML) work
// alike for all of them.
//
// Analyzers are values built by functions (mcpatom.New, deadlock.New, …);
// the list of all of them, with their options, is package analysis/all.
// Drivers — `mcpredict run`, `batch`, `serve`/`worker` — only select
// analyzers by name and call Run.
package analysis

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Fact names a derived fact of the parsed trace that analyses share; each
// is computed at most once per run, when an analysis first asks for it.
type Fact string

// The facts a Pass provides.
const (
	// CausalOrder is the synchronization (happens-before) order of the
	// trace: program order, create, join, signal/wait, semaphores,
	// barriers; locks are not causal (Pass.Order).
	CausalOrder Fact = "causal-order"
	// LockSets are the locks each thread holds at each of its events, with
	// the acquisitions that took them (Pass.LockSets).
	LockSets Fact = "lock-sets"
	// ThreadPeriods split each thread at Create, Join and BarrierWait, with
	// the concurrency of periods (Pass.Periods).
	ThreadPeriods Fact = "thread-periods"
	// Transactions are the atomic regions the trace marks: Begin/End
	// labels and Enter/Exit function invocations (Pass.Transactions).
	Transactions Fact = "transactions"
)

// AllFacts lists every fact, in order.
func AllFacts() []Fact { return []Fact{CausalOrder, LockSets, ThreadPeriods, Transactions} }

// An Analyzer is one analysis of a trace.
type Analyzer struct {
	// Name is a short lowercase identifier: the name of --analysis and the
	// "analysis" of its bugs in JSON.
	Name string
	// Doc is a one-line description (`mcpredict analyses`).
	Doc string
	// Paper cites the method: the seed paper and the section or figure.
	Paper string
	// Requires are the facts Run uses (documentation, and computed before
	// Run so that its time is not charged to the first analysis that asks).
	Requires []Fact
	// Kinds are the kinds of findings it reports; a Finding's Kind is one
	// of their ids. Each kind is one SARIF rule.
	Kinds []bugs.FindingKind
	// IDPrefix starts the stable ids of its bugs ("DL" gives DL-…).
	IDPrefix string
	// Run analyses the trace of the pass, reporting findings with
	// pass.Report. An error ends the whole run (except that the findings
	// reported so far are kept when the context was cancelled).
	Run func(ctx context.Context, pass *Pass) error
}

// A Site is one event of a finding.
type Site struct {
	// Event is an index into Model.Events.
	Event int32
	// Role says what the event is in the finding: for a deadlock
	// "acquire" (the acquisition that blocks) or "held" (the acquisition
	// of a lock held meanwhile); for an atomicity violation "local",
	// "remote".
	Role string
	// Action overrides the event's action in the report ("" = its Kind).
	Action string
	// Object overrides the event's object name ("" = the event's lock or
	// variable).
	Object string
	// Essential sites identify the bug: the bug id hashes their kinds'
	// and locations, and the bug lists their locations.
	Essential bool
}

// A Finding is one instance of a problem an analysis found: any number of
// threads and events, for example a deadlock cycle (N threads, their
// blocking acquisitions and the acquisitions of the locks they hold) or an
// atomicity violation (a transaction's accesses and a conflicting access).
type Finding struct {
	// Kind is one of the analyzer's Kinds' ids.
	Kind string
	// Message is a one-line description.
	Message string
	// Objects are the locks or variables involved.
	Objects []string
	// Threads are the model thread ids involved, in order (for a cycle,
	// cycle order). Empty: the threads of the sites, in order of
	// appearance.
	Threads []int
	// Sites are the events of the finding, in the order to show them.
	Sites []Site
	// Schedule is an interleaving that exhibits the finding (sites in
	// execution order); empty: the Sites.
	Schedule []Site
	// Occurred is set when the finding happened in the recorded run.
	Occurred bool
}

// Options configure a run of analyzers.
type Options struct {
	// Version is the tool version written into the report.
	Version string
}

// Select returns the analyzers of all named by list, a comma-separated
// list of names, "all", or "" for def (itself a list). An unknown name is
// an error that lists the known ones.
func Select(all []*Analyzer, list, def string) ([]*Analyzer, error) {
	if strings.TrimSpace(list) == "" {
		list = def
	}
	byName := map[string]*Analyzer{}
	var names []string
	for _, a := range all {
		byName[a.Name] = a
		names = append(names, a.Name)
	}
	var out []*Analyzer
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		switch {
		case n == "":
			continue
		case n == "all":
			for _, a := range all {
				if !seen[a.Name] {
					seen[a.Name] = true
					out = append(out, a)
				}
			}
			continue
		}
		a, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("unknown analysis %q: want a comma-separated list of %s, or all", n, strings.Join(names, ", "))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no analysis selected: want a comma-separated list of %s, or all", strings.Join(names, ", "))
	}
	// Keep the order of all: reports do not depend on how the list was
	// written.
	index := map[string]int{}
	for i, a := range all {
		index[a.Name] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return index[out[i].Name] < index[out[j].Name] })
	return out, nil
}

// Validate checks an analyzer's declaration.
func (a *Analyzer) Validate() error {
	switch {
	case a.Name == "" || strings.ToLower(a.Name) != a.Name || strings.ContainsAny(a.Name, ", "):
		return fmt.Errorf("analyzer %q: the name must be a lowercase identifier", a.Name)
	case a.Doc == "" || strings.Contains(a.Doc, "\n"):
		return fmt.Errorf("analyzer %s: Doc must be one line", a.Name)
	case a.Run == nil:
		return fmt.Errorf("analyzer %s: no Run", a.Name)
	}
	known := map[Fact]bool{}
	for _, f := range AllFacts() {
		known[f] = true
	}
	for _, f := range a.Requires {
		if !known[f] {
			return fmt.Errorf("analyzer %s: unknown fact %q", a.Name, f)
		}
	}
	return nil
}

// kind returns the declared kind with the id, or a stand-in.
func (a *Analyzer) kind(id string) bugs.FindingKind {
	for _, k := range a.Kinds {
		if k.ID == id {
			return k
		}
	}
	return bugs.FindingKind{ID: id, Name: id}
}

// modelOf is a small helper for analyses: the thread reference of a model
// thread id.
func threadRef(m *tracemodel.Model, tid int) tracemodel.ThreadRef {
	return tracemodel.ThreadRef{ID: tid, Handle: m.Threads[tid-1].Handle}
}
