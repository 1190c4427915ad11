package recorder

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// lineRow is one row of a DWARF line table.
type lineRow struct {
	addr uint64
	file string
	line int
	end  bool // end of a sequence: no code from here
}

// dwarfScope is a DIE enclosing others, while walking the DWARF tree.
type dwarfScope struct {
	name string // "" for unnamed scopes (lexical blocks, anonymous types)
	fn   bool   // a function: its name qualifies static locals, not functions
	// frame is the concrete function whose stack frame the locals in
	// this scope live in; inl the names of the functions inlined into it
	// on the way here ("helper::").
	frame *frameFunc
	inl   string
	// inlined: the scope is in code inlined into its function (an
	// inlined subroutine or a scope within one); sub: in a function.
	inlined, sub bool
	// agg is the offset of a struct, class or union DIE, 0 for other
	// scopes.
	agg dwarf.Offset
}

// inlineCall is the code of a function inlined at a line of the
// program's own source: a std::atomic's load, a std::lock_guard's
// constructor. Code of a library's header inlined there is located at
// the innermost such call (modSyms.location).
type inlineCall struct {
	lo, hi uint64
	file   string // as the trace names files (lineRow.file)
	line   int
}

// frameFunc is a function's code range and its locals that live at fixed
// offsets from the frame's CFA (DW_OP_fbreg with DW_OP_call_frame_cfa as
// the frame base, as gcc emits on x86-64, or the frame pointer %rbp, as
// clang does).
type frameFunc struct {
	lo, hi uint64
	name   string
	// base is the frame base minus the CFA: 0 for the CFA, -16 for
	// %rbp (the return address and the saved %rbp lie between them).
	base   int64
	locals []localVar
	// ptrs are the struct types its pointer variables and parameters
	// point to (wherever they live, inlined functions' too): the types
	// through which its code may access a heap block (typeVotes).
	ptrs []dwarf.Type
}

// localVar is a local variable or parameter in the frame.
type localVar struct {
	name string // "ctx", or "helper::buf" for one of an inlined function
	off  int64  // its address minus the CFA
	size int64
	typ  dwarf.Type
}

// funcSym is a function's link-time address range.
type funcSym struct {
	lo, hi uint64
	name   string
}

// varSym is a global (or static local) variable at a link-time address.
type varSym struct {
	lo, size uint64
	name     string
	typ      dwarf.Type // nil when the module has no DWARF for it
}

// modSyms is what one module's ELF and DWARF say about its addresses.
// Addresses in it are link-time addresses.
type modSyms struct {
	lines []lineRow
	// paths maps a file as the trace names it (a base name, or the DWARF
	// path with -full-paths) to the path of its source, to read its lines.
	paths  map[string]string
	funcs  []funcSym
	vars   []varSym
	frames []*frameFunc // sorted by lo
	// inlines are the calls of the program's own code inlined from
	// elsewhere, sorted by lo (an enclosing one first): nested or apart.
	inlines []inlineCall
	// cuFiles are the current compile unit's line-table files, named as
	// the trace names them, and their paths (readDWARF).
	cuFiles, cuPaths []string
	err              error // why the module could not be read (reported once)
}

