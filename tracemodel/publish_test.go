package tracemodel

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPublications checks the publication sets of the traces of
// testdata/publish: a pointer and a field of its target written in one
// critical section, the pointer first, and read without the lock by
// another thread, written as a struct's field, an int, a table slot, with
// one lock more, a fill loop, an index; and none where the reader takes
// the lock, the object is filled first, the reader reads the field under
// the lock or in another region, the writer takes no lock, or only the
// writer reads without it.
func TestPublications(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string // the publication sets, as "x+y"
	}{
		{"field.csv", []string{"g+g->value"}},
		{"int.csv", []string{"g+g[0]"}},
		{"slot.csv", []string{"tab[1]+tab[1]->hits"}},
		{"nested.csv", []string{"g+g->value"}},
		{"loop.csv", []string{"buf+buf[2]"}},
		{"index.csv", []string{"n+items[2]"}},
		{"fields.csv", []string{"g+g->a", "g+g->c"}},
		{"locked_read.csv", nil},
		{"filled_first.csv", nil},
		{"field_locked.csv", nil},
		{"rdlock.csv", nil},
		{"no_lock.csv", nil},
		{"split_region.csv", nil},
		{"one_thread.csv", nil},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, err := Open(context.Background(), filepath.Join("testdata", "publish", c.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			sets, err := m.AtomicSets(m.SharedVars(), SetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sets {
				if s.Published {
					got = append(got, s.Names[0]+"+"+s.Names[1])
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("publication sets %q, want %q (all sets: %v)", got, c.want, setNames(sets))
			}
			writer := m.ThreadByHandle("1")
			for _, s := range sets {
				if s.Published && !s.CoAccess(writer, Write, Write) {
					t.Errorf("%s+%s: the writer is not a local thread of both writes", s.Names[0], s.Names[1])
				}
			}
			none, err := m.AtomicSets(m.SharedVars(), SetOptions{MaxPartners: -1})
			if err != nil {
				t.Fatal(err)
			}
			if len(none) != 0 {
				t.Errorf("no inferred sets asked, got %v", setNames(none))
			}
		})
	}
}

func setNames(sets []AtomicSet) string {
	var out []string
	for _, s := range sets {
		out = append(out, s.Names[0]+"+"+s.Names[1])
	}
	return strings.Join(out, " ")
}

// TestTargetPointer checks the names of a heap block's variables that
// name the pointer they were reached through.
func TestTargetPointer(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"g->value", "g"},
		{"g#2->value", "g"},
		{"reg.conf->level", "reg.conf"},
		{"tab[1]->hits", "tab[1]"},
		{"g[0]", "g"},
		{"g#3[2]", "g"},
		{"quota[1][0]", "quota[1]"},
		{"buf->data[3]", "buf"},
		{"g", ""},
		{"g[i]", ""},
		{"g[]", ""},
		{"node.n(calloc@l.c:50#4)", ""},
		{"tab[2](calloc@l.c:9)", ""},
	} {
		if got := targetPointer(c.name); got != c.want {
			t.Errorf("targetPointer(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
