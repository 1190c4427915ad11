package reproduce

import (
	"reflect"
	"testing"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/tracemodel"
)

func TestObjectOf(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"count", "count"},
		{"count#2", "count"},
		{"apr_pool_t.ref(malloc@apr_pools.c:330#t4.3)", "malloc@apr_pools.c:330"},
		{"apr_pool_t.ref(malloc@apr_pools.c:330#t4.3)#2", "malloc@apr_pools.c:330"},
		{"cache_cache_t.current_size(malloc@cache_cache.c:101#2)", "malloc@cache_cache.c:101"},
		{"global_allocator->free[1]#67->first_avail#26[90]", "global_allocator"},
		{"malloc@mod_mem_cache.c:690#t5.3+75", "malloc@mod_mem_cache.c:690"},
		{"malloc@kv.c:12[3]", "malloc@kv.c:12"},
		{"mmap@mapped.c:43+8", "mmap@mapped.c:43"},
		// Another field or element of one block is the same object.
		{"apr_pool_t[1].sibling(malloc@apr_pools.c:330#t4.3)", "malloc@apr_pools.c:330"},
		{"item#5->count", "item"},
		{"stats.hits", "stats"},
		{"table[3]", "table"},
		{"tls:t2+8", "tls:t2+8"},
		{"0x7f1a4773502c", "0x7f1a4773502c"},
	} {
		if got := ObjectOf(tc.name); got != tc.want {
			t.Errorf("ObjectOf(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// rankCand is a candidate for RankRelaxed: bug id, instances, variable,
// threads.
func rankCand(id string, count int, v string, local, remote int) Candidate {
	return Candidate{
		Bug: bugs.Bug{ID: id, Pattern: "P3", Count: count, Vars: []string{v}},
		Instances: []bugs.Violation{{Var: v, Pattern: "P3",
			Local: tracemodel.ThreadRef{ID: local}, Remote: tracemodel.ThreadRef{ID: remote}}},
		Relaxed: true,
	}
}

func TestRankRelaxed(t *testing.T) {
	pool := func(id string, count int, gen string) Candidate {
		return rankCand(id, count, "apr_memnode_t.first_avail(malloc@apr_pools.c:330"+gen+")", 2, 3)
	}
	for _, tc := range []struct {
		name   string
		models [][]Candidate
		want   []string
	}{
		{
			name: "by instances within an object",
			models: [][]Candidate{{
				pool("a", 5, "#t2.1"), pool("b", 50, "#t3.4"), pool("c", 20, ""),
			}},
			want: []string{"b", "c", "a"},
		},
		{
			// The pool's generations are one object: the cache gets the
			// second slot, and the pool its second slot after it.
			name: "round-robin over objects",
			models: [][]Candidate{{
				pool("pool1", 1488, "#t2.1"), pool("pool2", 700, "#t3.4"), pool("pool3", 600, "#2"),
				rankCand("counter", 300, "stats.requests", 2, 3),
				rankCand("cache", 51, "cache_cache_t.current_size(malloc@cache_cache.c:101#2)", 4, 5),
				rankCand("cache2", 24, "cache_cache_t.current_size(malloc@cache_cache.c:101#3)", 4, 5),
			}},
			want: []string{"pool1", "counter", "cache", "pool2", "cache2", "pool3"},
		},
		{
			// The fields of one allocation site's blocks are one object:
			// another site's candidate comes before their second.
			name: "fields of one block together",
			models: [][]Candidate{{
				rankCand("first", 9, "apr_memnode_t.first_avail(malloc@apr_pools.c:330#t2.1)", 2, 3),
				rankCand("first2", 8, "apr_memnode_t.first_avail(malloc@apr_pools.c:330#t2.2)", 2, 3),
				rankCand("endp", 7, "apr_memnode_t.endp(malloc@apr_pools.c:330#t2.1)", 2, 3),
				rankCand("size", 1, "cache_cache_t.current_size(malloc@cache_cache.c:101#2)", 2, 3),
			}},
			want: []string{"first", "size", "first2", "endp"},
		},
		{
			// The first thread's candidates come after all the others,
			// round-robin among themselves too.
			name: "main thread last",
			models: [][]Candidate{{
				rankCand("main1", 100, "conf#2", 1, 2),
				rankCand("main2", 90, "conf#3", 2, 1),
				rankCand("x1", 10, "x", 2, 3),
				rankCand("x2", 9, "x", 3, 2),
				rankCand("main3", 80, "log", 1, 3),
			}},
			want: []string{"x1", "x2", "main1", "main3", "main2"},
		},
		{
			// The models take turns, the least relaxed first, each by
			// instances.
			name: "models in turn",
			models: [][]Candidate{
				{rankCand("d1", 5, "a", 2, 3), rankCand("d2", 50, "b", 2, 3)},
				{rankCand("r1", 500, "c", 2, 3)},
				{rankCand("b1", 1, "d", 2, 3), rankCand("b2", 2, "e", 2, 3), rankCand("b3", 3, "f", 2, 3)},
			},
			want: []string{"d2", "r1", "b3", "d1", "b2", "b1"},
		},
		{
			// An object's second candidate waits for every object's first,
			// whichever model they come from.
			name: "objects across models",
			models: [][]Candidate{
				{rankCand("d1", 50, "pool#2", 2, 3), rankCand("d2", 40, "pool#3", 2, 3)},
				{rankCand("r1", 500, "pool#4", 2, 3), rankCand("r2", 5, "cache", 2, 3)},
				{rankCand("b1", 9, "queue", 2, 3)},
			},
			want: []string{"d1", "b1", "r2", "r1", "d2"},
		},
		{
			// An atomic-set candidate's object is its set of objects.
			name: "sets",
			models: [][]Candidate{{
				{Bug: bugs.Bug{ID: "set1", Pattern: "M2", Count: 9}, Instances: []bugs.Violation{{Var: "len",
					Objects: []string{"len", "data#2"}, Local: tracemodel.ThreadRef{ID: 2}, Remote: tracemodel.ThreadRef{ID: 3}}}},
				{Bug: bugs.Bug{ID: "set2", Pattern: "M2", Count: 8}, Instances: []bugs.Violation{{Var: "data#3",
					Objects: []string{"data#3", "len"}, Local: tracemodel.ThreadRef{ID: 2}, Remote: tracemodel.ThreadRef{ID: 3}}}},
				rankCand("len", 7, "len", 2, 3),
				// No instance: the bug's variables.
				{Bug: bugs.Bug{ID: "bare", Pattern: "P1", Count: 1, Vars: []string{"len#4"}}},
			}},
			want: []string{"set1", "len", "set2", "bare"},
		},
		{name: "none", want: []string{}},
		{name: "empty models", models: [][]Candidate{nil, {}, nil}, want: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{}
			for _, c := range RankRelaxed(tc.models...) {
				got = append(got, c.Bug.ID)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("RankRelaxed = %v, want %v", got, tc.want)
			}
		})
	}
}
