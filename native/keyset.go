package native

// keySet is a set of state keys: open addressing with linear probing in a
// power-of-two table. The searches ask it once per transition; a Go map
// of uint64 took a third of a server trace's joint search in hashing,
// probing and growing.
type keySet struct {
	slots   []uint64 // key+1; 0: empty
	used    []uint32 // the slots taken, for reset
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
	s.used = s.used[:0]
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
			s.used = append(s.used, uint32(i))
			return
		}
	}
}

// reset empties the set, keeping its table: a search that only needs to
// tell apart the states of one layer empties it at each layer.
func (s *keySet) reset() {
	if len(s.used) >= len(s.slots)/8 {
		clear(s.slots)
	} else {
		for _, i := range s.used {
			s.slots[i] = 0
		}
	}
	s.used, s.n, s.zero = s.used[:0], 0, false
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
			s.used = append(s.used, uint32(i))
			if s.n++; s.n > s.maxLoad {
				s.resize(2 * len(s.slots))
			}
			return true
		}
	}
}

// keyMap maps state keys to values, as keySet stores keys: the joint
// search's table of automaton steps is asked once per transition.
type keyMap struct {
	keys    []uint64 // key+1; 0: empty
	vals    []uint64
	n       int
	zero    bool // the key ^0 has a value, zeroVal
	zeroVal uint64
	shift   uint
	maxLoad int
}

// newKeyMap returns an empty map sized for about hint keys.
func newKeyMap(hint int) *keyMap {
	m := &keyMap{}
	size := 16
	for size*3/4 < hint {
		size *= 2
	}
	m.resize(size)
	return m
}

// reset empties the map, keeping its table.
func (m *keyMap) reset() {
	clear(m.keys)
	m.n, m.zero, m.zeroVal = 0, false, 0
}

func (m *keyMap) resize(size int) {
	oldK, oldV := m.keys, m.vals
	m.keys, m.vals = make([]uint64, size), make([]uint64, size)
	m.shift = 64
	for n := size; n > 1; n >>= 1 {
		m.shift--
	}
	m.maxLoad = size * 3 / 4
	for i, k := range oldK {
		if k != 0 {
			j := m.slot(k)
			m.keys[j], m.vals[j] = k, oldV[i]
		}
	}
}

// slot returns the slot of slot value k (key+1): its own, or the empty
// one where it goes.
func (m *keyMap) slot(k uint64) uint64 {
	mask := uint64(len(m.keys) - 1)
	i := (k * 0x9E3779B97F4A7C15) >> m.shift
	for m.keys[i] != k && m.keys[i] != 0 {
		i = (i + 1) & mask
	}
	return i
}

// get returns the value of key k and whether it has one.
func (m *keyMap) get(k uint64) (uint64, bool) {
	if k+1 == 0 {
		return m.zeroVal, m.zero
	}
	i := m.slot(k + 1)
	return m.vals[i], m.keys[i] != 0
}

// put sets the value of key k.
func (m *keyMap) put(k, v uint64) {
	if k+1 == 0 {
		m.zero, m.zeroVal = true, v
		return
	}
	i := m.slot(k + 1)
	if m.keys[i] == 0 {
		m.keys[i] = k + 1
		if m.n++; m.n > m.maxLoad {
			m.vals[i] = v
			m.resize(2 * len(m.keys))
			return
		}
	}
	m.vals[i] = v
}
