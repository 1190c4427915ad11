package recorder

import (
	"cmp"
	"debug/dwarf"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	locFast   [locSlots]locEntry    // in front of locCache
	sources   map[string]sourceLine // the locations resolved, and their source lines
	funcCache map[uint64]string
	siteCache map[uint64]string
}

// locSlots is the size of the direct-mapped cache of locations.
const locSlots = 1 << 10

type locEntry struct {
	ret uint64
	loc string
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
		sources:   map[string]sourceLine{},
		funcCache: map[uint64]string{},
		siteCache: map[uint64]string{},
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
	if !nameCaches {
		return p.location1(ret)
	}
	e := &p.locFast[ret*0x9e3779b97f4a7c15>>(64-10)]
	if e.ret == ret && e.loc != "" {
		return e.loc
	}
	s := p.location1(ret)
	*e = locEntry{ret, s}
	return s
}

func (p *procSyms) location1(ret uint64) string {
	if s, ok := p.locCache[ret]; ok {
		return s
	}
	s := "?"
	if mi, ok := p.module(ret); ok {
		ms := p.table(mi)
		if file, line, ok := ms.location(ret - p.mods[mi].Bias); ok {
			s = file + "-" + strconv.Itoa(line)
			if _, seen := p.sources[s]; !seen {
				p.sources[s] = sourceLine{path: ms.paths[file], line: line}
			}
		}
	}
	p.locCache[ret] = s
	return s
}

// sourceLine is where a location's source text is.
type sourceLine struct {
	path string
	line int
}

// writeLibraries writes a "# library: FILE" comment for every file of the
// trace's locations that is library code (isLibraryPath): mcpredict shows
// an event there at the call of the user's code that led to it.
func (p *procSyms) writeLibraries(w io.Writer) {
	files := map[string]bool{}
	for l, src := range p.sources {
		i := strings.LastIndexByte(l, '-')
		if i <= 0 || src.path == "" {
			continue
		}
		if f := l[:i]; !files[f] && isLibraryPath(src.path) {
			files[f] = true
		}
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(w, "# library: %s\n", f)
	}
}

// isLibraryPath reports whether a source file is library code rather than
// the program's: a file under /usr (the system's headers and the
// compilers' own, /usr/include, /usr/lib/gcc, /usr/lib/llvm-N) or in a
// C++ standard library's include directory wherever it is installed.
func isLibraryPath(path string) bool {
	path = filepath.ToSlash(filepath.Clean(path))
	return strings.HasPrefix(path, "/usr/") && !strings.HasPrefix(path, "/usr/src/") && !strings.HasPrefix(path, "/usr/local/src/") ||
		strings.Contains(path, "/include/c++/")
}

// writeSources writes a "# source: LOC<TAB>TEXT" comment for every location
// of the trace whose source file can be read here: the text of the line,
// trimmed. Bug ids are made from it rather than from line numbers, so that
// an edit elsewhere in the file keeps them (tracemodel.Model.Sources).
func (p *procSyms) writeSources(w io.Writer) {
	locs := make([]string, 0, len(p.sources))
	for l := range p.sources {
		locs = append(locs, l)
	}
	sort.Strings(locs)
	files := map[string][]string{}
	for _, l := range locs {
		src := p.sources[l]
		if src.path == "" {
			continue
		}
		lines, ok := files[src.path]
		if !ok {
			if b, err := os.ReadFile(src.path); err == nil && len(b) < 16<<20 {
				lines = strings.Split(string(b), "\n")
			}
			files[src.path] = lines
		}
		if src.line < 1 || src.line > len(lines) {
			continue
		}
		text := strings.Join(strings.Fields(lines[src.line-1]), " ")
		if text != "" && len(text) < 512 {
			fmt.Fprintf(w, "# source: %s\t%s\n", l, text)
		}
	}
}

