package tracemodel

import (
	"context"
	"strings"
	"testing"
)

// TestLibraryAttribution: an event in a file the trace names as library
// code is shown at the innermost call of the user's code that led to it,
// its own place kept; events of the user's code, and every event of a
// trace that names no library file, are shown as they are.
func TestLibraryAttribution(t *testing.T) {
	const body = `1, 1, app.cpp-10, Enter, Cache::insert
1, 2, app.cpp-12, Enter, std::map<int; int>::operator[]
1, 3, stl_map.h-500, Enter, std::_Rb_tree<int; int>::_M_insert
1, 4, stl_tree.h-900, Write, g_cache.map_._M_t._M_impl._M_node_count
1, 5, stl_tree.h-901, Read, node._M_left(new@new_allocator.h:137#1)
1, 6, stl_tree.h-901, Exit, std::_Rb_tree<int; int>::_M_insert
1, 7, stl_map.h-501, Exit, std::map<int; int>::operator[]
1, 8, app.cpp-13, Write, g_cache.size
1, 9, atomic_base.h-488, Read, g_cache.size
1, 10, app.cpp-13, Exit, Cache::insert
`
	type want struct {
		file    string
		line    int
		fn, lib string // lib: the library site's "file:line", "" none
	}
	for _, tt := range []struct {
		name   string
		header string
		wants  map[int]want // by trace line of the event (1-based, after the header)
	}{
		{"library", "# library: stl_map.h\n# library: stl_tree.h\n# library: new_allocator.h\n# library: atomic_base.h\n", map[int]want{
			4: {"app.cpp", 12, "Cache::insert", "stl_tree.h:900"},
			5: {"app.cpp", 12, "Cache::insert", "stl_tree.h:901"},
			8: {"app.cpp", 13, "Cache::insert", ""},
			// Library code inlined into the user's function, without
			// its call: left where it is, not put at the function's caller.
			9: {"atomic_base.h", 488, "Cache::insert", ""},
		}},
		{"no library lines", "", map[int]want{
			4: {"stl_tree.h", 900, "std::_Rb_tree<int; int>::_M_insert", ""},
			8: {"app.cpp", 13, "Cache::insert", ""},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse(context.Background(), strings.NewReader(tt.header+body), "t.csv", Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := strings.Count(tt.header, "\n")
			for line, w := range tt.wants {
				var e *Event
				for i := range m.Events {
					if int(m.Events[i].Line) == n+line {
						e = &m.Events[i]
					}
				}
				if e == nil {
					t.Fatalf("no event at line %d", n+line)
				}
				r := m.Ref(e)
				lib := ""
				if r.Library != nil {
					lib = r.Library.Loc().String()
				}
				if r.File != w.file || r.Line != w.line || r.Func != w.fn || lib != w.lib {
					t.Errorf("event %d: %s:%d in %q, library %q; want %s:%d in %q, library %q", line, r.File, r.Line, r.Func, lib, w.file, w.line, w.fn, w.lib)
				}
			}
			if tt.header == "" {
				if m.Containers != nil {
					t.Errorf("containers without library files: %v", m.Containers)
				}
				return
			}
			if got, want := m.Containers["node._M_left(new@new_allocator.h:137#1)"], "g_cache.map_ (std::map internals)"; got != want {
				t.Errorf("the node is in %q, want %q (all: %v)", got, want, m.Containers)
			}
		})
	}
}

func TestContainerOf(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"svc::g_cache.map_._M_h._M_buckets[2]", "svc::g_cache.map_"},
		{"table[3].list.__data.__lock", "table[3].list"},
		{"g->q._M_impl._M_start", "g->q"},
		{"svc::g_cache.mu_", ""},
		{"_Hash_node[2]._M_nxt(new@hashtable_policy.h:1000#1)", ""},
		{"__libc_single_threaded@GLIBC_2.32", ""},
	} {
		got, ok := containerOf(tt.name)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("containerOf(%q) = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}
