package tracemodel

import (
	"bytes"
	"sort"
	"strings"
)

// Library attribution. A C++ program's shared data is mostly touched by
// the standard library's code inlined from its headers (hashtable.h,
// shared_ptr_base.h, gthr-default.h for a std::mutex): an event there is
// shown at the call of the user's code that led to it, the innermost frame
// of the user's code on the thread's call chain, and the library's own
// location is kept beside it (EventRef.Library). Which files are library
// code, the recorder says ("# library: FILE" comment lines: files it found
// under /usr or in a C++ standard library's include directory); a trace
// without those lines (a Pin trace, an older recording) is shown as it is.

// libraryPrefix starts the comment line naming a file of library code.
const libraryPrefix = "# library: "

// LibrarySite is where an event attributed to the user's code really was:
// a location in library code and the library function it is in.
type LibrarySite struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Func string `json:"func,omitempty"`
	// Calls is the library function the user's code called (the outermost
	// library frame), when it is not Func.
	Calls string `json:"calls,omitempty"`
}

// Loc returns the library location.
func (s *LibrarySite) Loc() Loc { return Loc{File: s.File, Line: s.Line} }

// userRun is a stretch of a thread's events, by position, inside one call
// of library code from the user's code: their user site.
type userRun struct {
	from, to int32 // positions, inclusive
	loc      int32 // the call's location (Locs) in the user's code
	fn       int32 // the user's function (object id); 0: unknown
	calls    int32 // the library function called (object id)
}

// libraryComment records a "# library: FILE" line.
func (b *builder) libraryComment(t []byte) bool {
	rest, ok := bytes.CutPrefix(t, []byte(libraryPrefix))
	if !ok {
		return false
	}
	if f := string(bytes.TrimSpace(rest)); f != "" {
		if b.m.Library == nil {
			b.m.Library = map[string]bool{}
		}
		b.m.Library[f] = true
	}
	return true
}

// attributeLibrary finds, for every event in library code, the user's call
// that led to it (Model.userRuns): one pass over the events, keeping each
// thread's call chain with the location of each call. Nothing is done
// when the trace names no library file.
func (m *Model) attributeLibrary() {
	lib := m.libraryLocs()
	if lib == nil {
		return
	}
	m.libLoc = lib
	stacks := make([]callStack, len(m.Threads))
	libFn := map[int32]bool{} // by function object: isLibraryFunc, asked once
	m.userRuns = make([][]userRun, len(m.Threads))
	cs := newContainers(m)
	for i := range m.Events {
		m.Pace(i)
		e := &m.Events[i]
		t := e.Thread - 1
		st := &stacks[t]
		switch e.Kind {
		case Enter:
			isLib, ok := libFn[e.Obj]
			if !ok {
				isLib = isLibraryFunc(m.Objects[e.Obj])
				libFn[e.Obj] = isLib
			}
			st.enter(e.Obj, e.Loc, isLib)
			continue
		case Exit:
			st.exit()
			continue
		}
		r, ok := st.userCall(e, lib)
		if !ok {
			if e.Kind == Read || e.Kind == Write {
				// Library code inlined here is at the user's line
				// (the recorder's inlined calls): its statement too.
				cs.access(t, userRun{loc: e.Loc, fn: e.Func}, e.Obj)
			}
			continue
		}
		if e.Kind == Read || e.Kind == Write {
			cs.access(t, r, e.Obj)
		}
		m.addUserRun(t, r)
	}
	m.Containers = cs.names()
}

// libraryLocs marks, by location index, the locations in the trace's
// library files; nil when there are none.
func (m *Model) libraryLocs() []bool {
	if len(m.Library) == 0 {
		return nil
	}
	lib := make([]bool, len(m.Locs))
	found := false
	for i, l := range m.Locs {
		if i > 0 && m.Library[l.File] {
			lib[i], found = true, true
		}
	}
	if !found {
		return nil
	}
	return lib
}

// callStack is a thread's call chain in the pass of attributeLibrary.
type callStack []callFrame

type callFrame struct {
	fn, call int32 // the function, and the location of its call
	// cross is the index of the first frame of the run of library frames
	// this one is in (the one the user's code called); -1: the user's.
	cross int32
}

// enter pushes a call of fn from location call. A frame is library code
// when its function is the library's (isLibraryFunc: the user's function
// a std::thread runs is called from library code, and is the user's).
func (st *callStack) enter(fn, call int32, isLib bool) {
	cross := int32(-1)
	if isLib {
		cross = int32(len(*st))
		if n := len(*st); n > 0 && (*st)[n-1].cross >= 0 {
			cross = (*st)[n-1].cross
		}
	}
	*st = append(*st, callFrame{fn: fn, call: call, cross: cross})
}

