// Package image holds the bytes of persistent-memory regions rebuilt from a trace and compares
// them with the pool files on disk. docs/trace-format.md ("Semantics the analyses rely on"):
// replaying every STORE, NT_STORE and EXTERNAL_WRITE in order over zero-filled regions gives the
// exact bytes of every mapped region at every record, and at the end the bytes of each pool
// file. Package replay feeds a Replayer the records of a trace; Compare checks the result.
//
// Region images are sparse: memory is proportional to the pages written with non-zero bytes,
// not to the size of the pool (pools are typically tens to hundreds of MiB, mostly untouched).
package image

import (
	"fmt"
	"io"
	"sort"
)

// PageSize is the granularity in bytes of a region's sparse image.
const PageSize = 4096

type page = [PageSize]byte

// Region is one mapping of a PM pool file (a REGION_MAP record) and the bytes written to it.
// Offsets in its methods are relative to Base, i.e. to FileOffset in the file.
type Region struct {
	ID         uint32 // region id of the REGION_MAP record
	Base       uint64 // virtual address of the first byte
	Length     uint64 // bytes mapped
	FileOffset uint64 // offset in bytes in the file of the first mapped byte
	Path       string // the pool file, as the traced program named it
	Created    bool   // the file was created by the mapping call
	Mapped     bool   // still mapped after the last event applied
	MapIndex   uint64 // Event.Index of the REGION_MAP record
	UnmapIndex uint64 // Event.Index of the REGION_UNMAP record; meaningful when !Mapped

	pages map[uint64]*page  // page index (offset / PageSize) -> contents; absent pages are zero
	gens  map[uint64]uint64 // page index -> generation of its last write (Replayer.Advance)
}

// End returns the virtual address one past the region's last byte.
func (g *Region) End() uint64 { return g.Base + g.Length }

// Contains reports whether the virtual address addr lies in the region.
func (g *Region) Contains(addr uint64) bool { return addr >= g.Base && addr-g.Base < g.Length }

// ReadAt copies the region's current bytes at offset off (bytes from Base) into p, as
// io.ReaderAt does: it returns io.EOF when fewer than len(p) bytes remain before the end of the
// region, and an error for a negative offset.
func (g *Region) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("image: negative offset %d", off)
	}
	if uint64(off) >= g.Length {
		return 0, io.EOF
	}
	n := len(p)
	var err error
	if rest := g.Length - uint64(off); uint64(n) > rest {
		n, err = int(rest), io.EOF
	}
	o := uint64(off)
	for done := 0; done < n; {
		pi, po := o/PageSize, o%PageSize
		c := min(uint64(n-done), PageSize-po)
		if pg := g.pages[pi]; pg != nil {
			copy(p[done:done+int(c)], pg[po:po+c])
		} else {
			clear(p[done : done+int(c)])
		}
		done += int(c)
		o += c
	}
	return n, err
}

// Page returns the contents of page i (bytes i*PageSize to (i+1)*PageSize of the region), or
// nil when the page was never written with non-zero bytes (it is all zero). The slice is the
// region's own: do not modify it. The last page may extend past Length; those bytes are zero.
func (g *Region) Page(i uint64) []byte {
	if pg := g.pages[i]; pg != nil {
		return pg[:]
	}
	return nil
}

