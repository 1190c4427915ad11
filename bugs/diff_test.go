package bugs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// reportOf builds a report whose bug i has violation i, on variable "v<id>".
func reportOf(ids ...string) *Report {
	r := &Report{Schema: SchemaVersion}
	for i, id := range ids {
		r.Violations = append(r.Violations, Violation{Var: "v" + id, BugID: id, Pattern: "P1"})
		r.Bugs = append(r.Bugs, Bug{ID: id, Pattern: "P1", Vars: []string{"v" + id}, Count: 1, Instances: []int{i}})
	}
	return r
}

func ids(bs []Bug) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.ID)
	}
	return out
}

func TestCompare(t *testing.T) {
	suppressed := func(r *Report, id string) *Report {
		for i := range r.Bugs {
			if r.Bugs[i].ID == id {
				r.Bugs[i].Suppressed = true
			}
		}
		return r
	}
	tests := []struct {
		name                   string
		base, cur              *Report
		added, fixed, unchange []string
	}{
		{"same", reportOf("A", "B"), reportOf("A", "B"), nil, nil, []string{"A", "B"}},
		{"new and fixed", reportOf("A", "B"), reportOf("B", "C"), []string{"C"}, []string{"A"}, []string{"B"}},
		{"empty base", reportOf(), reportOf("A"), []string{"A"}, nil, nil},
		{"empty new", reportOf("A"), reportOf(), nil, []string{"A"}, nil},
		{"suppressed in new is not new", reportOf(), suppressed(reportOf("A"), "A"), nil, nil, nil},
		{"suppressed in new is not fixed", reportOf("A"), suppressed(reportOf("A"), "A"), nil, nil, nil},
		{"suppressed in base is known", suppressed(reportOf("A"), "A"), reportOf("A"), nil, nil, []string{"A"}},
		{"suppressed in base is not fixed", suppressed(reportOf("A"), "A"), reportOf(), nil, nil, nil},
	}
	norm := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(tt.base, tt.cur, "base.json", "new.json")
			if got := ids(d.Added); !reflect.DeepEqual(got, norm(tt.added)) {
				t.Errorf("added %v, want %v", got, tt.added)
			}
			if got := ids(d.Fixed); !reflect.DeepEqual(got, norm(tt.fixed)) {
				t.Errorf("fixed %v, want %v", got, tt.fixed)
			}
			if got := ids(d.Unchanged); !reflect.DeepEqual(got, norm(tt.unchange)) {
				t.Errorf("unchanged %v, want %v", got, tt.unchange)
			}
		})
	}
}

func TestApplyBaseline(t *testing.T) {
	cur := reportOf("A", "B", "C", "D")
	// Bug C has two instances, one shared with nobody else.
	cur.Violations = append(cur.Violations, Violation{Var: "vC2", BugID: "C"})
	cur.Bugs[2].Instances = []int{2, 4}
	cur.Bugs[2].Count = 2
	ApplyBaseline(cur, reportOf("B", "D", "X"), "base.json")
	if got, want := ids(cur.Bugs), []string{"A", "C"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("bugs %v, want %v", got, want)
	}
	if cur.Stats.Baseline != 2 || cur.Baseline != "base.json" {
		t.Errorf("baseline %q count %d, want base.json 2", cur.Baseline, cur.Stats.Baseline)
	}
	var vars []string
	for _, v := range cur.Violations {
		vars = append(vars, v.Var)
	}
	if want := []string{"vA", "vC", "vC2"}; !reflect.DeepEqual(vars, want) {
		t.Errorf("violations %v, want %v (in their order)", vars, want)
	}
	for _, b := range cur.Bugs {
		for _, i := range b.Instances {
			if cur.Violations[i].BugID != b.ID {
				t.Errorf("bug %s instance %d is a violation of %s", b.ID, i, cur.Violations[i].BugID)
			}
		}
	}
	// The filtered report is still a valid report.
	var buf bytes.Buffer
	if err := WriteJSON(&buf, cur); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSON(&buf, "filtered"); err != nil {
		t.Error(err)
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", "hello", "not a mcpredict JSON report"},
		{"other schema", `{"schema":"other/v9"}`, `report schema "other/v9"`},
		{"no instances", `{"schema":"mcpredict.report/v1","bugs":[{"id":"AV-1"}]}`, "no instances"},
		{"bad instance", `{"schema":"mcpredict.report/v1","bugs":[{"id":"AV-1","instances":[3]}],"violations":[]}`, "out of range"},
	}
	for _, tt := range tests {
		_, err := ReadJSON(strings.NewReader(tt.in), "r.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "r.json: ") {
			t.Errorf("%s: error %v, want r.json: ...%s", tt.name, err, tt.want)
		}
	}
}

