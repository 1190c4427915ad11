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
	funcs []funcSym
	vars  []varSym
	err   error // why the module could not be read (reported once)
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
		case dwarf.TagVariable:
			ms.addVar(d, e, stack, seen)
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
			stack = append(stack, dwarfScope{n, isFn})
		}
	}
}

func (ms *modSyms) readLines(d *dwarf.Data, cu *dwarf.Entry, fullPaths bool) error {
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return err
	}
	names := map[*dwarf.LineFile]string{}
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
				if !fullPaths {
					n = filepath.Base(n)
				}
				names[le.File] = n
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
			name := s.Name
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
