package bugs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// bug builds a bug of analysis a on vars whose local accesses are in
// local (one location each) and whose remote access is in remote.
func bug(id, a, pattern string, vars []string, local []string, remote string) Bug {
	b := Bug{ID: id, Analysis: a, Pattern: pattern, PatternName: "name of " + pattern, Vars: vars, Count: 2}
	for i, f := range local {
		b.Locations = append(b.Locations, Location{Role: "local", Action: "Read", File: "c.c", Line: 10 + i, Func: f})
	}
	if remote != "none" {
		b.Locations = append(b.Locations, Location{Role: "remote", Action: "Write", File: "c.c", Line: 20, Func: remote})
	}
	return b
}

func TestGroups(t *testing.T) {
	x := []string{"x"}
	tests := []struct {
		name string
		bugs []Bug
		want [][]string // bug ids of each group, in order
	}{
		{"none", nil, nil},
		{"one", []Bug{bug("A", "mcpatom", "P3", x, []string{"f"}, "g")}, [][]string{{"A"}}},
		{"same variable and function", []Bug{
			bug("A", "mcpatom", "P3", x, []string{"f"}, "g"),
			bug("B", "mcpatom", "P3", x, []string{"f"}, "f"),
		}, [][]string{{"A", "B"}}},
		{"first bug of each pattern first", []Bug{
			bug("A", "mcpatom", "P2", x, []string{"f"}, "g"),
			bug("B", "mcpatom", "P2", x, []string{"f"}, "g"),
			bug("C", "mcpatom", "P3", x, []string{"f"}, "g"),
			bug("D", "mcpatom", "P3", x, []string{"f"}, "g"),
			bug("E", "mcpatom", "P5", x, []string{"f"}, "g"),
		}, [][]string{{"A", "C", "E", "B", "D"}}},
		{"other function", []Bug{
			bug("A", "mcpatom", "P3", x, []string{"f"}, "g"),
			bug("B", "mcpatom", "P3", x, []string{"g"}, "g"),
			bug("C", "mcpatom", "P1", x, []string{"f"}, "g"),
		}, [][]string{{"C", "A"}, {"B"}}},
		{"other variable", []Bug{
			bug("A", "mcpatom", "P3", x, []string{"f"}, "g"),
			bug("B", "mcpatom", "P3", []string{"y"}, []string{"f"}, "g"),
		}, [][]string{{"A"}, {"B"}}},
		{"other analysis", []Bug{
			bug("A", "mcpatom", "M1", []string{"hi", "lo"}, []string{"f"}, "g"),
			bug("B", "atomicset", "M1", []string{"hi", "lo"}, []string{"f"}, "g"),
		}, [][]string{{"A"}, {"B"}}},
		{"local accesses in two functions", []Bug{
			bug("A", "atomicset", "M1", []string{"hi", "lo"}, []string{"get_lo", "get_hi"}, "set"),
			bug("B", "atomicset", "M1", []string{"hi", "lo"}, []string{"get_hi", "get_lo"}, "set"),
			bug("C", "atomicset", "M1", []string{"hi", "lo"}, []string{"get_lo"}, "set"),
		}, [][]string{{"A", "B"}, {"C"}}},
		{"generations of one address", []Bug{
			bug("A", "mcpatom", "P3", []string{"buf#2"}, []string{"f"}, "g"),
			bug("B", "mcpatom", "P3", []string{"buf#3"}, []string{"f"}, "g"),
			bug("C", "mcpatom", "P3", []string{"buf"}, []string{"f"}, "g"),
		}, [][]string{{"A", "B", "C"}}},
		{"no function known", []Bug{
			bug("A", "deadlock", "DL", []string{"a", "b"}, nil, "none"),
			bug("B", "deadlock", "DL", []string{"a", "b"}, nil, "none"),
		}, [][]string{{"A", "B"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs := Groups(tt.bugs)
			var got [][]string
			for _, g := range gs {
				got = append(got, g.BugIDs)
				if len(g.Members) != len(g.BugIDs) {
					t.Errorf("group %s: %d members, %d ids", g.ID, len(g.Members), len(g.BugIDs))
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("groups %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGroupFields(t *testing.T) {
	bs := []Bug{
		bug("A", "mcpatom", "P3", []string{"buf#2"}, []string{"f"}, "g"),
		bug("B", "mcpatom", "P2", []string{"buf#3"}, []string{"f"}, "h"),
		bug("C", "mcpatom", "P3", []string{"buf#2"}, []string{"f"}, "f"),
	}
	bs[2].Suppressed = true
	gs := Groups(bs)
	if len(gs) != 1 {
		t.Fatalf("%d groups, want 1", len(gs))
	}
	g := gs[0]
	want := Group{
		ID: GroupID("mcpatom", []string{"buf"}, "f"), Analysis: "mcpatom",
		Vars: []string{"buf#2", "buf#3"}, LocalFunc: "f", RemoteFuncs: []string{"f", "g", "h"},
		Patterns: []PatternCount{
			{Pattern: "P2", PatternName: "name of P2", Bugs: 1, Instances: 2},
			{Pattern: "P3", PatternName: "name of P3", Bugs: 2, Instances: 4},
		},
		BugIDs: []string{"B", "A", "C"}, Instances: 6, Suppressed: 1,
	}
	g.Members = nil
	if !reflect.DeepEqual(g, want) {
		t.Errorf("got  %+v\nwant %+v", g, want)
	}
}

// TestGroupID checks that a group's id depends on its identity only: the
// analysis, the variables (in any order, any generation) and the local
// function.
func TestGroupID(t *testing.T) {
	base := GroupID("mcpatom", []string{"x", "y"}, "f")
	if !strings.HasPrefix(base, "GR-") || len(base) != 15 {
		t.Fatalf("id %q, want GR- and 12 hex digits", base)
	}
	same := [][]string{{"y", "x"}, {"x#2", "y"}, {"x", "y#10", "y"}}
	for _, vs := range same {
		if id := GroupID("mcpatom", vs, "f"); id != base {
			t.Errorf("vars %v: id %s, want %s", vs, id, base)
		}
	}
	for _, other := range []string{
		GroupID("atomicset", []string{"x", "y"}, "f"),
		GroupID("mcpatom", []string{"x"}, "f"),
		GroupID("mcpatom", []string{"x", "y"}, "g"),
		GroupID("mcpatom", []string{"x", "y"}, ""),
		GroupID("mcpatom", []string{"x\ny"}, "f"),
		GroupID("mcpatom", []string{"x#"}, "f"),
	} {
		if other == base {
			t.Errorf("another identity has id %s", base)
		}
	}
}

// TestWriteJSONGroups checks the groups of the JSON report: every bug,
// suppressed ones included, and none for a report without bugs.
func TestWriteJSONGroups(t *testing.T) {
	r := reportOf("A", "B")
	r.Bugs[1].Suppressed = true
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Groups []Group `json:"groups"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Groups) != 2 || got.Groups[1].Suppressed != 1 || !reflect.DeepEqual(got.Groups[0].BugIDs, []string{"A"}) {
		t.Errorf("groups %+v", got.Groups)
	}
	back, err := ReadJSON(&buf, "r.json")
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("read back: %v\n got %+v\nwant %+v", err, back, r)
	}
	buf.Reset()
	if err := WriteJSON(&buf, reportOf()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"groups": []`) {
		t.Errorf("a report without bugs has no empty groups:\n%s", buf.String())
	}
}

// TestWriteJSONAsEncoder checks that WriteJSON, which encodes the
// violations in chunks on the cores, writes what an indenting Encoder
// writes: no violations (null and empty), fewer than a chunk, several
// chunks with a part one, and text that looks like the field it replaces.
func TestWriteJSONAsEncoder(t *testing.T) {
	many := func(n int) *Report {
		r := &Report{Schema: SchemaVersion, Warnings: []string{`"violations": null`}}
		r.Violations = []Violation{}
		for i := range n {
			v := Violation{Var: fmt.Sprintf("v%d <&>", i), BugID: fmt.Sprint(i % 7), Pattern: "P1",
				Accesses:     []Access{{Thread: 1, Action: "Read", File: "a.c", Line: i}},
				Interleaving: []Access{{Thread: 2, Action: "Write", Source: "x = \"violations\": null;"}}}
			r.Violations = append(r.Violations, v)
		}
		return r
	}
	for _, r := range []*Report{{Schema: SchemaVersion}, many(0), many(1), many(255), many(256), many(1000)} {
		var got, want bytes.Buffer
		if err := WriteJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		groups := Groups(r.Bugs)
		if groups == nil {
			groups = []Group{}
		}
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			*Report
			Groups []Group `json:"groups"`
		}{r, groups}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d violations: WriteJSON differs from the Encoder:\n%s\nwant\n%s", len(r.Violations), got.String(), want.String())
		}
	}
}
