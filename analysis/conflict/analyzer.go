package conflict

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/analysis/txn"
	"github.com/mcpredict/mcpredict/bugs"
)

// Name is the analysis name (--analysis conflict).
const Name = "conflict"

// Kind is the kind of every finding: a cycle of the transaction graph.
const Kind = "cycle"

// TxnReporter is the result of an analysis that reports transactions by
// name (sidetrack's): for each transaction name (function or label), short
// descriptions of what it reported on it.
type TxnReporter interface {
	TxnReports() map[string][]string
}

// New returns the analysis: each Violation is a finding of kind "cycle"
// whose sites are the transaction's Begin and End and the events of the
// witness cycle (or the event where the cycle closed). The transactions
// are the result of tx (txn.New), which it requires. Each analyzer of
// also (sidetrack, given by the registry) is required too, and runs on
// the same transactions: a finding on a transaction that one of them
// reports says so in its message, and the summary counts the transactions
// both report (the composition of SideTrack with Velodrome of the
// SideTrack paper, §6 "Tool complementation").
func New(tx *analysis.Analyzer, also ...*analysis.Analyzer) *analysis.Analyzer {
	return NewWith(Options{}, tx, also...)
}

// NewWith is New with options (Options.First; the analyzer's
// transactions come from tx).
func NewWith(o Options, tx *analysis.Analyzer, also ...*analysis.Analyzer) *analysis.Analyzer {
	req := []analysis.Requirement{tx}
	for _, a := range also {
		req = append(req, a)
	}
	return newAnalyzer(req, func(ctx context.Context, pass *analysis.Pass) (any, error) {
		check := Check
		if o.First {
			check = CheckFirst
		}
		vs, st, err := check(ctx, pass.Model, txn.Of(pass, tx))
		if err != nil {
			return nil, err
		}
		reported := map[string][]string{}
		for _, a := range also {
			if r, ok := pass.ResultOf[a].(TxnReporter); ok {
				for name, ds := range r.TxnReports() {
					for _, d := range ds {
						reported[name] = append(reported[name], a.Name+": "+d)
					}
				}
			}
		}
		both := map[string]bool{}
		for i := range vs {
			f := finding(&vs[i])
			if ds := reported[vs[i].Txn.Name]; len(ds) > 0 {
				both[vs[i].Txn.Name] = true
				f.Message += " (also " + strings.Join(ds, "; ") + ")"
			}
			pass.Report(f)
		}
		sum := summarize(st)
		if len(also) > 0 {
			sum += fmt.Sprintf(", %d transaction names also reported by %s, %d only by it", len(both), names(also), len(reported)-len(both))
		}
		pass.Summarize("%s", sum)
		return nil, nil
	})
}

// newAnalyzer returns the analysis with its requirements and its Run.
func newAnalyzer(req []analysis.Requirement, run func(context.Context, *analysis.Pass) (any, error)) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     Name,
		Doc:      "conflict-serializability of the observed trace (Enter/Exit, Begin/End transactions): a cycle of conflicts (reads, writes, locks, every synchronization) through a transaction and other threads' transactions, with the cycle as witness",
		Paper:    "Velodrome, Flanagan, Freund and Yi, PLDI 2008 (transaction graph); Aerodrome, Mathur and Viswanathan, ASPLOS 2020 (vector clocks, linear time); composed with SideTrack as in its §6",
		Requires: req,
		Kinds: []bugs.FindingKind{
			{ID: Kind, Name: "not conflict-serializable", Help: "An event of the transaction precedes and conflicts with an event of another thread's transaction, which (directly or through more transactions) precedes and conflicts with a later event of the transaction: no serial order of the transactions gives the observed trace's conflicts."},
		},
		IDPrefix: "CS",
		Run:      run,
	}
}

func summarize(st Stats) string {
	return fmt.Sprintf("%d transactions, %d cycles, %d witnesses", st.Txns, st.Cycles, st.Witnesses)
}

func names(as []*analysis.Analyzer) string {
	var ns []string
	for _, a := range as {
		ns = append(ns, a.Name)
	}
	return strings.Join(ns, ", ")
}

// finding is the framework's form of v: the essential sites are the
// transaction's Begin and the witness's events (or the closing event).
func finding(v *Violation) analysis.Finding {
	f := analysis.Finding{Kind: Kind, Message: v.Message}
	if v.Count > 1 {
		f.Message += fmt.Sprintf(" [%d instances]", v.Count)
	}
	site := func(r EventRef, ev int32, essential bool) analysis.Site {
		return analysis.Site{Event: ev, Role: r.Role, Action: r.Action, Object: r.Object, Essential: essential}
	}
	seen := map[string]bool{}
	addObj := func(o string) {
		if !seen[o] {
			seen[o] = true
			f.Objects = append(f.Objects, o)
		}
	}
	f.Sites = append(f.Sites, site(v.Begin, v.beginEv, true))
	if v.Cycle == nil {
		f.Sites = append(f.Sites, site(v.Close, v.close, true))
		addObj(v.Close.Object)
	}
	for _, s := range v.Cycle {
		f.Sites = append(f.Sites, site(s.From, s.fromEv, true), site(s.To, s.toEv, true))
		addObj(s.Object)
	}
	f.Sites = append(f.Sites, site(v.End, v.endEv, false))
	// The schedule: the sites in trace order.
	f.Schedule = append([]analysis.Site(nil), f.Sites...)
	for i := 1; i < len(f.Schedule); i++ {
		for j := i; j > 0 && f.Schedule[j].Event < f.Schedule[j-1].Event; j-- {
			f.Schedule[j], f.Schedule[j-1] = f.Schedule[j-1], f.Schedule[j]
		}
	}
	return f
}
