package native

// keySet is a set of state keys: open addressing with linear probing in a
// power-of-two table. The searches ask it once per transition; a Go map
// of uint64 took a third of a server trace's joint search in hashing,
// probing and growing.
type keySet struct {
	slots   []uint64 // key+1; 0: empty
	n       int
	zero    bool // the key ^0 (its slot value would wrap to 0)
	shift   uint
	maxLoad int
}

// newKeySet returns a set sized for about hint keys.
func newKeySet(hint int) *keySet {
	s := &keySet{}
	size := 16
	for size*3/4 < hint {
		size *= 2
	}
	s.resize(size)
	return s
}

func (s *keySet) resize(size int) {
	old := s.slots
	s.slots = make([]uint64, size)
	s.shift = 64
	for n := size; n > 1; n >>= 1 {
		s.shift--
	}
	s.maxLoad = size * 3 / 4
	for _, v := range old {
		if v != 0 {
			s.place(v)
		}
	}
}

// place puts slot value v (key+1, not in the table) into the table.
func (s *keySet) place(v uint64) {
	mask := uint64(len(s.slots) - 1)
	for i := (v * 0x9E3779B97F4A7C15) >> s.shift; ; i = (i + 1) & mask {
		if s.slots[i] == 0 {
			s.slots[i] = v
			return
		}
	}
}

// add adds key k and reports whether it was new.
func (s *keySet) add(k uint64) bool {
	v := k + 1
	if v == 0 {
		if s.zero {
			return false
		}
		s.zero = true
		return true
	}
	mask := uint64(len(s.slots) - 1)
	for i := (v * 0x9E3779B97F4A7C15) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return false
		case 0:
			s.slots[i] = v
			if s.n++; s.n > s.maxLoad {
				s.resize(2 * len(s.slots))
			}
			return true
		}
	}
}
