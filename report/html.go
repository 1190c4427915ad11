package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
)

//go:embed html.tmpl
var htmlTemplate string

// htmlPage is what the template renders.
type htmlPage struct {
	Title    string
	Report   *bugs.Report
	Summary  string
	Groups   []htmlGroup
	SrcRoot  string
	Snippets bool
	// Reproductions is set when a bug has a Reproduction: the page then
	// has the style of the badges, and Reproduce counts them
	// (ReproduceSummary).
	Reproductions bool
	Reproduce     string
}

// htmlGroup is a group of bugs (bugs.Groups): its first FirstShown bugs
// are Shown, the others (none when expanded) are behind a disclosure.
type htmlGroup struct {
	bugs.Group
	Heading string // GroupHeading
	Local   string // the local function, "f()"
	Remote  string // the remote functions, "f(), g()"
	VarList string
	Shown   []htmlBug
	Rest    []htmlBug
	Badge   *reproView // of its best-ranked bug; nil without reproductions
}

type htmlBug struct {
	bugs.Bug
	Anchor    string
	Source    string // the pattern in the pattern language
	Help      string
	HelpOpen  bool // the help is shown open for the first bug of each pattern
	VarList   string
	Reached   []string // "var: path" for variables named by type and site (Report.Reached)
	Example   bugs.Violation
	Diagram   swimlane
	Marker    string // id of the diagram's arrowhead marker
	Snippets  []snippet
	Instances []htmlInstance
	// Finding is set for a bug of an analysis that is not model-checked
	// (a deadlock): a table of its sites instead of the swimlane diagram.
	Finding *bugs.Violation
	// Repro is what mcpredict reproduce found; nil without it.
	Repro *reproView
}

type htmlInstance struct {
	Var, Local, Remote, Claim, Engine string
	TraceLines                        string
}

// WriteHTML writes the report as one self-contained HTML page: no script,
// no external style sheet, font or image. It has a summary table of the
// groups of the active bugs (bugs.Groups) and, per group, a heading (for
// a group of several bugs) and its bugs: the first FirstShown in view, the
// others in a disclosure (unless o.Expand). Each bug has its pattern's explanation, a swimlane
// diagram (inline SVG) of one instance's interleaving with the instance's
// accesses numbered and highlighted, the list of instances and, when
// o.SrcRoot is set, the source lines of the interleaving. In a report of
// mcpredict reproduce, groups and bugs are ranked as in the text report
// (failed, reproduced, others; the page has no level of source files) and
// each bug has a badge of its reproduction with the evidence.
func WriteHTML(w io.Writer, r *bugs.Report, o Options) error {
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"plural":     plural,
		"runSummary": RunSummary,
		"engineName": engineName,
	}).Parse(htmlTemplate)
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	if o.Context <= 0 {
		o.Context = 2
	}
	page := htmlPage{Report: r, SrcRoot: o.SrcRoot, Snippets: o.SrcRoot != ""}
	active := r.Active()
	instances := 0
	for _, b := range active {
		instances += b.Count
	}
	// The title names atomicity violations unless an analysis that is not
	// model-checked (deadlock, say) found some of the bugs.
	one, many := "atomicity violation", "atomicity violations"
	for _, b := range active {
		if isFinding(r, b) {
			one, many = "bug", "bugs"
		}
	}
	groups := bugs.Groups(active)
	rankGroups(groups)
	page.Reproduce = ReproduceSummary(active)
	page.Reproductions = page.Reproduce != "" || r.Reproduce != nil
	switch len(active) {
	case 0:
		page.Title = "No atomicity violation predicted in " + r.Trace
		page.Summary = "No atomicity violation predicted."
	default:
		page.Title = fmt.Sprintf("%d %s predicted in %s", len(active), plural(len(active), one, many), r.Trace)
		page.Summary = fmt.Sprintf("%d %s in %d %s predicted from %d violation %s.", len(active), plural(len(active), "bug", "bugs"),
			len(groups), plural(len(groups), "group", "groups"), instances, plural(instances, "instance", "instances"))
	}
	var src *sourceCache
	if o.SrcRoot != "" {
		src = newSourceCache(o.SrcRoot)
	}
	helpShown := map[string]bool{}
	n := 0 // bugs laid out so far
	for _, g := range groups {
		hg := htmlGroup{Group: g, Heading: GroupHeading(g), VarList: bugVars(r, g.Vars)}
		if g.LocalFunc != "" {
			hg.Local = shortFuncList(strings.Split(g.LocalFunc, ", "))
		}
		if len(g.RemoteFuncs) > 0 {
			hg.Remote = shortFuncList(g.RemoteFuncs)
		}
		hg.Badge = reproViewOf(g.Members[0])
		for i, b := range g.Members {
			n++
			hb := htmlBugOf(r, b, o, n, !helpShown[b.Pattern], src)
			helpShown[b.Pattern] = true
			if Shown(b, i, o.Expand) {
				hg.Shown = append(hg.Shown, hb)
			} else {
				hg.Rest = append(hg.Rest, hb)
			}
		}
		page.Groups = append(page.Groups, hg)
	}
	return tmpl.Execute(w, page)
}

// htmlBugOf lays out the n-th bug of the page.
func htmlBugOf(r *bugs.Report, b bugs.Bug, o Options, n int, helpOpen bool, src *sourceCache) htmlBug {
	p := lookupPattern(o.Patterns, b.Pattern)
	v := r.Violations[b.Instances[0]]
	hb := htmlBug{
		Bug:      b,
		Anchor:   b.ID,
		Source:   p.Source,
		Help:     p.Help,
		HelpOpen: helpOpen,
		VarList:  bugVars(r, b.Vars),
		Reached:  reachedLines(r, b),
		Example:  v,
		Diagram:  layoutSwimlane(v),
		Marker:   fmt.Sprintf("arrow-%d", n),
		Repro:    reproViewOf(b),
	}
	if isFinding(r, b) {
		hb.Finding = &hb.Example
		hb.Source, hb.Help = "", ""
		if a := r.AnalysisOf(b.Analysis); a != nil {
			for _, k := range a.Kinds {
				if k.ID == b.Pattern {
					hb.Help = k.Help
				}
			}
		}
	}
	for _, k := range b.Instances {
		iv := r.Violations[k]
		var tl []string
		for _, a := range iv.Accesses {
			tl = append(tl, fmt.Sprint(a.TraceLine))
		}
		hb.Instances = append(hb.Instances, htmlInstance{
			Var: iv.Var, Local: iv.Local.Handle, Remote: iv.Remote.Handle,
			Claim: iv.Claim, Engine: iv.Engine, TraceLines: strings.Join(tl, ", "),
		})
	}
	if src != nil {
		hb.Snippets = src.snippets(v, o.Context)
	}
	return hb
}

// reachedLines lists, in b.Vars order, "var first reached as path" for the
// variables the report has a path of.
func reachedLines(r *bugs.Report, b bugs.Bug) []string {
	var out []string
	for _, name := range b.Vars {
		if p, ok := r.Reached[name]; ok {
			out = append(out, name+" first reached as "+p)
		}
	}
	return out
}

// engineName is how the page names the checker that found an interleaving.
func engineName(e string) string {
	switch e {
	case "native":
		return "the native search"
	case "spin":
		return "Spin"
	}
	return e
}