// function names the function containing pc.
func (p *procSyms) function(pc uint64) string {
	if s, ok := p.funcCache[pc]; ok {
		return s
	}
	s := fmt.Sprintf("0x%x", pc)
	if mi, ok := p.module(pc); ok {
		m := p.mods[mi]
		if name, ok := p.table(mi).function(pc - m.Bias); ok {
			s = name
		} else if m.Path != "" {
			// A function without a symbol (a stripped library's static
			// one: libstdc++'s thread start routine) by its module and
			// offset, the same in every run, unlike its address.
			s = fmt.Sprintf("%s+0x%x", filepath.Base(m.Path), pc-m.Bias)
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
	// parent is the innermost struct holding the leaf (nil: none): a
	// pointer member whose struct is its own pointee is a link (next).
	parent dwarf.Type
	bits   bool // a bit-field (accessed in any part of its unit)
}

// typeLeaf finds the leaf of t holding byte off.
func typeLeaf(t dwarf.Type, off int64) leaf {
	var path strings.Builder
	base := int64(0)
	var parent dwarf.Type
	for depth := 0; depth < 32; depth++ {
		s := stripType(t)
		switch u := s.(type) {
		case *dwarf.StructType:
			if u.Incomplete {
				return leaf{path.String(), base, typeSize(t), t, parent, false}
			}
			found := fieldAt(u, off)
			if found == nil { // padding
				return leaf{path.String(), base, typeSize(t), t, parent, false}
			}
			if found.Name != "" {
				path.WriteString(".")
				path.WriteString(found.Name)
			}
			base += found.ByteOffset
			off -= found.ByteOffset
			parent = t
			t = found.Type
			if found.BitSize > 0 {
				return leaf{path.String(), base, typeSize(t), t, parent, true}
			}
		case *dwarf.ArrayType:
			es := elemSize(u)
			if es <= 0 {
				return leaf{path.String(), base, typeSize(t), t, parent, false}
			}
			idx := off / es
			fmt.Fprintf(&path, "[%d]", idx)
			base += idx * es
			off -= idx * es
			t = u.Type
		default:
			return leaf{path.String(), base, typeSize(t), t, parent, false}
		}
	}
	return leaf{path.String(), base, typeSize(t), t, parent, false}
}

// fieldAt returns the field of struct u holding byte off, nil for
// padding.
func fieldAt(u *dwarf.StructType, off int64) *dwarf.StructField {
	for i, f := range u.Field {
		fs := typeSize(f.Type)
		if fs <= 0 {
			// A type debug/dwarf does not decode (an _Atomic one): the
			// field reaches the next one.
			if i+1 < len(u.Field) {
				fs = u.Field[i+1].ByteOffset - f.ByteOffset
			} else if u.ByteSize > 0 {
				fs = u.ByteSize - f.ByteOffset
			}
		}
		if off >= f.ByteOffset && (off < f.ByteOffset+fs || fs <= 0 && i == len(u.Field)-1) {
			return f
		}
	}
	return nil
}

// elemSize is the size of an element of array u (its stride), 0 if
// unknown.
func elemSize(u *dwarf.ArrayType) int64 {
	if u.StrideBitSize > 0 {
		return u.StrideBitSize / 8
	}
	return typeSize(u.Type)
}

// structName is the name the program gives the struct (union, class)
// type t: its typedef's (buffered_log) or its tag (node); "" for other
// types, anonymous structs and opaque synchronisation types.
func structName(t dwarf.Type) string {
	for i := 0; i < 32 && t != nil; i++ {
		switch u := t.(type) {
		case *dwarf.TypedefType:
			if opaqueType(u.Name) {
				return ""
			}
			if _, ok := stripType(u.Type).(*dwarf.StructType); ok {
				return u.Name
			}
			return ""
		case *dwarf.QualType:
			t = u.Type
		case *dwarf.StructType:
			return u.StructName
		default:
			return ""
		}
	}
	return ""
}

// sameType reports whether a and b are the same struct type: the same
// DIE, or (each compilation unit describes its own copy) the same name
// and size.
func sameType(a, b dwarf.Type) bool {
	if a == nil || b == nil {
		return false
	}
	if a == b {
		return true
	}
	sa, sb := stripType(a), stripType(b)
	if sa == sb {
		return true
	}
	ta, ok1 := sa.(*dwarf.StructType)
	tb, ok2 := sb.(*dwarf.StructType)
	if !ok1 || !ok2 {
		return false
	}
	na, nb := structName(a), structName(b)
	if ta.StructName != "" && ta.StructName == tb.StructName || na != "" && na == nb {
		return ta.ByteSize == tb.ByteSize && ta.Kind == tb.Kind
	}
	return false
}

// ---- naming ----

// maxHops bounds the pointer chains used for names: a linked list would
// otherwise name its nodes list->next->next->next…
const maxHops = 3

// maxReachHops bounds the pointer chains kept as a detail of a block
// named by its type and site.
const maxReachHops = 8

// readOnly reports whether the program cannot write address a: a loaded
// segment without write permission (code, string literals, .rodata) or a
// RELRO range (constants the dynamic linker relocated).
func (p *procSyms) readOnly(a uint64) bool {
	mi, ok := p.module(a)
	if !ok {
		return false
	}
	for _, r := range p.mods[mi].ReadOnly {
		if a >= r[0] && a < r[1] {
			return true
		}
	}
	return false
}

// frameAt returns the described frame of the function holding run-time
// pc.
func (p *procSyms) frameAt(pc uint64) *frameFunc {
	mi, ok := p.module(pc)
	if !ok {
		return nil
	}
	return p.table(mi).frame(pc - p.mods[mi].Bias)
}

// site names the call at return address ret: file:line, or the module
// and offset when there is no line table (both are the same in every run
// of the same build).
func (p *procSyms) site(ret uint64) string {
	if s, ok := p.siteCache[ret]; ok {
		return s
	}
	s := "?"
	if mi, ok := p.module(ret); ok {
		m := p.mods[mi]
		if file, line, ok := p.table(mi).location(ret - m.Bias); ok {
			s = file + ":" + strconv.Itoa(line)
		} else {
			s = fmt.Sprintf("%s+0x%x", filepath.Base(m.Path), ret-m.Bias)
		}
	}
	p.siteCache[ret] = s
	return s
}

// locKey identifies a memory location for the whole trace: a heap block's
// lifetime (its Alloc's sequence number) and the offset in it, or an
// address (id 0) outside the heap.
type locKey struct{ id, off uint64 }

// stackKey is an 8-byte granule of a thread's stack.
type stackKey struct{ owner, granule uint64 }

// sharers records which threads accessed a location: the first, and
// whether any other did.
type sharers struct {
	first uint64
	multi bool
}

func (s *sharers) add(tok uint64) {
	if s.first == 0 {
		s.first = tok
	} else if s.first != tok {
		s.multi = true
	}
}

// threadFrames are the stack frames a thread described (FRAME records):
// per CFA, the records in sequence order.
type threadFrames struct {
	cfas []uint64 // sorted
	recs map[uint64][]frameRec
}

type frameRec struct{ seq, pc uint64 }

func (tf *threadFrames) add(seq, cfa, pc uint64) {
	if _, ok := tf.recs[cfa]; !ok {
		i := sort.Search(len(tf.cfas), func(i int) bool { return tf.cfas[i] >= cfa })
		tf.cfas = append(tf.cfas, 0)
		copy(tf.cfas[i+1:], tf.cfas[i:])
		tf.cfas[i] = cfa
	}
	tf.recs[cfa] = append(tf.recs[cfa], frameRec{seq, pc})
}

// at returns the record of cfa in force at seq: the latest one before it,
// or the first one (a frame another thread used before its owner
// described it).
func (tf *threadFrames) at(cfa, seq uint64) frameRec {
	rs := tf.recs[cfa]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].seq > seq }) - 1
	if i < 0 {
		i = 0
	}
	return rs[i]
}

// siteInfo summarises the blocks allocated at one call site.
type siteInfo struct {
	blocks  int
	threads map[uint64]bool
}

// siteThread counts the blocks a thread allocated at a site.
type siteThread struct {
	site   string
	thread uint64
}

// pathName is a block named after the pointer it was reached through.
type pathName struct {
	name  string
	typ   dwarf.Type
	depth int
}

// learned is what the first pass over the log finds out for the second.
type learned struct {
	paths map[uint64]pathName   // by block id
	types map[uint64]dwarf.Type // blocks with a type but no path name
	reach map[uint64]pathName   // blocks' paths that are only a detail
	votes map[uint64]*typeVotes // by block id: the types its accesses fit
	// misfit holds, by block id, the leaves of the block's type that its
	// accesses do not fit (checkFit); pending the blocks whose accesses
	// the first pass still notes.
	misfit  map[uint64][]leafKey
	pending map[uint64]*block
	// indexUsed holds the DataReads whose value an array index used
	// (indexUse).
	indexUsed seqSet
	cands     map[candKey][]int32 // the types an access site fits
	typeList  []typeCand
	sites     map[string]*siteInfo
	frames    map[uint64]*threadFrames // by thread token
	stack     map[stackKey]*sharers
	owners    map[string]map[uint64]bool // stack variable -> owner threads
	atomics   map[locKey]bool            // bytes accessed by atomic operations
	atomGran  map[locKey]bool            // their 8-byte granules
	mixed     map[locKey]bool            // atomic bytes also accessed plainly
	firstSeq  map[uint64]uint64          // first event of each thread
	usedPaths map[string]int
	// The atomic operations' release and acquire that order something
	// (see atomicOrder): an acquire whose latest release on the location
	// was another thread's, and such a release (by sequence number); and
	// the acquires of a load that reads the end of a chain of
	// read-modify-writes from the other threads of the chain (extraAcq:
	// their tokens), with the releases they need (needRelT), written on
	// per-thread objects atomic:<name>@<thread>.
	lastRel          map[locKey]relAt
	atoms            map[locKey]*atomLoc
	needAcq, needRel seqSet
	extraAcq         map[uint64][]uint64
	needRelT         seqSet
}

// atomLoc is the write history of an atomic location that ordering needs:
// whether its latest write was a read-modify-write, and the release
// sequence a load of its current value acquires — the latest release of
// each thread among the writes since the last plain store.
type atomLoc struct {
	lastRMW bool
	chain   []relAt
}

// maxAtomicChain bounds the release sequence kept per location: a load
// acquires from the latest releases of at most this many threads.
const maxAtomicChain = 64

// relAt is a release: its thread and sequence number.
type relAt struct{ thread, seq uint64 }

// seqSet is a set of sequence numbers.
type seqSet []uint64

