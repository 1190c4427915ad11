// Package analysis is the framework that the analyses of a trace plug into,
// in the style of golang.org/x/tools/go/analysis. An Analyzer declares its
// name, documentation, the paper it comes from, what it needs (Requires:
// facts of the parsed trace and other analyzers, whose results it gets in
// Pass.ResultOf), and the kinds of findings it reports. A driver (Run)
// runs a list of analyzers on one parsed trace and merges what they found
// into one bugs.Report, with stable bug ids, so that deduplication,
// suppressions, baselines, diff and every report format (text, JSON, SARIF,
// HTML) work alike for all of them.
//
// Analyzers are of two sorts, declared alike. A model-checked analyzer
// (McPatom, atomic sets) has no Run: its Models say which kind of models
// package predict plans for it and with which patterns. Run gathers the
// models of every selected model-checked analyzer and has them checked in
// one pass — plan, project, check, confirm, assemble — by the function
// Options.CheckModels, so that they share Spin runs, the verdict cache and
// --max-models; `mcpredict run` and batch check them in process
// (predict.ModelChecker), the service distributes them to its workers.
// Every other analyzer has a Run that reports findings (any number of
// threads and events) through its Pass and may return a result for the
// analyzers that require it (transactions, package analysis/txn).
//
// An analyzer gets exactly what it declares: Pass.ResultOf holds the
// results of the analyzers it requires, and a Pass accessor of a fact it
// does not require returns nil and makes Run fail with an error naming the
// analyzer and the fact. Each fact and each required analyzer is computed
// at most once per run.
//
// Analyzers are values built by functions (mcpatom.New, deadlock.New, …);
// the list of the selectable ones, with their options, is package
// analysis/all. Drivers — `mcpredict run`, `batch`, `serve`/`worker` — only
// select analyzers by name and call Run. This package names no analysis.
package analysis

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// A Requirement is something an analyzer needs: a Fact of the trace or
// another *Analyzer, whose result it gets.
type Requirement interface{ requirement() }

// Fact names a derived fact of the parsed trace that analyses share; each
// is computed at most once per run, when an analysis first asks for it.
type Fact string

func (Fact) requirement() {}

// The facts a Pass provides.
const (
	// CausalOrder is the synchronization (happens-before) order of the
	// trace: program order, create, join, signal/wait, semaphores,
	// barriers; locks are not causal (Pass.Order, and Model.Clock).
	CausalOrder Fact = "causal-order"
	// LockSets are the locks each thread holds at each of its events, with
	// the acquisitions that took them (Pass.LockSets).
	LockSets Fact = "lock-sets"
	// ThreadPeriods split each thread at Create, Join and BarrierWait, with
	// the concurrency of periods (Pass.Periods).
	ThreadPeriods Fact = "thread-periods"
)

// AllFacts lists every fact, in order.
func AllFacts() []Fact { return []Fact{CausalOrder, LockSets, ThreadPeriods} }

// An Analyzer is one analysis of a trace.
type Analyzer struct {
	// Name is a short lowercase identifier: the name of --analysis and the
	// "analysis" of its bugs in JSON.
	Name string
	// Doc is a one-line description (`mcpredict analyses`).
	Doc string
	// Paper cites the method: the seed paper and the section or figure.
	Paper string
	// Requires are the facts and analyzers Run uses: the facts are
	// computed before Run (so that their time is not charged to the first
	// analysis that asks), the analyzers run before it and their results
	// are in Pass.ResultOf. A model-checked analyzer requires nothing.
	Requires []Requirement
	// Kinds are the kinds of findings it reports; a Finding's Kind is one
	// of their ids. Each kind is one SARIF rule (the patterns, for a
	// model-checked analyzer).
	Kinds []bugs.FindingKind
	// IDPrefix starts the stable ids of its findings' bugs ("DL" gives
	// DL-…); model-checked bugs are AV-… (bugs.PatternID).
	IDPrefix string
	// Models make the analyzer model-checked: its bugs are the pattern
	// instances found in the models it declares. It then has no Run.
	Models *ModelSpec
	// Run analyses the trace of the pass, reporting findings with
	// pass.Report, and returns its result for the analyzers that require
	// it (nil if none do). An error ends the whole run (except that the
	// findings reported so far are kept when the context was cancelled).
	Run func(ctx context.Context, pass *Pass) (any, error)
}

