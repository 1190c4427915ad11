package intset

import (
	"slices"
	"testing"
)

func TestIntern(t *testing.T) {
	tab := NewTable()
	tests := []struct {
		in   []int32
		id   int32
		want []int32
	}{
		{nil, 0, nil},
		{[]int32{3, 1, 3}, 1, []int32{1, 3}},
		{[]int32{1, 3}, 1, []int32{1, 3}},
		{[]int32{13}, 2, []int32{13}}, // not "1,3,"
		{[]int32{1}, 3, []int32{1}},
	}
	for _, tt := range tests {
		if id := tab.Intern(slices.Clone(tt.in)); id != tt.id || !slices.Equal(tab.Set(id), tt.want) {
			t.Errorf("Intern(%v) = %d %v, want %d %v", tt.in, id, tab.Set(id), tt.id, tt.want)
		}
	}
}
