// Package px86 is scry's model of x86 persistency ("Px86"): for every store to persistent
// memory (PM) it tracks whether the store is still only in the cache (dirty), written back but
// not yet ordered (flush-pending), or guaranteed durable (persisted), one cache line at a time.
//
// Sources. The states are AGAMOTTO's dirty / pending / clean cache-line states
// (seeds/001_b8a4b5e7b4f8c5ce.txt §4.1) and the thesis's modified / writeback-pending /
// persisted shadow-PM states (seeds/002_2a22ed230f71d116.txt §2.1, §5.1.3); the same-line rule
// is WITCHER's (seeds/000_c95c61c23c78e4d2.txt §4.4.1); the ordering facts are those of the
// Px86 persistency table, Table 2.1 of seeds/003_49a44b735a979088.txt §2.1, which the text
// extraction lost and which we reconstruct from its prose and from DESIGN.md
// "Persistency model". For an earlier instruction Ii and a later Ij, "✔" means Ii persists
// before Ij, "CL" only when both touch the same cache line, "✘" no guarantee:
//
//	Ii \ Ij      load  store  RMW  mfence  sfence  clflushopt/clwb  clflush
//	load          ✔     ✔      ✔     ✔       ✔          ✔             ✔
//	store         ✘     ✔*     ✔     ✔       ✔          CL            ✔
//	RMW           ✔     ✔      ✔     ✔       ✔          ✔             ✔
//	mfence        ✔     ✔      ✔     ✔       ✔          ✔             ✔
//	sfence        ✘     ✔      ✔     ✔       ✔          ✔             ✔
//	clflushopt    ✘     ✘      ✔     ✔       ✔          ✘             CL
//	clflush       ✘     ✔      ✔     ✔       ✔          CL            ✔
//
// (*) "store before store" is a *visibility* order; what reaches PM first is only ordered
// within one cache line (a line is written back as a whole, in program order). Loads change no
// persistency state, so the model ignores them.
//
// The rules the model applies, and the choices made where the table leaves room:
//
//   - Store: every byte range written becomes a new dirty entry at the end of its cache line's
//     list. Stores to one line persist in program order, so the persisted entries of a line are
//     always a prefix of its list (WITCHER §4.4.1).
//   - clflushopt / clwb of line L: every entry of L issued before it becomes flush-pending; it
//     is guaranteed durable at the next sfence, mfence or locked read-modify-write (table rows
//     "clflushopt" and columns "sfence/mfence/RMW"). Later stores to L stay dirty.
//   - clflush of line L: every entry of L issued before it becomes persisted at once. CHOICE: the
//     table orders clflush before every later store and every later clflush, so no later write
//     can reach PM before the clflushed contents of L; AGAMOTTO §4.1 treats CLFLUSH as making its
//     destination clean, and the thesis §2.1 describes it as a synchronous write-back. Treating
//     it as persisting immediately therefore never lets a later store overtake it in any crash
//     state we build. It also means a fence right after clflush orders nothing (the
//     redundant-fence oracle reports it, as AGAMOTTO's Listing 5 does).
//   - Non-temporal store: the new entry is flush-pending at once and durable at the next fence.
//     CHOICE: a non-temporal store to a line evicts that line's cached contents, so earlier
//     dirty entries of the line become flush-pending too (AGAMOTTO §4.1: an NT store is "a
//     store+flush"); this also keeps the persisted-prefix invariant.
//   - sfence, mfence, locked RMW: every flush-pending entry, on every line, becomes persisted.
//   - PersistRange: a library made the cache lines of a byte range durable (PMDK at transaction
//     commit): every entry of those lines becomes persisted.
//   - Failure atomicity: a store within one aligned 8-byte word is failure-atomic; a wider or
//     misaligned store may tear at 8-byte granularity ([TearUnits]). The model keeps each store's
//     byte range so that the crash-state generator can split it.
//
// Only unpersisted entries are kept; persisted ones are dropped, so memory grows with the number
// of stores not yet durable, not with the length of the trace. A store that spans several cache
// lines is kept as one entry per line, all with the same StoreID.
package px86

import (
	"fmt"
	"math/bits"
	"slices"
)