func (s *seqSet) add(seq uint64) {
	for uint64(len(*s)) <= seq/64 {
		*s = append(*s, 0)
	}
	(*s)[seq/64] |= 1 << (seq % 64)
}

func (s seqSet) has(seq uint64) bool {
	return seq/64 < uint64(len(s)) && s[seq/64]&(1<<(seq%64)) != 0
}

func newLearned() *learned {
	return &learned{
		paths:     map[uint64]pathName{},
		types:     map[uint64]dwarf.Type{},
		reach:     map[uint64]pathName{},
		votes:     map[uint64]*typeVotes{},
		misfit:    map[uint64][]leafKey{},
		pending:   map[uint64]*block{},
		cands:     map[candKey][]int32{},
		sites:     map[string]*siteInfo{},
		frames:    map[uint64]*threadFrames{},
		stack:     map[stackKey]*sharers{},
		owners:    map[string]map[uint64]bool{},
		atomics:   map[locKey]bool{},
		atomGran:  map[locKey]bool{},
		mixed:     map[locKey]bool{},
		firstSeq:  map[uint64]uint64{},
		usedPaths: map[string]int{},
		lastRel:   map[locKey]relAt{},
		atoms:     map[locKey]*atomLoc{},
		extraAcq:  map[uint64][]uint64{},
	}
}

// namer gives names to data addresses. The same namer type replays the
// log in each pass: the first (learn) fills in a learned, the second
// (replay, nameAt) uses it.
type namer struct {
	syms    *procSyms
	heap    *heapTracker
	threads []*rawThread // by token
	stacks  []*rawThread // by StackLo
	maxHi   []uint64     // maxHi[i]: the highest StackHi of stacks[:i+1]
	// [stackLo, stackHi) holds every stack (empty if there is none).
	stackLo, stackHi uint64
	ufuncs           map[uint64]uint64
	l                *learned
	ordinals         map[siteThread]int
	// reached is the block of the address nameAt named last if that
	// block has a detail path (reachedAs).
	reached   *block
	leafNames map[locKey]leafName
	// statics and indexes cache what staticName and arrayIndexes find
	// at addresses outside the heap, which stays so for the whole log
	// (allocated on first use).
	statics *[staticSlots]staticEntry
	indexes *[staticSlots]indexEntry
	// The first pass's state of each thread (by rawThread.idx): whether
	// it has had an event (learned.firstSeq), and its latest DataReads
	// of small values (indexUse).
	started []bool
	index   []*indexWatch
}

// nameCaches turns the caches of names, indexes and locations on (the
// tests turn them off, to compare).
var nameCaches = true

// staticSlots is the size of the namer's direct-mapped caches of
// addresses outside the heap: every hot global of a program usually fits.
const staticSlots = 1 << 15

// staticSlot is the cache slot of address a: the elements of an array of
// up to 256 KiB (32 KiB of bytes) take a slot each.
func staticSlot(a uint64) uint64 { return (a>>3 ^ a<<12) & (staticSlots - 1) }

// staticEntry caches staticName(a).
type staticEntry struct {
	a    uint64
	name string
	next uint64
	how  uint8 // staticUnset, or staticName's how
}

// indexEntry caches the array indexes typeIndexes finds for a global at
// address a.
type indexEntry struct {
	a   uint64
	set bool
	n   uint8
	idx [4]uint64
}

func newNamer(syms *procSyms, log *rawLog, l *learned) *namer {
	n := &namer{
		syms:      syms,
		heap:      newHeapTracker(),
		threads:   log.Threads,
		ufuncs:    log.UFuncs,
		l:         l,
		ordinals:  map[siteThread]int{},
		leafNames: map[locKey]leafName{},
		started:   make([]bool, len(log.Threads)),
		index:     make([]*indexWatch, len(log.Threads)),
	}
	for _, t := range log.Threads {
		if t.StackHi > t.StackLo {
			n.stacks = append(n.stacks, t)
		}
	}
	sort.Slice(n.stacks, func(i, j int) bool { return n.stacks[i].StackLo < n.stacks[j].StackLo })
	hi := uint64(0)
	for _, t := range n.stacks {
		hi = max(hi, t.StackHi)
		n.maxHi = append(n.maxHi, hi)
	}
	if len(n.stacks) > 0 {
		n.stackLo, n.stackHi = n.stacks[0].StackLo, hi
	}
	return n
}

var allocNames = [...]string{allocMalloc: "malloc", allocCalloc: "calloc", allocRealloc: "realloc",
	allocMemalign: "memalign", allocNew: "new", allocNewArray: "new[]", allocMmap: "mmap"}

// track replays an Alloc or Free and returns the block it started or
// ended, or nil.
func (n *namer) track(ev *rawEvent) *block {
	switch ev.Kind {
	case kAlloc, kUAlloc:
		size, known := ev.allocSize()
		b := &block{base: ev.Addr, size: size, sizeKnown: known, id: ev.Seq, user: ev.Kind == kUAlloc,
			site: ev.PC, thread: ev.Thread.Token}
		if b.user {
			b.fn = "alloc"
			if fn, ok := n.ufuncs[ev.Extra>>48]; ok {
				b.fn = n.syms.function(fn)
			}
			if !known {
				b.size = 0
			}
			b = n.heap.ualloc(b)
		} else {
			b.fn = "malloc"
			if k := ev.Extra >> 56; k < uint64(len(allocNames)) {
				b.fn = allocNames[k]
			}
			if old := n.heap.alloc(b); old != b {
				return old // resized in place: the same block
			}
		}
		st := siteThread{b.fn + "@" + n.syms.site(b.site), b.thread}
		n.ordinals[st]++
		b.ordinal = n.ordinals[st]
		return b
	case kFree:
		return n.heap.free(ev.Addr)
	case kUFree:
		return n.heap.ufree(ev.Addr)
	}
	return nil
}

// learn is the first pass.
func (n *namer) learn(ev *rawEvent) {
	l := n.l
	tok := ev.Thread.Token
	if !n.started[ev.Thread.idx] {
		n.started[ev.Thread.idx] = true
		if _, ok := l.firstSeq[tok]; !ok {
			l.firstSeq[tok] = ev.Seq
		}
	}
	switch ev.Kind {
	case kAlloc, kUAlloc:
		if b := n.track(ev); b != nil && b.id == ev.Seq {
			site := b.fn + "@" + n.syms.site(b.site)
			si := l.sites[site]
			if si == nil {
				si = &siteInfo{threads: map[uint64]bool{}}
				l.sites[site] = si
			}
			si.blocks++
			si.threads[b.thread] = true
		}
	case kFree, kUFree:
		if b := n.track(ev); b != nil {
			n.checkFit(b)
		}
	case kFrame:
		tf := l.frames[tok]
		if tf == nil {
			tf = &threadFrames{recs: map[uint64][]frameRec{}}
			l.frames[tok] = tf
		}
		tf.add(ev.Seq, ev.Addr, ev.PC)
	case kRead, kWrite, kRead8:
		size := ev.Extra
		if ev.Kind == kRead8 {
			size = 8
			n.learnPointer(ev)
		}
		if b, bend := n.heap.find(ev.Addr); b != nil {
			n.noteAccess(b, bend, ev.Addr, size)
			if !b.path {
				// A block named after its path has its type; votes
				// would only be work on the hottest path of the
				// conversion.
				n.voteType(b, ev.Addr-b.base, size, ev.PC)
			}
		}
		n.noteStack(ev, size)
		n.indexUse(ev)
	case kAtomic:
		size := ev.Extra & atomSizeMask
		if b, bend := n.heap.find(ev.Addr); b != nil {
			n.noteAccess(b, bend, ev.Addr, size)
		}
		n.noteStack(ev, size)
		for i := uint64(0); i < size; i++ {
			k := n.key(ev.Addr + i)
			l.atomics[k] = true
			l.atomGran[locKey{k.id, k.off >> 3}] = true
		}
		l.atomicOrder(n.key(ev.Addr), tok, ev)
	}
}

