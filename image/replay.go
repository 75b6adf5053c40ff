// Package image rebuilds the bytes of persistent-memory regions from a trace and checks them
// against the pool files on disk. docs/trace-format.md ("Semantics the analyses rely on"):
// replaying every STORE, NT_STORE and EXTERNAL_WRITE in order over zero-filled regions gives the
// exact bytes of every mapped region at every record, and at the end the bytes of each pool
// file.
//
// Region images are sparse: memory is proportional to the pages written with non-zero bytes,
// not to the size of the pool (pools are typically tens to hundreds of MiB, mostly untouched).
package image

import (
	"fmt"
	"io"
	"sort"

	"github.com/scry-pm/scry/trace"
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

	pages map[uint64]*page // page index (offset / PageSize) -> contents; absent pages are zero
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

// Replayer applies the writes of a trace to sparse images of its PM regions. The zero value is
// not usable: call NewReplayer. A Replayer is not safe for concurrent use.
type Replayer struct {
	regions []*Region          // every region, in mapping order
	live    map[uint32]*Region // mapped regions by id
	last    *Region            // the region of the previous write, checked first
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

// Apply applies one event: REGION_MAP creates a zero-filled region, REGION_UNMAP marks it
// unmapped (it keeps its contents), STORE, NT_STORE and EXTERNAL_WRITE copy their bytes into
// the region that contains them; other kinds are ignored. Errors (the event is then not
// applied): a write that starts outside every mapped region or runs past the end of its region,
// a REGION_MAP whose id is already mapped or whose range overlaps a mapped region or wraps the
// address space, a REGION_UNMAP of a region that is not mapped. Writes of zero bytes are
// ignored.
func (rp *Replayer) Apply(ev *trace.Event) error {
	switch ev.Kind {
	case trace.KindStore, trace.KindNTStore, trace.KindExternalWrite:
		if len(ev.Data) == 0 {
			return nil
		}
		g := rp.RegionAt(ev.Addr)
		if g == nil {
			return fmt.Errorf("record %d: %v of %d bytes at %#x outside every mapped PM region",
				ev.Index, ev.Kind, len(ev.Data), ev.Addr)
		}
		off := ev.Addr - g.Base
		if uint64(len(ev.Data)) > g.Length-off {
			return fmt.Errorf("record %d: %v of %d bytes at %#x runs %d bytes past the end of region %d (%s, %#x-%#x)",
				ev.Index, ev.Kind, len(ev.Data), ev.Addr, uint64(len(ev.Data))-(g.Length-off), g.ID, g.Path, g.Base, g.End())
		}
		g.write(off, ev.Data)
	case trace.KindRegionMap:
		if old := rp.live[ev.Region]; old != nil {
			return fmt.Errorf("record %d: region %d mapped again (%s) while still mapped (%s, record %d)",
				ev.Index, ev.Region, ev.Path, old.Path, old.MapIndex)
		}
		if ev.Addr+ev.Size < ev.Addr {
			return fmt.Errorf("record %d: region %d at %#x of %d bytes wraps the address space", ev.Index, ev.Region, ev.Addr, ev.Size)
		}
		for _, o := range rp.live {
			if ev.Size > 0 && o.Length > 0 && ev.Addr < o.End() && o.Base < ev.Addr+ev.Size {
				return fmt.Errorf("record %d: region %d (%s, %#x-%#x) overlaps mapped region %d (%s, %#x-%#x)",
					ev.Index, ev.Region, ev.Path, ev.Addr, ev.Addr+ev.Size, o.ID, o.Path, o.Base, o.End())
			}
		}
		g := &Region{
			ID: ev.Region, Base: ev.Addr, Length: ev.Size, FileOffset: ev.FileOffset, Path: ev.Path,
			Created: ev.Flags&trace.RegionCreated != 0, Mapped: true, MapIndex: ev.Index,
			pages: make(map[uint64]*page),
		}
		rp.regions = append(rp.regions, g)
		rp.live[g.ID] = g
	case trace.KindRegionUnmap:
		g := rp.live[ev.Region]
		if g == nil {
			return fmt.Errorf("record %d: REGION_UNMAP of region %d, which is not mapped", ev.Index, ev.Region)
		}
		g.Mapped, g.UnmapIndex = false, ev.Index
		delete(rp.live, ev.Region)
		if rp.last == g {
			rp.last = nil
		}
	}
	return nil
}