// StoreID identifies a store: the index of its event in the trace (trace.Event.Index).
type StoreID = uint64

// State is the persistency state of one store (of its entry on one cache line).
type State uint8

// Persistency states (AGAMOTTO §4.1 dirty / pending / clean).
const (
	Dirty     State = 1 // in the cache only: lost at a crash unless evicted; needs a flush
	Pending   State = 2 // flushed (or non-temporal) but not yet ordered; needs a fence
	Persisted State = 3 // guaranteed durable
)

func (s State) String() string {
	switch s {
	case Dirty:
		return "dirty"
	case Pending:
		return "flush-pending"
	case Persisted:
		return "persisted"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Origin is what the model remembers about where a store, flush or fence came from; it is
// opaque to the model. Site is the trace's site id, Stack the call-stack node, Op the workload
// operation index plus one (0: none was running).
type Origin struct {
	Site  uint32
	Stack uint32
	Op    uint32
}

// Store flags. NT and External are given to Store; the model sets Spans.
const (
	NT       uint8 = 1 << 0 // non-temporal store
	External uint8 = 1 << 1 // bytes written by uninstrumented (library) code
	// Spans marks the entries of a store that touches more than one cache line: only such a
	// store can have several entries, so only those need grouping by StoreID.
	Spans uint8 = 1 << 2
	// Rewritten marks, in the entries ForEachOverlapping and ForEachUnpersisted pass, an entry
	// whose bytes later unpersisted stores on its line have all written again: its own value can
	// no longer be what a crash leaves there once the later stores persist.
	Rewritten uint8 = 1 << 3
)

// StoreState is the state of one unpersisted store on one cache line.
type StoreState struct {
	ID     StoreID
	Origin Origin
	Addr   uint64 // first byte of the part of the store on this line
	Size   uint64 // bytes of the store on this line
	State  State
	Flags  uint8 // NT, External, Spans
}

// NT reports whether the store was non-temporal.
func (s StoreState) NT() bool { return s.Flags&NT != 0 }

// External reports whether the bytes were written by uninstrumented code.
func (s StoreState) External() bool { return s.Flags&External != 0 }

// FailureAtomic reports whether this part of the store persists all or nothing: it lies within
// one aligned 8-byte word (DESIGN.md "Persistency model").
func (s StoreState) FailureAtomic() bool { return TearUnits(s.Addr, s.Size) <= 1 }

// TearUnits returns the number of failure-atomic units a store of size bytes at addr may tear
// into at a crash: the number of aligned 8-byte words it touches (1 for an aligned 8-byte
// store or anything smaller inside one word, 0 for size 0).
func TearUnits(addr, size uint64) int {
	if size == 0 {
		return 0
	}
	return int((addr+size-1)>>3 - addr>>3 + 1)
}

// piece is one store's bytes [lo,hi) on one line.
type piece struct {
	id     StoreID
	origin Origin
	lo, hi uint16
	flags  uint8
}

// line is the unpersisted state of one cache line: pieces in program order, the first
// npending of which are flush-pending (the rest dirty).
type line struct {
	idx       uint64
	pieces    []piece // starts on inline: most lines hold one or two stores
	inline    [2]piece
	npending  int
	inPending bool // listed in Model.pending
	dead      bool // removed from the map while listed in Model.pending
	flushed   bool // flush is valid
	flush     Origin
}

// MaxEntriesPerLine bounds the entries kept for one cache line. When a line would exceed it,
// dirty entries whose bytes a later dirty entry fully rewrote are dropped, then the two oldest
// entries of the same state are merged (their byte ranges joined, the later store kept). This
// coarsens crash states only for lines stored to this often without ever being persisted.
const MaxEntriesPerLine = 64

// Model is the persistency state of all PM cache lines. The zero value is not usable; call New.
// A Model is not safe for concurrent use.
type Model struct {
	lineSize uint64
	shift    uint
	// The index of lines with unpersisted entries (index.go): the hash table, and bitmaps of
	// the registered ranges.
	lines   lineTable
	spaces  []*space // sorted by first
	cur     *space   // the space of the last lookup
	outside int      // lines in the table outside every space
	scratch []*line  // collect's result
	lastIdx uint64
	last    *line // cache of lines[lastIdx], nil when absent
	prevIdx uint64
	prev    *line // the line cached before last, nil when absent
	pending []*line
	free    []*line
	entries int // unpersisted entries
	npend   int // flush-pending entries
	live    int // lines with at least one entry
}

// New returns an empty model for cache lines of lineSize bytes (the trace header's value, 64 on
// x86-64). lineSize must be a power of two from 8 to 4096.
func New(lineSize uint64) (*Model, error) {
	if lineSize < 8 || lineSize > 4096 || lineSize&(lineSize-1) != 0 {
		return nil, fmt.Errorf("px86: cache-line size %d bytes is not a power of two from 8 to 4096", lineSize)
	}
	m := &Model{
		lineSize: lineSize,
		shift:    uint(bits.TrailingZeros64(lineSize)),
	}
	m.lines.init(10)
	return m, nil
}

// LineSize returns the cache-line size in bytes.
func (m *Model) LineSize() uint64 { return m.lineSize }

// LineOf returns the address of the first byte of the cache line holding addr.
func (m *Model) LineOf(addr uint64) uint64 { return addr &^ (m.lineSize - 1) }

// Len returns the number of unpersisted entries (stores, one per cache line they touch).
func (m *Model) Len() int { return m.entries }

// PendingLen returns the number of flush-pending entries.
func (m *Model) PendingLen() int { return m.npend }

// Lines returns the number of cache lines holding unpersisted stores.
func (m *Model) Lines() int { return m.live }

func (m *Model) lookup(idx uint64) *line {
	if m.last != nil && m.lastIdx == idx {
		return m.last
	}
	if m.prev != nil && m.prevIdx == idx {
		m.last, m.lastIdx, m.prev, m.prevIdx = m.prev, m.prevIdx, m.last, m.lastIdx
		return m.last
	}
	l := m.get(idx)
	if l != nil {
		m.cache(l, idx)
	}
	return l
}

func (m *Model) cache(l *line, idx uint64) {
	m.prev, m.prevIdx = m.last, m.lastIdx
	m.last, m.lastIdx = l, idx
}

func (m *Model) getOrCreate(idx uint64) *line {
	if l := m.lookup(idx); l != nil {
		return l
	}
	var l *line
	if n := len(m.free); n > 0 {
		l = m.free[n-1]
		m.free = m.free[:n-1]
	} else {
		l = &line{}
		l.pieces = l.inline[:0]
	}
	l.idx = idx
	m.put(l)
	m.cache(l, idx)
	return l
}

// remove deletes a line whose entries are all persisted or forgotten.
func (m *Model) remove(l *line) {
	m.entries -= len(l.pieces)
	m.npend -= l.npending
	if len(l.pieces) > 0 {
		m.live--
	}
	m.unindex(l)
	if m.last == l {
		m.last = nil
	}
	if m.prev == l {
		m.prev = nil
	}
	l.pieces = l.pieces[:0]
	if cap(l.pieces) > 16 {
		l.pieces = l.inline[:0]
	}
	l.npending = 0
	l.flushed = false
	if l.inPending {
		l.dead = true // Fence returns it to the free list
		return
	}
	m.free = append(m.free, l)
}

func (m *Model) markPending(l *line) {
	d := len(l.pieces) - l.npending
	if d == 0 {
		return
	}
	m.npend += d
	l.npending = len(l.pieces)
	if !l.inPending {
		l.inPending = true
		m.pending = append(m.pending, l)
	}
}

// rewritten reports whether the pieces after piece i of l (later stores to the line) cover every
// byte of piece i.
func (m *Model) rewritten(l *line, i int) bool {
	p := l.pieces[i]
	if m.lineSize <= 64 { // one bit per byte of the line
		want := byteMask(p.lo, p.hi)
		var got uint64
		for j := i + 1; j < len(l.pieces); j++ {
			q := l.pieces[j]
			got |= byteMask(q.lo, q.hi)
			if got&want == want {
				return true
			}
		}
		return false
	}
	for j := i + 1; j < len(l.pieces); j++ { // wider lines: one later piece must cover it
		if q := l.pieces[j]; q.lo <= p.lo && p.hi <= q.hi {
			return true
		}
	}
	return false
}

// byteMask is the set of bytes [lo, hi) of a line of at most 64 bytes.
func byteMask(lo, hi uint16) uint64 {
	n := hi - lo
	if n >= 64 {
		return ^uint64(0)
	}
	return (uint64(1)<<n - 1) << lo
}

// viewAt is view for the iteration functions: it adds Rewritten.
func (m *Model) viewAt(l *line, i int, state State) StoreState {
	v := m.view(l, &l.pieces[i], state)
	if i+1 < len(l.pieces) && m.rewritten(l, i) {
		v.Flags |= Rewritten
	}
	return v
}

func (m *Model) view(l *line, p *piece, state State) StoreState {
	return StoreState{
		ID: p.id, Origin: p.origin,
		Addr:  l.idx<<m.shift + uint64(p.lo),
		Size:  uint64(p.hi - p.lo),
		State: state, Flags: p.flags,
	}
}

// StoreEffect is what a store found on its cache lines before it was recorded.
type StoreEffect struct {
	// Overwrote is set when the store rewrites bytes of an earlier, still unpersisted store
	// that was not External; Prev is the most recent such store (on the first line where one
	// was found).
	Overwrote bool
	Prev      StoreState
	Lines     int // cache lines the store touches
}

// Store records a store (flags NT, External) of size bytes at addr: a new dirty entry (pending
// for a non-temporal store, which also makes the line's earlier entries pending) at the end of
// each cache line it touches. A store of size 0 does nothing.
func (m *Model) Store(id StoreID, o Origin, addr, size uint64, flags uint8) StoreEffect {
	var eff StoreEffect
	m.StoreInto(&eff, id, o, addr, size, flags)
	return eff
}

// StoreInto is Store writing its effect to *eff, which saves copying the effect on the hot
// path of the analysis driver. eff.Prev is left as it was when eff.Overwrote is false.
func (m *Model) StoreInto(eff *StoreEffect, id StoreID, o Origin, addr, size uint64, flags uint8) {
	eff.Overwrote, eff.Lines = false, 0
	if size == 0 {
		return
	}
	end := addr + size
	if end < addr { // wraps around the address space: clip
		end = ^uint64(0)
	}
	flags &^= Spans
	if addr>>m.shift != (end-1)>>m.shift {
		flags |= Spans
	}
	for a := addr; a < end; {
		idx := a >> m.shift
		lineEnd := (idx + 1) << m.shift
		hi := end
		if lineEnd != 0 && lineEnd < hi {
			hi = lineEnd
		}
		lo16 := uint16(a - idx<<m.shift)
		hi16 := uint16(hi - idx<<m.shift)
		if hi16 == 0 { // the piece ends at the line's end and lineSize == 65536 is excluded
			hi16 = uint16(m.lineSize)
		}
		l := m.getOrCreate(idx)
		if len(l.pieces) == 0 {
			m.live++
		}
		if !eff.Overwrote {
			for i := len(l.pieces) - 1; i >= 0; i-- {
				p := &l.pieces[i]
				if p.lo < hi16 && lo16 < p.hi && p.flags&External == 0 {
					st := Dirty
					if i < l.npending {
						st = Pending
					}
					eff.Overwrote, eff.Prev = true, m.view(l, p, st)
					break
				}
			}
		}
		if len(l.pieces) >= MaxEntriesPerLine {
			m.compact(l, lo16, hi16)
		}
		l.pieces = append(l.pieces, piece{id: id, origin: o, lo: lo16, hi: hi16, flags: flags})
		m.entries++
		if flags&NT != 0 {
			m.markPending(l)
		}
		eff.Lines++
		if hi == ^uint64(0) || lineEnd == 0 {
			break
		}
		a = hi
	}
}

// compact makes room on a full line about to receive a store of [lo,hi) (see MaxEntriesPerLine).
func (m *Model) compact(l *line, lo, hi uint16) {
	// Drop dirty pieces fully rewritten by a later dirty piece or by the incoming store.
	n := l.npending
	for i := l.npending; i < len(l.pieces); i++ {
		p := l.pieces[i]
		covered := lo <= p.lo && p.hi <= hi
		for j := i + 1; !covered && j < len(l.pieces); j++ {
			q := &l.pieces[j]
			covered = q.lo <= p.lo && p.hi <= q.hi
		}
		if covered {
			m.entries--
			continue
		}
		l.pieces[n] = p
		n++
	}
	l.pieces = l.pieces[:n]
	for len(l.pieces) >= MaxEntriesPerLine {
		// Merge the two oldest pieces of one state: the dirty ones if there are two.
		i := l.npending
		if len(l.pieces)-l.npending < 2 {
			i = 0
		}
		a, b := l.pieces[i], l.pieces[i+1]
		b.lo, b.hi = min(a.lo, b.lo), max(a.hi, b.hi)
		l.pieces[i+1] = b
		l.pieces = slices.Delete(l.pieces, i, i+1)
		m.entries--
		if i < l.npending {
			l.npending--
			m.npend--
		}
	}
}

// FlushEffect is what a flush found on its cache line.
type FlushEffect struct {
	Dirty     int  // dirty entries the flush wrote back (0: the flush was redundant)
	Pending   int  // entries already flush-pending before it
	Persisted int  // entries it made persisted (clflush only)
	PrevFlush bool // an earlier flush of the line is known (since it last had no unpersisted store)
	Prev      Origin
}

// Flush applies a flush instruction (kind 1 clflush, 2 clflushopt, 3 clwb, as trace.FlushKind)
// to the cache line holding addr; o is recorded as the line's last flush. clflush persists the
// line's entries at once; clflushopt and clwb make them flush-pending. See the package doc.
func (m *Model) Flush(kind uint8, addr uint64, o Origin) FlushEffect {
	l := m.lookup(addr >> m.shift)
	if l == nil {
		return FlushEffect{}
	}
	eff := FlushEffect{Dirty: len(l.pieces) - l.npending, Pending: l.npending, PrevFlush: l.flushed, Prev: l.flush}
	if kind == 1 { // clflush
		eff.Persisted = len(l.pieces)
		m.remove(l)
		return eff
	}
	m.markPending(l)
	l.flushed, l.flush = true, o
	return eff
}

// FenceEffect is what a fence did.
type FenceEffect struct {
	Persisted int // flush-pending entries it made persisted (0: nothing to order)
	Lines     int // cache lines they were on
}

// Fence applies sfence, mfence or a locked read-modify-write: every flush-pending entry becomes
// persisted. All three kinds drain pending write-backs (Table 2.1 columns sfence/mfence/RMW).
func (m *Model) Fence() FenceEffect {
	var eff FenceEffect
	if len(m.pending) == 0 {
		return eff
	}
	for _, l := range m.pending {
		l.inPending = false
		if l.dead {
			l.dead = false
			m.free = append(m.free, l)
			continue
		}
		if l.npending == 0 {
			continue
		}
		eff.Persisted += l.npending
		eff.Lines++
		if l.npending == len(l.pieces) {
			m.remove(l)
			continue
		}
		n := copy(l.pieces, l.pieces[l.npending:])
		l.pieces = l.pieces[:n]
		m.entries -= l.npending
		m.npend -= l.npending
		l.npending = 0
	}
	clear(m.pending)
	m.pending = m.pending[:0]
	return eff
}

// PersistRange makes every entry on the cache lines overlapping [addr, addr+size) persisted:
// a library flushed those lines and fenced (PMDK at transaction commit). It returns the number
// of entries persisted.
func (m *Model) PersistRange(addr, size uint64) int {
	n := 0
	for _, l := range m.collect(addr, size) {
		n += len(l.pieces)
		m.remove(l)
	}
	return n
}

// DropRange forgets the unpersisted bytes in [addr, addr+size): the range was unmapped, or its
// contents were restored and made durable by someone else (PMDK rolling back an aborted
// transaction). Entries inside the range are removed, entries sticking out of it at one end
// are clipped to the part outside; an entry that sticks out at both ends is kept whole. It
// returns the number of entries removed.
func (m *Model) DropRange(addr, size uint64) int {
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	removed := 0
	for _, l := range m.collect(addr, size) {
		base := l.idx << m.shift
		lo := uint16(0)
		if addr > base {
			lo = uint16(addr - base)
		}
		hi := uint16(m.lineSize)
		if end-base < m.lineSize {
			hi = uint16(end - base)
		}
		n, np := 0, 0
		for i, p := range l.pieces {
			switch {
			case lo <= p.lo && p.hi <= hi: // inside: drop
				removed++
				continue
			case p.lo < lo && lo < p.hi && p.hi <= hi: // sticks out below
				p.hi = lo
			case lo <= p.lo && p.lo < hi && hi < p.hi: // sticks out above
				p.lo = hi
			}
			if i < l.npending {
				np++
			}
			l.pieces[n] = p
			n++
		}
		if n == 0 {
			m.remove(l)
			continue
		}
		m.entries -= len(l.pieces) - n
		m.npend -= l.npending - np
		l.pieces, l.npending = l.pieces[:n], np
	}
	return removed
}

// Overlapping appends to buf the unpersisted entries that write at least one byte of
// [addr, addr+size), line by line in address order and in program order within a line, and
// returns the extended buf.
func (m *Model) Overlapping(buf []StoreState, addr, size uint64) []StoreState {
	m.ForEachOverlapping(addr, size, func(s StoreState) bool {
		buf = append(buf, s)
		return true
	})
	return buf
}

// ForEachOverlapping calls fn for every unpersisted entry that writes at least one byte of
// [addr, addr+size), in the order of Overlapping, until fn returns false. fn must not change
// the model's state (it may query it).
func (m *Model) ForEachOverlapping(addr, size uint64, fn func(StoreState) bool) {
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	ls := m.collect(addr, size)
	m.scratch = nil // fn may query the model; keep ls ours
	defer func() { m.scratch = ls[:0] }()
	for _, l := range ls {
		base := l.idx << m.shift
		lo, hi := uint16(0), uint16(m.lineSize)
		if addr > base {
			lo = uint16(addr - base)
		}
		if end-base < m.lineSize {
			hi = uint16(end - base)
		}
		for i := range l.pieces {
			p := &l.pieces[i]
			if p.lo < hi && lo < p.hi {
				st := Dirty
				if i < l.npending {
					st = Pending
				}
				if !fn(m.viewAt(l, i, st)) {
					return
				}
			}
		}
	}
}

// Unpersisted appends to buf every unpersisted entry on the cache lines overlapping
// [addr, addr+size) (whole lines), in address order of lines and program order within a line.
func (m *Model) Unpersisted(buf []StoreState, addr, size uint64) []StoreState {
	lo := addr &^ (m.lineSize - 1)
	end := addr + size
	if end < addr {
		end = ^uint64(0)
	}
	hi := (end + m.lineSize - 1) &^ (m.lineSize - 1)
	if hi < end {
		hi = ^uint64(0)
	}
	return m.Overlapping(buf, lo, hi-lo)
}

// ForEachUnpersisted calls fn for every unpersisted entry, line by line in an unspecified order
// of lines and in program order within a line, until fn returns false.
func (m *Model) ForEachUnpersisted(fn func(StoreState) bool) {
	ls := m.scratch[:0]
	m.eachLine(func(l *line) { ls = append(ls, l) })
	m.scratch = nil // fn may query the model; keep ls ours
	defer func() { m.scratch = ls[:0] }()
	for _, l := range ls {
		for i := range l.pieces {
			st := Dirty
			if i < l.npending {
				st = Pending
			}
			if !fn(m.viewAt(l, i, st)) {
				return
			}
		}
	}
}

// StateOf returns the state of store id on the cache line holding addr: Persisted when the
// model no longer holds it (or never did).
func (m *Model) StateOf(id StoreID, addr uint64) State {
	l := m.lookup(addr >> m.shift)
	if l == nil {
		return Persisted
	}
	for i := range l.pieces {
		if l.pieces[i].id == id {
			if i < l.npending {
				return Pending
			}
			return Dirty
		}
	}
	return Persisted
}

// LastFlush returns the last flush of the line holding addr recorded while the line held
// unpersisted stores.
func (m *Model) LastFlush(addr uint64) (Origin, bool) {
	l := m.lookup(addr >> m.shift)
	if l == nil || !l.flushed {
		return Origin{}, false
	}
	return l.flush, true
}