// maxFitBytes bounds the part of a block whose accesses checkFit checks
// against the block's type: its first 4 KiB.
const maxFitBytes = 4096

// leafKey is a leaf of a block's type: where it starts in the block, and
// its size.
type leafKey struct{ off, size int64 }

// noteAccess notes, in the first pass, an access of size bytes at address
// a of block b (which ends at bend) for checkFit.
func (n *namer) noteAccess(b *block, bend, a, size uint64) {
	if b.fitDone {
		return // an access after the free: the block's type is decided
	}
	off := a - b.base
	if b.acc == nil {
		ext := min(bend-b.base, maxFitBytes)
		if ext == 0 || off >= ext {
			return
		}
		b.acc = make([]uint8, ext)
		n.l.pending[b.id] = b
	}
	if off < uint64(len(b.acc)) {
		if s := uint8(min(max(size, 1), 255)); s > b.acc[off] {
			b.acc[off] = s
		}
	}
}

// blockType is the type the last pass gives block b (replay): the type
// of the pointer it is named after, of a typed pointer to it, or the one
// its accesses voted for.
func (l *learned) blockType(b *block) dwarf.Type {
	if p, ok := l.paths[b.id]; ok {
		return p.typ
	}
	if t := l.types[b.id]; t != nil {
		return t
	}
	return l.votedType(b)
}

// checkFit checks, once block b has ended (or at the end of the first
// pass), the accesses noted in its first maxFitBytes against the type
// the block will have, and keeps in learned.misfit the leaves they do not
// fit: a leaf that an access starts inside of (not at its start), or
// that an access starting at its start does not cover whole — the leaf
// of a wrong type, such as an 8-byte pointer field where the program
// accesses two 4-byte ints (the block was reused for another struct, or
// the guess was wrong), or a 4-byte access to an 8-byte field. The last
// pass names every access to such a leaf by its offset, as in an untyped
// block, so that distinct accesses stay distinct variables. Bit-fields
// always fit (the compiler accesses any byte of their unit).
func (n *namer) checkFit(b *block) {
	acc := b.acc
	if acc == nil || b.fitDone {
		b.fitDone = true
		return
	}
	b.acc, b.fitDone = nil, true
	delete(n.l.pending, b.id)
	typ := n.l.blockType(b)
	bad := misfits(typ, acc)
	if len(bad) == 0 {
		return
	}
	// The accesses do not fit the type a typed pointer to the block's
	// start or the vote decided (a stale pointer of another type to a
	// freed block whose address a new block reuses; a type whose array
	// explains most accesses by their offset modulo its size: Apache
	// 2.0.48's cache_object_t named as an array of mem_cache_object_t).
	// The best type the accesses voted for that fits them all is the
	// block's type; a block named after its path keeps the path's.
	if _, named := n.l.paths[b.id]; !named {
		if ft := n.l.fittingType(b, acc); ft != nil {
			n.l.types[b.id] = ft
			return
		}
	}
	n.l.misfit[b.id] = bad
}

// misfits returns the leaves of type typ (repeated over the block) that
// the accesses acc (the largest size starting at each offset) do not fit:
// a leaf that an access starts inside of, or that an access at its start
// does not cover whole. Bit-fields always fit.
func misfits(typ dwarf.Type, acc []uint8) []leafKey {
	es := typeSize(typ)
	if typ == nil || es <= 0 {
		return nil
	}
	var bad []leafKey
	for off, s := range acc {
		if s == 0 {
			continue
		}
		o := int64(off)
		idx := o / es
		lf := typeLeaf(typ, o-idx*es)
		start := idx*es + lf.off
		if lf.bits || lf.size <= 0 || start == o && int64(s) >= lf.size {
			continue
		}
		k := leafKey{start, lf.size}
		if !slices.Contains(bad, k) {
			bad = append(bad, k)
		}
	}
	return bad
}

// finishFit checks the blocks that had not ended when the first pass
// ended.
func (n *namer) finishFit() {
	for _, b := range n.l.pending {
		n.checkFit(b)
	}
}

// atomicOrder learns which acquires and releases of atomic operation ev
// (by thread tok, on location k) order the trace.
//
// A load or a read-modify-write that reads a plain store acquires from
// the latest release on the location (the flag that publishes data, the
// store that unlocks a hand-written spinlock). A load that reads the end
// of a chain of read-modify-writes acquires from every release of the
// chain (its release sequence: the arrivals at a counting barrier, all
// before the load that sees the count complete). A read-modify-write that
// reads another read-modify-write orders nothing: that is a counter, a
// statistic, an index claimed by fetch-and-add, and ordering every
// increment after the previous one would fix the interleaving of all the
// threads that count at the order of the recorded run, which hides every
// violation between them — as a counter under a mutex would not (locks
// are not causal either). A lock whose release is itself a
// read-modify-write (an exchange rather than a store) is ordered only
// through the data its critical sections observe.
func (l *learned) atomicOrder(k locKey, tok uint64, ev *rawEvent) {
	a := l.atoms[k]
	if a == nil {
		a = &atomLoc{}
		l.atoms[k] = a
	}
	rmw := ev.Extra&atomRead != 0 && ev.Extra&atomWrite != 0
	if ev.Extra&atomAcq != 0 && !(rmw && a.lastRMW) {
		if r, ok := l.lastRel[k]; ok && r.thread != tok {
			l.needAcq.add(ev.Seq)
			l.needRel.add(r.seq)
		}
		if a.lastRMW {
			for _, r := range a.chain {
				if r.thread != tok && r.seq != l.lastRel[k].seq {
					l.extraAcq[ev.Seq] = append(l.extraAcq[ev.Seq], r.thread)
					l.needRelT.add(r.seq)
				}
			}
		}
	}
	rel := ev.Extra&atomRel != 0
	if ev.Extra&atomWrite != 0 {
		if !rmw {
			a.chain = a.chain[:0]
		}
		if rel {
			a.chain = slices.DeleteFunc(a.chain, func(r relAt) bool { return r.thread == tok })
			if len(a.chain) == maxAtomicChain {
				a.chain = a.chain[1:]
			}
			a.chain = append(a.chain, relAt{tok, ev.Seq})
		}
		a.lastRMW = rmw
	}
	if rel {
		l.lastRel[k] = relAt{tok, ev.Seq}
	}
}