func TestCompareGroups(t *testing.T) {
	// reportOf's bugs are one group per variable; bugs "A1" and "A2" are
	// on variable vA too.
	withBug := func(r *Report, id, v string) *Report {
		r.Violations = append(r.Violations, Violation{Var: v, BugID: id, Pattern: "P3"})
		r.Bugs = append(r.Bugs, Bug{ID: id, Pattern: "P3", Vars: []string{v}, Count: 1, Instances: []int{len(r.Violations) - 1}})
		return r
	}
	suppressAll := func(r *Report) *Report {
		for i := range r.Bugs {
			r.Bugs[i].Suppressed = true
		}
		return r
	}
	gid := func(v string) string { return GroupID("", []string{v}, "") }
	tests := []struct {
		name                   string
		base, cur              *Report
		added, fixed, unchange []string
	}{
		{"same", reportOf("A", "B"), reportOf("A", "B"), nil, nil, []string{gid("vA"), gid("vB")}},
		{"new bug in a known group", reportOf("A"), withBug(reportOf("A"), "A1", "vA"), nil, nil, []string{gid("vA")}},
		{"a group's other bug", reportOf("A"), withBug(reportOf(), "A1", "vA"), nil, nil, []string{gid("vA")}},
		{"new and fixed", reportOf("A"), reportOf("B"), []string{gid("vB")}, []string{gid("vA")}, nil},
		{"suppressed in base is known", suppressAll(reportOf("A")), withBug(reportOf(), "A1", "vA"), nil, nil, []string{gid("vA")}},
		{"suppressed in new is not fixed", reportOf("A"), suppressAll(withBug(reportOf(), "A1", "vA")), nil, nil, nil},
	}
	gids := func(gs []Group) []string {
		out := []string{}
		for _, g := range gs {
			out = append(out, g.ID)
		}
		return out
	}
	norm := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(tt.base, tt.cur, "base.json", "new.json")
			if got := gids(d.AddedGroups); !reflect.DeepEqual(got, norm(tt.added)) {
				t.Errorf("added groups %v, want %v", got, tt.added)
			}
			if got := gids(d.FixedGroups); !reflect.DeepEqual(got, norm(tt.fixed)) {
				t.Errorf("fixed groups %v, want %v", got, tt.fixed)
			}
			if got := gids(d.UnchangedGroups); !reflect.DeepEqual(got, norm(tt.unchange)) {
				t.Errorf("unchanged groups %v, want %v", got, tt.unchange)
			}
		})
	}
}

// reproduced returns r with the reproduction states of its bugs set by
// id: StateFailed, a Status, or "" for none.
func reproduced(r *Report, states map[string]string) *Report {
	for i, b := range r.Bugs {
		switch s := states[b.ID]; s {
		case "":
		case StateFailed:
			r.Bugs[i].Reproduction = &Reproduction{Status: Reproduced, Failed: true, Runs: 1}
		default:
			r.Bugs[i].Reproduction = &Reproduction{Status: s, Runs: 1}
		}
	}
	return r
}

func TestDiffReproduction(t *testing.T) {
	tests := []struct {
		name               string
		base, cur          *Report
		reproductions      bool
		added, unchanged   []string
		changes            []StatusChange
		newlyFailed        int
		summary            string
		jsonHas, jsonLacks string
	}{
		{"plain reports", reportOf("A", "B"), reportOf("A", "C"), false, []string{"C"}, []string{"A"}, nil, 0,
			"1 new, 1 fixed, 1 unchanged", `"added"`, `"reproductions"`},
		{"status changes and failed new bugs first",
			reproduced(reportOf("A", "B", "E"), map[string]string{"A": Reproduced, "E": StateFailed}),
			reproduced(reportOf("D", "B", "A", "C", "E"), map[string]string{"A": StateFailed, "B": NotTried, "C": StateFailed, "E": StateFailed}),
			true, []string{"C", "D"}, []string{"A", "E", "B"},
			[]StatusChange{{ID: "A", Base: Reproduced, New: StateFailed}, {ID: "B", Base: "", New: NotTried}}, 2,
			"2 new, 0 fixed, 3 unchanged, 2 newly failed", `"status_changes"`, ""},
		{"reproductions only in the base",
			reproduced(reportOf("A"), map[string]string{"A": NotReproduced}), reportOf("A"),
			true, nil, []string{"A"}, []StatusChange{{ID: "A", Base: NotReproduced, New: ""}}, 0,
			"0 new, 0 fixed, 1 unchanged, 0 newly failed", `"reproductions": true`, `"newly_failed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(tt.base, tt.cur, "base.json", "new.json")
			if d.Reproductions != tt.reproductions || d.NewlyFailed != tt.newlyFailed || d.Summary() != tt.summary {
				t.Errorf("reproductions %v, newly failed %d, summary %q; want %v, %d, %q",
					d.Reproductions, d.NewlyFailed, d.Summary(), tt.reproductions, tt.newlyFailed, tt.summary)
			}
			if got := ids(d.Added); !reflect.DeepEqual(got, append([]string{}, tt.added...)) {
				t.Errorf("added %v, want %v", got, tt.added)
			}
			if got := ids(d.Unchanged); !reflect.DeepEqual(got, tt.unchanged) {
				t.Errorf("unchanged %v, want %v", got, tt.unchanged)
			}
			if !reflect.DeepEqual(d.StatusChanges, tt.changes) {
				t.Errorf("status changes %+v, want %+v", d.StatusChanges, tt.changes)
			}
			js, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(js), tt.jsonHas) || (tt.jsonLacks != "" && strings.Contains(string(js), tt.jsonLacks)) {
				t.Errorf("JSON lacks %s or has %s:\n%s", tt.jsonHas, tt.jsonLacks, js)
			}
		})
	}
}