// loadModSyms reads the line table, functions and variables of an ELF
// file. A file without DWARF still gives its ELF symbols.
func loadModSyms(path string, fullPaths bool) *modSyms {
	ms := &modSyms{}
	f, err := elf.Open(path)
	if err != nil {
		ms.err = err
		return ms
	}
	defer f.Close()

	linkage := map[string]string{} // C++ linkage name -> qualified name
	if d, err := f.DWARF(); err == nil {
		var addrs []byte // DWARF 5's address table, for DW_OP_addrx
		if s := f.Section(".debug_addr"); s != nil {
			addrs, _ = s.Data()
		}
		if err := ms.readDWARF(d, addrs, fullPaths, linkage); err != nil {
			ms.err = fmt.Errorf("%s: DWARF: %w", path, err)
		}
	}
	ms.readELFSymbols(f, linkage)

	sort.SliceStable(ms.lines, func(i, j int) bool {
		a, b := ms.lines[i], ms.lines[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		// A sequence ending where another begins: the beginning wins.
		return a.end && !b.end
	})
	sort.Slice(ms.funcs, func(i, j int) bool { return ms.funcs[i].lo < ms.funcs[j].lo })
	sort.Slice(ms.frames, func(i, j int) bool { return ms.frames[i].lo < ms.frames[j].lo })
	sort.Slice(ms.inlines, func(i, j int) bool {
		a, b := ms.inlines[i], ms.inlines[j]
		if a.lo != b.lo {
			return a.lo < b.lo
		}
		return a.hi > b.hi
	})
	sort.SliceStable(ms.vars, func(i, j int) bool { return ms.vars[i].lo < ms.vars[j].lo })
	return ms
}

// readDWARF collects line rows, global variables with their types, and the
// qualified names of C++ functions. addrs is the .debug_addr section, for
// the addresses of DWARF 5 (clang's globals are DW_OP_addrx).
func (ms *modSyms) readDWARF(d *dwarf.Data, addrs []byte, fullPaths bool, linkage map[string]string) error {
	r := d.Reader()
	var addrBase int64 = -1 // the compile unit's DW_AT_addr_base
	// stack holds the enclosing DIEs that have children (namespaces,
	// classes, functions, lexical blocks …); name is "" for the unnamed.
	var stack []dwarfScope
	seen := map[string]bool{} // variables already collected, by name@addr
	// decls are the scopes (svc, Cache) of the variable declarations
	// seen so far: a definition outside its namespace or class (gcc's
	// C++ globals and static members) is named after its declaration's.
	decls := map[dwarf.Offset][]string{}
	// statics are the static data members of each struct type, by its
	// offset: members to debug/dwarf, at offset 0 (clang's DWARF 5, any
	// DWARF 4), where they would hide the first field.
	statics := map[dwarf.Offset][]string{}
	origins := map[dwarf.Offset]*dwarf.Entry{}
	origin := func(e *dwarf.Entry) *dwarf.Entry {
		for i := 0; i < 4; i++ {
			off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			if !ok {
				off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
			}
			if !ok {
				return e
			}
			o, ok := origins[off]
			if !ok {
				r := d.Reader()
				r.Seek(off)
				o, _ = r.Next()
				origins[off] = o
			}
			if o == nil {
				return e
			}
			e = o
		}
		return e
	}
	named := func(e *dwarf.Entry) string {
		n, _ := e.Val(dwarf.AttrName).(string)
		if n == "" {
			n, _ = origin(e).Val(dwarf.AttrName).(string)
		}
		return n
	}
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			dropStatics(d, statics)
			return nil
		}
		if e.Tag == 0 {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		switch e.Tag {
		case dwarf.TagCompileUnit:
			stack = stack[:0]
			addrBase = -1
			if b, ok := e.Val(dwarf.AttrAddrBase).(int64); ok {
				addrBase = b
			}
			if err := ms.readLines(d, e, fullPaths); err != nil {
				return err
			}
		case dwarf.TagVariable, dwarf.TagFormalParameter:
			if e.Tag == dwarf.TagVariable {
				if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl {
					decls[e.Offset] = scopeNames(stack)
				}
				ms.addVar(d, e, stack, seen, decls, addrs, addrBase)
			}
			if len(stack) > 0 && stack[len(stack)-1].frame != nil {
				sc := stack[len(stack)-1]
				addLocal(d, e, origin(e), named(e), sc)
				addPointee(d, e, origin(e), sc.frame)
			}
		case dwarf.TagMember:
			decl, _ := e.Val(dwarf.AttrDeclaration).(bool)
			ext, _ := e.Val(dwarf.AttrExternal).(bool)
			if len(stack) > 0 && stack[len(stack)-1].agg != 0 && (decl || ext) && name != "" {
				agg := stack[len(stack)-1].agg
				statics[agg] = append(statics[agg], name)
			}
		case dwarf.TagInlinedSubroutine:
			if len(stack) > 0 && stack[len(stack)-1].sub {
				ms.addInline(d, e)
			}
		case dwarf.TagSubprogram:
			if ln, ok := e.Val(dwarf.AttrLinkageName).(string); ok && name != "" {
				var q []string
				for _, s := range stack {
					if s.name != "" && !s.fn {
						q = append(q, s.name)
					}
				}
				linkage[ln] = strings.Join(append(q, name), "::")
			}
		}
		if e.Children {
			isFn := e.Tag == dwarf.TagSubprogram
			n := ""
			var agg dwarf.Offset
			switch e.Tag {
			case dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType:
				agg = e.Offset
				n = name
			case dwarf.TagNamespace, dwarf.TagSubprogram:
				n = name
			}
			sc := dwarfScope{name: n, fn: isFn, agg: agg}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				sc.frame, sc.inl, sc.inlined, sc.sub = p.frame, p.inl, p.inlined, p.sub
			}
			switch e.Tag {
			case dwarf.TagSubprogram:
				sc.frame, sc.inl, sc.inlined, sc.sub = nil, "", false, true
				if f := newFrameFunc(d, e, named(e)); f != nil {
					ms.frames = append(ms.frames, f)
					sc.frame = f
				}
				if sc.name == "" {
					sc.name = named(e)
				}
			case dwarf.TagInlinedSubroutine:
				sc.inlined = true
				if sc.frame != nil {
					sc.inl += named(e) + "::"
				}
			}
			stack = append(stack, sc)
		}
	}
}