// noteStack records which threads access a stack location.
func (n *namer) noteStack(ev *rawEvent, size uint64) {
	owner := n.stackOwner(ev.Addr, ev.Seq)
	if owner == nil || n.tlsOwner(ev.Addr) != nil {
		return
	}
	// The variable's owners: a function's local in several threads'
	// stacks is a variable per thread (named func::var@tN).
	if base, _, _, ok := n.stackLocal(owner, ev.Addr, ev.Seq); ok {
		if n.l.owners[base] == nil {
			n.l.owners[base] = map[uint64]bool{}
		}
		n.l.owners[base][owner.Token] = true
	}
	for g := ev.Addr >> 3; g <= (ev.Addr+max(size, 1)-1)>>3 && g < ev.Addr>>3+8; g++ {
		k := stackKey{owner.Token, g}
		s := n.l.stack[k]
		if s == nil {
			s = &sharers{}
			n.l.stack[k] = s
		}
		s.add(ev.Thread.Token)
	}
}

// learnPointer handles an 8-byte read whose value is the start of a live
// block: the block is named after the pointer read (buf->outcnt) if that
// pointer has a name close enough to a global or a stack variable and is
// not a link of a list (node->next), and gets the type it points to in
// any case — unless the type cannot be the block's (larger than it; a
// link's type not exactly its size: a list node embedded in a bigger
// struct). A path not used as the name is kept as a detail (reach).
func (n *namer) learnPointer(ev *rawEvent) {
	dst := n.heap.liveAt(ev.Extra)
	if dst == nil {
		return
	}
	l := n.l
	if _, ok := l.paths[dst.id]; ok {
		return
	}
	pt, ok := n.pointerAt(ev.Addr, ev.Seq)
	if !ok {
		return
	}
	elem, ok := pointee(pt.typ)
	if !ok {
		return
	}
	link := pt.parent != nil && sameType(pt.parent, elem)
	if !typeFits(elem, dst, link) {
		return
	}
	if !pt.named || pt.hops >= maxHops || link {
		if _, ok := l.types[dst.id]; !ok {
			l.types[dst.id] = elem
		}
		if _, ok := l.reach[dst.id]; !ok && pt.name != "" && pt.hops < maxReachHops {
			l.reach[dst.id] = pathName{pt.name, elem, pt.hops + 1}
			dst.reach, dst.depth = pt.name, pt.hops+1
		}
		return
	}
	name := pt.name
	l.usedPaths[name]++
	if c := l.usedPaths[name]; c > 1 {
		// Another block was reached through the same pointer before:
		// a different variable.
		name = fmt.Sprintf("%s#%d", name, c)
	}
	l.paths[dst.id] = pathName{name, elem, pt.hops + 1}
	delete(l.types, dst.id)
	delete(l.reach, dst.id)
	dst.name, dst.typ, dst.depth, dst.path, dst.reach = name, elem, pt.hops+1, true, ""
}

// typeFits reports whether a pointer to t can say the type of block b: t
// is not larger than b, and b holds whole t's — or, for a pointer that is
// not a list link, t and a tail (a flexible array member).
func typeFits(t dwarf.Type, b *block, link bool) bool {
	if !b.sizeKnown || b.size == 0 {
		return true
	}
	es := uint64(typeSize(t))
	if es == 0 || es > b.size {
		return false
	}
	if link {
		return es == b.size
	}
	return true
}

// pointerLoc describes a pointer-typed location (pointerAt).
type pointerLoc struct {
	name   string     // its path ("" if none)
	named  bool       // the path may name what it points to (not only a detail)
	typ    dwarf.Type // its type
	parent dwarf.Type // the struct holding it, if any
	hops   int        // pointer hops of name from a global or stack root
}

// pointerAt describes a pointer-typed location at address a: its type,
// and its path from a global or stack variable if it has one (a block
// named after its site has none, unless it was reached through a path
// kept as a detail; that path then names nothing else).
func (n *namer) pointerAt(a, seq uint64) (pointerLoc, bool) {
	if b, _ := n.heap.find(a); b != nil {
		if b.typ == nil {
			if t, ok := n.l.types[b.id]; ok {
				b.typ = t
			}
		}
		if b.typ == nil {
			return pointerLoc{}, false
		}
		base := b.reach
		if b.path {
			base = b.name
		}
		name, lf, ok := blockLeaf(base, base != "", b.typ, a-b.base)
		if !ok || lf.off != int64(a-b.base) {
			return pointerLoc{}, false
		}
		if base == "" {
			return pointerLoc{typ: lf.typ, parent: lf.parent}, true
		}
		return pointerLoc{name: name, named: b.path, typ: lf.typ, parent: lf.parent, hops: b.depth}, true
	}
	if v, off, _, ok := n.syms.global(a); ok {
		if v.typ == nil {
			return pointerLoc{}, false
		}
		lf := typeLeaf(v.typ, int64(off))
		if lf.off != int64(off) {
			return pointerLoc{}, false
		}
		return pointerLoc{name: v.name + lf.path, named: true, typ: lf.typ, parent: lf.parent}, true
	}
	if owner := n.stackOwner(a, seq); owner != nil {
		if base, lf, start, ok := n.stackLocal(owner, a, seq); ok && lf.typ != nil && start+uint64(lf.off) == a {
			return pointerLoc{name: base + lf.path, named: true, typ: lf.typ, parent: lf.parent}, true
		}
	}
	return pointerLoc{}, false
}

// indexWindow is how many of its next accesses a thread has to use a
// DataRead's value as an array index (the runtime watches loads over the
// same distance); maxIndexValue the largest value taken for an index.
const (
	indexWindow   = 16
	maxIndexValue = 1 << 20
)

// indexWatch is a thread's latest DataReads of values small enough to be
// array indexes, oldest first: ring[head], ring[head+1], … (modulo
// indexWindow), n of them. An entry may be used up to the thread's access
// number until (its DataRead's number plus indexWindow); a used one has
// until 0 and waits to leave the ring.
type indexWatch struct {
	tick    uint64 // the thread's accesses since the watch was made
	head, n uint
	ring    [indexWindow]struct{ seq, val, until uint64 }
	// near counts the unused entries by their value and their value
	// minus one, modulo len(near): an index x with near[x%len] == 0 uses
	// none.
	near [256]uint8
}

func (iw *indexWatch) count(val uint64, d int) {
	iw.near[uint8(val)] += uint8(d)
	iw.near[uint8(val-1)] += uint8(d)
}

// indexUse finds DataReads whose value is used as an array index: the
// runtime sees a loaded value used as an address only when it is one (a
// pointer), not when it is added to one, so a count that indexes a free
// stack (free_idx[--nfree]) would pass for data and its updates would
// commute. An access by the same thread, at most indexWindow accesses
// later, to element v or v-1 of an array (a global's, a typed heap
// block's, or one inside them; elements of at least 2 bytes: strings are
// not indexed by counts) marks a DataRead of value v used, and it is
// written as a Read. A coincidence only orders more: it can hide a
// prediction, never add one.
func (n *namer) indexUse(ev *rawEvent) {
	iw := n.index[ev.Thread.idx]
	if iw != nil {
		iw.tick++
		t := iw.tick
		if iw.n > 0 {
			var buf [4]uint64
			idxs := n.arrayIndexes(ev.Addr, buf[:0])
			near := false
			for _, x := range idxs {
				near = near || iw.near[uint8(x)] != 0
			}
			if near {
				for i := uint(0); i < iw.n; i++ {
					e := &iw.ring[(iw.head+i)%indexWindow]
					if e.until < t {
						continue // used
					}
					for _, x := range idxs {
						if e.val == x || e.val == x+1 {
							n.l.indexUsed.add(e.seq)
							e.until = 0
							iw.count(e.val, -1)
							break
						}
					}
				}
			}
			// The entries whose window ends with this access.
			for iw.n > 0 && iw.ring[iw.head].until <= t {
				if e := &iw.ring[iw.head]; e.until != 0 {
					iw.count(e.val, -1)
				}
				iw.head = (iw.head + 1) % indexWindow
				iw.n--
			}
		}
	}
	if !ev.Data || ev.Val > maxIndexValue {
		return
	}
	if iw == nil {
		iw = &indexWatch{}
		n.index[ev.Thread.idx] = iw
	}
	e := &iw.ring[(iw.head+iw.n)%indexWindow]
	e.seq, e.val, e.until = ev.Seq, ev.Val, iw.tick+indexWindow
	iw.n++
	iw.count(e.val, 1)
}