func (st *callStack) exit() {
	if n := len(*st); n > 0 {
		*st = (*st)[:n-1]
	}
}

// userCall returns the user's call that led to event e, if e is in
// library code (lib: library locations) called by the user's code. Not
// for library code inlined into the user's function without an inlined
// call in the debug information (it stays where it is), nor when no
// call of the user's led there.
func (st callStack) userCall(e *Event, lib []bool) (userRun, bool) {
	if !lib[e.Loc] || len(st) == 0 {
		return userRun{}, false
	}
	k := st[len(st)-1].cross
	if k <= 0 || st[k].call == 0 || lib[st[k].call] {
		return userRun{}, false
	}
	return userRun{from: e.Pos, to: e.Pos, loc: st[k].call, fn: st[k-1].fn, calls: st[k].fn}, true
}

// addUserRun adds event r.from of thread t to its runs, extending the
// last one when it is the same call.
func (m *Model) addUserRun(t int32, r userRun) {
	runs := m.userRuns[t]
	if n := len(runs); n > 0 {
		if last := &runs[n-1]; last.loc == r.loc && last.fn == r.fn && last.calls == r.calls {
			last.to = r.to
			return
		}
	}
	m.userRuns[t] = append(runs, r)
}

// containers names the library's internal variables after the user's
// variable whose internals they are: the variables that the calls of one
// statement of the user's code (one call site: `map_[k] = e` calls
// operator[] and shared_ptr's operator=) touch inside library code are
// that of the first variable of the user's that the statement's library
// code touched (svc::g_cache.map_._M_h._M_buckets: svc::g_cache.map_, an
// std::unordered_map), by the vote of every statement that touched them.
type containers struct {
	m     *Model
	cur   []statement // per thread - 1
	votes map[int32]map[string]int
}

// statement is the library code run by one statement of the user's code.
type statement struct {
	loc, fn   int32
	container string // "" : not known yet
	vars      []int32
}

func newContainers(m *Model) *containers {
	return &containers{m: m, cur: make([]statement, len(m.Threads)), votes: map[int32]map[string]int{}}
}

// access records thread t's access to variable v in library code called
// by the user's call r.
func (cs *containers) access(t int32, r userRun, v int32) {
	st := &cs.cur[t]
	if st.loc != r.loc || st.fn != r.fn {
		cs.end(st)
		*st = statement{loc: r.loc, fn: r.fn}
	}
	name := cs.m.Vars[v].Name
	if st.container == "" {
		if c, ok := containerOf(name); ok {
			kind := "library"
			if r.calls != 0 {
				kind = libraryType(cs.m.Objects[r.calls])
			}
			st.container = c + " (" + kind + " internals)"
		}
	}
	if len(st.vars) < 64 {
		st.vars = append(st.vars, v)
	}
	if st.container != "" {
		cs.end(st)
	}
}

// end counts the statement's votes.
func (cs *containers) end(st *statement) {
	if st.container == "" {
		return
	}
	for _, v := range st.vars {
		vs := cs.votes[v]
		if vs == nil {
			vs = map[string]int{}
			cs.votes[v] = vs
		}
		vs[st.container]++
	}
	st.vars = st.vars[:0]
}

