package report

import (
	"fmt"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// isFinding reports whether a bug of r is a finding of an analysis that is
// not model-checked (bugs.AnalysisRun.ModelChecked): any number of
// threads, no pattern of the pattern language. The bugs of model-checked
// analyses, and those of a report without analyses (package predict run
// alone, or an older report), are pattern instances of two threads.
func isFinding(r *bugs.Report, b bugs.Bug) bool {
	a := r.AnalysisOf(b.Analysis)
	return a != nil && !a.ModelChecked
}

// findingRule is the SARIF rule of one kind of finding of an analysis.
func findingRule(a bugs.AnalysisRun, k bugs.FindingKind) *sarif.ReportingDescriptor {
	rule := sarif.NewRule(a.Name + "/" + k.ID)
	rule.Name = ptr(ruleName(k.Name))
	rule.ShortDescription = sarif.NewMultiformatMessageString().WithText(k.Name)
	help := k.Help
	if help == "" {
		help = k.Name
	}
	if a.Paper != "" {
		help += "\n\nMethod: " + a.Paper + "."
	}
	rule.FullDescription = sarif.NewMultiformatMessageString().WithText(help)
	rule.Help = sarif.NewMultiformatMessageString().WithText(help).WithMarkdown(help)
	cfg := sarif.NewReportingConfiguration()
	cfg.Level = sarif.LevelWarning
	rule.DefaultConfiguration = cfg
	props := sarif.NewPropertyBag()
	props.AddTag("concurrency")
	props.AddTag(a.Name)
	props.Add("analysis", a.Name)
	rule.Properties = props
	return rule
}

// findingResult is the SARIF result of a bug of another analysis: its
// locations are the sites of one instance, and its code flow has one
// thread flow per thread of the finding.
func findingResult(r *bugs.Report, b bugs.Bug, ruleID string, ruleIndex int) *sarif.Result {
	v := r.Violations[b.Instances[0]]
	res := sarif.NewRuleResult(ruleID).WithRuleIndex(ruleIndex)
	res.Level = sarif.LevelWarning
	msg := v.Message
	if msg == "" {
		msg = fmt.Sprintf("%s (%s)", b.PatternName, b.Pattern)
	}
	if b.Occurred {
		msg += " (occurred in the recorded run)"
	}
	res.Message = sarif.NewTextMessage(msg)
	res.PartialFingerprints = map[string]string{FingerprintKey: b.ID}
	res.OccurrenceCount = ptr(b.Count)
	for i, a := range v.Accesses {
		loc := sarifLocation(a, fmt.Sprintf("thread %s: %s %s %s", a.Handle, a.Role, a.Action, a.Object))
		loc.ID = i + 1
		res.Locations = append(res.Locations, loc)
	}
	flow := sarif.NewCodeFlow()
	flow.Message = sarif.NewTextMessage(fmt.Sprintf("%s: %d threads", b.PatternName, len(v.Threads)))
	for _, t := range v.Threads {
		tf := sarif.NewThreadFlow()
		tf.ID = ptr("thread " + t.Handle)
		tf.Message = sarif.NewTextMessage("thread " + t.Handle)
		for step, a := range v.Interleaving {
			if a.Thread != t.ID {
				continue
			}
			tl := sarif.NewThreadFlowLocation()
			tl.ExecutionOrder = step + 1
			tl.Kinds = stepKinds(a.Action)
			tl.Location = sarifLocation(a, a.Role+" "+a.Action+" "+a.Object)
			tl.Importance = "important"
			if a.Instance {
				tl.Importance = "essential"
			}
			tf.Locations = append(tf.Locations, tl)
		}
		flow.ThreadFlows = append(flow.ThreadFlows, tf)
	}
	res.CodeFlows = append(res.CodeFlows, flow)
	props := sarif.NewPropertyBag()
	props.Add("bugId", b.ID)
	props.Add("analysis", b.Analysis)
	props.Add("objects", b.Vars)
	props.Add("instances", b.Count)
	props.Add("occurred", b.Occurred)
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