// arrayIndexes appends to out the indexes of the arrays (of elements of
// 2 bytes or more) that hold address a, outermost first: a global's or a
// typed heap block's (the block itself counts as an array of its type).
func (n *namer) arrayIndexes(a uint64, out []uint64) []uint64 {
	if b, _ := n.heap.find(a); b != nil {
		t := b.typ
		if t == nil {
			t = n.l.types[b.id]
		}
		es := uint64(typeSize(t))
		if es == 0 {
			return out
		}
		off := a - b.base
		if es >= 2 && b.size >= 2*es {
			out = append(out, off/es)
		}
		return typeIndexes(t, int64(off%es), out)
	}
	if cap(out)-len(out) != 4 || !nameCaches {
		return n.globalIndexes(a, out)
	}
	if n.indexes == nil {
		n.indexes = new([staticSlots]indexEntry)
	}
	e := &n.indexes[staticSlot(a)]
	if !e.set || e.a != a {
		var buf [4]uint64
		found := n.globalIndexes(a, buf[:0])
		*e = indexEntry{a: a, set: true, n: uint8(len(found)), idx: buf}
	}
	return append(out, e.idx[:e.n]...)
}

// globalIndexes appends the indexes of the arrays of the global variable
// at a, if any (arrayIndexes).
func (n *namer) globalIndexes(a uint64, out []uint64) []uint64 {
	if v, off, _, ok := n.syms.global(a); ok && v.typ != nil {
		return typeIndexes(v.typ, int64(off), out)
	}
	return out
}

// typeIndexes appends the indexes of the arrays of t that hold byte off
// (elements of 2 bytes or more), outermost first.
func typeIndexes(t dwarf.Type, off int64, out []uint64) []uint64 {
	for depth := 0; depth < 32 && len(out) < cap(out); depth++ {
		switch u := stripType(t).(type) {
		case *dwarf.StructType:
			found := fieldAt(u, off)
			if found == nil || u.Incomplete {
				return out
			}
			off -= found.ByteOffset
			t = found.Type
		case *dwarf.ArrayType:
			es := elemSize(u)
			if es <= 0 {
				return out
			}
			if es >= 2 {
				out = append(out, uint64(off/es))
			}
			off %= es
			t = u.Type
		default:
			return out
		}
	}
	return out
}

// candKey is an access site and shape: the code at pc accessing size
// bytes at offset off of a block.
type candKey struct{ pc, off, size uint64 }

// typeCand is a struct type that accesses may vote for, with its size.
type typeCand struct {
	t    dwarf.Type
	size uint64
}

// typeVotes counts, for one block, how many of its accesses each type
// (an index into learned.typeList) explains (voteType).
type typeVotes struct {
	total int // accesses some type explains
	idx   []int32
	n     []int32
}

// maxVotes is where a block stops counting: its first accesses decide.
const maxVotes = 256

// voteType lets an access to block b at offset off say which type the
// block may have: the struct types that the accessing function's pointer
// variables point to and that have a field of exactly that offset and
// size (the code accessed buf->outcnt through its buffered_log *buf,
// although the block was only ever reached through a void *). It is the
// last resort of a block's type: a typed pointer to the block decides
// first.
func (n *namer) voteType(b *block, off, size, pc uint64) {
	l := n.l
	v := l.votes[b.id]
	if v != nil && v.total >= maxVotes {
		return
	}
	k := candKey{pc, off, size}
	cs, ok := l.cands[k]
	if !ok {
		cs = n.candidates(off, size, pc)
		l.cands[k] = cs
	}
	counted := false
	for _, c := range cs {
		if b.sizeKnown && b.size > 0 && l.typeList[c].size > b.size {
			continue
		}
		if v == nil {
			v = &typeVotes{}
			l.votes[b.id] = v
		}
		i := slices.Index(v.idx, c)
		if i < 0 {
			v.idx = append(v.idx, c)
			v.n = append(v.n, 0)
			i = len(v.idx) - 1
		}
		v.n[i]++
		counted = true
	}
	if counted {
		v.total++
	}
}

// candidates returns the types (indexes into learned.typeList) that
// explain an access of size bytes at offset off by the code at pc.
func (n *namer) candidates(off, size, pc uint64) []int32 {
	fr := n.syms.frameAt(pc)
	if fr == nil {
		return nil
	}
	var cs []int32
	for _, t := range fr.ptrs {
		es := typeSize(t)
		if es <= 0 {
			continue
		}
		in := int64(off) % es
		lf := typeLeaf(t, in)
		if lf.off != in || lf.size != int64(size) || lf.parent == nil || structName(lf.typ) != "" {
			continue
		}
		i := slices.IndexFunc(n.l.typeList, func(c typeCand) bool { return sameType(c.t, t) })
		if i < 0 {
			n.l.typeList = append(n.l.typeList, typeCand{t, uint64(es)})
			i = len(n.l.typeList) - 1
		}
		cs = append(cs, int32(i))
	}
	return cs
}

// votedType is the type most of a block's accesses fit, if at least half
// of those that fit any do. Ties go to the type of exactly the block's
// size, then to one whose size divides it, then to the larger (a struct
// explains its embedded list link as well as the link's own type does),
// then to the first name.
func (l *learned) votedType(b *block) dwarf.Type {
	v := l.votes[b.id]
	order := l.rankedVotes(b)
	if len(order) == 0 || 2*int(v.n[order[0]]) < v.total {
		return nil
	}
	return l.typeList[v.idx[order[0]]].t
}

// rankedVotes returns the indexes into the block's votes, best first (see
// votedType).
func (l *learned) rankedVotes(b *block) []int {
	v := l.votes[b.id]
	if v == nil {
		return nil
	}
	rank := func(i int) (exact, divides bool, size uint64) {
		size = l.typeList[v.idx[i]].size
		return b.size > 0 && size == b.size, b.size > 0 && size > 0 && b.size%size == 0, size
	}
	order := make([]int, len(v.idx))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		if v.n[i] != v.n[j] {
			return cmp.Compare(v.n[j], v.n[i])
		}
		ei, di, si := rank(i)
		ej, dj, sj := rank(j)
		switch {
		case ei != ej:
			if ei {
				return -1
			}
			return 1
		case di != dj:
			if di {
				return -1
			}
			return 1
		case si != sj:
			return cmp.Compare(sj, si)
		}
		return strings.Compare(structName(l.typeList[v.idx[i]].t), structName(l.typeList[v.idx[j]].t))
	})
	return order
}

