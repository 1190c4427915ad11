package bugs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Group is a set of bugs that a reader takes for one problem: the bugs of
// one analysis on the same variables whose local accesses are in the same
// function. A counter incremented without a lock at a hundred lines of one
// function is hundreds of bugs (each pattern at each line) and one group.
// Groups are derived from the bugs (Groups); the JSON report writes them
// after the bugs, and a reader may compute them again from the bugs.
type Group struct {
	// ID is the stable id "GR-" and 12 hex digits: a hash of the
	// analysis, the variable names (without the generation suffix "#g" of
	// a reused address) and the local function, independent of line
	// numbers, thread handles and of which bugs the group has.
	ID       string `json:"id"`
	Analysis string `json:"analysis,omitempty"`
	// Vars are the variables of its bugs: its first bug's, in their order
	// (an atomic set's x first), then those of others.
	Vars []string `json:"vars"`
	// LocalFunc is the function of the bugs' local accesses (several,
	// sorted and joined with ", ", when they are in several); empty when
	// the trace names none, or for a finding without a local thread.
	LocalFunc string `json:"local_function,omitempty"`
	// RemoteFuncs are the functions of the bugs' remote accesses, sorted.
	RemoteFuncs []string `json:"remote_functions,omitempty"`
	// Patterns count the bugs and instances of each pattern (or kind of
	// finding), in pattern order.
	Patterns []PatternCount `json:"patterns"`
	// BugIDs are the ids of its bugs, in Members order.
	BugIDs    []string `json:"bugs"`
	Instances int      `json:"instances"` // of all its bugs
	// Suppressed counts its bugs that a suppression rule matched.
	Suppressed int `json:"suppressed,omitempty"`
	// Members are its bugs: first the first bug of each pattern, in
	// pattern order (so that the first few show every pattern), then the
	// others in the order they were given.
	Members []Bug `json:"-"`
}

// PatternCount is the number of bugs and instances of one pattern in a
// group.
type PatternCount struct {
	Pattern     string `json:"pattern"`
	PatternName string `json:"pattern_name"`
	Bugs        int    `json:"bugs"`
	Instances   int    `json:"instances"`
}

// Groups groups bugs by (analysis, variables, local function), in the
// order of each group's first bug in bs.
func Groups(bs []Bug) []Group {
	var out []Group
	index := map[string]int{}
	for _, b := range bs {
		id := GroupID(b.Analysis, b.Vars, b.LocalFunc())
		k, ok := index[id]
		if !ok {
			k = len(out)
			index[id] = k
			out = append(out, Group{ID: id, Analysis: b.Analysis, LocalFunc: b.LocalFunc()})
		}
		out[k].add(b)
	}
	for k := range out {
		out[k].finish()
	}
	return out
}

// add adds b to the group (Members in the order given; finish orders them).
func (g *Group) add(b Bug) {
	g.Members = append(g.Members, b)
	g.Instances += b.Count
	if b.Suppressed {
		g.Suppressed++
	}
	for _, v := range b.Vars {
		if !slices.Contains(g.Vars, v) {
			g.Vars = append(g.Vars, v)
		}
	}
	for _, l := range b.Locations {
		if l.Role == "remote" && l.Func != "" && !slices.Contains(g.RemoteFuncs, l.Func) {
			g.RemoteFuncs = append(g.RemoteFuncs, l.Func)
		}
	}
	for i := range g.Patterns {
		if p := &g.Patterns[i]; p.Pattern == b.Pattern {
			p.Bugs++
			p.Instances += b.Count
			return
		}
	}
	g.Patterns = append(g.Patterns, PatternCount{Pattern: b.Pattern, PatternName: b.PatternName, Bugs: 1, Instances: b.Count})
}

// finish sorts what add collected and puts the first bug of each pattern
// first.
func (g *Group) finish() {
	sort.Strings(g.RemoteFuncs)
	sort.SliceStable(g.Patterns, func(i, j int) bool { return patternLess(g.Patterns[i].Pattern, g.Patterns[j].Pattern) })
	first := make([]Bug, 0, len(g.Members))
	rest := make([]Bug, 0, len(g.Members))
	for _, p := range g.Patterns {
		i := slices.IndexFunc(g.Members, func(b Bug) bool { return b.Pattern == p.Pattern })
		first = append(first, g.Members[i])
	}
	for _, b := range g.Members {
		if !slices.ContainsFunc(first, func(f Bug) bool { return f.ID == b.ID }) {
			rest = append(rest, b)
		}
	}
	g.Members = append(first, rest...)
	g.BugIDs = make([]string, len(g.Members))
	for i, b := range g.Members {
		g.BugIDs[i] = b.ID
	}
}

// GroupID is the stable id of the group of the bugs of analysis on vars
// whose local accesses are in localFunc: "GR-" and a hash of the three,
// the variables sorted and without their generation suffix ("buf#2" is
// buf), which depends on how often the program reused an address.
func GroupID(analysis string, vars []string, localFunc string) string {
	names := make([]string, 0, len(vars))
	for _, v := range vars {
		if n := baseVar(v); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%d\n", analysis, len(names))
	for _, n := range names {
		fmt.Fprintf(h, "%s\n", n)
	}
	fmt.Fprintf(h, "%s\n", localFunc)
	return "GR-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// baseVar strips the generation suffix "#g" of a variable of a reused
// address (tracemodel names the g-th allocation "name#g").
func baseVar(v string) string {
	if i := strings.LastIndexByte(v, '#'); i > 0 && i < len(v)-1 && strings.Trim(v[i+1:], "0123456789") == "" {
		return v[:i]
	}
	return v
}

// LocalFunc is the function of b's local locations: several sorted and
// joined with ", ", "" when none is known.
func (b Bug) LocalFunc() string {
	var fs []string
	for _, l := range b.Locations {
		if l.Role == "local" && l.Func != "" && !slices.Contains(fs, l.Func) {
			fs = append(fs, l.Func)
		}
	}
	sort.Strings(fs)
	return strings.Join(fs, ", ")
}