// dropStatics removes the static data members from the fields of the
// struct types that debug/dwarf decoded (and caches: every later Type of
// the offset has the same fields).
func dropStatics(d *dwarf.Data, statics map[dwarf.Offset][]string) {
	for off, names := range statics {
		t, err := d.Type(off)
		if err != nil {
			continue
		}
		st, ok := t.(*dwarf.StructType)
		if !ok {
			continue
		}
		fields := st.Field[:0]
		for _, f := range st.Field {
			if !slices.Contains(names, f.Name) {
				fields = append(fields, f)
			}
		}
		st.Field = fields
	}
}

func (ms *modSyms) readLines(d *dwarf.Data, cu *dwarf.Entry, fullPaths bool) error {
	ms.cuFiles, ms.cuPaths = ms.cuFiles[:0], ms.cuPaths[:0]
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return err
	}
	names := map[*dwarf.LineFile]string{}
	compDir, _ := cu.Val(dwarf.AttrCompDir).(string)
	if ms.paths == nil {
		ms.paths = map[string]string{}
	}
	for _, lf := range lr.Files() {
		n, full := "", ""
		if lf != nil {
			n, full = lf.Name, lf.Name
			if !filepath.IsAbs(full) && compDir != "" {
				full = filepath.Join(compDir, full)
			}
			if !fullPaths {
				n = filepath.Base(n)
			}
		}
		ms.cuFiles, ms.cuPaths = append(ms.cuFiles, n), append(ms.cuPaths, full)
	}
	var le dwarf.LineEntry
	for {
		if err := lr.Next(&le); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		file := "?"
		if le.File != nil {
			n, ok := names[le.File]
			if !ok {
				n = le.File.Name
				full := n
				if !filepath.IsAbs(full) && compDir != "" {
					full = filepath.Join(compDir, full)
				}
				if !fullPaths {
					n = filepath.Base(n)
				}
				names[le.File] = n
				if _, ok := ms.paths[n]; !ok {
					ms.paths[n] = full
				}
			}
			file = n
		}
		ms.lines = append(ms.lines, lineRow{addr: le.Address, file: file, line: le.Line, end: le.EndSequence})
	}
}

// scopeNames are the names of the named scopes on the stack.
func scopeNames(stack []dwarfScope) []string {
	var scopes []string
	for _, s := range stack {
		if s.name != "" {
			scopes = append(scopes, s.name)
		}
	}
	return scopes
}

// addInline records an inlined subroutine of the program's own function,
// if its call is in a file of the program's own (not a library's).
func (ms *modSyms) addInline(d *dwarf.Data, e *dwarf.Entry) {
	fi, ok := e.Val(dwarf.AttrCallFile).(int64)
	line, ok2 := e.Val(dwarf.AttrCallLine).(int64)
	if !ok || !ok2 || line <= 0 || fi < 0 || int(fi) >= len(ms.cuFiles) || ms.cuFiles[fi] == "" || isLibraryPath(ms.cuPaths[fi]) {
		return
	}
	rs, err := d.Ranges(e)
	if err != nil {
		return
	}
	for _, r := range rs {
		if r[1] > r[0] {
			ms.inlines = append(ms.inlines, inlineCall{lo: r[0], hi: r[1], file: ms.cuFiles[fi], line: int(line)})
		}
	}
}

// inlineAt returns the innermost inlined call whose code pc is in: of
// the ranges that begin at or before pc, the latest that holds it (the
// ranges nest), looking back over at most inlineScan of them.
func (ms *modSyms) inlineAt(pc uint64) (inlineCall, bool) {
	i := sort.Search(len(ms.inlines), func(i int) bool { return ms.inlines[i].lo > pc }) - 1
	for j := i; j >= 0 && j > i-inlineScan; j-- {
		if pc < ms.inlines[j].hi {
			return ms.inlines[j], true
		}
	}
	return inlineCall{}, false
}

