package infer

// writer identifies the store (or external write) that last wrote a PM byte, packed in one
// word: the event index in bits 24..62, the compact index of the store's site in the low 24
// bits (0 for bytes written by library code or present at map time, which have no store site).
// The zero writer is "not written during the trace". Bit 63 is the shadow's "mixed word" mark.
type writer uint64

const (
	siteBits = 24
	mixed    = writer(1) << 63
)

func mkWriter(ev uint64, site int32) writer {
	return writer(ev<<siteBits|uint64(site)) &^ mixed
}

// site is the compact index of the store's site (0: none).
func (w writer) site() int32 { return int32(w & (1<<siteBits - 1)) }

// event is the index of the writing event.
func (w writer) event() uint64 { return uint64(w&^mixed) >> siteBits }

const (
	pageShift = 12
	pageSize  = 1 << pageShift
	pageWords = pageSize / 8
)

// page holds the writer of each aligned 8-byte word of 4 KiB of PM; a word whose bytes have
// different writers holds the mark `mixed` and its bytes are in shadow.bytes.
type page [pageWords]writer

// shadow maps every PM byte to its last writer (the memory-level data dependence of WITCHER
// §4.3.2): pages of 4 KiB allocated on first write, one writer per aligned 8-byte word (memory
// follows the bytes written: 4 KiB per 4 KiB page), and a side table for the words written in
// parts by different stores.
type shadow struct {
	pages  map[uint64]*page
	bytes  map[uint64]*[8]writer // by word address
	lastNo uint64
	last   *page
}

func newShadow() *shadow { return &shadow{pages: map[uint64]*page{}, bytes: map[uint64]*[8]writer{}} }

func (s *shadow) get(no uint64, create bool) *page {
	if s.last != nil && s.lastNo == no {
		return s.last
	}
	p := s.pages[no]
	if p == nil {
		if !create {
			return nil
		}
		p = new(page)
		s.pages[no] = p
	}
	s.last, s.lastNo = p, no
	return p
}

// setBytes records w as the writer of bytes [lo, hi) of the word at wa, held in *e.
func (s *shadow) setBytes(e *writer, wa uint64, lo, hi uint64, w writer) {
	arr := s.bytes[wa]
	if *e != mixed || arr == nil {
		arr = new([8]writer)
		for i := range arr {
			arr[i] = *e
		}
	}
	for i := lo; i < hi; i++ {
		arr[i] = w
	}
	for i := 1; i < 8; i++ {
		if arr[i] != arr[0] {
			s.bytes[wa] = arr
			*e = mixed
			return
		}
	}
	delete(s.bytes, wa)
	*e = arr[0]
}

// write records w as the writer of [addr, addr+size). The zero writer clears (initial content)
// without allocating pages.
func (s *shadow) write(addr, size uint64, w writer) {
	end := addr + size
	if end < addr {
		end = ^uint64(0) &^ 7
	}
	for a := addr; a < end; {
		no := a >> pageShift
		pend := min(end, (no+1)<<pageShift)
		p := s.get(no, w != 0)
		if p == nil {
			a = pend
			continue
		}
		if w == 0 && a == no<<pageShift && pend == (no+1)<<pageShift {
			s.dropPage(no)
			a = pend
			continue
		}
		for a < pend {
			wa := a &^ 7
			e := &p[(wa>>3)&(pageWords-1)]
			if a == wa && pend-a >= 8 {
				if *e == mixed {
					delete(s.bytes, wa)
				}
				*e = w
				a += 8
				continue
			}
			hi := min(pend, wa+8)
			if *e != w || *e == mixed {
				s.setBytes(e, wa, a-wa, hi-wa, w)
			}
			a = hi
		}
	}
}

// read returns the most recent writer of the bytes of [addr, addr+size) (the one with the
// highest event index), or 0 when none was written during the trace.
func (s *shadow) read(addr, size uint64) writer {
	var best writer
	end := addr + size
	if end < addr {
		end = ^uint64(0) &^ 7
	}
	for a := addr; a < end; {
		no := a >> pageShift
		pend := min(end, (no+1)<<pageShift)
		p := s.get(no, false)
		if p == nil {
			a = pend
			continue
		}
		for a < pend {
			wa := a &^ 7
			hi := min(pend, wa+8)
			e := p[(wa>>3)&(pageWords-1)]
			if e == mixed {
				if arr := s.bytes[wa]; arr != nil {
					for i := a - wa; i < hi-wa; i++ {
						if arr[i].event() > best.event() {
							best = arr[i]
						}
					}
				}
			} else if e.event() > best.event() {
				best = e
			}
			a = hi
		}
	}
	return best
}

func (s *shadow) dropPage(no uint64) {
	p := s.pages[no]
	if p == nil {
		return
	}
	for i, e := range p {
		if e == mixed {
			delete(s.bytes, no<<pageShift+uint64(i)*8)
		}
	}
	delete(s.pages, no)
	s.last = nil
}

// drop forgets [addr, addr+size) (a region unmapped or mapped anew).
func (s *shadow) drop(addr, size uint64) {
	if size == 0 {
		return
	}
	first, last := addr>>pageShift, (addr+size-1)>>pageShift
	var nos []uint64
	if last-first > uint64(len(s.pages)) {
		for no := range s.pages {
			if no >= first && no <= last {
				nos = append(nos, no)
			}
		}
	} else {
		for no := first; no <= last; no++ {
			if _, ok := s.pages[no]; ok {
				nos = append(nos, no)
			}
		}
	}
	for _, no := range nos {
		lo, hi := no<<pageShift, (no+1)<<pageShift
		if addr <= lo && hi <= addr+size {
			s.dropPage(no)
			continue
		}
		s.write(max(lo, addr), min(hi, addr+size)-max(lo, addr), 0)
	}
	s.last = nil
}
