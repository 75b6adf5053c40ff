package crash

import (
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/scry-pm/scry/pm/image"
)

// Space is the state space of a crash point: the cache lines with unpersisted units, sorted by
// address. A crash state chooses for each line how many of its units (a prefix) persisted.
type Space struct {
	Lines   []*Line
	Segment uint64    // the current segment (fences before the crash point)
	Kind    PointKind // what the crash point precedes (0 for a Space not from Walk)

	units int
	order []ref // the units in program order, built on demand
}

// ref names unit u of line l of a Space.
type ref struct{ l, u int32 }

// Units returns the number of unpersisted units.
func (s *Space) Units() int { return s.units }

// Size returns the number of crash states: the product over lines of (units + 1).
func (s *Space) Size() *big.Int {
	n := big.NewInt(1)
	var f big.Int
	for _, l := range s.Lines {
		n.Mul(n, f.SetInt64(int64(len(l.Units))+1))
	}
	return n
}

// programOrder returns every unit in program order (by Seq: store id, then address).
func (s *Space) programOrder() []ref {
	if len(s.order) == s.units && s.units > 0 || s.units == 0 {
		return s.order
	}
	s.order = s.order[:0]
	for i, l := range s.Lines {
		for j := range l.Units {
			s.order = append(s.order, ref{int32(i), int32(j)})
		}
	}
	slices.SortFunc(s.order, func(a, b ref) int {
		x, y := s.Lines[a.l].Units[a.u].Seq, s.Lines[b.l].Units[b.u].Seq
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return s.order
}

func (s *Space) clone() *Space {
	c := &Space{Segment: s.Segment, Kind: s.Kind, units: s.units}
	for _, l := range s.Lines {
		nl := *l
		nl.Units = slices.Clone(l.Units)
		for i := range nl.Units {
			nl.Units[i].Old = slices.Clone(nl.Units[i].Old)
			nl.Units[i].Keep = slices.Clone(nl.Units[i].Keep)
		}
		c.Lines = append(c.Lines, &nl)
	}
	return c
}

// State is one crash state of a Space: K[i] is the number of units of Lines[i] persisted (a
// prefix of the line's program order). Prefix reports whether the persisted units are exactly
// the first j units of the whole program order for some j (no reordering: a finding on this
// state is an atomicity violation, otherwise an ordering violation). Invariants lists the IDs
// (Invariant.ID) of the likely invariants the state violates, in ascending order, when the
// invariants strategy chose it.
type State struct {
	K          []int
	Prefix     bool
	Invariants []int
	// Tear, when set, persists some bytes of one more unit (the torn strategy): a plain store
	// the compiler may split (Yashme, ASPLOS'22, §2–3).
	Tear *Tear
}

// Tear persists part of the first unpersisted unit of a line: unit K[Line] of Lines[Line] has
// the bytes whose bits are set in Keep (bit b: the unit's byte b, from its first address)
// persisted and the others not. A unit is at most 8 bytes (one failure-atomic word of px86);
// Keep names at least one of its bytes and not all of them.
type Tear struct {
	Line int
	Keep uint8
}

// String writes the tear as state keys and reports do: "line L bytes 0x0f".
func (t *Tear) String() string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("line %d bytes %#02x", t.Line, t.Keep)
}

// IsPrefix reports whether k persists a program-order prefix of the space's units.
func (s *Space) IsPrefix(k []int) bool {
	const none = ^uint64(0)
	maxP, minN, anyP := uint64(0), none, false
	for i, l := range s.Lines {
		if k[i] > 0 {
			anyP = true
			maxP = max(maxP, l.Units[k[i]-1].Seq)
		}
		if k[i] < len(l.Units) {
			minN = min(minN, l.Units[k[i]].Seq)
		}
	}
	return !anyP || minN == none || maxP < minN
}

// Check reports an error when st does not fit the space.
func (s *Space) Check(st State) error {
	if len(st.K) != len(s.Lines) {
		return fmt.Errorf("crash: state has %d lines, the space %d", len(st.K), len(s.Lines))
	}
	for i, k := range st.K {
		if k < 0 || k > len(s.Lines[i].Units) {
			return fmt.Errorf("crash: state persists %d units of line %#x, which has %d", k, s.Lines[i].Addr, len(s.Lines[i].Units))
		}
	}
	if t := st.Tear; t != nil {
		if t.Line < 0 || t.Line >= len(s.Lines) {
			return fmt.Errorf("crash: state tears line %d of a space of %d lines", t.Line, len(s.Lines))
		}
		l := s.Lines[t.Line]
		if st.K[t.Line] >= len(l.Units) {
			return fmt.Errorf("crash: state tears line %#x, whose units are all persisted", l.Addr)
		}
		u := l.Units[st.K[t.Line]]
		all := uint8(1<<min(u.Size, 8) - 1)
		if u.Size > 8 || u.Flags&UnitMerged != 0 || t.Keep == 0 || t.Keep&^all != 0 || t.Keep == all {
			return fmt.Errorf("crash: state tears unit %d of line %#x (%d bytes) keeping bytes %#02x: a tear keeps some but not all bytes of an unmerged unit of at most 8", st.K[t.Line], l.Addr, u.Size, t.Keep)
		}
	}
	return nil
}

// Persisted returns the units a state persists, in program order of each line, line by line;
// Unpersisted the others. They name the stores of a finding.
func (s *Space) Persisted(st State) []Unit {
	var out []Unit
	for i, l := range s.Lines {
		out = append(out, l.Units[:st.K[i]]...)
	}
	return out
}

// Unpersisted returns the units a state leaves unpersisted.
func (s *Space) Unpersisted(st State) []Unit {
	var out []Unit
	for i, l := range s.Lines {
		out = append(out, l.Units[st.K[i]:]...)
	}
	return out
}

// Patch is a byte range of a crash image that differs from the fully applied image of its
// crash point: Data replaces the bytes at Offset of the pool file of Region (Addr is the
// virtual address of the first byte).
type Patch struct {
	Region uint32
	Path   string
	Offset int64 // bytes from the start of the pool file
	Addr   uint64
	Data   []byte
}

var errStale = errors.New("crash: crash point used outside its Walk callback")

// Patches returns the patches that turn the fully applied image of the crash point (every
// issued store applied) into the crash image of st: for every unit not persisted, the bytes it
// overwrote, rolled back in reverse program order within each line (so two stores to the same
// bytes leave the bytes from before the earlier one). Patches are per line, in address order,
// each a maximal run of rolled-back bytes.
func (cp *CrashPoint) Patches(st State) ([]Patch, error) {
	sp := cp.Space
	if err := sp.Check(st); err != nil {
		return nil, err
	}
	var out []Patch
	var buf [4096]byte
	var mask [4096]bool
	for i, l := range sp.Lines {
		k := st.K[i]
		if k == len(l.Units) {
			continue
		}
		lo, hi := ^uint64(0), uint64(0)
		var keep uint8 // the bytes of unit k a tear persists
		if st.Tear != nil && st.Tear.Line == i {
			keep = st.Tear.Keep
		}
		for j := len(l.Units) - 1; j >= k; j-- {
			kj := uint8(0)
			if j == k {
				kj = keep
			}
			off, end := l.undo(j, buf[:], mask[:], kj)
			lo, hi = min(lo, off), max(hi, end)
		}
		for b := lo; b < hi; {
			if !mask[b] {
				b++
				continue
			}
			e := b
			for e < hi && mask[e] {
				mask[e] = false
				e++
			}
			g := l.Region
			addr := l.Addr + b
			out = append(out, Patch{Region: g.ID, Path: g.Path, Addr: addr,
				Offset: int64(g.FileOffset + addr - g.Base), Data: slices.Clone(buf[b:e])})
			b = e
		}
	}
	return out, nil
}

// undo rolls unit j of the line back in buf, a copy of the line's bytes from its first byte (the
// rollback of Patches and LineContents): the bytes the unit overwrote (those its stores wrote,
// for a merged unit) are written into buf and marked in mask, but for the bytes torn keeps (bit
// b: byte b of the unit; a Tear). Rolling units back from the last to the first leaves the bytes
// from before the earliest. It returns the unit's byte range in the line, [off, end).
func (l *Line) undo(j int, buf []byte, mask []bool, torn uint8) (off, end uint64) {
	u := l.Units[j]
	off = u.Addr - l.Addr
	for b := range uint64(u.Size) {
		if b < 8 && torn&(1<<b) != 0 {
			continue
		}
		if u.Keep == nil || u.Keep[b] {
			buf[off+b] = u.Old[b]
			mask[off+b] = true
		}
	}
	return off, off + uint64(u.Size)
}

// Contents are the distinct contents a cache line can have in the crash states of its crash
// point (Jaaru, ASPLOS'21, §3-4: the values a load of the line can observe): Values, each once,
// in order of the smallest k giving it (MinK[v]); Of[k] is the index in Values of the content
// with k units persisted, k = 0..n.
type Contents struct {
	Values [][LineSize]byte
	MinK   []int
	Of     []int
}

// LineSize is the size of a cache line in bytes.
const LineSize = 64

// LineContents returns the contents line i of the space can have at cp: the line's LineSize
// bytes with units 0..k-1 persisted and k..n-1 rolled back (Patches' rollback), for k = 0..n.
// A line whose units all wrote the bytes they overwrote has one content. Errors: i is out of
// range, the line lies outside its region, or cp is used outside its Walk callback.
func (cp *CrashPoint) LineContents(i int) (Contents, error) {
	var c Contents
	if cp.rp == nil {
		return c, errStale
	}
	sp := cp.Space
	if i < 0 || i >= len(sp.Lines) {
		return c, fmt.Errorf("crash: line %d of a space of %d lines", i, len(sp.Lines))
	}
	l := sp.Lines[i]
	g := l.Region
	if g == nil || l.Addr < g.Base || l.Addr+LineSize > g.Base+g.Length {
		return c, fmt.Errorf("crash: line %#x is outside its region", l.Addr)
	}
	n := len(l.Units)
	byK := make([][LineSize]byte, n+1)
	var buf [4096]byte
	var mask [4096]bool
	g.ReadAt(buf[:LineSize], int64(l.Addr-g.Base))
	byK[n] = [LineSize]byte(buf[:LineSize])
	for k := n - 1; k >= 0; k-- {
		l.undo(k, buf[:], mask[:], 0)
		byK[k] = [LineSize]byte(buf[:LineSize])
	}
	c.Of = make([]int, n+1)
	for k, b := range byK {
		v := slices.Index(c.Values, b)
		if v < 0 {
			v = len(c.Values)
			c.Values = append(c.Values, b)
			c.MinK = append(c.MinK, k)
		}
		c.Of[k] = v
	}
	return c, nil
}

// Regions returns the regions of the crash point's image in mapping order (every region mapped
// or unmapped so far; a region id mapped twice appears twice, the latest last), or nil outside
// the Walk callback. The regions are the engine's: read their fields, do not keep them.
func (cp *CrashPoint) Regions() []*image.Region {
	rs, _ := cp.regions()
	return rs
}

// FullState returns the state of sp with every unit persisted (the fully applied image).
func (s *Space) FullState() State {
	k := make([]int, len(s.Lines))
	for i, l := range s.Lines {
		k[i] = len(l.Units)
	}
	return State{K: k, Prefix: true}
}

// regions returns the regions of the crash point's image, in mapping order: every region
// mapped or unmapped so far.
func (cp *CrashPoint) regions() ([]*image.Region, error) {
	if cp.rp == nil {
		return nil, errStale
	}
	return cp.rp.Regions(), nil
}
