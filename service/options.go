package service

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/predict"
)

// JobOptions are the check options a client may set per job; the rest
// (tools, time and memory limits) is the server's. Field names follow the
// flags of `mcpredict run`.
type JobOptions struct {
	Vars         []string `json:"vars,omitempty"`
	Threads      []string `json:"threads,omitempty"`
	Patterns     []string `json:"patterns,omitempty"`  // built-in pattern ids, e.g. P1,P3
	UserPatterns []string `json:"pattern,omitempty"`   // patterns in the pattern language
	Engine       string   `json:"engine,omitempty"`    // auto, spin or native; "" = the server's
	Semantics    string   `json:"semantics,omitempty"` // precise or paper; "" = the server's
	NoBoundaries bool     `json:"no_boundaries,omitempty"`
	ExcludeVars  []string `json:"exclude_vars,omitempty"`
	Confirm      string   `json:"confirm,omitempty"` // one, all or none; "" = the server's
	Lenient      bool     `json:"lenient,omitempty"`
	// StrictSync refuses a trace with a synchronization oddity (README
	// "Trace format") instead of absorbing it with a warning; the server's
	// Config.StrictSync makes it the default.
	StrictSync bool `json:"strict_sync,omitempty"`
	// InputFormat is the trace format (csv or a plugin's); "" = detected.
	// A submitted job stores the format its trace was read in.
	InputFormat string `json:"input_format,omitempty"`
	// Analysis lists the analyses (comma-separated names or all; "" = the
	// server's default, Config.Analysis). The models of the model-checked
	// ones are the job's work items; the others run when the job
	// completes.
	Analysis string `json:"analysis,omitempty"`

	// The semantics' single rules (--no-dataflow, --no-scope, ...):
	// true turns the rule off, whatever the server's semantics.
	NoDataflow       bool `json:"no_dataflow,omitempty"`
	NoScope          bool `json:"no_scope,omitempty"`
	NoHandoffs       bool `json:"no_handoffs,omitempty"`
	NoWaitConditions bool `json:"no_wait_conditions,omitempty"`
	NoObservedReads  bool `json:"no_observed_reads,omitempty"`
	// MaxInstances is --max-instances (0: the server's).
	MaxInstances int `json:"max_instances,omitempty"`
	// PartAccesses is --part-accesses (0: the server's; negative: whole
	// models, --part-accesses 0).
	PartAccesses int `json:"part_accesses,omitempty"`
	// Atomic sets: --atomic-sets, --atomic-set (one entry per set, its
	// variables comma-separated), --set-partners and --set-confidence
	// (nil: the server's).
	AtomicSetsOn  bool     `json:"atomic_sets,omitempty"`
	AtomicSets    []string `json:"atomic_set,omitempty"`
	SetPartners   *int     `json:"set_partners,omitempty"`
	SetConfidence *float64 `json:"set_confidence,omitempty"`
	// The other analyses' options: --atomic, --not-atomic,
	// --block-conflict, --deadlock-max-cycle (0: the server's) and
	// --value-flow ("": the server's).
	Atomic           []string `json:"atomic,omitempty"`
	NotAtomic        []string `json:"not_atomic,omitempty"`
	BlockConflict    bool     `json:"block_conflict,omitempty"`
	DeadlockMaxCycle int      `json:"deadlock_max_cycle,omitempty"`
	ValueFlow        string   `json:"value_flow,omitempty"`

	// Reproduce runs `mcpredict reproduce` on the job's trace once its
	// report is assembled, on the server (Config.Reproduce): the program
	// the trace's header names is run again under directed schedules, and
	// the stored report has the reproductions, the failing runs and their
	// counts. Only a trace whose header names its program (mcpredict
	// record) can ask for it, and only a server that runs programs.
	Reproduce bool `json:"reproduce,omitempty"`
	// ReproduceBudget is the wall time of the job's directed runs, a Go
	// duration ("90s"; "": the server's), at most the server's.
	ReproduceBudget string `json:"reproduce_budget,omitempty"`
}

// Resolver turns a job's options, its Analysis filled in with the server's
// default, into the options of its run: the options of package predict
// (Models is set by the server from the analyzers) and the analyzers to
// run (`mcpredict serve` selects them from analysis/all). It returns a
// *predict.UsageError for options that are the client's mistake, an
// unknown analysis among them.
type Resolver func(JobOptions) (predict.Options, []*analysis.Analyzer, error)

// optionsFromQuery reads JobOptions from URL query parameters, for uploads
// whose body is the trace itself: list parameters may be repeated or
// comma-separated.
//
// The parameter options, the JSON of JobOptions, carries them all (what
// `mcpredict batch --server` sends); the other parameters, for curl,
// set single fields on top of it.
func optionsFromQuery(q url.Values) (JobOptions, error) {
	var o JobOptions
	if s := q.Get("options"); s != "" {
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			return o, &predict.UsageError{Msg: fmt.Sprintf("options: not the JSON of the job options: %v", err)}
		}
	}
	list := func(key string) []string {
		var out []string
		for _, v := range q[key] {
			for _, x := range strings.Split(v, ",") {
				if x = strings.TrimSpace(x); x != "" {
					out = append(out, x)
				}
			}
		}
		return out
	}
	for key, dst := range map[string]*[]string{"vars": &o.Vars, "threads": &o.Threads, "patterns": &o.Patterns, "exclude_vars": &o.ExcludeVars} {
		if l := list(key); len(l) > 0 {
			*dst = l
		}
	}
	if ps := q["pattern"]; len(ps) > 0 {
		o.UserPatterns = ps // a pattern contains spaces, never commas: not split
	}
	for key, dst := range map[string]*string{"engine": &o.Engine, "semantics": &o.Semantics, "confirm": &o.Confirm, "input_format": &o.InputFormat, "reproduce_budget": &o.ReproduceBudget} {
		if v := q.Get(key); v != "" {
			*dst = v
		}
	}
	if l := list("analysis"); len(l) > 0 {
		o.Analysis = strings.Join(l, ",")
	}
	for key, dst := range map[string]*bool{"no_boundaries": &o.NoBoundaries, "lenient": &o.Lenient, "strict_sync": &o.StrictSync, "reproduce": &o.Reproduce} {
		if v := q.Get(key); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return o, &predict.UsageError{Msg: fmt.Sprintf("%s: want true or false, got %q", key, v)}
			}
			*dst = b
		}
	}
	return o, nil
}

func (o JobOptions) encode() string {
	b, _ := json.Marshal(o) // plain data: cannot fail
	return string(b)
}

func decodeOptions(s string) (JobOptions, error) {
	var o JobOptions
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		return o, fmt.Errorf("stored job options: %w", err)
	}
	return o, nil
}