// names returns the container of each variable that has one, by name.
func (cs *containers) names() map[string]string {
	for t := range cs.cur {
		cs.end(&cs.cur[t])
	}
	var out map[string]string
	for v, vs := range cs.votes {
		best, n := "", 0
		for c, k := range vs {
			if k > n || k == n && c < best {
				best, n = c, k
			}
		}
		name := cs.m.Vars[v].Name
		if c, ok := containerOf(name); ok {
			if c != strings.SplitN(best, " (", 2)[0] {
				best = c + " (library internals)"
			}
		} else if !isHeapBlockName(name) {
			continue // a variable of the user's, or a library's global
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = best
	}
	return out
}

// containerOf returns the user's variable of which name is the internals,
// the name cut before its first member private to a library (_M_h,
// __data: a reserved identifier): svc::g_cache.map_._M_h._M_buckets is
// in svc::g_cache.map_. ok is false for a name of the library's own (a
// heap block named by its type, _Hash_node[2]._M_nxt(new@…)) and for a
// name with no private member.
func containerOf(name string) (string, bool) {
	if name == "" || name[0] == '_' || strings.ContainsRune(name, '(') {
		return "", false
	}
	for i := 1; i < len(name); i++ {
		if name[i-1] != '.' && !(name[i-1] == '>' && i >= 2 && name[i-2] == '-') {
			continue
		}
		if rest := name[i:]; strings.HasPrefix(rest, "_M_") || strings.HasPrefix(rest, "__") || len(rest) > 1 && rest[0] == '_' && rest[1] >= 'A' && rest[1] <= 'Z' {
			cut := i - 1
			if name[i-1] == '>' {
				cut = i - 2
			}
			return name[:cut], cut > 0
		}
	}
	return "", false
}

// isHeapBlockName reports whether a variable is in a heap block the
// recorder named by its type and allocation site ("_Hash_node[2]._M_nxt
// (new@hashtable_policy.h:1000#t1.2)", "new@…#1+8").
func isHeapBlockName(name string) bool {
	i := strings.IndexByte(name, '@')
	return i > 0 && (strings.HasPrefix(name, "new@") || strings.HasPrefix(name, "malloc@") || strings.ContainsRune(name[:i], '('))
}

// libraryType is the class of a library function, its template
// arguments left out: std::unordered_map<…>::find is std::unordered_map.
func libraryType(fn string) string {
	s := ElideTemplateArgs(fn, "")
	if i := strings.LastIndex(s, "::"); i > 0 {
		s = s[:i]
	}
	return s
}

// ElideTemplateArgs replaces each outermost template argument list of a
// C++ name, brackets included, by with: "std::map<int, int>::find" is
// "std::map<…>::find" with "<…>", "std::map::find" with "".
func ElideTemplateArgs(name, with string) string {
	var b strings.Builder
	depth := 0
	for _, r := range name {
		switch {
		case r == '<':
			if depth == 0 {
				b.WriteString(with)
			}
			depth++
		case r == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// userSite returns the user's call that led to event e in library code.
func (m *Model) userSite(e *Event) (userRun, bool) {
	if int(e.Loc) >= len(m.libLoc) || !m.libLoc[e.Loc] || e.Kind == Enter || e.Kind == Exit {
		return userRun{}, false
	}
	runs := m.userRuns[e.Thread-1]
	j := sort.Search(len(runs), func(j int) bool { return runs[j].to >= e.Pos })
	if j == len(runs) || runs[j].from > e.Pos {
		return userRun{}, false
	}
	return runs[j], true
}

// isLibraryFunc reports whether a function is a C++ standard library's
// (libstdc++, libc++: std::, __gnu_cxx::, std::__1::, the ABI's), a
// reserved name (__gthread_mutex_lock), or code known only by its module
// and offset (libstdc++.so.6+0xd4490, a stripped library's).
func isLibraryFunc(name string) bool {
	for _, p := range []string{"std::", "__gnu_cxx::", "__cxxabiv1::", "__"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasPrefix(name, "0x") || strings.Contains(name, ".so") && strings.Contains(name, "+0x")
}

// isLibraryLoc reports whether location loc (Locs) is library code or,
// in a trace that names library files, unknown (code without debug
// information: a shared library's).
func (m *Model) isLibraryLoc(loc int32) bool {
	return loc == 0 || int(loc) < len(m.libLoc) && m.libLoc[loc]
}

// IsLibrary reports whether location l is in library code.
func (m *Model) IsLibrary(l Loc) bool { return m.Library[l.File] }

// attribute rewrites r, the reference of event e, to the user's call that
// led to it when e is in library code, keeping e's own place in
// r.Library.
func (m *Model) attribute(e *Event, r *EventRef) {
	u, ok := m.userSite(e)
	if !ok {
		return
	}
	lib := &LibrarySite{File: r.File, Line: r.Line, Func: r.Func}
	if u.calls != 0 && m.Objects[u.calls] != r.Func {
		lib.Calls = m.Objects[u.calls]
	}
	r.Library = lib
	l := m.Locs[u.loc]
	r.File, r.Line, r.Func, r.Source = l.File, l.Line, "", m.sourceOf(u.loc)
	if u.fn != 0 {
		r.Func = m.Objects[u.fn]
	}
}

// sourceOf returns the source text of location loc (Locs), or "".
func (m *Model) sourceOf(loc int32) string {
	switch {
	case int(loc) < len(m.locSource):
		return m.locSource[loc]
	case m.Sources != nil:
		return m.Sources[m.Locs[loc]]
	}
	return ""
}

// PlainName returns a C++ name as written: the recorder writes the commas
// of template arguments as ';' (a trace's fields are separated by
// commas), and a demangled name has no ';' of its own.
func PlainName(s string) string {
	if !strings.Contains(s, ";") || !strings.ContainsAny(s, "<(") {
		return s
	}
	return strings.ReplaceAll(s, "; ", ", ")
}
