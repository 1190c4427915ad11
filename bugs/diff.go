package bugs

import (
	"fmt"
	"sort"
)

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

	// The fields below are set only when either report has a bug with a
	// Reproduction (a report of mcpredict reproduce), so that the diff of
	// two reports of mcpredict run stays as it was.

	// Reproductions marks such a diff.
	Reproductions bool `json:"reproductions,omitempty"`
	// StatusChanges are the unchanged bugs whose reproduction state
	// (Bug.ReproductionState) differs between the two reports, in
	// Unchanged order.
	StatusChanges []StatusChange `json:"status_changes,omitempty"`
	// NewlyFailed counts the bugs of the new report whose reproducing run
	// failed and that did not fail in the base: new bugs that failed, and
	// unchanged ones that fail now.
	NewlyFailed int `json:"newly_failed,omitempty"`
}

// StatusChange is an unchanged bug whose reproduction state changed.
type StatusChange struct {
	ID   string `json:"id"`
	Base string `json:"base"` // Bug.ReproductionState in the base; "" none
	New  string `json:"new"`  // and in the new report
}

// StateFailed is the reproduction state of a bug whose reproducing run
// failed (Bug.ReproductionState).
const StateFailed = "failed"

// ReproductionState is the state of b's reproduction that a comparison
// tracks: StateFailed, or else its Status; "" when it has none. A failed
// run is a state of its own because it is what a reader acts on first.
func (b Bug) ReproductionState() string {
	r := b.Reproduction
	switch {
	case r == nil:
		return ""
	case r.Failed:
		return StateFailed
	}
	return r.Status
}

// Compare compares two reports. Every bug of base counts as known, even a
// suppressed one, so that a suppression dropped later does not turn an old
// bug into a new one; suppressed bugs of cur are left out, since they are
// not reported. Bugs keep the order of their report, but for bugs with a
// reproduction: failed first, then reproduced (Bug.ReproductionRank), so
// that a new bug that broke the program heads the list. Groups are
// compared the same way, by group id.
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
	if hasReproductions(base) || hasReproductions(cur) {
		d.compareReproductions(base)
	}
	return d
}

// compareReproductions ranks the bugs of d by reproduction, and records
// the changes of state of its unchanged bugs and the bugs that newly
// failed.
func (d *Diff) compareReproductions(base *Report) {
	d.Reproductions = true
	for _, l := range [][]Bug{d.Added, d.Fixed, d.Unchanged} {
		sort.SliceStable(l, func(i, j int) bool { return l[i].ReproductionRank() < l[j].ReproductionRank() })
	}
	before := make(map[string]string, len(base.Bugs))
	for _, b := range base.Bugs {
		before[b.ID] = b.ReproductionState()
	}
	for _, b := range d.Added {
		if b.ReproductionState() == StateFailed {
			d.NewlyFailed++
		}
	}
	for _, b := range d.Unchanged {
		was, now := before[b.ID], b.ReproductionState()
		if was != now {
			d.StatusChanges = append(d.StatusChanges, StatusChange{ID: b.ID, Base: was, New: now})
			if now == StateFailed {
				d.NewlyFailed++
			}
		}
	}
}

// hasReproductions reports whether a bug of r has a Reproduction.
func hasReproductions(r *Report) bool {
	for _, b := range r.Bugs {
		if b.Reproduction != nil {
			return true
		}
	}
	return false
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
// unchanged", and "…, 1 newly failed" when it compares reproductions.
func (d Diff) Summary() string {
	s := fmt.Sprintf("%d new, %d fixed, %d unchanged", len(d.Added), len(d.Fixed), len(d.Unchanged))
	if d.Reproductions {
		s += fmt.Sprintf(", %d newly failed", d.NewlyFailed)
	}
	return s
}

// GroupSummary is the one-line count of the groups of a diff, e.g. "groups:
// 1 new, 0 fixed, 1 unchanged".
func (d Diff) GroupSummary() string {
	return fmt.Sprintf("groups: %d new, %d fixed, %d unchanged", len(d.AddedGroups), len(d.FixedGroups), len(d.UnchangedGroups))
}
