package crash

import (
	"fmt"
	"math/bits"

	"github.com/scry-pm/scry/image"
	"github.com/scry-pm/scry/trace"
)

// Unit flags.
const (
	UnitNT       uint8 = 1 << 0 // part of a non-temporal store
	UnitExternal uint8 = 1 << 1 // written by uninstrumented (library) code, not flagged persisted
	UnitMerged   uint8 = 1 << 2 // several units joined because the line held too many (MaxUnitsPerLine)
)

// MaxUnitsPerLine bounds the unpersisted units kept for one cache line, like
// px86.MaxEntriesPerLine: a line that would exceed it has its two oldest units of the same
// state (dirty or flush-pending) merged into one, which then persists all or nothing. This
// coarsens the states of lines stored to this often without ever being persisted; it keeps the
// engine's memory bounded by the number of lines, not by the length of the trace.
const MaxUnitsPerLine = 64

// Unit is one failure-atomic piece of an unpersisted store: its bytes on one cache line within
// one aligned 8-byte word (a merged unit may be wider, see MaxUnitsPerLine).
type Unit struct {
	Store   uint64 // the store's trace event index (its id)
	Seq     uint64 // position of the unit in program order: ascending by (Store, Addr)
	Addr    uint64 // virtual address of the first byte
	Size    int    // bytes
	Segment uint64 // the segment the store was issued in: the number of fences before it
	Site    uint32 // the store's site
	Stack   uint32 // the store's call-stack node
	Flags   uint8  // UnitNT, UnitExternal, UnitMerged
	Old     []byte // the Size bytes this unit overwrote (the image before it)
}

// Line is one cache line with unpersisted units, in program order. The first Pending units
// are flush-pending (flushed or non-temporal, durable at the next fence), the rest dirty.
type Line struct {
	Addr    uint64 // virtual address of the line's first byte
	Region  *image.Region
	Units   []Unit
	Pending int

	inPending bool
}

// tracker keeps the unpersisted units of every cache line and the replayed image.
type tracker struct {
	lineSize uint64
	shift    uint
	rp       *image.Replayer
	lines    map[uint64]*Line // line index -> line; only lines with units
	pending  []*Line          // lines with flush-pending units (may hold stale entries)
	seq      uint64
	units    int
	segment  uint64
	// Incremental images (ImageWriter): gen counts crash points; pageGen records, per region
	// and page, the gen during which the page was last written.
	gen     uint64
	pageGen map[*image.Region]map[uint64]uint64
}

func newTracker(lineSize uint64) (*tracker, error) {
	if lineSize < 8 || lineSize > 4096 || lineSize&(lineSize-1) != 0 {
		return nil, fmt.Errorf("crash: cache-line size %d bytes is not a power of two from 8 to 4096", lineSize)
	}
	return &tracker{
		lineSize: lineSize,
		shift:    uint(bits.TrailingZeros64(lineSize)),
		rp:       image.NewReplayer(),
		lines:    make(map[uint64]*Line),
		pageGen:  make(map[*image.Region]map[uint64]uint64),
	}, nil
}

// store records the units of an unpersisted write (STORE, NT_STORE, EXTERNAL_WRITE not flagged
// persisted), with the bytes each overwrites, then applies the write to the image.
func (t *tracker) store(ev *trace.Event, flags uint8) error {
	size := uint64(len(ev.Data))
	g := t.rp.RegionAt(ev.Addr)
	if size == 0 || g == nil || size > g.Length-(ev.Addr-g.Base) {
		return t.rp.Apply(ev) // reports the error, or ignores an empty write
	}
	end := ev.Addr + size
	for a := ev.Addr; a < end; {
		idx := a >> t.shift
		lineEnd := (idx + 1) << t.shift
		hi := min(end, lineEnd)
		l := t.lines[idx]
		if l == nil {
			l = &Line{Addr: idx << t.shift, Region: g}
			t.lines[idx] = l
		}
		for u := a; u < hi; {
			w := min(hi, (u+8)&^7)
			if len(l.Units) >= MaxUnitsPerLine {
				t.merge(l)
			}
			old := make([]byte, w-u)
			g.ReadAt(old, int64(u-g.Base))
			l.Units = append(l.Units, Unit{Store: ev.Index, Seq: t.seq, Addr: u, Size: int(w - u),
				Segment: t.segment, Site: ev.Site, Stack: ev.Context, Flags: flags, Old: old})
			t.seq++
			t.units++
			u = w
		}
		if flags&UnitNT != 0 {
			t.markPending(l)
		}
		a = hi
	}
	return t.apply(ev)
}

// apply applies a write to the image and notes the pages it touched.
func (t *tracker) apply(ev *trace.Event) error {
	if err := t.rp.Apply(ev); err != nil {
		return err
	}
	if len(ev.Data) == 0 {
		return nil
	}
	g := t.rp.RegionAt(ev.Addr)
	if g == nil {
		return nil
	}
	m := t.pageGen[g]
	if m == nil {
		m = make(map[uint64]uint64)
		t.pageGen[g] = m
	}
	off := ev.Addr - g.Base
	for p := off / image.PageSize; p <= (off+uint64(len(ev.Data))-1)/image.PageSize; p++ {
		m[p] = t.gen
	}
	return nil
}

