package bugs

import "fmt"

// DiffSchemaVersion identifies the JSON form of a Diff.
const DiffSchemaVersion = "mcpredict.diff/v1"

// Diff compares the bugs of two reports by stable id.
type Diff struct {
	Schema string `json:"schema"` // DiffSchemaVersion
	Base   string `json:"base"`   // names of the two reports
	New    string `json:"new"`
	// Added are the active bugs of the new report that the base does not
	// have; Fixed the active bugs of the base that the new report does not
	// have; Unchanged the active bugs of the new report that the base has.
	Added     []Bug `json:"added"`
	Fixed     []Bug `json:"fixed"`
	Unchanged []Bug `json:"unchanged"`
	// AddedGroups are the groups of the active bugs of the new report
	// that the base has no bug of; FixedGroups the groups of the active
	// bugs of the base that the new report has no bug of;
	// UnchangedGroups the groups of the active bugs of the new report
	// that the base has too (they may have new bugs). Each group is as
	// its report has it (Groups of the bugs compared).
	AddedGroups     []Group `json:"added_groups"`
	FixedGroups     []Group `json:"fixed_groups"`
	UnchangedGroups []Group `json:"unchanged_groups"`
}

// Compare compares two reports. Every bug of base counts as known, even a
// suppressed one, so that a suppression dropped later does not turn an old
// bug into a new one; suppressed bugs of cur are left out, since they are
// not reported. Bugs keep the order of their report. Groups are compared
// the same way, by group id.
func Compare(base, cur *Report, baseName, curName string) Diff {
	d := Diff{Schema: DiffSchemaVersion, Base: baseName, New: curName,
		Added: []Bug{}, Fixed: []Bug{}, Unchanged: []Bug{},
		AddedGroups: []Group{}, FixedGroups: []Group{}, UnchangedGroups: []Group{}}
	known := bugIDs(base)
	present := bugIDs(cur)
	for _, b := range cur.Active() {
		if known[b.ID] {
			d.Unchanged = append(d.Unchanged, b)
		} else {
			d.Added = append(d.Added, b)
		}
	}
	for _, b := range base.Active() {
		if !present[b.ID] {
			d.Fixed = append(d.Fixed, b)
		}
	}
	knownGroups := groupIDs(base)
	presentGroups := groupIDs(cur)
	for _, g := range Groups(cur.Active()) {
		if knownGroups[g.ID] {
			d.UnchangedGroups = append(d.UnchangedGroups, g)
		} else {
			d.AddedGroups = append(d.AddedGroups, g)
		}
	}
	for _, g := range Groups(base.Active()) {
		if !presentGroups[g.ID] {
			d.FixedGroups = append(d.FixedGroups, g)
		}
	}
	return d
}

// groupIDs are the ids of the groups of all bugs of r, suppressed or not.
func groupIDs(r *Report) map[string]bool {
	ids := map[string]bool{}
	for _, g := range Groups(r.Bugs) {
		ids[g.ID] = true
	}
	return ids
}

func bugIDs(r *Report) map[string]bool {
	ids := make(map[string]bool, len(r.Bugs))
	for _, b := range r.Bugs {
		ids[b.ID] = true
	}
	return ids
}

// ApplyBaseline leaves out of r the bugs that base has (suppressed or not),
// with their violations, so that only new bugs remain; it records the
// baseline's name and counts the bugs left out in r.Stats.Baseline. Apply it
// before suppressions: it keeps the remaining bugs as they are.
func ApplyBaseline(r *Report, base *Report, name string) {
	known := bugIDs(base)
	r.Baseline = name
	// Keep the violations of the remaining bugs in their order, and renumber
	// the bugs' instances.
	keep := make([]bool, len(r.Violations))
	bugs := make([]Bug, 0, len(r.Bugs))
	for _, b := range r.Bugs {
		if known[b.ID] {
			r.Stats.Baseline++
			continue
		}
		for _, i := range b.Instances {
			keep[i] = true
		}
		bugs = append(bugs, b)
	}
	newIndex := make([]int, len(r.Violations))
	violations := make([]Violation, 0, len(r.Violations))
	for i, v := range r.Violations {
		if keep[i] {
			newIndex[i] = len(violations)
			violations = append(violations, v)
		}
	}
	for k := range bugs {
		inst := make([]int, len(bugs[k].Instances))
		for j, i := range bugs[k].Instances {
			inst[j] = newIndex[i]
		}
		bugs[k].Instances = inst
	}
	r.Bugs, r.Violations = bugs, violations
}

// Summary is the one-line count of a diff, e.g. "1 new, 0 fixed, 2
// unchanged".
func (d Diff) Summary() string {
	return fmt.Sprintf("%d new, %d fixed, %d unchanged", len(d.Added), len(d.Fixed), len(d.Unchanged))
}

// GroupSummary is the one-line count of the groups of a diff, e.g. "groups:
// 1 new, 0 fixed, 1 unchanged".
func (d Diff) GroupSummary() string {
	return fmt.Sprintf("groups: %d new, %d fixed, %d unchanged", len(d.AddedGroups), len(d.FixedGroups), len(d.UnchangedGroups))
}