// fittingType returns the best type the block's accesses voted for that
// fits every access noted in acc exactly (nil if none does): each access
// of up to 8 bytes is one whole leaf, not a part and not two (an 8-byte
// access of two 4-byte fields says the type is another); a longer one (a
// copy) starts at a leaf.
func (l *learned) fittingType(b *block, acc []uint8) dwarf.Type {
	v := l.votes[b.id]
	for _, i := range l.rankedVotes(b) {
		if t := l.typeList[v.idx[i]].t; fitsExactly(t, acc) {
			return t
		}
	}
	return nil
}

// fitsExactly reports whether every access noted in acc is a whole leaf of
// typ (repeated over the block), or, if longer than 8 bytes, starts at one.
// Bit-fields always fit.
func fitsExactly(typ dwarf.Type, acc []uint8) bool {
	es := typeSize(typ)
	if typ == nil || es <= 0 {
		return false
	}
	for off, s := range acc {
		if s == 0 {
			continue
		}
		o := int64(off)
		idx := o / es
		lf := typeLeaf(typ, o-idx*es)
		if lf.bits {
			continue
		}
		if lf.size <= 0 || idx*es+lf.off != o || s <= 8 && int64(s) != lf.size {
			return false
		}
	}
	return true
}

// blockLeaf names offset off in a block of type typ: base->outcnt for the
// first element of a struct reached through a pointer (path), base.outcnt
// for a block named after its site, base[2].x for later elements, base[3]
// for scalars.
func blockLeaf(base string, path bool, typ dwarf.Type, off uint64) (string, leaf, bool) {
	es := typeSize(typ)
	if typ == nil || es <= 0 {
		return "", leaf{}, false
	}
	idx := int64(off) / es
	lf := typeLeaf(typ, int64(off)-idx*es)
	lf.off += idx * es
	_, isStruct := stripType(typ).(*dwarf.StructType)
	switch {
	case isStruct && idx == 0 && strings.HasPrefix(lf.path, ".") && path:
		return base + "->" + lf.path[1:], lf, true
	case isStruct && idx == 0 && strings.HasPrefix(lf.path, "."):
		return base + lf.path, lf, true
	default:
		return fmt.Sprintf("%s[%d]%s", base, idx, lf.path), lf, true
	}
}

// key returns the location key of address a.
func (n *namer) key(a uint64) locKey {
	if b, _ := n.heap.find(a); b != nil {
		return locKey{b.id, a - b.base}
	}
	return locKey{0, a}
}

// learnMixed is the pass that finds plain accesses to atomic locations.
func (n *namer) learnMixed(ev *rawEvent) {
	switch ev.Kind {
	case kAlloc, kUAlloc, kFree, kUFree:
		n.track(ev)
	case kRead, kWrite, kRead8:
		size := ev.Extra
		if ev.Kind == kRead8 {
			size = 8
		}
		size = min(max(size, 1), 64)
		for i := uint64(0); i < size; i++ {
			k := n.key(ev.Addr + i)
			if n.l.atomGran[locKey{k.id, k.off >> 3}] && n.l.atomics[k] {
				n.l.mixed[k] = true
			}
		}
	}
}

// replay is the second pass's view of Alloc and Free: blocks get the
// names learned in the first pass.
func (n *namer) replay(ev *rawEvent) *block {
	b := n.track(ev)
	if b == nil || b.id != ev.Seq || (ev.Kind != kAlloc && ev.Kind != kUAlloc) {
		return b
	}
	if p, ok := n.l.paths[b.id]; ok {
		b.name, b.typ, b.path = p.name, p.typ, true
		b.depth = p.depth
		b.misfit = n.l.misfit[b.id]
		return b
	}
	b.misfit = n.l.misfit[b.id]
	ord := b.ordinal
	b.typ = n.l.types[b.id]
	if b.typ == nil {
		b.typ = n.l.votedType(b)
	}
	b.tname = structName(b.typ)
	if r, ok := n.l.reach[b.id]; ok {
		b.reach = r.name
	}
	site := b.fn + "@" + n.syms.site(b.site)
	b.name = site
	if si := n.l.sites[site]; si != nil && si.blocks > 1 {
		if len(si.threads) > 1 {
			b.name = fmt.Sprintf("%s#t%d.%d", site, b.thread, ord)
		} else {
			b.name = fmt.Sprintf("%s#%d", site, ord)
		}
	}
	return b
}

// reachedAs is the detail of the variable holding address a that nameAt
// named last, if it is in a heap block not named after its path: the
// pointer path the program first reached it through
// (head->next->next->next->count), or "".
func (n *namer) reachedAs(a uint64) string {
	b := n.reached
	if b == nil || b.typ == nil || a < b.base {
		return ""
	}
	name, _, ok := blockLeaf(b.reach, true, b.typ, a-b.base)
	if !ok {
		return ""
	}
	return name
}

// stackOwner returns the thread whose stack holds address a at seq (a dead
// thread's stack may be reused by a later one), or nil.
func (n *namer) stackOwner(a, seq uint64) *rawThread {
	if a < n.stackLo || a >= n.stackHi {
		return nil // below or above every stack (globals, the heap)
	}
	return n.stackOwner1(a, seq)
}

func (n *namer) stackOwner1(a, seq uint64) *rawThread {
	var best *rawThread
	bestSeq := uint64(0)
	i := sort.Search(len(n.stacks), func(i int) bool { return n.stacks[i].StackLo > a })
	for j := i - 1; j >= 0 && n.maxHi[j] > a; j-- {
		t := n.stacks[j]
		if a >= t.StackHi {
			continue
		}
		f, ok := n.l.firstSeq[t.Token]
		if !ok {
			f = ^uint64(0)
		}
		// The latest to start at or before seq; failing that the first
		// to start after it.
		switch {
		case best == nil:
		case f <= seq && (bestSeq > seq || f > bestSeq):
		case f > seq && bestSeq > seq && f < bestSeq:
		default:
			continue
		}
		best, bestSeq = t, f
	}
	return best
}

// tlsOwner returns the thread whose static TLS block holds a, or nil.
func (n *namer) tlsOwner(a uint64) *rawThread {
	for _, t := range n.threads {
		if a >= t.TLSLo && a < t.TLSHi {
			return t
		}
	}
	return nil
}

// stackLocal finds the local variable of owner's stack that holds a at
// seq: the nearest described frame above a whose function has a local
// there. It returns the variable's qualified name (main::ctx), the leaf
// of its type holding a, and the variable's address.
func (n *namer) stackLocal(owner *rawThread, a, seq uint64) (string, leaf, uint64, bool) {
	tf := n.l.frames[owner.Token]
	if tf == nil {
		return "", leaf{}, 0, false
	}
	i := sort.Search(len(tf.cfas), func(i int) bool { return tf.cfas[i] > a })
	for j := i; j < len(tf.cfas) && j < i+16; j++ {
		cfa := tf.cfas[j]
		rec := tf.at(cfa, seq)
		fr := n.syms.frameAt(rec.pc)
		if fr == nil {
			continue
		}
		v, ok := fr.local(int64(a) - int64(cfa))
		if !ok {
			continue
		}
		start := uint64(int64(cfa) + v.off)
		base := fr.name + "::" + v.name
		if v.typ == nil {
			return base, leaf{off: 0, size: v.size}, start, true
		}
		lf := typeLeaf(v.typ, int64(a-start))
		return base, lf, start, true
	}
	return "", leaf{}, 0, false
}