// TouchedPages returns the indexes of the pages that hold non-zero bytes (or did), sorted.
func (g *Region) TouchedPages() []uint64 {
	out := make([]uint64, 0, len(g.pages))
	for i := range g.pages {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// write copies data at region offset off (the caller checked the bounds).
func (g *Region) write(off uint64, data []byte) {
	for len(data) > 0 {
		pi, po := off/PageSize, off%PageSize
		c := min(uint64(len(data)), PageSize-po)
		pg := g.pages[pi]
		if pg == nil {
			if isZero(data[:c]) {
				data = data[c:]
				off += c
				continue
			}
			pg = new(page)
			g.pages[pi] = pg
		}
		copy(pg[po:], data[:c])
		data = data[c:]
		off += c
	}
}

func isZero(b []byte) bool {
	for len(b) >= 8 {
		if b[0]|b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Replayer holds the sparse images of the PM regions of one trace as its records are replayed
// (package replay drives it: REGION_MAP creates a region, REGION_UNMAP marks it unmapped, and
// every write inside a region copies its bytes). It also numbers generations (Advance), so
// that an incremental crash image can rewrite only the pages written since it was last
// brought up to date. The zero value is not usable: call NewReplayer. A Replayer is not safe
// for concurrent use.
type Replayer struct {
	regions []*Region          // every region, in mapping order
	live    map[uint32]*Region // mapped regions by id
	last    *Region            // the region of the previous write, checked first
	gen     uint64             // the current generation
}

// NewReplayer returns a Replayer with no region.
func NewReplayer() *Replayer {
	return &Replayer{live: make(map[uint32]*Region)}
}

// Regions returns every region mapped so far in mapping order, unmapped ones included (they
// keep their final contents).
func (rp *Replayer) Regions() []*Region { return rp.regions }

// RegionAt returns the mapped region containing the virtual address addr, or nil.
func (rp *Replayer) RegionAt(addr uint64) *Region {
	if g := rp.last; g != nil && g.Mapped && g.Contains(addr) {
		return g
	}
	for _, g := range rp.live {
		if g.Contains(addr) {
			rp.last = g
			return g
		}
	}
	return nil
}

// Map creates the zero-filled region id of length bytes at virtual address base, mapped from
// path at fileOffset (created: the mapping call created the file), by the record at index. The
// caller (package replay) has unmapped any region it replaces or overlaps.
func (rp *Replayer) Map(id uint32, base, length, fileOffset uint64, path string, created bool, index uint64) *Region {
	g := &Region{
		ID: id, Base: base, Length: length, FileOffset: fileOffset, Path: path,
		Created: created, Mapped: true, MapIndex: index,
		pages: make(map[uint64]*page), gens: make(map[uint64]uint64),
	}
	rp.regions = append(rp.regions, g)
	rp.live[id] = g
	return g
}

// Unmap marks the mapped region id unmapped by the record at index; it keeps its contents.
// Unmapping a region that is not mapped does nothing.
func (rp *Replayer) Unmap(id uint32, index uint64) {
	g := rp.live[id]
	if g == nil {
		return
	}
	g.Mapped, g.UnmapIndex = false, index
	delete(rp.live, id)
	if rp.last == g {
		rp.last = nil
	}
}

// Write copies data to the virtual address addr, which must lie with all of data in one
// mapped region (the caller clips writes to their region); it reports false, writing nothing,
// when it does not. The pages written are stamped with the current generation.
func (rp *Replayer) Write(addr uint64, data []byte) bool {
	if len(data) == 0 {
		return true
	}
	g := rp.RegionAt(addr)
	if g == nil || uint64(len(data)) > g.Length-(addr-g.Base) {
		return false
	}
	off := addr - g.Base
	g.write(off, data)
	for p := off / PageSize; p <= (off+uint64(len(data))-1)/PageSize; p++ {
		g.gens[p] = rp.gen
	}
	return true
}

// Advance starts a new generation and returns its number (the first is 1): writes from now on
// are stamped with it.
func (rp *Replayer) Advance() uint64 {
	rp.gen++
	return rp.gen
}

// Generation returns the current generation (0 before the first Advance).
func (rp *Replayer) Generation() uint64 { return rp.gen }

// PagesWrittenSince returns the indexes of the pages of g written during generation gen or a
// later one, in no particular order.
func (g *Region) PagesWrittenSince(gen uint64) []uint64 {
	var out []uint64
	for p, pg := range g.gens {
		if pg >= gen {
			out = append(out, p)
		}
	}
	return out
}