// inlineScan bounds inlineAt's look back.
const inlineScan = 256

// addVar records a variable DIE with a fixed address: DW_OP_addr, or
// DW_OP_addrx, an index into addrs from the compile unit's addrBase. A
// definition of a declaration (DW_AT_specification) takes the
// declaration's name, type and scopes (decls), or, for a declaration not
// seen yet, its demangled linkage name.
func (ms *modSyms) addVar(d *dwarf.Data, e *dwarf.Entry, stack []dwarfScope, seen map[string]bool,
	decls map[dwarf.Offset][]string, addrs []byte, addrBase int64) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte)
	if !ok {
		return
	}
	addr, ok := fixedAddr(loc, addrs, addrBase)
	if !ok {
		return
	}
	name, _ := e.Val(dwarf.AttrName).(string)
	typOff, hasType := e.Val(dwarf.AttrType).(dwarf.Offset)
	scopes := scopeNames(stack)
	if spec, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
		// A C++ static member or a definition separate from its
		// declaration: the name and type are on the declaration.
		r := d.Reader()
		r.Seek(spec)
		if se, err := r.Next(); err == nil && se != nil {
			if name == "" {
				name, _ = se.Val(dwarf.AttrName).(string)
			}
			if !hasType {
				typOff, hasType = se.Val(dwarf.AttrType).(dwarf.Offset)
			}
			if sc, ok := decls[spec]; ok {
				scopes = sc
			} else if ln, ok := se.Val(dwarf.AttrLinkageName).(string); ok && name != "" {
				if q := demangled(ln); q != ln {
					name, scopes = q, nil
				}
			}
		}
	}
	if name == "" {
		return
	}
	// Static locals are named after their function, func::var.
	if len(scopes) > 0 {
		name = strings.Join(append(scopes, name), "::")
	}
	key := fmt.Sprintf("%s@%x", name, addr)
	if seen[key] {
		return
	}
	seen[key] = true
	v := varSym{lo: addr, name: name}
	if hasType {
		if t, err := d.Type(typOff); err == nil {
			v.typ = t
			if s := t.Size(); s > 0 {
				v.size = uint64(s)
			}
		}
	}
	ms.vars = append(ms.vars, v)
}

// fixedAddr returns the address of a location expression that is one
// fixed address: DW_OP_addr A, or DW_OP_addrx I (the I-th address of the
// compile unit's part of .debug_addr, at addrBase).
func fixedAddr(loc, addrs []byte, addrBase int64) (uint64, bool) {
	switch {
	case len(loc) == 9 && loc[0] == 0x03: // DW_OP_addr <8 bytes>
		return binary.LittleEndian.Uint64(loc[1:]), true
	case len(loc) >= 2 && loc[0] == 0xa1 && addrBase >= 0: // DW_OP_addrx uleb128
		idx, n := uleb128(loc[1:])
		if n != len(loc)-1 {
			return 0, false
		}
		off := uint64(addrBase) + idx*8
		if idx >= 1<<32 || off+8 > uint64(len(addrs)) {
			return 0, false
		}
		return binary.LittleEndian.Uint64(addrs[off:]), true
	}
	return 0, false
}

