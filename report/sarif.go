package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
)

// SARIFSchemaURI is the $schema of the logs WriteSARIF writes: the OASIS
// SARIF 2.1.0 schema with errata 01.
const SARIFSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// FingerprintKey is the partialFingerprints key holding a group's stable
// id (bugs.GroupID), which lets code-scanning services track a problem
// across runs. Versions that wrote one result per bug used the key
// "mcpredictBugId/v1" with the bug's id (docs/formats.md says how their
// alerts map to groups).
const FingerprintKey = "mcpredictGroupId/v1"

// srcRootBase is the uriBaseId of relative source paths.
const srcRootBase = srcRootID

// Options configure the SARIF and HTML renderers.
type Options struct {
	// Patterns are the patterns the run checked, for the rules' help text.
	// A pattern the report names but that is missing here is looked up
	// among the built-ins (a report read back from JSON has only ids).
	Patterns []ltl.Pattern
	// SrcRoot is the directory that the trace's relative source paths are
	// relative to. HTML shows source snippets read from it. SARIF records
	// it as the base %SRCROOT% of relative paths, and makes absolute paths
	// under it (or whose tail names a file under it) relative to it.
	// Empty: no snippets; SARIF keeps relative paths, with base %SRCROOT%.
	SrcRoot string
	// Context is the number of source lines shown around each location in
	// HTML snippets; 0 means 2.
	Context int
	// Expand shows every bug of a group in HTML, not only the first
	// FirstShown with the others behind a disclosure (SARIF has one
	// result per group either way).
	Expand bool
}

// WriteSARIF writes the report as a SARIF 2.1.0 log with one run: one rule
// per analysis, one result per group of bugs (bugs.Groups), so that a
// code-scanning service shows one alert per problem. A result's locations
// are the accesses of one instance of the group's first bug, in
// interleaving order, its related locations the source lines of all its
// bugs, and its code flow has one thread flow per thread (local first)
// whose locations are that thread's steps, executionOrder numbering the
// steps of the whole interleaving. A group whose bugs are all suppressed is
// a result with an external suppression; after a baseline, every result
// has baselineState "new". Source paths are relative to the source root
// (uriBaseId %SRCROOT%) where they can be; members whose value is the
// schema's default are left out, and small objects are written on one line.
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

	// Rules: the analyses that ran and can report, in order, then those
	// that only the bugs name.
	groups := bugs.Groups(r.Bugs)
	ruleIndex := map[string]int{}
	addRule := func(a bugs.AnalysisRun) {
		if _, ok := ruleIndex[a.Name]; !ok {
			ruleIndex[a.Name] = len(driver.Rules)
			driver.Rules = append(driver.Rules, analysisRule(a, o.Patterns))
		}
	}
	for _, a := range r.Analyses {
		if len(a.Kinds) > 0 {
			addRule(a)
		}
	}
	for _, g := range groups {
		addRule(ruleAnalysis(r, g.Analysis))
	}
	for _, g := range groups {
		id := ruleAnalysis(r, g.Analysis).Name
		run.AddResult(groupResult(r, g, id, ruleIndex[id]))
	}
	addFailures(run, driver, r.Failures)

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

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(log); err != nil {
		return err
	}
	return writeCompactSARIF(w, buf.Bytes(), o.SrcRoot)
}

// failedRunRule is the rule of the failing runs of mcpredict reproduce
// that are no bug's (Report.Failures).
const failedRunRule = "failed-run"

// addFailures adds the failing runs' rule and results, if there are any.
func addFailures(run *sarif.Run, driver *sarif.ToolComponent, fs []bugs.Failure) {
	if len(fs) == 0 {
		return
	}
	index := len(driver.Rules)
	driver.Rules = append(driver.Rules, failedRunDescriptor())
	for _, f := range fs {
		run.AddResult(failureResult(f, index))
	}
}

