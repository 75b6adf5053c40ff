package px86

// lineTable maps a cache-line index to its *line: open addressing with linear probing and
// backward-shift deletion, so that inserting and deleting the lines of a workload that touches
// ever new cache lines costs a few memory accesses and no allocation (a Go map of the same
// shape was the model's largest cost).
type lineTable[P any] struct {
	slots []slot[P]
	mask  uint64
	shift uint // 64 - log2(len(keys))
	n     int
}

// slot keeps key and value side by side: one cache miss per probe.
type slot[P any] struct {
	key uint64 // line index + 1; 0 marks an empty slot
	l   *line[P]
}

func (t *lineTable[P]) init(logSize uint) {
	size := uint64(1) << logSize
	t.slots = make([]slot[P], size)
	t.mask = size - 1
	t.shift = 64 - logSize
	t.n = 0
}

func (t *lineTable[P]) slot(idx uint64) uint64 {
	return ((idx + 1) * 0x9E3779B97F4A7C15) >> t.shift
}

func (t *lineTable[P]) get(idx uint64) *line[P] {
	k := idx + 1
	for i := t.slot(idx); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		switch s.key {
		case k:
			return s.l
		case 0:
			return nil
		}
	}
}

// put inserts l (its idx must not be present).
func (t *lineTable[P]) put(l *line[P]) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	i := t.slot(l.idx)
	for t.slots[i].key != 0 {
		i = (i + 1) & t.mask
	}
	t.slots[i] = slot[P]{l.idx + 1, l}
	t.n++
}

func (t *lineTable[P]) grow() {
	old := t.slots
	t.init(uint(64-t.shift) + 1)
	for _, s := range old {
		if s.key != 0 {
			j := t.slot(s.key - 1)
			for t.slots[j].key != 0 {
				j = (j + 1) & t.mask
			}
			t.slots[j] = s
			t.n++
		}
	}
}

// del removes idx, shifting later entries of its probe run back.
func (t *lineTable[P]) del(idx uint64) {
	k := idx + 1
	i := t.slot(idx)
	for t.slots[i].key != k {
		if t.slots[i].key == 0 {
			return
		}
		i = (i + 1) & t.mask
	}
	for {
		t.slots[i] = slot[P]{}
		j := i
		for {
			j = (j + 1) & t.mask
			if t.slots[j].key == 0 {
				t.n--
				return
			}
			home := t.slot(t.slots[j].key - 1)
			// Move j back to i when its home slot is not cyclically in (i, j].
			if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
				t.slots[i] = t.slots[j]
				i = j
				break
			}
		}
	}
}

// each calls fn for every line (fn must not modify the table).
func (t *lineTable[P]) each(fn func(*line[P])) {
	for _, s := range t.slots {
		if s.key != 0 {
			fn(s.l)
		}
	}
}
