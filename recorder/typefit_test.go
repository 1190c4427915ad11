package recorder

import (
	"fmt"
	"strings"
	"testing"
)

// TestTypeFitStale records a block that a stale list link of another
// type points to (a freed struct entry's address reused for a struct obj
// of the same size; issue 38: Apache 2.0.48's cache_object_t blocks typed
// as the mem_cache_object_t freed there). The link's type does not fit
// the accesses, the type the accessing code voted for fits them all: the
// block is named as a struct obj, every field apart, and the report has
// the real lost update on refcount only.
func TestTypeFitStale(t *testing.T) {
	const src = "testdata/typefit/stale.c"
	bin := mcpredict(t)
	mk := markers(t, src)
	prog := build(t, src)
	trace, _ := record(t, prog)
	evs := parseTrace(t, trace)
	site := fmt.Sprintf("malloc@stale.c:%d", mk["alloc"])
	for _, tc := range []struct {
		marker string
		action string
		want   string
	}{
		{"refcount", "Write", "obj.refcount(" + site + ")"},
		{"complete", "Write", "obj.complete(" + site + ")"},
		{"cleanup", "Write", "obj.cleanup(" + site + ")"},
	} {
		es := find(evs, tc.action, "", mk[tc.marker])
		if len(es) == 0 {
			t.Errorf("@%s: no %s at line %d", tc.marker, tc.action, mk[tc.marker])
			continue
		}
		for _, e := range es {
			if e.objs[0] != tc.want {
				t.Errorf("@%s: %v, want %s", tc.marker, e, tc.want)
			}
		}
	}
	for _, e := range evs {
		if e.action != "Read" && e.action != "Write" {
			continue
		}
		for _, o := range e.objs {
			if strings.Contains(o, site) && !strings.HasPrefix(o, "obj.") {
				t.Errorf("%v: a field of the obj not named as one", e)
			}
		}
	}
	ids := bugIDs(t, bin, trace)
	if len(ids) == 0 {
		t.Errorf("no bug on obj.refcount (the increments race)")
	}
	for _, id := range ids {
		if vars := strings.Fields(id)[2]; vars != "obj.refcount("+site+")" {
			t.Errorf("bug %s: not on refcount alone", id)
		}
	}
}