// uleb128 decodes an unsigned LEB128 number and returns it and its
// length (0 if it is cut short or too long).
func uleb128(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		if i >= 10 {
			break
		}
		v |= uint64(c&0x7f) << (7 * uint(i))
		if c&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// newFrameFunc returns the frame of a concrete function (one with code)
// whose frame base is the CFA (gcc) or the frame pointer (clang, which
// mcpredict cc makes keep it), or nil.
func newFrameFunc(d *dwarf.Data, e *dwarf.Entry, name string) *frameFunc {
	fb, ok := e.Val(dwarf.AttrFrameBase).([]byte)
	if !ok || len(fb) != 1 {
		return nil
	}
	var base int64
	switch fb[0] {
	case 0x9c: // DW_OP_call_frame_cfa
	case 0x56: // DW_OP_reg6, %rbp: the CFA is 16 bytes above it
		base = -16
	default:
		return nil
	}
	rs, err := d.Ranges(e)
	if err != nil || len(rs) == 0 || name == "" {
		return nil
	}
	lo, hi := rs[0][0], rs[0][1]
	for _, r := range rs[1:] {
		lo, hi = min(lo, r[0]), max(hi, r[1])
	}
	return &frameFunc{lo: lo, hi: hi, name: name, base: base}
}

// addLocal adds a local variable or parameter at a fixed offset from the
// frame base (DW_OP_fbreg N) to the scope's frame. origin is the DIE with
// its name and type (itself, or its abstract origin).
func addLocal(d *dwarf.Data, e, origin *dwarf.Entry, name string, sc dwarfScope) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte)
	if !ok || len(loc) < 2 || loc[0] != 0x91 || name == "" { // DW_OP_fbreg sleb128
		return
	}
	off, n := sleb128(loc[1:])
	if n != len(loc)-1 {
		return // an expression beyond fbreg (a piece, a deref)
	}
	typOff, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		typOff, ok = origin.Val(dwarf.AttrType).(dwarf.Offset)
	}
	v := localVar{name: sc.inl + name, off: off + sc.frame.base}
	if ok {
		if t, err := d.Type(typOff); err == nil {
			v.typ = t
			v.size = typeSize(t)
		}
	}
	if v.size <= 0 {
		v.size = 1
	}
	sc.frame.locals = append(sc.frame.locals, v)
}

// addPointee adds to f the struct type a pointer variable or parameter
// points to, once.
func addPointee(d *dwarf.Data, e, origin *dwarf.Entry, f *frameFunc) {
	typOff, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		typOff, ok = origin.Val(dwarf.AttrType).(dwarf.Offset)
	}
	if !ok {
		return
	}
	t, err := d.Type(typOff)
	if err != nil {
		return
	}
	elem, ok := pointee(t)
	if !ok || structName(elem) == "" {
		return
	}
	for _, p := range f.ptrs {
		if sameType(p, elem) {
			return
		}
	}
	f.ptrs = append(f.ptrs, elem)
}

// sleb128 decodes a signed LEB128 number and returns it and its length.
func sleb128(b []byte) (int64, int) {
	var v int64
	var shift uint
	for i, c := range b {
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
		if shift >= 64 {
			break
		}
	}
	return 0, 0
}

// frame returns the function whose code holds link-time pc, if its frame
// is described.
func (ms *modSyms) frame(pc uint64) *frameFunc {
	i := sort.Search(len(ms.frames), func(i int) bool { return ms.frames[i].lo > pc }) - 1
	for j := i; j >= 0 && j > i-8; j-- {
		if f := ms.frames[j]; pc >= f.lo && pc < f.hi {
			return f
		}
	}
	return nil
}

// local returns the local of the frame at offset off from the CFA.
func (f *frameFunc) local(off int64) (*localVar, bool) {
	for i := range f.locals {
		v := &f.locals[i]
		if off >= v.off && off < v.off+v.size {
			return v, true
		}
	}
	return nil, false
}

// readELFSymbols adds function ranges, and variables the DWARF did not
// describe (objects compiled without -g), from the symbol tables.
func (ms *modSyms) readELFSymbols(f *elf.File, linkage map[string]string) {
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	known := map[uint64]int{}
	for i, v := range ms.vars {
		known[v.lo] = i
	}
	for _, s := range syms {
		if s.Value == 0 || s.Section == elf.SHN_UNDEF {
			continue
		}
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_FUNC:
			name := strings.TrimPrefix(s.Name, realPrefix)
			if q, ok := linkage[name]; ok {
				name = q
			} else {
				if i := strings.Index(name, "@"); i > 0 {
					name = name[:i]
				}
				name = demangled(name)
			}
			hi := s.Value + s.Size
			if s.Size == 0 {
				hi = s.Value + 1
			}
			ms.funcs = append(ms.funcs, funcSym{lo: s.Value, hi: hi, name: name})
		case elf.STT_OBJECT, elf.STT_TLS:
			if elf.ST_TYPE(s.Info) == elf.STT_TLS {
				continue
			}
			if i, ok := known[s.Value]; ok {
				if ms.vars[i].size == 0 {
					ms.vars[i].size = s.Size
				}
				continue
			}
			size := s.Size
			if size == 0 {
				size = 1
			}
			ms.vars = append(ms.vars, varSym{lo: s.Value, size: size, name: demangled(s.Name)})
		}
	}
}

