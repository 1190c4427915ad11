package recorder

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
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
}

// frameFunc is a function's code range and its locals that live at fixed
// offsets from the frame's CFA (DW_OP_fbreg with DW_OP_call_frame_cfa as
// the frame base, as gcc emits on x86-64).
type frameFunc struct {
	lo, hi uint64
	name   string
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
	err    error        // why the module could not be read (reported once)
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
		if err := ms.readDWARF(d, fullPaths, linkage); err != nil {
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
	sort.SliceStable(ms.vars, func(i, j int) bool { return ms.vars[i].lo < ms.vars[j].lo })
	return ms
}

// readDWARF collects line rows, global variables with their types, and the
// qualified names of C++ functions.
func (ms *modSyms) readDWARF(d *dwarf.Data, fullPaths bool, linkage map[string]string) error {
	r := d.Reader()
	// stack holds the enclosing DIEs that have children (namespaces,
	// classes, functions, lexical blocks …); name is "" for the unnamed.
	var stack []dwarfScope
	seen := map[string]bool{} // variables already collected, by name@addr
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
			if err := ms.readLines(d, e, fullPaths); err != nil {
				return err
			}
		case dwarf.TagVariable, dwarf.TagFormalParameter:
			if e.Tag == dwarf.TagVariable {
				ms.addVar(d, e, stack, seen)
			}
			if len(stack) > 0 && stack[len(stack)-1].frame != nil {
				sc := stack[len(stack)-1]
				addLocal(d, e, origin(e), named(e), sc)
				addPointee(d, e, origin(e), sc.frame)
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
			switch e.Tag {
			case dwarf.TagNamespace, dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType, dwarf.TagSubprogram:
				n = name
			}
			sc := dwarfScope{name: n, fn: isFn}
			if len(stack) > 0 {
				sc.frame, sc.inl = stack[len(stack)-1].frame, stack[len(stack)-1].inl
			}
			switch e.Tag {
			case dwarf.TagSubprogram:
				sc.frame, sc.inl = nil, ""
				if f := newFrameFunc(d, e, named(e)); f != nil {
					ms.frames = append(ms.frames, f)
					sc.frame = f
				}
				if sc.name == "" {
					sc.name = named(e)
				}
			case dwarf.TagInlinedSubroutine:
				if sc.frame != nil {
					sc.inl += named(e) + "::"
				}
			}
			stack = append(stack, sc)
		}
	}
}

func (ms *modSyms) readLines(d *dwarf.Data, cu *dwarf.Entry, fullPaths bool) error {
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return err
	}
	names := map[*dwarf.LineFile]string{}
	compDir, _ := cu.Val(dwarf.AttrCompDir).(string)
	if ms.paths == nil {
		ms.paths = map[string]string{}
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

// addVar records a variable DIE with a fixed address (DW_OP_addr).
func (ms *modSyms) addVar(d *dwarf.Data, e *dwarf.Entry, stack []dwarfScope, seen map[string]bool) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte)
	if !ok || len(loc) != 9 || loc[0] != 0x03 { // DW_OP_addr <8 bytes>
		return
	}
	addr := binary.LittleEndian.Uint64(loc[1:])
	name, _ := e.Val(dwarf.AttrName).(string)
	typOff, hasType := e.Val(dwarf.AttrType).(dwarf.Offset)
	var scopes []string
	for _, s := range stack {
		if s.name != "" {
			scopes = append(scopes, s.name)
		}
	}
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

// newFrameFunc returns the frame of a concrete function (one with code)
// whose frame base is the CFA, or nil.
func newFrameFunc(d *dwarf.Data, e *dwarf.Entry, name string) *frameFunc {
	fb, ok := e.Val(dwarf.AttrFrameBase).([]byte)
	if !ok || len(fb) != 1 || fb[0] != 0x9c { // DW_OP_call_frame_cfa
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
	return &frameFunc{lo: lo, hi: hi, name: name}
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
	v := localVar{name: sc.inl + name, off: off}
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
			}
			if i := strings.Index(name, "@"); i > 0 {
				name = name[:i]
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
			ms.vars = append(ms.vars, varSym{lo: s.Value, size: size, name: s.Name})
		}
	}
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
		if ms.lines[j].line > 0 {
			return ms.lines[j].file, ms.lines[j].line, true
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
	return out, nil
}
