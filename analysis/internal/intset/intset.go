// Package intset interns sorted sets of int32 — the lock sets of the
// lockset-based analyses — so that the analyses store, compare and
// intersect them by id. It does not know what the numbers stand for, and
// it is not safe for concurrent use.
package intset

import (
	"slices"
	"strconv"
	"strings"
)

// Table interns sets; id 0 is the empty set.
type Table struct {
	sets  [][]int32
	index map[string]int32
}

// NewTable returns a table holding the empty set.
func NewTable() *Table {
	return &Table{sets: [][]int32{nil}, index: map[string]int32{"": 0}}
}

// Intern sorts and compacts xs in place and returns the id of its set.
func (t *Table) Intern(xs []int32) int32 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	var b strings.Builder
	for _, x := range xs {
		b.WriteString(strconv.Itoa(int(x)))
		b.WriteByte(',')
	}
	k := b.String()
	if id, ok := t.index[k]; ok {
		return id
	}
	id := int32(len(t.sets))
	t.sets = append(t.sets, slices.Clone(xs))
	t.index[k] = id
	return id
}

// Set returns the elements of set id, sorted; the caller must not modify
// them.
func (t *Table) Set(id int32) []int32 { return t.sets[id] }