// demangled returns the name of a C++ symbol as the source spells it,
// without the parameter lists of functions and without anonymous
// namespaces, as the DWARF names are (svc::Cache::lookup for
// _ZN3svc5Cache6lookupEi, svc::g_stats for _ZN3svc7g_statsE; gcc's static
// initializers of a file keep their prefix: _GLOBAL__sub_I_svc::g_cache);
// any other name as it is.
func demangled(name string) string {
	for _, p := range []string{"_GLOBAL__sub_I_", "_GLOBAL__sub_D_"} {
		if rest, ok := strings.CutPrefix(name, p); ok && strings.HasPrefix(rest, "_Z") {
			return p + demangled(rest)
		}
	}
	if !strings.HasPrefix(name, "_Z") {
		return name
	}
	return strings.ReplaceAll(demangle.Filter(name, demangle.NoParams), "(anonymous namespace)::", "")
}

// location returns the file and line of a return address (the instruction
// before it is the call), or ok == false.
func (ms *modSyms) location(ret uint64) (file string, line int, ok bool) {
	if ret == 0 {
		return "", 0, false
	}
	pc := ret - 1
	i := sort.Search(len(ms.lines), func(i int) bool { return ms.lines[i].addr > pc }) - 1
	if i < 0 || ms.lines[i].end {
		return "", 0, false
	}
	// Line 0 marks compiler-generated code: the nearest real line of the
	// same sequence before it is the best answer.
	for j := i; j >= 0 && !ms.lines[j].end; j-- {
		if l := ms.lines[j]; l.line > 0 {
			// A library's header inlined into the program's code is
			// at the program's line that called it.
			if len(ms.inlines) > 0 && isLibraryPath(ms.paths[l.file]) {
				if c, ok := ms.inlineAt(pc); ok {
					return c.file, c.line, true
				}
			}
			return l.file, l.line, true
		}
	}
	return "", 0, false
}

// function returns the name of the function containing pc.
func (ms *modSyms) function(pc uint64) (string, bool) {
	i := sort.Search(len(ms.funcs), func(i int) bool { return ms.funcs[i].lo > pc }) - 1
	// Symbols may nest (aliases, local labels): walk back a few.
	for j := i; j >= 0 && j > i-8; j-- {
		if f := ms.funcs[j]; pc >= f.lo && pc < f.hi {
			return f.name, true
		}
	}
	return "", false
}

// variable returns the variable containing link-time address a.
func (ms *modSyms) variable(a uint64) (*varSym, bool) {
	i := sort.Search(len(ms.vars), func(i int) bool { return ms.vars[i].lo > a }) - 1
	for j := i; j >= 0 && j > i-8; j-- {
		v := &ms.vars[j]
		size := v.size
		if size == 0 {
			size = 1
		}
		if a >= v.lo && a < v.lo+size {
			return v, true
		}
	}
	return nil, false
}

// CodeRange is a range [Lo, Hi) of link-time code addresses of an ELF
// object.
type CodeRange struct{ Lo, Hi uint64 }

// LineCode returns the code ranges of the ELF object at path that its
// DWARF line table gives to file (a base name, or a path when the trace
// was recorded with -full-paths) and line, as the converter maps a return
// address to a location (code of line 0 belongs to the line before it).
// It is the inverse of the locations in a trace: mcpredict reproduce
// gives the runtime these ranges to recognise an access of a source line.
// An object without DWARF, or without the line, gives none.
func LineCode(path, file string, line int) ([]CodeRange, error) {
	ms := loadModSyms(path, strings.Contains(file, "/"))
	if ms.err != nil && len(ms.lines) == 0 {
		return nil, ms.err
	}
	var out []CodeRange
	cur := 0 // the line the rows of the sequence belong to
	curFile := ""
	for i, r := range ms.lines {
		if r.end {
			cur = 0
			continue
		}
		if r.line > 0 {
			cur, curFile = r.line, r.file
		}
		if cur != line || curFile != file || i+1 >= len(ms.lines) {
			continue
		}
		hi := ms.lines[i+1].addr
		if hi <= r.addr {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Hi == r.addr {
			out[n-1].Hi = hi
			continue
		}
		out = append(out, CodeRange{Lo: r.addr, Hi: hi})
	}
	// And the library code inlined there, which the trace locates at
	// this line too (location).
	for _, c := range ms.inlines {
		if c.line == line && c.file == file {
			out = append(out, CodeRange{Lo: c.lo, Hi: c.hi})
		}
	}
	return out, nil
}