// stackName names address a of owner's stack at seq and returns where the
// variable (leaf) ends.
func (n *namer) stackName(owner *rawThread, a, end, seq uint64) (string, uint64) {
	base, lf, start, ok := n.stackLocal(owner, a, seq)
	if !ok {
		return fmt.Sprintf("stack:t%d-%d", owner.Token, owner.StackHi-a), end
	}
	if len(n.l.owners[base]) > 1 {
		base = fmt.Sprintf("%s@t%d", base, owner.Token)
	}
	if lf.typ == nil && lf.size > 0 {
		if a == start {
			return base, start + uint64(lf.size)
		}
		return fmt.Sprintf("%s+%d", base, a-start), end
	}
	return base + lf.path, start + uint64(lf.off+max(lf.size, 1))
}

// nameAt names the variable holding address a of an access that ends at
// end at seq, and returns where that variable ends (the next variable of
// a long access starts there). The name is "" for memory that is never a
// shared variable: read-only data.
func (n *namer) nameAt(a, end, seq uint64) (string, uint64) {
	name, next := n.nameAt1(a, end, seq)
	if next <= a || next > end {
		next = end
	}
	return name, next
}

func (n *namer) nameAt1(a, end, seq uint64) (string, uint64) {
	n.reached = nil
	if b, bend := n.heap.find(a); b != nil {
		if b.reach != "" {
			n.reached = b
		}
		return n.heapName(b, bend, a, end)
	}
	switch name, next, how := n.static(a); how {
	case staticTo:
		return name, next
	case staticToEnd:
		return name, end
	}
	if t := n.tlsOwner(a); t != nil {
		return fmt.Sprintf("tls:t%d+%d", t.Token, a-t.TLSLo), end
	}
	if t := n.stackOwner(a, seq); t != nil {
		return n.stackName(t, a, end, seq)
	}
	return fmt.Sprintf("0x%x", a), end
}

// How staticName names an address.
const (
	staticUnset = iota // (a cache slot not filled)
	staticNone         // not at all: it is in no module
	staticTo           // the variable ends at next
	staticToEnd        // the name covers the rest of the access
)

// static is staticName(a), cached.
func (n *namer) static(a uint64) (name string, next uint64, how uint8) {
	if !nameCaches {
		return n.staticName(a)
	}
	if n.statics == nil {
		n.statics = new([staticSlots]staticEntry)
	}
	e := &n.statics[staticSlot(a)]
	if e.how == staticUnset || e.a != a {
		name, next, how := n.staticName(a)
		*e = staticEntry{a: a, name: name, next: next, how: how}
	}
	return e.name, e.next, e.how
}

// staticName names address a outside the heap if it is in a loaded
// module: read-only data (""), a global variable, or else an offset in
// the module. The name and where it ends depend on a alone, so nameAt
// caches them.
func (n *namer) staticName(a uint64) (name string, next uint64, how uint8) {
	if n.syms.readOnly(a) {
		return "", 0, staticToEnd
	}
	if v, off, _, ok := n.syms.global(a); ok {
		start := a - off
		if v.typ == nil {
			if off == 0 {
				return v.name, start + v.size, staticTo
			}
			return fmt.Sprintf("%s+%d", v.name, off), 0, staticToEnd
		}
		lf := typeLeaf(v.typ, int64(off))
		return v.name + lf.path, start + uint64(lf.off+max(lf.size, 1)), staticTo
	}
	if mi, ok := n.syms.module(a); ok {
		m := n.syms.mods[mi]
		return fmt.Sprintf("%s+0x%x", filepath.Base(m.Path), a-m.Bias), 0, staticToEnd
	}
	return "", 0, staticNone
}

// heapName names address a of block b (which ends at bend).
func (n *namer) heapName(b *block, bend, a, end uint64) (string, uint64) {
	off := a - b.base
	if b.typ == nil {
		return fmt.Sprintf("%s+%d", b.name, off), min(end, bend)
	}
	k := locKey{b.id, off}
	if c, ok := n.leafNames[k]; ok {
		if c.plain {
			n.reached = nil
		}
		return c.name, min(b.base+c.end, bend)
	}
	var name string
	var lf leaf
	ok := false
	if es := typeSize(b.typ); len(b.misfit) > 0 && es > 0 {
		// A leaf of the type that the accesses do not fit (checkFit):
		// named by offset, as in an untyped block.
		idx := int64(off) / es
		lf = typeLeaf(b.typ, int64(off)-idx*es)
		lf.off += idx * es
		if slices.Contains(b.misfit, leafKey{lf.off, lf.size}) {
			n.reached = nil
			c := leafName{fmt.Sprintf("%s+%d", b.name, off), uint64(lf.off + max(lf.size, 1)), true}
			n.cacheLeaf(k, c)
			return c.name, min(b.base+c.end, bend)
		}
	}
	if b.tname != "" {
		// Named by type and site: node.count(calloc@list.c:50#4).
		if name, lf, ok = blockLeaf(b.tname, false, b.typ, off); ok {
			name += "(" + b.name + ")"
		}
	}
	if !ok {
		name, lf, ok = blockLeaf(b.name, b.path, b.typ, off)
	}
	if !ok {
		return fmt.Sprintf("%s+%d", b.name, off), min(end, bend)
	}
	c := leafName{name, uint64(lf.off + max(lf.size, 1)), false}
	n.cacheLeaf(k, c)
	return c.name, min(b.base+c.end, bend)
}

// cacheLeaf keeps the name of location k.
func (n *namer) cacheLeaf(k locKey, c leafName) {
	if len(n.leafNames) >= maxLeafNames {
		clear(n.leafNames)
	}
	n.leafNames[k] = c
}

// leafName is a typed heap location's name and where its leaf ends
// (relative to the block): typeLeaf for every access would cost more
// than the rest of the conversion.
type leafName struct {
	name  string
	end   uint64
	plain bool // named by offset: the leaf does not fit the accesses
}

// maxLeafNames bounds the cache of heap location names.
const maxLeafNames = 1 << 20

// sharedStack reports whether address a, if it is in a thread's stack,
// is accessed by several threads (only those stack locations are written).
func (n *namer) sharedStack(a, seq uint64) bool {
	owner := n.stackOwner(a, seq)
	if owner == nil {
		return true
	}
	s := n.l.stack[stackKey{owner.Token, a >> 3}]
	return s != nil && s.multi
}

// syncName names a synchronisation object (the whole of it: the start of
// the leaf at a).
func (n *namer) syncName(a, seq uint64) string {
	name, _ := n.nameAt(a, a+1, seq)
	if name == "" {
		name = fmt.Sprintf("0x%x", a) // a lock in read-only memory?
	}
	return name
}

// blockObject is the object of a block's Alloc and Free events: its name
// with a '*', which no access has (an access to a block is named after
// one of its fields or offsets), so the predictor never mixes the two.
func blockObject(b *block) string {
	if b == nil || b.name == "" {
		return "*heap"
	}
	return "*" + b.name
}