func (*Analyzer) requirement() {}

// ModelSpec declares the models of a model-checked analyzer.
type ModelSpec struct {
	// Kind is the kind of models package predict plans for it.
	Kind predict.TaskKind
	// Patterns are checked on each of them (patterns of the kind only).
	Patterns []ltl.Pattern
}

// NewModelSpec declares the models of kind k with the patterns of pats
// that the kind takes; nil pats: the kind's built-in patterns.
func NewModelSpec(k predict.TaskKind, pats []ltl.Pattern) *ModelSpec {
	if pats == nil {
		return &ModelSpec{Kind: k, Patterns: k.Builtin()}
	}
	s := &ModelSpec{Kind: k, Patterns: []ltl.Pattern{}}
	for _, p := range pats {
		if k.Takes(p) {
			s.Patterns = append(s.Patterns, p)
		}
	}
	return s
}

// ModelsOf returns what the model-checked analyzers among as ask package
// predict to check: one entry per analyzer, in order, named after it.
func ModelsOf(as []*Analyzer) []predict.Models {
	var out []predict.Models
	for _, a := range as {
		if a.Models != nil {
			out = append(out, predict.Models{Kind: a.Models.Kind, Analysis: a.Name, Patterns: a.Models.Patterns})
		}
	}
	return out
}

// ModelChecked reports whether any of as is model-checked (so that Spin
// and the verdict cache may be needed).
func ModelChecked(as []*Analyzer) bool { return len(ModelsOf(as)) > 0 }

// PatternKinds returns the kinds of findings of a model-checked analyzer:
// its patterns.
func PatternKinds(pats []ltl.Pattern) []bugs.FindingKind {
	kinds := make([]bugs.FindingKind, 0, len(pats))
	for _, p := range pats {
		kinds = append(kinds, bugs.FindingKind{ID: p.ID, Name: p.Name, Help: p.Help})
	}
	return kinds
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
	// Version is the tool version written into a report without
	// model-checked analyzers (theirs comes from CheckModels).
	Version string
	// CheckModels checks the given models of m in one pass and returns
	// their report (package predict's: bugs, violations, statistics,
	// undecided models, and Analyses naming each entry's analysis with its
	// counts). Required when a model-checked analyzer is selected. On
	// cancellation it may return the report of the models checked so far,
	// marked Incomplete, with the error.
	CheckModels func(ctx context.Context, m *tracemodel.Model, models []predict.Models) (*bugs.Report, error)
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
	case a.Models != nil && a.Run != nil:
		return fmt.Errorf("analyzer %s: a model-checked analyzer has no Run", a.Name)
	case a.Models != nil && len(a.Requires) > 0:
		return fmt.Errorf("analyzer %s: a model-checked analyzer requires nothing", a.Name)
	case a.Models == nil && a.Run == nil:
		return fmt.Errorf("analyzer %s: neither Run nor Models", a.Name)
	}
	known := map[Fact]bool{}
	for _, f := range AllFacts() {
		known[f] = true
	}
	for _, r := range a.Requires {
		switch r := r.(type) {
		case Fact:
			if !known[r] {
				return fmt.Errorf("analyzer %s: unknown fact %q", a.Name, r)
			}
		case *Analyzer:
			if r == nil || r.Models != nil {
				return fmt.Errorf("analyzer %s: requires a model-checked or nil analyzer (model-checked results are in the report only)", a.Name)
			}
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
