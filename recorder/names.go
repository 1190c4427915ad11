package recorder

import (
	"debug/dwarf"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// procSyms resolves run-time addresses of one recorded process: it finds
// the module of an address from the segments the runtime logged, and
// looks the link-time address (address minus load bias) up in that
// module's tables, read lazily.
type procSyms struct {
	mods      []module
	segs      []segRef // sorted by lo
	tables    map[int]*modSyms
	fullPaths bool
	warn      func(string)

	locCache  map[uint64]string
	funcCache map[uint64]string
}

type segRef struct {
	lo, hi uint64
	mod    int
}

func newProcSyms(mods []module, fullPaths bool, warn func(string)) *procSyms {
	p := &procSyms{
		mods:      mods,
		tables:    map[int]*modSyms{},
		fullPaths: fullPaths,
		warn:      warn,
		locCache:  map[uint64]string{},
		funcCache: map[uint64]string{},
	}
	for i, m := range mods {
		for _, s := range m.Segs {
			p.segs = append(p.segs, segRef{s[0], s[1], i})
		}
	}
	sort.Slice(p.segs, func(i, j int) bool { return p.segs[i].lo < p.segs[j].lo })
	return p
}

// module returns the index of the module whose segment holds a.
func (p *procSyms) module(a uint64) (int, bool) {
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].lo > a }) - 1
	if i >= 0 && a < p.segs[i].hi {
		return p.segs[i].mod, true
	}
	return 0, false
}

func (p *procSyms) table(mi int) *modSyms {
	if t, ok := p.tables[mi]; ok {
		return t
	}
	m := p.mods[mi]
	var t *modSyms
	if m.Path == "" || strings.HasPrefix(m.Path, "linux-vdso") || strings.HasPrefix(m.Path, "linux-gate") {
		t = &modSyms{}
	} else {
		t = loadModSyms(m.Path, p.fullPaths)
		if t.err != nil && p.warn != nil {
			p.warn(fmt.Sprintf("%s: %v (its addresses stay unresolved)", m.Path, t.err))
		}
	}
	p.tables[mi] = t
	return t
}

// location formats a return address as file-line, or "?".
func (p *procSyms) location(ret uint64) string {
	if s, ok := p.locCache[ret]; ok {
		return s
	}
	s := "?"
	if mi, ok := p.module(ret); ok {
		if file, line, ok := p.table(mi).location(ret - p.mods[mi].Bias); ok {
			s = file + "-" + strconv.Itoa(line)
		}
	}
	p.locCache[ret] = s
	return s
}

// function names the function containing pc.
func (p *procSyms) function(pc uint64) string {
	if s, ok := p.funcCache[pc]; ok {
		return s
	}
	s := fmt.Sprintf("0x%x", pc)
	if mi, ok := p.module(pc); ok {
		if name, ok := p.table(mi).function(pc - p.mods[mi].Bias); ok {
			s = name
		}
	}
	p.funcCache[pc] = s
	return s
}

// global finds the variable at run-time address a: the variable and a's
// offset in it.
func (p *procSyms) global(a uint64) (v *varSym, off uint64, mi int, ok bool) {
	mi, ok = p.module(a)
	if !ok {
		return nil, 0, 0, false
	}
	la := a - p.mods[mi].Bias
	v, ok = p.table(mi).variable(la)
	if !ok {
		return nil, 0, mi, false
	}
	return v, la - v.lo, mi, true
}

// ---- types ----

// opaqueType reports whether a typedef is a synchronisation object named
// as a whole: a mutex is "lock", not "lock.__data.__lock".
func opaqueType(name string) bool {
	return strings.HasPrefix(name, "pthread_") || strings.HasPrefix(name, "__gthread_") ||
		name == "sem_t" || name == "mtx_t" || name == "cnd_t"
}

// stripType removes typedefs (except opaque ones) and qualifiers.
func stripType(t dwarf.Type) dwarf.Type {
	for i := 0; i < 32 && t != nil; i++ {
		switch u := t.(type) {
		case *dwarf.TypedefType:
			if opaqueType(u.Name) {
				return t
			}
			t = u.Type
		case *dwarf.QualType:
			t = u.Type
		default:
			return t
		}
	}
	return t
}