// merge joins the two oldest units of one state on a full line (see MaxUnitsPerLine). The merged
// unit covers the union of their byte ranges; the bytes it restores are, byte by byte, those
// the line held before the first of the two: the Old of the earliest unit from the first on
// that writes the byte, or the current image where none does.
func (t *tracker) merge(l *Line) {
	i := l.Pending
	if len(l.Units)-l.Pending < 2 {
		i = 0
	}
	a, b := l.Units[i], l.Units[i+1]
	lo, hi := min(a.Addr, b.Addr), max(a.Addr+uint64(a.Size), b.Addr+uint64(b.Size))
	old := make([]byte, hi-lo)
	l.Region.ReadAt(old, int64(lo-l.Region.Base))
	for j := len(l.Units) - 1; j >= i; j-- { // latest first, so the earliest wins
		u := l.Units[j]
		s, e := max(u.Addr, lo), min(u.Addr+uint64(u.Size), hi)
		if s < e {
			copy(old[s-lo:e-lo], u.Old[s-u.Addr:e-u.Addr])
		}
	}
	b.Addr, b.Size, b.Old, b.Flags = lo, int(hi-lo), old, b.Flags|a.Flags|UnitMerged
	b.Segment = min(a.Segment, b.Segment)
	l.Units[i+1] = b
	l.Units = append(l.Units[:i], l.Units[i+1:]...)
	t.units--
	if i < l.Pending {
		l.Pending--
	}
}

func (t *tracker) markPending(l *Line) {
	l.Pending = len(l.Units)
	if !l.inPending {
		l.inPending = true
		t.pending = append(t.pending, l)
	}
}

// remove forgets every unit of l (they are durable, or dropped).
func (t *tracker) remove(l *Line) {
	t.units -= len(l.Units)
	l.Units, l.Pending = nil, 0
	delete(t.lines, l.Addr>>t.shift)
}

// flush applies a FLUSH: clflush makes the line durable at once, clflushopt and clwb make its
// units flush-pending (px86 package doc).
func (t *tracker) flush(kind trace.FlushKind, addr uint64) {
	l := t.lines[addr>>t.shift]
	if l == nil {
		return
	}
	if kind == trace.FlushCLFLUSH {
		t.remove(l)
		return
	}
	t.markPending(l)
}

// fence applies a FENCE: every flush-pending unit becomes durable, and a new segment begins.
func (t *tracker) fence() {
	for _, l := range t.pending {
		l.inPending = false
		if l.Pending == 0 || len(l.Units) == 0 {
			continue
		}
		if l.Pending == len(l.Units) {
			t.remove(l)
			continue
		}
		n := copy(l.Units, l.Units[l.Pending:])
		clear(l.Units[n:])
		l.Units = l.Units[:n]
		t.units -= l.Pending
		l.Pending = 0
	}
	clear(t.pending)
	t.pending = t.pending[:0]
	t.segment++
}

// linesIn returns the lines with units overlapping [addr, addr+size).
func (t *tracker) linesIn(addr, size uint64) []*Line {
	if size == 0 || len(t.lines) == 0 {
		return nil
	}
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	first, last := addr>>t.shift, (end-1)>>t.shift
	var out []*Line
	if last-first+1 > uint64(len(t.lines)) {
		for idx, l := range t.lines {
			if idx >= first && idx <= last {
				out = append(out, l)
			}
		}
		return out
	}
	for idx := first; ; idx++ {
		if l := t.lines[idx]; l != nil {
			out = append(out, l)
		}
		if idx == last {
			break
		}
	}
	return out
}

// PersistRange makes every unit on the cache lines overlapping [addr, addr+size) durable: a
// library flushed those lines and fenced (pmdk.Persister). It returns the units persisted.
func (t *tracker) PersistRange(addr, size uint64) int {
	n := 0
	for _, l := range t.linesIn(addr, size) {
		n += len(l.Units)
		t.remove(l)
	}
	return n
}

// DropRange forgets the unpersisted bytes in [addr, addr+size) (pmdk.Persister): the range was
// restored and made durable by the library (transaction abort) or unmapped. Units inside are
// removed; a unit partly inside keeps only its bytes outside (or is kept whole when it sticks
// out at both ends). It returns the units removed.
func (t *tracker) DropRange(addr, size uint64) int {
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	removed := 0
	for _, l := range t.linesIn(addr, size) {
		n, np := 0, 0
		for i, u := range l.Units {
			ue := u.Addr + uint64(u.Size)
			switch {
			case addr <= u.Addr && ue <= end:
				removed++
				continue
			case u.Addr < addr && addr < ue && ue <= end: // sticks out below
				u.Old = u.Old[:addr-u.Addr]
				u.Size = int(addr - u.Addr)
			case addr <= u.Addr && u.Addr < end && end < ue: // sticks out above
				u.Old = u.Old[end-u.Addr:]
				u.Size = int(ue - end)
				u.Addr = end
			}
			if i < l.Pending {
				np++
			}
			l.Units[n] = u
			n++
		}
		t.units -= len(l.Units) - n
		clear(l.Units[n:])
		l.Units, l.Pending = l.Units[:n], np
		if n == 0 {
			t.remove(l)
		}
	}
	return removed
}
