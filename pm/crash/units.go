package crash

import (
	"slices"

	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/pm/px86"
)

// Unit flags: those of the px86 model's entries, UnitPlain and UnitVisible (profile.go).
const (
	UnitNT       = px86.NT       // part of a non-temporal store
	UnitExternal = px86.External // written by uninstrumented (library) code, not flagged persisted
	UnitMerged   = px86.Merged   // several units joined because the line held too many (px86.MaxEntriesPerLine)
	// UnitPlain marks a unit of a store whose site the source wrote as a plain access (neither
	// atomic nor volatile: the trace's site access, trace.AccessPlain), which a compiler may
	// split (the torn strategy). Unknown accesses (older traces, the black-box tool) are not.
	UnitPlain uint8 = 1 << 7
)

// MaxUnitsPerLine bounds the unpersisted units kept for one cache line: the px86 model's bound
// (px86.MaxEntriesPerLine), whose merging rule ("Bounded lines" in package px86) joins two
// units of a full line into one, which then persists all or nothing.
const MaxUnitsPerLine = px86.MaxEntriesPerLine

// Unit is one failure-atomic piece of an unpersisted store: its bytes on one cache line within
// one aligned 8-byte word (a merged unit may be wider, see MaxUnitsPerLine).
type Unit struct {
	Store   uint64 // the store's trace event index (its id)
	First   uint64 // a merged unit stands for the stores of its line from First to Store (else First == Store)
	Seq     uint64 // position of the unit in program order: ascending by (Store, Addr)
	Addr    uint64 // virtual address of the first byte
	Size    int    // bytes
	Segment uint64 // the segment the store was issued in: the number of fences before it
	Site    uint32 // the store's site
	Stack   uint32 // the store's call-stack node
	Op      uint32 // the operation that issued the store (its index plus one; 0: none)
	Flags   uint8  // UnitNT, UnitExternal, UnitMerged, UnitPlain, UnitVisible
	// Changed, for a plain unit of 2 to 8 bytes issued in the crash point's segment (what the
	// torn strategy may tear), has bit b set when the unit's byte b differs from the byte it
	// overwrote (Old[b]); 0 for other units.
	Changed uint8
	Old     []byte // the Size bytes this unit overwrote (the image before it)
	// Keep, for a merged unit, tells which of its bytes its stores wrote (nil: all): only those
	// are rolled back; the others belong to later units of the line.
	Keep []bool
}

// StandsFor reports whether the unit is store id's, or a merged unit standing for it (px86's
// rule: the stores of its line from First to Store).
func (u Unit) StandsFor(id uint64) bool { return u.First <= id && id <= u.Store }

// Line is one cache line with unpersisted units, in program order. The first Pending units
// are flush-pending (flushed or non-temporal, durable at the next fence), the rest dirty.
type Line struct {
	Addr    uint64 // virtual address of the line's first byte
	Region  *image.Region
	Units   []Unit
	Pending int
}

// unitData is the payload the px86 model keeps with each unit (px86.Payloads).
type unitData struct {
	seq, segment uint64
	old          []byte
	keep         []bool
}

// units makes the payloads of new units: their sequence number, segment and the bytes they
// overwrite, read from the image before the store is applied (package replay applies the
// model first, then the image).
type units struct{ w *walker }

func (u units) New(id px86.StoreID, addr, size uint64) unitData {
	w := u.w
	d := unitData{seq: w.seq, segment: w.segment, old: make([]byte, size)}
	w.seq++
	if g := w.m.Image.RegionAt(addr); g != nil {
		g.ReadAt(d.old, int64(addr-g.Base))
	}
	return d
}

// Merge joins two units: the merged one covers both ranges and rolls back to the bytes before
// the earlier one (from) where it wrote, before the later one (into) elsewhere; bytes of the
// union neither wrote are not rolled back (keep is false there).
func (units) Merge(into *unitData, intoAddr, intoSize uint64, from *unitData, fromAddr, fromSize uint64) {
	lo, hi := min(intoAddr, fromAddr), max(intoAddr+intoSize, fromAddr+fromSize)
	old := make([]byte, hi-lo)
	keep := make([]bool, hi-lo)
	put := func(d *unitData, addr, size uint64) {
		for i := uint64(0); i < size; i++ {
			if d.keep == nil || d.keep[i] {
				old[addr-lo+i] = d.old[i]
				keep[addr-lo+i] = true
			}
		}
	}
	put(into, intoAddr, intoSize)
	put(from, fromAddr, fromSize) // the earlier unit's bytes win
	if !slices.Contains(keep, false) {
		keep = nil
	}
	into.old, into.keep = old, keep
	into.segment = min(into.segment, from.segment)
}

// Clip keeps the bytes [newAddr, newAddr+newSize) of a unit.
func (units) Clip(d *unitData, addr, size, newAddr, newSize uint64) {
	a, b := newAddr-addr, newAddr-addr+newSize
	d.old = d.old[a:b]
	if d.keep != nil {
		d.keep = d.keep[a:b]
	}
}