// typeSize is the size of t in bytes, or 0 if unknown.
func typeSize(t dwarf.Type) int64 {
	if t == nil {
		return 0
	}
	if s := t.Size(); s > 0 {
		return s
	}
	switch u := t.(type) {
	case *dwarf.TypedefType:
		return typeSize(u.Type)
	case *dwarf.QualType:
		return typeSize(u.Type)
	}
	return 0
}

// pointee returns the type a pointer type points to, if it is a type with
// a size (not void, not a function).
func pointee(t dwarf.Type) (dwarf.Type, bool) {
	pt, ok := stripType(t).(*dwarf.PtrType)
	if !ok || pt.Type == nil {
		return nil, false
	}
	switch stripType(pt.Type).(type) {
	case *dwarf.VoidType, *dwarf.FuncType, *dwarf.UnspecifiedType:
		return nil, false
	}
	if typeSize(pt.Type) <= 0 {
		return nil, false
	}
	return pt.Type, true
}

// leaf is the innermost member or element of a type that holds an offset.
type leaf struct {
	path string     // ".outcnt", "[3].x", "" for the whole object
	off  int64      // where the leaf starts
	size int64      // its size (0: unknown)
	typ  dwarf.Type // its type
}

// typeLeaf finds the leaf of t holding byte off.
func typeLeaf(t dwarf.Type, off int64) leaf {
	var path strings.Builder
	base := int64(0)
	for depth := 0; depth < 32; depth++ {
		s := stripType(t)
		switch u := s.(type) {
		case *dwarf.StructType:
			if u.Incomplete {
				return leaf{path.String(), base, typeSize(t), t}
			}
			var found *dwarf.StructField
			for _, f := range u.Field {
				fs := typeSize(f.Type)
				if off >= f.ByteOffset && (off < f.ByteOffset+fs || fs == 0 && f == u.Field[len(u.Field)-1]) {
					found = f
					break
				}
			}
			if found == nil { // padding
				return leaf{path.String(), base, typeSize(t), t}
			}
			if found.Name != "" {
				path.WriteString(".")
				path.WriteString(found.Name)
			}
			base += found.ByteOffset
			off -= found.ByteOffset
			t = found.Type
		case *dwarf.ArrayType:
			es := typeSize(u.Type)
			if u.StrideBitSize > 0 {
				es = u.StrideBitSize / 8
			}
			if es <= 0 {
				return leaf{path.String(), base, typeSize(t), t}
			}
			idx := off / es
			fmt.Fprintf(&path, "[%d]", idx)
			base += idx * es
			off -= idx * es
			t = u.Type
		default:
			return leaf{path.String(), base, typeSize(t), t}
		}
	}
	return leaf{path.String(), base, typeSize(t), t}
}

// ---- naming ----

// maxHops bounds the pointer chains used for names: a linked list would
// otherwise name its nodes list->next->next->next…
const maxHops = 3

// namer gives names to data addresses, and to heap blocks through the
// pointers the program reached them by.
type namer struct {
	syms    *procSyms
	heap    *heapTracker
	threads []*rawThread

	// blockNames holds, per block lifetime (Alloc sequence number), the
	// name chosen in the first pass.
	blockNames map[uint64]blockName
	used       map[string]int // names given to blocks, for uniqueness
}

type blockName struct {
	name  string
	typ   dwarf.Type
	depth int
}

func newNamer(syms *procSyms, threads []*rawThread) *namer {
	return &namer{
		syms:       syms,
		heap:       newHeapTracker(),
		threads:    threads,
		blockNames: map[uint64]blockName{},
		used:       map[string]int{},
	}
}

// learn is the first pass: it replays the heap and names every block
// after the first pointer through which it was read (an 8-byte read whose
// value is the block's base), so that all accesses to the block, even
// those before that read, get the same name.
func (n *namer) learn(ev *rawEvent) {
	switch ev.Kind {
	case kAlloc:
		n.heap.alloc(ev.Addr, ev.Extra, ev.Seq)
	case kFree:
		n.heap.free(ev.Addr)
	case kRead8:
		dst := n.heap.live.at(ev.Extra)
		if dst == nil || dst.name != "" {
			return
		}
		name, typ, hops, ok := n.pointerAt(ev.Addr)
		if !ok || hops >= maxHops {
			return
		}
		elem, ok := pointee(typ)
		if !ok {
			return
		}
		n.used[name]++
		if c := n.used[name]; c > 1 {
			// Another block was reached through the same pointer
			// before: a different variable.
			name = fmt.Sprintf("%s#%d", name, c)
		}
		dst.name, dst.typ, dst.depth = name, elem, hops+1
		n.blockNames[dst.id] = blockName{name, elem, hops + 1}
	}
}

