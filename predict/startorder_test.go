package predict

import (
	"slices"
	"testing"
)

// TestStartOrder checks the order Run starts its tasks in: every task once,
// the tasks of jobs variables at a time taken in turn, each variable's in
// plan order.
func TestStartOrder(t *testing.T) {
	task := func(v, v2 int) Task { return Task{Var: v, Var2: v2} }
	tasks := []Task{task(1, 0), task(1, 0), task(1, 0), task(2, 0), task(2, 0), task(1, 2), task(3, 0)}
	tests := []struct {
		jobs int
		want []int
	}{
		{1, []int{0, 1, 2, 3, 4, 5, 6}},
		{2, []int{0, 3, 1, 4, 2, 5, 6}},
		{3, []int{0, 3, 5, 1, 4, 6, 2}},
		{8, []int{0, 3, 5, 6, 1, 4, 2}},
	}
	for _, tt := range tests {
		if got := startOrder(tasks, tt.jobs); !slices.Equal(got, tt.want) {
			t.Errorf("startOrder(jobs %d) = %v, want %v", tt.jobs, got, tt.want)
		}
	}
}
