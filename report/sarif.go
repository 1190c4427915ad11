package report

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
)

// SARIFSchemaURI is the $schema of the logs WriteSARIF writes: the OASIS
// SARIF 2.1.0 schema with errata 01.
const SARIFSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// FingerprintKey is the partialFingerprints key holding a bug's stable id,
// which lets code-scanning services track a bug across runs.
const FingerprintKey = "mcpredictBugId/v1"

// srcRootBase is the uriBaseId of relative source paths.
const srcRootBase = "SRCROOT"

// Options configure the SARIF and HTML renderers.
type Options struct {
	// Patterns are the patterns the run checked, for the rules' help text.
	// A pattern the report names but that is missing here is looked up
	// among the built-ins (a report read back from JSON has only ids).
	Patterns []ltl.Pattern
	// SrcRoot is the directory that the trace's relative source paths are
	// relative to. HTML shows source snippets read from it; SARIF records
	// it as the base of relative paths. Empty: no snippets, no base.
	SrcRoot string
	// Context is the number of source lines shown around each location in
	// HTML snippets; 0 means 2.
	Context int
}

// WriteSARIF writes the report as a SARIF 2.1.0 log with one run: one rule
// per pattern checked, one result per bug. A result's locations are the
// accesses of one instance in interleaving order, and its code flow has one
// thread flow per thread (local first) whose locations are that thread's
// steps, executionOrder numbering the steps of the whole interleaving.
// Suppressed bugs are results with an external suppression; after a
// baseline, every result has baselineState "new".
func WriteSARIF(w io.Writer, r *bugs.Report, o Options) error {
	log := sarif.NewReport()
	log.Schema = SARIFSchemaURI
	run := sarif.NewRun()
	run.Tool = sarif.NewTool()
	driver := sarif.NewToolComponent()
	name := r.Tool.Name
	if name == "" { // a report assembled by hand
		name = "mcpredict"
	}
	driver.Name = ptr(name)
	if r.Tool.Version != "" {
		driver.Version = ptr(r.Tool.Version)
	}
	driver.FullName = ptr("mcpredict atomicity-violation predictor")
	run.Tool.Driver = driver
	if o.SrcRoot != "" {
		if abs, err := filepath.Abs(o.SrcRoot); err == nil {
			u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs) + "/"}
			loc := sarif.NewArtifactLocation()
			loc.URI = ptr(u.String())
			run.OriginalUriBaseIds = map[string]sarif.ArtifactLocation{srcRootBase: *loc}
		}
	}

	// Rules: the patterns checked, in order, then any other the bugs name.
	ruleIndex := map[string]int{}
	addRule := func(id string) {
		if _, ok := ruleIndex[id]; ok {
			return
		}
		ruleIndex[id] = len(driver.Rules)
		driver.Rules = append(driver.Rules, sarifRule(lookupPattern(o.Patterns, id)))
	}
	for _, id := range r.Stats.Patterns {
		addRule(id)
	}
	for _, b := range r.Bugs {
		if isFinding(r, b) {
			continue
		}
		addRule(b.Pattern)
	}
	// Analyses that are not model-checked: one rule per analysis and kind,
	// "deadlock/DL". (The kinds of model-checked ones are the patterns.)
	for _, a := range r.Analyses {
		if a.ModelChecked {
			continue
		}
		for _, k := range a.Kinds {
			id := a.Name + "/" + k.ID
			if _, ok := ruleIndex[id]; !ok {
				ruleIndex[id] = len(driver.Rules)
				driver.Rules = append(driver.Rules, findingRule(a, k))
			}
		}
	}

	for _, b := range r.Bugs {
		if isFinding(r, b) {
			id := b.Analysis + "/" + b.Pattern
			if _, ok := ruleIndex[id]; !ok {
				ruleIndex[id] = len(driver.Rules)
				driver.Rules = append(driver.Rules, findingRule(bugs.AnalysisRun{Name: b.Analysis}, bugs.FindingKind{ID: b.Pattern, Name: b.PatternName}))
			}
			run.AddResult(findingResult(r, b, id, ruleIndex[id]))
			continue
		}
		run.AddResult(sarifResult(r, b, ruleIndex[b.Pattern]))
	}

	inv := sarif.NewInvocation()
	inv.ExecutionSuccessful = ptr(true)
	for _, wn := range r.Warnings {
		n := sarif.NewNotification()
		n.Message = sarif.NewTextMessage(wn)
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	if r.Skipped > 0 {
		n := sarif.NewNotification()
		msg := fmt.Sprintf("skipped %d malformed trace lines (--lenient)", r.Skipped)
		if len(r.Problems) > 0 {
			msg += "; first: " + r.Problems[0]
		}
		n.Message = sarif.NewTextMessage(msg)
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	run.Invocations = append(run.Invocations, inv)

	props := sarif.NewPropertyBag()
	props.Add("trace", r.Trace)
	props.Add("engine", r.Tool.Engine)
	props.Add("models", r.Stats.Models)
	props.Add("claims", r.Stats.Claims)
	props.Add("suppressed", r.Stats.Suppressed)
	if r.Baseline != "" {
		props.Add("baseline", r.Baseline)
		props.Add("baselineKnown", r.Stats.Baseline)
	}
	run.Properties = props
	log.AddRun(run)

	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

// lookupPattern finds a pattern by id among the given ones, then the
// built-ins; an unknown id gets a stand-in that says so.
func lookupPattern(pats []ltl.Pattern, id string) ltl.Pattern {
	for _, p := range pats {
		if p.ID == id {
			return p
		}
	}
	for _, p := range ltl.AllBuiltin() {
		if p.ID == id {
			return p
		}
	}
	return ltl.Pattern{ID: id, Name: "user pattern", Help: "A pattern given by the user (its definition is not in this report)."}
}

func sarifRule(p ltl.Pattern) *sarif.ReportingDescriptor {
	rule := sarif.NewRule(p.ID)
	rule.Name = ptr(ruleName(p.Name))
	short := p.Name
	if p.Source != "" {
		short += " (" + p.Source + ")"
	}
	rule.ShortDescription = sarif.NewMultiformatMessageString().WithText(short)
	rule.FullDescription = sarif.NewMultiformatMessageString().WithText(p.Help)
	help := p.Help
	md := p.Help
	if p.Source != "" {
		help += "\n\nPattern: " + p.Source + " (1 = the local thread, whose region should be atomic; 2 = the remote thread; R read, W write, A any access; * zero or more, + one or more)."
		md += "\n\nPattern: `" + p.Source + "` (1 = the local thread, whose region should be atomic; 2 = the remote thread; R read, W write, A any access; `*` zero or more, `+` one or more)."
	}
	rule.Help = sarif.NewMultiformatMessageString().WithText(help).WithMarkdown(md)
	cfg := sarif.NewReportingConfiguration()
	cfg.Level = sarif.LevelWarning
	rule.DefaultConfiguration = cfg
	props := sarif.NewPropertyBag()
	props.AddTag("concurrency")
	props.AddTag("atomicity-violation")
	if p.Source != "" {
		props.Add("pattern", p.Source)
	}
	rule.Properties = props
	return rule
}

// ruleName turns "dirty (intermediate) read" into "DirtyIntermediateRead",
// the identifier-like form SARIF viewers expect in rule names.
func ruleName(name string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// reachedOf returns the paths through which the program first reached
// b's variables, by variable (report Reached), or nil.
func reachedOf(r *bugs.Report, b bugs.Bug) map[string]string {
	var m map[string]string
	for _, name := range b.Vars {
		if p, ok := r.Reached[name]; ok {
			if m == nil {
				m = map[string]string{}
			}
			m[name] = p
		}
	}
	return m
}

func sarifResult(r *bugs.Report, b bugs.Bug, ruleIndex int) *sarif.Result {
	v := r.Violations[b.Instances[0]]
	res := sarif.NewRuleResult(b.Pattern).WithRuleIndex(ruleIndex)
	res.Level = sarif.LevelWarning
	res.Message = sarif.NewTextMessage(resultMessage(b, v))
	res.PartialFingerprints = map[string]string{FingerprintKey: b.ID}
	res.OccurrenceCount = ptr(b.Count)
	for i, a := range v.Accesses {
		loc := sarifLocation(a, fmt.Sprintf("%s thread %s %s %s", a.Role, a.Handle, strings.ToLower(a.Action), v.Var))
		loc.ID = i + 1
		res.Locations = append(res.Locations, loc)
	}

	flow := sarif.NewCodeFlow()
	flow.Message = sarif.NewTextMessage(fmt.Sprintf("interleaving of threads %s and %s on %s (found by %s)", v.Local.Handle, v.Remote.Handle, v.Var, v.Engine))
	for _, t := range []struct {
		ref  string
		role string
	}{{v.Local.Handle, "local"}, {v.Remote.Handle, "remote"}} {
		tf := sarif.NewThreadFlow()
		tf.ID = ptr("thread " + t.ref)
		tf.Message = sarif.NewTextMessage(fmt.Sprintf("thread %s (%s)", t.ref, t.role))
		for step, a := range v.Interleaving {
			if a.Handle != t.ref {
				continue
			}
			tl := sarif.NewThreadFlowLocation()
			tl.ExecutionOrder = step + 1
			tl.Kinds = stepKinds(a.Action)
			what := a.Action
			if a.Action == "Read" || a.Action == "Write" {
				what += " " + v.Var
			}
			tl.Location = sarifLocation(a, what)
			tl.Importance = "unimportant"
			if a.Instance {
				tl.Importance = "essential"
			} else if a.Action != "Read" && a.Action != "Write" {
				tl.Importance = "important"
			}
			tf.Locations = append(tf.Locations, tl)
		}
		flow.ThreadFlows = append(flow.ThreadFlows, tf)
	}
	res.CodeFlows = append(res.CodeFlows, flow)

	props := sarif.NewPropertyBag()
	props.Add("bugId", b.ID)
	if b.Analysis != "" {
		props.Add("analysis", b.Analysis)
	}
	props.Add("variables", b.Vars)
	if reached := reachedOf(r, b); len(reached) > 0 {
		props.Add("reachedAs", reached)
	}
	props.Add("instances", b.Count)
	props.Add("patternName", b.PatternName)
	if b.Confirmed {
		props.Add("confirmedBySpin", true)
	}
	res.Properties = props
	if b.Suppressed {
		s := sarif.NewSuppression()
		s.Kind = ptr("external")
		s.Status = ptr("accepted")
		s.Justification = ptr("matched a rule of the --suppressions file")
		res.Suppressions = append(res.Suppressions, s)
	}
	if r.Baseline != "" {
		res.BaselineState = ptr("new")
	}
	return res
}

// resultMessage is the one-line description of a bug, e.g. "lost update
// (P3) on balance: thread 202 Read bank.c:11 → thread 201 Write bank.c:15 →
// thread 202 Write bank.c:15, in deposit() (2 instances)".
func resultMessage(b bugs.Bug, v bugs.Violation) string {
	var steps []string
	funcs := map[string]bool{}
	var fnOrder []string
	for _, a := range v.Accesses {
		steps = append(steps, fmt.Sprintf("thread %s %s %s", a.Handle, a.Action, a.Location()))
		if a.Func != "" && !funcs[a.Func] {
			funcs[a.Func] = true
			fnOrder = append(fnOrder, a.Func+"()")
		}
	}
	msg := fmt.Sprintf("%s (%s) on %s: %s", b.PatternName, b.Pattern, strings.Join(b.Vars, ", "), strings.Join(steps, " → "))
	if len(fnOrder) > 0 {
		msg += ", in " + strings.Join(fnOrder, ", ")
	}
	if b.Count == 1 {
		return msg + " (1 instance)"
	}
	return fmt.Sprintf("%s (%d instances)", msg, b.Count)
}

// sarifLocation is the location of one access: the source line, and the
// function as a logical location when the trace names it.
func sarifLocation(a bugs.Access, msg string) *sarif.Location {
	loc := sarif.NewLocation()
	loc.Message = sarif.NewTextMessage(msg)
	if a.File != "" {
		art := sarif.NewArtifactLocation()
		if filepath.IsAbs(a.File) {
			art.URI = ptr((&url.URL{Scheme: "file", Path: filepath.ToSlash(a.File)}).String())
		} else {
			art.URI = ptr((&url.URL{Path: filepath.ToSlash(a.File)}).String())
			art.URIBaseID = ptr(srcRootBase)
		}
		phys := sarif.NewPhysicalLocation()
		phys.ArtifactLocation = art
		if a.Line > 0 {
			phys.Region = sarif.NewRegion().WithStartLine(a.Line)
		}
		loc.PhysicalLocation = phys
	}
	if a.Func != "" {
		ll := sarif.NewLogicalLocation()
		ll.Name = ptr(a.Func)
		ll.Kind = ptr("function")
		loc.LogicalLocations = append(loc.LogicalLocations, ll)
	}
	return loc
}

// stepKinds are the SARIF well-known threadFlowLocation kinds of an action.
func stepKinds(action string) []string {
	switch action {
	case "Lock", "TryLock", "RdLock", "WrLock":
		return []string{"acquire", "lock"}
	case "Unlock", "RwUnlock":
		return []string{"release", "lock"}
	case "Read", "Write":
		return []string{"memory", "value"}
	case "Enter":
		return []string{"enter", "function"}
	case "Exit":
		return []string{"exit", "function"}
	}
	return []string{"lock"} // Wait, Signal, barriers, joins: synchronization
}

func ptr[T any](v T) *T { return &v }
