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
	Bugs     []htmlBug
	SrcRoot  string
	Snippets bool
}

type htmlBug struct {
	bugs.Bug
	Anchor    string
	Source    string // the pattern in the pattern language
	Help      string
	HelpOpen  bool // the help is shown open for the first bug of each pattern
	VarList   string
	Reached   []string // "var: path" for variables named by type and site (Report.Reached)
	Where     []string // distinct "file:line (func)" of the bug
	Example   bugs.Violation
	Diagram   swimlane
	Marker    string // id of the diagram's arrowhead marker
	Snippets  []snippet
	Instances []htmlInstance
	// Finding is set for a bug of an analysis that is not model-checked
	// (a deadlock): a table of its sites instead of the swimlane diagram.
	Finding *bugs.Violation
}

type htmlInstance struct {
	Var, Local, Remote, Claim, Engine string
	TraceLines                        string
}

// WriteHTML writes the report as one self-contained HTML page: no script,
// no external style sheet, font or image. It has a summary table of the
// active bugs and, for each, its pattern's explanation, a swimlane diagram
// (inline SVG) of one instance's interleaving with the instance's accesses
// numbered and highlighted, the list of instances and, when o.SrcRoot is
// set, the source lines of the interleaving.
func WriteHTML(w io.Writer, r *bugs.Report, o Options) error {
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"plural":     plural,
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
	switch len(active) {
	case 0:
		page.Title = "No atomicity violation predicted in " + r.Trace
		page.Summary = "No atomicity violation predicted."
	default:
		page.Title = fmt.Sprintf("%d %s predicted in %s", len(active), plural(len(active), one, many), r.Trace)
		page.Summary = fmt.Sprintf("%d %s predicted from %d violation %s.", len(active), plural(len(active), "bug", "bugs"), instances, plural(instances, "instance", "instances"))
	}
	var src *sourceCache
	if o.SrcRoot != "" {
		src = newSourceCache(o.SrcRoot)
	}
	helpShown := map[string]bool{}
	for i, b := range active {
		p := lookupPattern(o.Patterns, b.Pattern)
		v := r.Violations[b.Instances[0]]
		hb := htmlBug{
			Bug:      b,
			Anchor:   b.ID,
			Source:   p.Source,
			Help:     p.Help,
			HelpOpen: !helpShown[b.Pattern],
			VarList:  strings.Join(b.Vars, ", "),
			Reached:  reachedLines(r, b),
			Example:  v,
			Diagram:  layoutSwimlane(v),
			Marker:   fmt.Sprintf("arrow-%d", i+1),
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
		helpShown[b.Pattern] = true
		for _, l := range b.Locations {
			s := l.String()
			if l.Func != "" {
				s += " (" + l.Func + ")"
			}
			if !containsString(hb.Where, s) {
				hb.Where = append(hb.Where, s)
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
		page.Bugs = append(page.Bugs, hb)
	}
	return tmpl.Execute(w, page)
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
