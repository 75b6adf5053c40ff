package px86

import (
	"math/bits"
	"slices"
)

// The model keeps the lines holding unpersisted stores in the hash table of table.go, keyed by
// line index (address >> log2(line size)). For every registered address range (AddRange: the
// driver registers every mapped PM region) it also keeps a bitmap of the range's lines that
// are in the table, one bit per line (2 KiB per MiB of PM with 64-byte lines). The bitmap
//
//   - answers "no unpersisted store on this line", the common answer for a store to a line
//     not written since it was last persisted, from a small array that stays in the cache,
//     without probing the table;
//   - lists the lines of an address range in address order (a pool close, a transaction's
//     ranges at commit) by scanning words of bits, whatever the size of the table.
//
// Lines outside every registered range (a model used without AddRange, as in the unit tests,
// or stores outside every region) are found by probing the table alone; m.outside counts them.

// maxSpaceWords bounds a range's bitmap (8 MiB: 32 GiB of PM with 64-byte lines); a larger
// range is not registered.
const maxSpaceWords = 1 << 20

// space is a registered range of line indexes [first, first+n).
type space struct {
	first, n uint64
	present  []uint64 // bit i: line first+i is in the table
}

func (s *space) has(off uint64) bool { return s.present[off>>6]&(1<<(off&63)) != 0 }

// spaceOf returns the registered range holding line idx, nil when none does.
func (m *Of[P]) spaceOf(idx uint64) *space {
	if s := m.cur; s != nil && idx-s.first < s.n {
		return s
	}
	for _, s := range m.spaces {
		if idx-s.first < s.n {
			m.cur = s
			return s
		}
	}
	return nil
}

// get returns the line with index idx, nil when it holds no unpersisted store.
func (m *Of[P]) get(idx uint64) *line[P] {
	if s := m.spaceOf(idx); s != nil {
		if !s.has(idx - s.first) {
			return nil
		}
	} else if m.outside == 0 {
		return nil
	}
	return m.lines.get(idx)
}

// put indexes l (its idx must not be indexed yet).
func (m *Of[P]) put(l *line[P]) {
	m.lines.put(l)
	if s := m.spaceOf(l.idx); s != nil {
		off := l.idx - s.first
		s.present[off>>6] |= 1 << (off & 63)
	} else {
		m.outside++
	}
}

// unindex removes l from the index.
func (m *Of[P]) unindex(l *line[P]) {
	m.lines.del(l.idx)
	if s := m.spaceOf(l.idx); s != nil {
		off := l.idx - s.first
		s.present[off>>6] &^= 1 << (off & 63)
	} else {
		m.outside--
	}
}

// AddRange tells the model that [addr, addr+size) is a PM region that will receive stores, so
// that it keeps a bitmap of the range's lines (the driver calls it when a region is mapped). It
// changes no persistency state. A range that overlaps an already registered one, or is larger
// than the bitmaps allow, is not registered.
func (m *Of[P]) AddRange(addr, size uint64) {
	first, last, ok := m.lineSpan(addr, size)
	if !ok {
		return
	}
	n := last - first + 1
	if n == 0 || (n+63)>>6 > maxSpaceWords {
		return
	}
	for _, s := range m.spaces {
		if first < s.first+s.n && s.first <= last {
			return
		}
	}
	s := &space{first: first, n: n, present: make([]uint64, (n+63)>>6)}
	if m.outside > 0 { // lines already in the range
		m.lines.each(func(l *line[P]) {
			if off := l.idx - first; off < n {
				s.present[off>>6] |= 1 << (off & 63)
				m.outside--
			}
		})
	}
	i, _ := slices.BinarySearchFunc(m.spaces, first, func(s *space, f uint64) int {
		if s.first < f {
			return -1
		}
		if s.first > f {
			return 1
		}
		return 0
	})
	m.spaces = slices.Insert(m.spaces, i, s)
}

// RemoveRange undoes AddRange(addr, size) (the region was unmapped). The unpersisted stores of
// the range, if any are left, are kept.
func (m *Of[P]) RemoveRange(addr, size uint64) {
	first, last, ok := m.lineSpan(addr, size)
	if !ok {
		return
	}
	for i, s := range m.spaces {
		if s.first == first && s.n == last-first+1 {
			for _, w := range s.present {
				for ; w != 0; w &= w - 1 {
					m.outside++
				}
			}
			m.spaces = slices.Delete(m.spaces, i, i+1)
			m.cur = nil
			return
		}
	}
}

// lineSpan returns the indexes of the first and last cache lines of [addr, addr+size), clipped
// at the end of the address space; ok is false for an empty range.
func (m *Of[P]) lineSpan(addr, size uint64) (first, last uint64, ok bool) {
	if size == 0 {
		return 0, 0, false
	}
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	return addr >> m.shift, (end - 1) >> m.shift, true
}

// collect returns the indexed lines overlapping [addr, addr+size) in address order, in a
// scratch slice that is valid until the next call (callers may remove the lines it returns).
func (m *Of[P]) collect(addr, size uint64) []*line[P] {
	ls := m.scratch[:0]
	first, last, ok := m.lineSpan(addr, size)
	if !ok || m.lines.n == 0 {
		return ls
	}
	for _, s := range m.spaces { // in address order
		if last < s.first || s.first+s.n-1 < first {
			continue
		}
		lo, hi := max(first, s.first)-s.first, min(last, s.first+s.n-1)-s.first // offsets, inclusive
		for wi := lo >> 6; wi <= hi>>6; wi++ {
			w := s.present[wi]
			if wi == lo>>6 {
				w &^= 1<<(lo&63) - 1 // bits below lo
			}
			if wi == hi>>6 && hi&63 != 63 {
				w &= 1<<(hi&63+1) - 1 // bits up to hi
			}
			for ; w != 0; w &= w - 1 {
				ls = append(ls, m.lines.get(s.first+wi<<6+uint64(bits.TrailingZeros64(w))))
			}
		}
	}
	if m.outside > 0 {
		dense := len(ls)
		if last-first < uint64(len(m.lines.slots)) { // fewer indexes than slots: probe each
			for idx := first; ; idx++ {
				if m.spaceOf(idx) == nil {
					if l := m.lines.get(idx); l != nil {
						ls = append(ls, l)
					}
				}
				if idx == last {
					break
				}
			}
		} else {
			m.lines.each(func(l *line[P]) {
				if l.idx >= first && l.idx <= last && m.spaceOf(l.idx) == nil {
					ls = append(ls, l)
				}
			})
		}
		if len(ls) > dense {
			slices.SortFunc(ls, func(a, b *line[P]) int {
				if a.idx < b.idx {
					return -1
				}
				if a.idx > b.idx {
					return 1
				}
				return 0
			})
		}
	}
	m.scratch = ls
	return ls
}

// eachLine calls fn for every indexed line, in an unspecified order (fn must not change the
// index).
func (m *Of[P]) eachLine(fn func(*line[P])) {
	m.lines.each(fn)
}