// pointerAt names a pointer-typed location at address a and returns its
// type and how many hops from a global it is.
func (n *namer) pointerAt(a uint64) (name string, typ dwarf.Type, hops int, ok bool) {
	if b := n.heap.live.containing(a); b != nil {
		if b.typ == nil {
			return "", nil, 0, false
		}
		name, lf, ok := n.blockLeaf(b, a-b.base)
		if !ok || lf.off != int64(a-b.base) {
			return "", nil, 0, false
		}
		return name, lf.typ, b.depth, true
	}
	v, off, _, ok := n.syms.global(a)
	if !ok || v.typ == nil {
		return "", nil, 0, false
	}
	lf := typeLeaf(v.typ, int64(off))
	if lf.off != int64(off) {
		return "", nil, 0, false
	}
	return v.name + lf.path, lf.typ, 0, true
}

// blockLeaf names offset off in a named block: buf->outcnt for the first
// element of a struct, buf[2].x for later ones, p[3] for scalars.
func (n *namer) blockLeaf(b *block, off uint64) (string, leaf, bool) {
	es := typeSize(b.typ)
	if b.typ == nil || es <= 0 {
		return "", leaf{}, false
	}
	idx := int64(off) / es
	lf := typeLeaf(b.typ, int64(off)-idx*es)
	lf.off += idx * es
	_, isStruct := stripType(b.typ).(*dwarf.StructType)
	switch {
	case isStruct && idx == 0 && strings.HasPrefix(lf.path, "."):
		return b.name + "->" + lf.path[1:], lf, true
	default:
		return fmt.Sprintf("%s[%d]%s", b.name, idx, lf.path), lf, true
	}
}

// replay is the second pass's view of Alloc and Free: blocks get the
// names learned in the first pass.
func (n *namer) replay(ev *rawEvent) {
	switch ev.Kind {
	case kAlloc:
		b := n.heap.alloc(ev.Addr, ev.Extra, ev.Seq)
		if bn, ok := n.blockNames[b.id]; ok {
			b.name, b.typ, b.depth = bn.name, bn.typ, bn.depth
		}
	case kFree:
		n.heap.free(ev.Addr)
	}
}

// nameAt names the variable holding address a of an access that ends at
// end, and returns where that variable ends (the next variable of a long
// access starts there).
func (n *namer) nameAt(a, end uint64) (string, uint64) {
	name, next := n.nameAt1(a, end)
	if next <= a || next > end {
		next = end
	}
	return name, next
}

func (n *namer) nameAt1(a, end uint64) (string, uint64) {
	if b := n.heap.live.containing(a); b != nil {
		off := a - b.base
		if b.name != "" {
			if name, lf, ok := n.blockLeaf(b, off); ok {
				return name, b.base + uint64(lf.off+max(lf.size, 1))
			}
		}
		gen := ""
		if b.gen > 1 {
			gen = "#" + strconv.Itoa(b.gen)
		}
		return fmt.Sprintf("heap:0x%x%s+%d", b.base, gen, off), end
	}
	if v, off, _, ok := n.syms.global(a); ok {
		start := a - off
		if v.typ == nil {
			if off == 0 {
				return v.name, start + v.size
			}
			return fmt.Sprintf("%s+%d", v.name, off), end
		}
		lf := typeLeaf(v.typ, int64(off))
		return v.name + lf.path, start + uint64(lf.off+max(lf.size, 1))
	}
	if mi, ok := n.syms.module(a); ok {
		m := n.syms.mods[mi]
		return fmt.Sprintf("%s+0x%x", filepath.Base(m.Path), a-m.Bias), end
	}
	for _, t := range n.threads {
		if a >= t.StackLo && a < t.StackHi {
			return fmt.Sprintf("stack:0x%x", a), end
		}
	}
	return fmt.Sprintf("0x%x", a), end
}

// syncName names a synchronisation object (the whole of it: the start of
// the leaf at a).
func (n *namer) syncName(a uint64) string {
	name, _ := n.nameAt(a, a+1)
	return name
}
