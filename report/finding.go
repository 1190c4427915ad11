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

// findingMessage is the one-line description of a bug of another
// analysis: its first instance's message, or its kind.
func findingMessage(b bugs.Bug, v bugs.Violation) string {
	msg := v.Message
	if msg == "" {
		msg = fmt.Sprintf("%s (%s)", b.PatternName, b.Pattern)
	}
	if b.Occurred {
		msg += " (occurred in the recorded run)"
	}
	return msg
}

// findingEvidence sets the locations of a result to the sites of the
// finding v, and its code flow to one thread flow per thread of it.
func findingEvidence(res *sarif.Result, b bugs.Bug, v bugs.Violation) {
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
}