func failedRunDescriptor() *sarif.ReportingDescriptor {
	rule := sarif.NewRule(failedRunRule)
	rule.Name = ptr("FailedRun")
	rule.ShortDescription = sarif.NewMultiformatMessageString().WithText("a directed run of mcpredict reproduce failed")
	rule.FullDescription = sarif.NewMultiformatMessageString().WithText("A run of the recorded program under a schedule of mcpredict reproduce (an exploring run, or a run directed at a bug whose failure came outside that bug's window) ended differently from the recorded run: another exit status, a signal, an assertion or sanitizer message, a hang, or a failed --check. Replay it with mcpredict replay and its schedule.")
	return rule
}

// failureResult is the SARIF result of a failing run, at the failing
// thread's last access when it is known.
func failureResult(f bugs.Failure, ruleIndex int) *sarif.Result {
	res := sarif.NewRuleResult(failedRunRule).WithRuleIndex(ruleIndex)
	res.Level = sarif.LevelError
	src := "an exploring run"
	if f.Source != "explore" {
		src = "a run directed at " + f.Source
	}
	msg := fmt.Sprintf("%s failed: %s", src, f.Why)
	if f.Runs > 1 {
		msg += fmt.Sprintf(" (%d runs)", f.Runs)
	}
	if f.Schedule != "" {
		msg = strings.TrimSuffix(msg, ".") + ". Replay: mcpredict replay " + f.Schedule
	}
	res.Message = sarif.NewTextMessage(msg)
	if i := strings.LastIndexByte(f.Site, ':'); i > 0 {
		n, _ := strconv.Atoi(f.Site[i+1:])
		file := f.Site[:i]
		res.Locations = append(res.Locations, sarifLocation(bugs.Access{File: file, Line: n}, "the failing thread's last access"))
	}
	res.PartialFingerprints = map[string]string{FingerprintKey: f.ID}
	props := sarif.NewPropertyBag()
	props.Add("attribution", f.Attribution)
	props.Add("source", f.Source)
	if f.Pinned != "" {
		props.Add("pinned", f.Pinned)
	}
	res.Properties = props
	return res
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

// unnamedRule is the rule of the bugs of a report that names no analysis
// (package predict run alone, or a report written before analyses were
// named): they are instances of the patterns checked.
const unnamedRule = "mcpredict"

// ruleAnalysis is the analysis whose rule a group of bugs of the named
// analysis has: the report's description of it, or one made of the kinds
// of its bugs (and of the patterns checked, for bugs of no analysis).
func ruleAnalysis(r *bugs.Report, name string) bugs.AnalysisRun {
	if a := r.AnalysisOf(name); a != nil && len(a.Kinds) > 0 {
		return *a
	}
	a := bugs.AnalysisRun{Name: name}
	var ids []string
	if name == "" {
		a.Name, a.ModelChecked = unnamedRule, true
		a.Doc = "atomicity violations: unserializable access patterns of a shared variable and a thread pair"
		ids = slices.Clone(r.Stats.Patterns)
	}
	for _, b := range r.Bugs {
		if b.Analysis == name && !slices.Contains(ids, b.Pattern) {
			ids = append(ids, b.Pattern)
			if name != "" {
				a.Kinds = append(a.Kinds, bugs.FindingKind{ID: b.Pattern, Name: b.PatternName})
			}
		}
	}
	if name == "" {
		for _, id := range ids {
			a.Kinds = append(a.Kinds, bugs.FindingKind{ID: id})
		}
	}
	return a
}

// analysisRule is the SARIF rule of an analysis: its doc as description,
// and as help the explanation of each kind of finding it reports (with
// the pattern's definition for a model-checked analysis) and the paper
// its method comes from.
func analysisRule(a bugs.AnalysisRun, pats []ltl.Pattern) *sarif.ReportingDescriptor {
	rule := sarif.NewRule(a.Name)
	short, _, _ := strings.Cut(a.Doc, ":")
	if short == "" {
		short = a.Name
	}
	rule.Name = ptr(ruleName(short))
	rule.ShortDescription = sarif.NewMultiformatMessageString().WithText(short)
	full := a.Doc
	if a.Paper != "" {
		full += ". Method: " + a.Paper + "."
	}
	if full == "" {
		full = a.Name
	}
	rule.FullDescription = sarif.NewMultiformatMessageString().WithText(full)
	var text, md []string
	for _, k := range a.Kinds {
		name, help, source := k.Name, k.Help, ""
		if a.ModelChecked {
			p := lookupPattern(pats, k.ID)
			source = p.Source
			if name == "" {
				name = p.Name
			}
			if help == "" {
				help = p.Help
			}
		}
		if help == "" {
			help = name
		}
		if source != "" {
			text = append(text, fmt.Sprintf("%s %s (%s): %s", k.ID, name, source, help))
			md = append(md, fmt.Sprintf("**%s %s** (`%s`): %s", k.ID, name, source, help))
		} else {
			text = append(text, fmt.Sprintf("%s %s: %s", k.ID, name, help))
			md = append(md, fmt.Sprintf("**%s %s**: %s", k.ID, name, help))
		}
	}
	if a.ModelChecked {
		const legend = "In a pattern, 1 is the local thread, whose region should be atomic, and 2 the remote thread; R read, W write, A any access; %s zero or more, %s one or more."
		text = append(text, fmt.Sprintf(legend, "*", "+"))
		md = append(md, fmt.Sprintf(legend, "`*`", "`+`"))
	}
	if a.Paper != "" {
		text = append(text, "Method: "+a.Paper+".")
		md = append(md, "Method: "+a.Paper+".")
	}
	rule.Help = sarif.NewMultiformatMessageString().WithText(strings.Join(text, "\n\n")).WithMarkdown(strings.Join(md, "\n\n"))
	cfg := sarif.NewReportingConfiguration()
	cfg.Level = sarif.LevelWarning
	rule.DefaultConfiguration = cfg
	props := sarif.NewPropertyBag()
	props.AddTag("concurrency")
	props.AddTag(a.Name)
	if a.ModelChecked {
		props.AddTag("atomicity-violation")
	}
	props.Add("analysis", a.Name)
	kinds := make([]string, len(a.Kinds))
	for i, k := range a.Kinds {
		kinds[i] = k.ID
	}
	props.Add("kinds", kinds)
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
// the variables, by variable (report Reached), or nil.
func reachedOf(r *bugs.Report, vars []string) map[string]string {
	var m map[string]string
	for _, name := range vars {
		if p, ok := r.Reached[name]; ok {
			if m == nil {
				m = map[string]string{}
			}
			m[name] = p
		}
	}
	return m
}

// groupResult is the SARIF result of a group: its active bugs (all of
// them when every one is suppressed), the first of which is the example
// whose instance gives the locations and the code flow. With
// reproductions, the example is the group's best-ranked bug (rankBugs):
// a failed one when there is one.
func groupResult(r *bugs.Report, g bugs.Group, ruleID string, ruleIndex int) *sarif.Result {
	members := make([]bugs.Bug, 0, len(g.Members))
	for _, b := range g.Members {
		if !b.Suppressed {
			members = append(members, b)
		}
	}
	suppressed := len(members) == 0
	if suppressed {
		members = slices.Clone(g.Members)
	}
	rankBugs(members)
	ex := members[0]
	v := r.Violations[ex.Instances[0]]
	res := sarif.NewRuleResult(ruleID).WithRuleIndex(ruleIndex)
	res.Level = sarif.LevelWarning
	if isFinding(r, ex) {
		findingEvidence(res, ex, v)
	} else {
		patternEvidence(res, v)
	}
	res.Message = sarif.NewTextMessage(groupMessage(r, g, members))
	res.PartialFingerprints = map[string]string{FingerprintKey: g.ID}
	instances := 0
	ids := make([]string, len(members))
	patterns := map[string]int{}
	confirmed := false
	for i, b := range members {
		instances += b.Count
		ids[i] = b.ID
		patterns[b.Pattern]++
		confirmed = confirmed || b.Confirmed
	}
	res.OccurrenceCount = ptr(instances)
	res.RelatedLocations = relatedLocations(members, len(res.Locations)+1)

	props := sarif.NewPropertyBag()
	props.Add("groupId", g.ID)
	if g.Analysis != "" {
		props.Add("analysis", g.Analysis)
	}
	props.Add("variables", g.Vars)
	if g.LocalFunc != "" {
		props.Add("localFunction", g.LocalFunc)
	}
	if len(g.RemoteFuncs) > 0 {
		props.Add("remoteFunctions", g.RemoteFuncs)
	}
	props.Add("patterns", patterns)
	props.Add("bugIds", ids)
	props.Add("bugs", len(members))
	props.Add("instances", instances)
	if reached := reachedOf(r, g.Vars); len(reached) > 0 {
		props.Add("reachedAs", reached)
	}
	if confirmed {
		props.Add("confirmedBySpin", true)
	}
	if ex.Occurred {
		props.Add("occurred", true)
	}
	if n := g.Suppressed; n > 0 && !suppressed {
		props.Add("suppressedBugs", n)
	}
	res.Properties = props
	addReproduction(res, members)
	if suppressed {
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

// sarifReproduction is the "reproduction" property of a result: the
// reproduction of its example bug.
type sarifReproduction struct {
	BugID    string `json:"bugId"`
	Status   string `json:"status"` // bugs.Reproduced, bugs.NotReproduced, bugs.NotTried
	Failed   bool   `json:"failed"`
	Runs     int    `json:"runs"`
	Schedule string `json:"schedule,omitempty"`
	Relaxed  bool   `json:"relaxed"`
}

// addReproduction adds to the result of a group of ranked members what the
// directed runs of mcpredict reproduce found: the example bug's
// reproduction as property "reproduction" and as a sentence ending the
// message, level "error" when its run failed (the bug changed the
// program's outcome: no longer a prediction), and the state of every bug
// with a reproduction (bugs.Bug.ReproductionState) in "reproductionStates"
// when the group has several. Nothing without one.
func addReproduction(res *sarif.Result, members []bugs.Bug) {
	ex := members[0]
	v := reproViewOf(ex)
	if v == nil {
		return
	}
	r := ex.Reproduction
	res.Properties.Add("reproduction", sarifReproduction{BugID: ex.ID, Status: r.Status, Failed: r.Failed,
		Runs: r.Runs, Schedule: r.Schedule, Relaxed: r.Relaxed})
	if len(members) > 1 {
		states := map[string]string{}
		for _, b := range members {
			if st := b.ReproductionState(); st != "" {
				states[b.ID] = st
			}
		}
		res.Properties.Add("reproductionStates", states)
	}
	if r.Failed {
		res.Level = sarif.LevelError
	}
	if res.Message != nil && res.Message.Text != nil {
		res.Message = sarif.NewTextMessage(*res.Message.Text + ". " + v.sarifSentence())
	}
}

// groupMessage is the message of a group's result: its bug's alone, or
// the group's heading, its patterns and its first bug's as an example.
func groupMessage(r *bugs.Report, g bugs.Group, members []bugs.Bug) string {
	ex := members[0]
	v := r.Violations[ex.Instances[0]]
	msg := resultMessage(r, ex, v)
	if isFinding(r, ex) {
		msg = findingMessage(ex, v)
	}
	if len(members) == 1 {
		return msg
	}
	sub := g
	sub.Members = members
	if len(members) != len(g.Members) {
		sub = bugs.Groups(members)[0]
	}
	return fmt.Sprintf("%s: %s; for example %s", GroupHeading(sub), GroupPatterns(sub), msg)
}

// relatedLocations are the distinct source lines of the bugs' locations,
// in order of first appearance, numbered from id: each says what the bugs
// do there ("local Read, remote Write of x in f() (P3)").
func relatedLocations(bs []bugs.Bug, id int) []*sarif.Location {
	type site struct {
		loc            bugs.Location
		what, patterns []string
		funcs, vars    []string
	}
	var order []string
	sites := map[string]*site{}
	for _, b := range bs {
		for _, l := range b.Locations {
			key := l.String()
			s := sites[key]
			if s == nil {
				s = &site{loc: l}
				sites[key] = s
				order = append(order, key)
			}
			addUnique(&s.what, l.Role+" "+l.Action)
			addUnique(&s.patterns, b.Pattern)
			if l.Func != "" {
				addUnique(&s.funcs, l.Func)
			}
			for _, v := range b.Vars {
				addUnique(&s.vars, v)
			}
		}
	}
	out := make([]*sarif.Location, 0, len(order))
	for i, key := range order {
		s := sites[key]
		msg := strings.Join(s.what, ", ") + " of " + strings.Join(s.vars, ", ")
		if len(s.funcs) > 0 {
			msg += " in " + funcList(s.funcs)
		}
		msg += " (" + strings.Join(s.patterns, ", ") + ")"
		loc := sarifLocation(bugs.Access{File: s.loc.File, Line: s.loc.Line}, msg)
		loc.ID = id + i
		out = append(out, loc)
	}
	return out
}

// addUnique appends s to *list unless it has it.
func addUnique(list *[]string, s string) {
	if !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

// patternEvidence sets the locations of a result to the accesses of the
// pattern instance v, in interleaving order, and its code flow to one
// thread flow per thread of v (local first).
func patternEvidence(res *sarif.Result, v bugs.Violation) {
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
	if st := accessStacks(v); len(st) > 0 {
		res.Stacks = st
	}
}

// accessStacks are the call stacks of the essential accesses that have
// one (bugs.Access.Stack): the access's location as the innermost frame,
// its callers by name, and the locks the thread held in the message.
func accessStacks(v bugs.Violation) []*sarif.Stack {
	var out []*sarif.Stack
	for _, a := range v.Accesses {
		if !a.Essential || len(a.Stack) == 0 {
			continue
		}
		st := sarif.NewStack()
		msg := fmt.Sprintf("%s thread %s %s %s", a.Role, a.Handle, strings.ToLower(a.Action), v.Var)
		if len(a.Locks) > 0 {
			msg += ", holding " + strings.Join(a.Locks, ", ")
		} else {
			msg += ", holding no lock"
		}
		if a.Created != "" {
			msg += "; thread created at " + a.Created
		}
		st.Message = sarif.NewTextMessage(msg)
		for i, fn := range a.Stack {
			f := sarif.NewStackFrame()
			if i == 0 {
				inner := a
				inner.Func = fn
				f.Location = sarifLocation(inner, a.Action+" "+v.Var)
			} else {
				f.Location = sarif.NewLocation()
				ll := sarif.NewLogicalLocation()
				ll.Name, ll.Kind = ptr(fn), ptr("function")
				f.Location.LogicalLocations = append(f.Location.LogicalLocations, ll)
			}
			st.Frames = append(st.Frames, f)
		}
		out = append(out, st)
	}
	return out
}

// resultMessage is the one-line description of a bug, e.g. "lost update
// (P3) on balance: thread 202 Read bank.c:11 → thread 201 Write bank.c:15 →
// thread 202 Write bank.c:15, in deposit() (2 instances)".
func resultMessage(r *bugs.Report, b bugs.Bug, v bugs.Violation) string {
	var steps []string
	funcs := map[string]bool{}
	var fnOrder []string
	for _, a := range v.Accesses {
		steps = append(steps, fmt.Sprintf("thread %s %s %s", a.Handle, a.Action, a.Location()))
		if a.Func != "" && !funcs[a.Func] {
			funcs[a.Func] = true
			fnOrder = append(fnOrder, ShortName(a.Func)+"()")
		}
	}
	msg := fmt.Sprintf("%s (%s) on %s: %s", b.PatternName, b.Pattern, bugVars(r, b.Vars), strings.Join(steps, " → "))
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
