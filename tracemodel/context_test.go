package tracemodel

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestContextAt(t *testing.T) {
	trace := `1, 1, m.c-40, Create, 2
2, 2, m.c-30, Enter, worker
2, 3, m.c-31, Enter, handle_request
2, 4, m.c-10, Enter, can_admit
2, 5, m.c-11, Lock, conn_lock
2, 6, m.c-12, Read, nconns
2, 7, m.c-13, Unlock, conn_lock
2, 8, m.c-14, Exit, can_admit
2, 9, m.c-20, Enter, admit
2, 10, m.c-21, Lock, stats_lock
2, 11, m.c-22, Lock, conn_lock
2, 12, m.c-23, Write, nconns
2, 13, m.c-24, Unlock, conn_lock
2, 14, m.c-25, Unlock, stats_lock
1, 15, m.c-41, Read, nconns
`
	m, err := Parse(context.Background(), strings.NewReader(trace), "t.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line int
		want Context
	}{
		// The read in can_admit: conn_lock held, three frames.
		{6, Context{Locks: []string{"conn_lock"}, Stack: []string{"can_admit", "handle_request", "worker"}, Created: Loc{"m.c", 40}}},
		// The write in admit (can_admit returned): two locks, in order.
		{12, Context{Locks: []string{"stats_lock", "conn_lock"}, Stack: []string{"admit", "handle_request", "worker"}, Created: Loc{"m.c", 40}}},
		// The first thread: no lock, no frame, no creation site.
		{15, Context{}},
	}
	for _, tt := range tests {
		got, ok := m.ContextAt(tt.line)
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("line %d: %+v (%v), want %+v", tt.line, got, ok, tt.want)
		}
	}
	if _, ok := m.ContextAt(99); ok {
		t.Error("line 99: ok, want no event")
	}
}

func TestContextAllocated(t *testing.T) {
	trace := `1, 1, m.c-5, Alloc, *cfg
1, 2, m.c-6, Write, cfg->port
1, 3, m.c-7, Write, other
`
	m, err := Parse(context.Background(), strings.NewReader(trace), "t.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := m.ContextAt(2); c.Allocated != (Loc{"m.c", 5}) {
		t.Errorf("cfg->port allocated at %v, want m.c:5", c.Allocated)
	}
	if c, _ := m.ContextAt(3); c.Allocated != (Loc{}) {
		t.Errorf("other (a global) allocated at %v, want none", c.Allocated)
	}
}
