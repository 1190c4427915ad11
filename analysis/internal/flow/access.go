package flow

import (
	"fmt"

	"github.com/mcpredict/mcpredict/analysis"
)

// Access is an event of a finding of svd, hldr or stale, as their results
// list it; each analysis documents its roles.
type Access struct {
	Line   int    // trace line of the event
	Thread string // thread handle
	Role   string
	Var    string
	Kind   string // Read or Write
	Where  string // source location
}

// Sites turns accesses into the sites of a finding of the analysis name:
// the events at their trace lines, each essential, with the site role
// that role gives for the access's.
func Sites(pass *analysis.Pass, name string, as []Access, role func(string) string) ([]analysis.Site, error) {
	var out []analysis.Site
	for _, a := range as {
		ev, ok := pass.EventAtLine(a.Line)
		if !ok {
			return nil, fmt.Errorf("%s: no event at trace line %d", name, a.Line)
		}
		out = append(out, analysis.Site{Event: ev, Role: role(a.Role), Essential: true})
	}
	return out, nil
}

// LocalOrRemote is the site role of an access whose role is "remote" or
// any role of the local thread.
func LocalOrRemote(role string) string {
	if role == "remote" {
		return "remote"
	}
	return "local"
}
