// Package px86 is scry's model of x86 persistency ("Px86"): for every store to persistent
// memory (PM) it tracks whether the store is still only in the cache (dirty), written back but
// not yet ordered (flush-pending), or guaranteed durable (persisted), one cache line at a time.
//
// Sources. The states are AGAMOTTO's dirty / pending / clean cache-line states (AGAMOTTO,
// OSDI'20, §4.1) and the modified / writeback-pending / persisted shadow-PM states of
// Fernandes's thesis (Automatic Testing of PM Applications, 2022, §2.1 and §5.1.3); the
// same-line rule is WITCHER's (WITCHER, SOSP'21, §4.4.1); the ordering facts are those of the
// Px86 persistency table, Table 2.1 of Huang's dissertation (Constraint-Based Analysis for PM
// Programs, USC 2023, §2.1), which we reconstruct from its prose. For an earlier instruction
// Ii and a later Ij, "✔" means Ii persists before Ij, "CL" only when both touch the same cache
// line, "✘" no guarantee:
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
//   - sfence, mfence, locked RMW of thread T: every entry that a clflushopt, clwb or
//     non-temporal store of T made flush-pending becomes persisted, on every line. x86 orders
//     a write-back only with the later fences of the thread that issued it (Intel SDM vol. 2,
//     CLFLUSHOPT and CLWB: "ordered with respect to ... SFENCE" of the executing processor;
//     Raad et al., POPL'20, Px86: a flush-opt persists at its own thread's next fence), so
//     another thread's fence does not make it durable. A line keeps, per thread, how far its
//     entries are covered by that thread's write-backs; a write-back covers every earlier entry
//     of the line, whoever stored it (the line is written back whole).
//   - PersistRange: a library made the cache lines of a byte range durable (PMDK at transaction
//     commit): every entry of those lines becomes persisted.
//   - Failure atomicity: a store within one aligned 8-byte word is failure-atomic; a wider or
//     misaligned store may tear at 8-byte granularity ([TearUnits]). By default the model keeps
//     one entry per store and cache line (its byte range on the line); with [Config.Units] it
//     splits that range at aligned 8-byte boundaries and keeps one entry per failure-atomic
//     unit, which is the grain of the crash states that package crash enumerates.
//   - Bounded lines: a line holds at most [MaxEntriesPerLine] entries. When a store would exceed
//     that, entries are merged two at a time: an entry is merged into the entry after it (both
//     dirty, or both flush-pending), which then stands for both: it persists all or nothing,
//     covers both byte ranges, keeps the later store's ID and origin, and remembers the first
//     store it stands for (so StateOf still finds a merged store). The entry merged first is
//     the oldest one whose bytes later stores (or the incoming one) have all rewritten, so a
//     later overlap is still attributed to the store that really wrote last; when there is
//     none, the two oldest entries of the same state. A merge only removes crash states (the
//     two persist together), never adds one, so every crash state still respects the rules
//     above.
//
// Profiles. The rules above are the ADR platform's. [Profile] names the platforms the model also
// applies (eADR, and CXL Global Persistent Flush, whose contract is eADR's), as a parameter of
// the one model: under [EADR] a cached store needs no flush and is durable in store order, at
// the latest at its thread's next fence (see Profile for the sources).
//
// Only unpersisted entries are kept; persisted ones are dropped, so memory grows with the number
// of stores not yet durable, not with the length of the trace. A store that spans several cache
// lines is kept as one entry per line (per unit with Config.Units), all with the same StoreID.
//
// A model may carry a payload of type P with every entry (package crash keeps there the bytes
// a unit overwrote, to roll it back in a crash image): [Config.Payloads] makes the payload of
// a new entry and keeps it right when entries are merged or clipped. [Model] is the model
// without payload that the trace oracles use.
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

// Origin is what the model remembers about where a store, flush or fence came from. Site is
// the trace's site id, Stack the call-stack node, Op the workload operation index plus one (0:
// none was running); the model ignores them. Thread is the issuing thread (the trace's thread
// id), which decides which fence orders a write-back (see the package doc).
type Origin struct {
	Site   uint32
	Stack  uint32
	Op     uint32
	Thread uint32
}

// Store flags. NT and External are given to Store; the model sets Spans and Merged.
const (
	NT       uint8 = 1 << 0 // non-temporal store
	External uint8 = 1 << 1 // bytes written by uninstrumented (library) code
	// Spans marks the entries of a store that touches more than one cache line: only such a
	// store can have entries on several lines, so only those need grouping by StoreID.
	Spans uint8 = 1 << 2
	// Rewritten marks, in the entries ForEachOverlapping and ForEachUnpersisted pass, an entry
	// whose bytes later unpersisted stores on its line have all written again: its own value can
	// no longer be what a crash leaves there once the later stores persist.
	Rewritten uint8 = 1 << 3
	// Merged marks an entry that stands for several stores (see "Bounded lines").
	Merged uint8 = 1 << 4
	// Ordered marks, under the EADR profile, an entry of a cached (not non-temporal) store:
	// it is flush-pending for its own thread from the start (nothing to write back) and becomes
	// durable in store order, at the latest at its thread's next fence (see Profile).
	Ordered uint8 = 1 << 5
	// Locked marks the store of a locked read-modify-write instruction (given to Store): the
	// instruction drains its thread's store buffer, its own store included, so under EADR the
	// store and every earlier one of its thread are durable when it completes, and Visible
	// reports them so in a model kept under ADR.
	Locked uint8 = 1 << 6
)

// StoreState is the state of one unpersisted entry: a store's bytes on one cache line (one
// failure-atomic unit of them with Config.Units).
type StoreState struct {
	ID     StoreID
	Origin Origin
	Addr   uint64 // first byte of the entry
	Size   uint64 // bytes
	State  State
	Flags  uint8 // NT, External, Spans, Merged (and Rewritten where documented)
	// First is the first store a merged entry stands for (ID otherwise): the entry stands for
	// the stores of its line with IDs from First to ID.
	First StoreID
}

// NT reports whether the store was non-temporal.
func (s StoreState) NT() bool { return s.Flags&NT != 0 }

// External reports whether the bytes were written by uninstrumented code.
func (s StoreState) External() bool { return s.Flags&External != 0 }

// FailureAtomic reports whether this part of the store persists all or nothing: it lies within
// one aligned 8-byte word (the failure-atomicity rule of the package doc).
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

// Payloads makes and maintains the payload of type P each entry of a model carries. Addresses
// and sizes are in bytes.
type Payloads[P any] interface {
	// New returns the payload of a new entry for the bytes [addr, addr+size) of store id. It is
	// called for each entry of a store in address order, before the next entry is added.
	New(id StoreID, addr, size uint64) P
	// Merge folds the entry from ([fromAddr, fromAddr+fromSize)) into the entry after it on its
	// line (into, [intoAddr, intoAddr+intoSize)); the merged entry then covers the union of the
	// two ranges and persists all or nothing.
	Merge(into *P, intoAddr, intoSize uint64, from *P, fromAddr, fromSize uint64)
	// Clip keeps the part [newAddr, newAddr+newSize) of an entry that covered [addr, addr+size)
	// (DropRange removed the rest).
	Clip(p *P, addr, size, newAddr, newSize uint64)
}

// Config configures a model.
type Config[P any] struct {
	// Units splits every store into one entry per failure-atomic unit: its bytes on one cache
	// line within one aligned 8-byte word.
	Units bool
	// Payloads, if non-nil, makes each entry's payload; nil leaves payloads zero.
	Payloads Payloads[P]
	// Profile is the platform's persistence contract (Profile; the zero value is ADR). Under
	// EADR a cached store is Ordered and flush-pending for its thread at once, flushes change
	// nothing, and a fence persists what its thread stored before it.
	Profile Profile
}

// entry is one store's (or unit's) bytes [lo,hi) on one line.
type entry[P any] struct {
	id     StoreID
	origin Origin
	span   uint32 // id - the first store a merged entry stands for
	lo, hi uint16
	flags  uint8
	pay    P
}

// standsFor reports whether the entry is store id's, or a merged entry standing for it (the
// stores of its line from its first to its own).
func (e *entry[P]) standsFor(id StoreID) bool {
	return e.id == id || e.span != 0 && e.id-StoreID(e.span) <= id && id < e.id
}

// line is the unpersisted state of one cache line: entries in program order, the first
// npending of which are flush-pending (the rest dirty). threads says, for every thread whose
// write-backs cover some entries, how many (a prefix: a write-back covers every entry before
// it); npending is the largest of them.
type line[P any] struct {
	idx       uint64
	entries   []entry[P] // starts on inline: most lines hold one or two stores
	inline    [2]entry[P]
	threads   []cover // starts on tinline: most lines are written back by one thread
	tinline   [1]cover
	npending  int
	inPending bool // listed in Of.pending
	dead      bool // removed from the index while listed in Of.pending
	flushed   bool // flush is valid
	flush     Origin
}

// cover is how many leading entries of a line the write-backs of one thread cover.
type cover struct {
	thread uint32
	n      int
}

// covered returns how many leading entries of l thread t's write-backs cover.
func (l *line[P]) covered(t uint32) int {
	for _, c := range l.threads {
		if c.thread == t {
			return c.n
		}
	}
	return 0
}

// setCovers applies f to every thread's cover (dropping those that become 0) and sets
// npending to the largest; it returns the change of npending.
func (l *line[P]) setCovers(f func(n int) int) int {
	old := l.npending
	k, most := 0, 0
	for _, c := range l.threads {
		c.n = f(c.n)
		if c.n <= 0 {
			continue
		}
		most = max(most, c.n)
		l.threads[k] = c
		k++
	}
	l.threads = l.threads[:k]
	l.npending = most
	return most - old
}

// MaxEntriesPerLine bounds the entries kept for one cache line (see "Bounded lines" in the
// package doc). It coarsens crash states only for lines stored to this often without ever
// being persisted, and keeps memory bounded by the number of lines, not the trace's length.
const MaxEntriesPerLine = 64

// NoPayload is the payload of a model whose entries carry none.
type NoPayload = struct{}

// Model is the persistency model the trace oracles use: entries carry no payload.
type Model = Of[NoPayload]

// Of is the persistency state of all PM cache lines, each entry carrying a payload of type P.
// The zero value is not usable; call New or NewOf. An Of is not safe for concurrent use.
type Of[P any] struct {
	lineSize uint64
	shift    uint
	cfg      Config[P]
	// The index of lines with unpersisted entries (index.go): the hash table, and bitmaps of
	// the registered ranges.
	lines   lineTable[P]
	spaces  []*space // sorted by first
	cur     *space   // the space of the last lookup
	outside int      // lines in the table outside every space
	scratch []*line[P]
	lastIdx uint64
	last    *line[P] // cache of lines[lastIdx], nil when absent
	prevIdx uint64
	prev    *line[P] // the line cached before last, nil when absent
	pending []*line[P]
	free    []*line[P]
	entries int // unpersisted entries
	npend   int // flush-pending entries
	live    int // lines with at least one entry
	// next is one more than the largest store ID seen; fenced[t] (by thread) is next at
	// thread t's latest fence (Visible).
	next   StoreID
	fenced []fenceMark
	// ordered lists, under the ARM profile, what each thread's latest DMB ordered before its
	// later stores: per line, the last entry its cleans covered then (Barrier).
	ordered []orderMark
}

// orderMark is one line's share of a DMB of thread: the entries up to store id (the last one
// the thread's cleans covered at the barrier) persist before the thread's next store.
type orderMark struct {
	thread uint32
	idx    uint64 // the line
	id     StoreID
}

// fenceMark is the store ID bound of a thread's latest fence: its stores below it were issued
// before that fence.
type fenceMark struct {
	thread uint32
	below  StoreID
}

// New returns an empty model without payloads for cache lines of lineSize bytes (the trace
// header's value, 64 on x86-64). Errors: lineSize is not a power of two from 8 to 4096.
func New(lineSize uint64) (*Model, error) { return NewOf(lineSize, Config[NoPayload]{}) }

// NewOf returns an empty model whose entries carry payloads of type P, configured by cfg.
// Errors: lineSize is not a power of two from 8 to 4096.
func NewOf[P any](lineSize uint64, cfg Config[P]) (*Of[P], error) {
	if lineSize < 8 || lineSize > 4096 || lineSize&(lineSize-1) != 0 {
		return nil, fmt.Errorf("px86: cache-line size %d bytes is not a power of two from 8 to 4096", lineSize)
	}
	m := &Of[P]{
		lineSize: lineSize,
		shift:    uint(bits.TrailingZeros64(lineSize)),
		cfg:      cfg,
	}
	m.lines.init(10)
	return m, nil
}

// LineSize returns the cache-line size in bytes.
func (m *Of[P]) LineSize() uint64 { return m.lineSize }

// Profile returns the profile the model applies (Config.Profile).
func (m *Of[P]) Profile() Profile { return m.cfg.Profile }

// Visible reports whether unpersisted entry s (as ForEachLine, ForEachUnpersisted or
// Overlapping pass it) is durable under the EADR profile although the model's own profile does
// not make it so: a cached (not non-temporal) store issued before a later fence of its thread,
// which drained it from the store buffer (see Profile). Package crash uses it to tell which
// crash states of a model kept under ADR eADR allows. Library writes (External) count as
// cached: the runtime cannot see how the library wrote them.
func (m *Of[P]) Visible(s StoreState) bool {
	if s.Flags&NT != 0 {
		return false
	}
	for _, f := range m.fenced {
		if f.thread == s.Origin.Thread {
			return s.ID < f.below
		}
	}
	return false
}

// LineOf returns the address of the first byte of the cache line holding addr.
func (m *Of[P]) LineOf(addr uint64) uint64 { return addr &^ (m.lineSize - 1) }

// Len returns the number of unpersisted entries.
func (m *Of[P]) Len() int { return m.entries }

// PendingLen returns the number of flush-pending entries.
func (m *Of[P]) PendingLen() int { return m.npend }

// Lines returns the number of cache lines holding unpersisted stores.
func (m *Of[P]) Lines() int { return m.live }

// LineLen returns the number of unpersisted entries (dirty or flush-pending) on the cache line
// holding addr: what a clflush of that line would make persisted.
func (m *Of[P]) LineLen(addr uint64) int {
	if l := m.lookup(addr >> m.shift); l != nil {
		return len(l.entries)
	}
	return 0
}

func (m *Of[P]) lookup(idx uint64) *line[P] {
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

func (m *Of[P]) cache(l *line[P], idx uint64) {
	m.prev, m.prevIdx = m.last, m.lastIdx
	m.last, m.lastIdx = l, idx
}

func (m *Of[P]) getOrCreate(idx uint64) *line[P] {
	if l := m.lookup(idx); l != nil {
		return l
	}
	var l *line[P]
	if n := len(m.free); n > 0 {
		l = m.free[n-1]
		m.free = m.free[:n-1]
	} else {
		l = &line[P]{}
		l.entries = l.inline[:0]
	}
	l.idx = idx
	m.put(l)
	m.cache(l, idx)
	return l
}

// remove deletes a line whose entries are all persisted or forgotten.
func (m *Of[P]) remove(l *line[P]) {
	m.entries -= len(l.entries)
	m.npend -= l.npending
	if len(l.entries) > 0 {
		m.live--
	}
	m.unindex(l)
	if m.last == l {
		m.last = nil
	}
	if m.prev == l {
		m.prev = nil
	}
	clear(l.entries) // drop payload references
	l.entries = l.entries[:0]
	if cap(l.entries) > 16 {
		l.entries = l.inline[:0]
	}
	l.npending = 0
	l.threads = l.tinline[:0]
	l.flushed = false
	if l.inPending {
		l.dead = true // Fence returns it to the free list
		return
	}
	m.free = append(m.free, l)
}

// markPending makes every entry of l flush-pending for thread t (a write-back by t).
func (m *Of[P]) markPending(l *line[P], t uint32) {
	n := len(l.entries)
	if n == 0 {
		return
	}
	found := false
	for i := range l.threads {
		if l.threads[i].thread == t {
			l.threads[i].n, found = n, true
		}
	}
	if !found {
		if l.threads == nil {
			l.threads = l.tinline[:0]
		}
		l.threads = append(l.threads, cover{thread: t, n: n})
	}
	m.npend += n - l.npending
	l.npending = n
	if !l.inPending {
		l.inPending = true
		m.pending = append(m.pending, l)
	}
}

// rewritten reports whether the entries after entry i of l (later stores to the line) cover
// every byte of entry i.
func (m *Of[P]) rewritten(l *line[P], i int) bool {
	p := l.entries[i]
	if m.lineSize <= 64 { // one bit per byte of the line
		want := byteMask(p.lo, p.hi)
		var got uint64
		for j := i + 1; j < len(l.entries); j++ {
			q := l.entries[j]
			got |= byteMask(q.lo, q.hi)
			if got&want == want {
				return true
			}
		}
		return false
	}
	for j := i + 1; j < len(l.entries); j++ { // wider lines: one later entry must cover it
		if q := l.entries[j]; q.lo <= p.lo && p.hi <= q.hi {
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
func (m *Of[P]) viewAt(l *line[P], i int, state State) StoreState {
	v := m.view(l, &l.entries[i], state)
	if i+1 < len(l.entries) && m.rewritten(l, i) {
		v.Flags |= Rewritten
	}
	return v
}

func (m *Of[P]) view(l *line[P], p *entry[P], state State) StoreState {
	return StoreState{
		ID: p.id, Origin: p.origin,
		Addr:  l.idx<<m.shift + uint64(p.lo),
		Size:  uint64(p.hi - p.lo),
		State: state, Flags: p.flags,
		First: p.id - StoreID(p.span),
	}
}

func (l *line[P]) stateAt(i int) State {
	if i < l.npending {
		return Pending
	}
	return Dirty
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
// each cache line it touches (one per unit with Config.Units). A store of size 0 does nothing.
func (m *Of[P]) Store(id StoreID, o Origin, addr, size uint64, flags uint8) StoreEffect {
	var eff StoreEffect
	m.StoreInto(&eff, id, o, addr, size, flags)
	return eff
}

// StoreInto is Store writing its effect to *eff, which saves copying the effect on the hot
// path of the analysis driver. eff.Prev is left as it was when eff.Overwrote is false.
func (m *Of[P]) StoreInto(eff *StoreEffect, id StoreID, o Origin, addr, size uint64, flags uint8) {
	eff.Overwrote, eff.Lines = false, 0
	if size == 0 {
		return
	}
	end := addr + size
	if end < addr { // wraps around the address space: clip
		end = ^uint64(0)
	}
	flags &^= Spans | Merged | Rewritten | Ordered
	locked := flags&Locked != 0
	flags &^= Locked
	if addr>>m.shift != (end-1)>>m.shift {
		flags |= Spans
	}
	if id >= m.next {
		m.next = id + 1
	}
	if m.cfg.Profile == ARM {
		// A DMB of this thread ordered its earlier cleans before this store; an atomic is no
		// barrier for cache maintenance on Arm.
		m.applyOrder(o.Thread)
		locked = false
	}
	eadr := m.cfg.Profile == EADR
	if eadr && flags&NT == 0 {
		flags |= Ordered
	}
	for a := addr; a < end; {
		idx := a >> m.shift
		lineEnd := (idx + 1) << m.shift
		hi := end
		if lineEnd != 0 && lineEnd < hi {
			hi = lineEnd
		}
		base := idx << m.shift
		lo16 := uint16(a - base)
		hi16 := uint16(hi - base)
		if hi16 == 0 { // the part ends at the line's end and lineSize == 65536 is excluded
			hi16 = uint16(m.lineSize)
		}
		l := m.getOrCreate(idx)
		if len(l.entries) == 0 {
			m.live++
		}
		if !eff.Overwrote {
			for i := len(l.entries) - 1; i >= 0; i-- {
				p := &l.entries[i]
				if p.lo < hi16 && lo16 < p.hi && p.flags&External == 0 {
					eff.Overwrote, eff.Prev = true, m.view(l, p, l.stateAt(i))
					break
				}
			}
		}
		if m.cfg.Units {
			for u := lo16; u < hi16; {
				w := min(hi16, (u+8)&^7)
				m.add(l, id, o, u, w, flags, base)
				u = w
			}
		} else {
			m.add(l, id, o, lo16, hi16, flags, base)
		}
		if flags&NT != 0 || eadr {
			// A non-temporal store evicts its line; under eADR a cached store needs no write-back.
			m.markPending(l, o.Thread)
		}
		eff.Lines++
		if hi == ^uint64(0) || lineEnd == 0 {
			break
		}
		a = hi
	}
	if locked {
		// The locked instruction completes as a fence after its own store.
		if eadr {
			m.Fence(o.Thread)
		} else {
			m.markFence(o.Thread)
		}
	}
}

// add appends the entry [lo,hi) of store id to l, merging first when the line is full.
func (m *Of[P]) add(l *line[P], id StoreID, o Origin, lo, hi uint16, flags uint8, base uint64) {
	if len(l.entries) >= MaxEntriesPerLine {
		m.compact(l, lo, hi)
	}
	e := entry[P]{id: id, origin: o, lo: lo, hi: hi, flags: flags}
	if m.cfg.Payloads != nil {
		e.pay = m.cfg.Payloads.New(id, base+uint64(lo), uint64(hi-lo))
	}
	l.entries = append(l.entries, e)
	m.entries++
}

// compact merges entries of a full line about to receive the entry [lo,hi) until it has room
// (see "Bounded lines" in the package doc).
func (m *Of[P]) compact(l *line[P], lo, hi uint16) {
	for len(l.entries) >= MaxEntriesPerLine {
		i := m.rewrittenVictim(l, lo, hi)
		if i < 0 {
			i = l.npending // the two oldest dirty entries
			if len(l.entries)-l.npending < 2 {
				// Else the two oldest flush-pending ones. A thread whose write-backs
				// cover the first but not the second no longer covers the merged entry:
				// the merge may only keep a store unpersisted longer, never persist it
				// earlier.
				i = 0
			}
		}
		m.mergeAt(l, i)
	}
}

// sameState reports whether entries i and i+1 of l are in the same state: both dirty, or both
// flush-pending for the same threads.
func (l *line[P]) sameState(i int) bool {
	if i+1 >= len(l.entries) {
		return false
	}
	for _, c := range l.threads {
		if c.n == i+1 {
			return false
		}
	}
	return true
}

// rewrittenVictim returns the oldest entry of l whose bytes later entries (or the incoming
// entry [lo,hi)) all rewrote and whose successor is in the same state, -1 when there is none.
func (m *Of[P]) rewrittenVictim(l *line[P], lo, hi uint16) int {
	n := len(l.entries)
	if m.lineSize <= 64 {
		// covered[i]: the union of the later entries' bytes covers entry i (one backward pass).
		var later uint64 = byteMask(lo, hi)
		var covered [MaxEntriesPerLine + 1]bool
		for i := n - 1; i >= 0; i-- {
			b := byteMask(l.entries[i].lo, l.entries[i].hi)
			covered[i] = b&^later == 0
			later |= b
		}
		for i := 0; i < n-1; i++ {
			if covered[i] && l.sameState(i) {
				return i
			}
		}
		return -1
	}
	for i := 0; i < n-1; i++ {
		if !l.sameState(i) {
			continue
		}
		p := l.entries[i]
		if lo <= p.lo && p.hi <= hi || m.rewritten(l, i) {
			return i
		}
	}
	return -1
}

// mergeAt merges entry i of l into entry i+1 (same state).
func (m *Of[P]) mergeAt(l *line[P], i int) {
	a, b := &l.entries[i], &l.entries[i+1]
	base := l.idx << m.shift
	if m.cfg.Payloads != nil {
		m.cfg.Payloads.Merge(&b.pay, base+uint64(b.lo), uint64(b.hi-b.lo), &a.pay, base+uint64(a.lo), uint64(a.hi-a.lo))
	}
	first := a.id - StoreID(a.span)
	b.lo, b.hi = min(a.lo, b.lo), max(a.hi, b.hi)
	b.flags |= a.flags&(NT|External) | Merged
	b.span = uint32(min(b.id-first, 1<<32-1))
	l.entries = slices.Delete(l.entries, i, i+1)
	m.entries--
	m.npend += l.setCovers(func(n int) int {
		if n > i {
			return n - 1
		}
		return n
	})
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
// of thread o.Thread to the cache line holding addr; o is recorded as the line's last flush.
// clflush persists the line's entries at once; clflushopt and clwb make them flush-pending
// until a fence of the same thread. Dirty and Pending count from the flushing thread's view:
// entries its write-backs did not cover yet, and those they did. See the package doc.
func (m *Of[P]) Flush(kind uint8, addr uint64, o Origin) FlushEffect {
	l := m.lookup(addr >> m.shift)
	if l == nil {
		return FlushEffect{}
	}
	mine := l.covered(o.Thread)
	eff := FlushEffect{Dirty: len(l.entries) - mine, Pending: mine, PrevFlush: l.flushed, Prev: l.flush}
	if m.cfg.Profile == EADR {
		// The caches are persistent: a write-back makes nothing durable that visibility did
		// not, and a clflush must not persist the line ahead of earlier stores of other lines.
		l.flushed, l.flush = true, o
		return eff
	}
	if kind == 1 { // clflush
		eff.Persisted = len(l.entries)
		m.remove(l)
		return eff
	}
	m.markPending(l, o.Thread)
	l.flushed, l.flush = true, o
	return eff
}

// FenceEffect is what a fence did.
type FenceEffect struct {
	Persisted int // flush-pending entries it made persisted (0: nothing to order)
	Lines     int // cache lines they were on (persisted or ordered)
	Ordered   int // flush-pending entries an Arm DMB ordered before the thread's later stores (Barrier)
}

// Fence applies sfence, mfence or a locked read-modify-write of thread t: every entry that t's
// write-backs made flush-pending becomes persisted; entries pending only for other threads
// stay pending. All three kinds drain the thread's pending write-backs (Table 2.1 columns
// sfence/mfence/RMW).
func (m *Of[P]) Fence(t uint32) FenceEffect {
	var eff FenceEffect
	m.markFence(t)
	if len(m.ordered) > 0 {
		m.dropOrder(t)
	}
	if len(m.pending) == 0 {
		return eff
	}
	keep := m.pending[:0]
	for _, l := range m.pending {
		if l.dead {
			l.inPending, l.dead = false, false
			m.free = append(m.free, l)
			continue
		}
		k := l.covered(t)
		if k == 0 {
			if l.npending > 0 {
				keep = append(keep, l)
			} else {
				l.inPending = false
			}
			continue
		}
		eff.Persisted += k
		eff.Lines++
		if k == len(l.entries) {
			l.inPending = false // not kept: remove frees it at once
		}
		if m.persistPrefix(l, k) {
			continue
		}
		if l.npending > 0 {
			keep = append(keep, l)
		} else {
			l.inPending = false
		}
	}
	clear(m.pending[len(keep):])
	m.pending = keep
	return eff
}

// Barrier applies the fence instruction kind (trace.FenceKind) of thread t under the model's
// profile and returns what it made durable:
//   - sfence, mfence, locked read-modify-write (x86) and DSB (Arm): Fence; under ARM a locked
//     instruction (an atomic the compiler lowered to an exclusive pair or an LSE atomic) is no
//     barrier for cache maintenance and does nothing.
//   - DMB (Arm): the thread's cleans issued so far (DC CVAP, ...: entries flush-pending for t)
//     are ordered before its later stores, but not completed: they stay flush-pending, and the
//     model persists them when t issues its next store (or completes them at a DSB). Arm's
//     barrier orders a DC instruction with the thread's later memory accesses (Arm Architecture
//     Reference Manual, "Ordering and completion of data and instruction cache instructions";
//     Raad, Wickerson and Vafeiadis, Weak Persistency Semantics from the Ground Up, OOPSLA'19,
//     §3, where DMB and DSB give the same persist order and only DSB waits for completion).
//     CHOICE: persisting them at the next store drops the crash states, after that store, in
//     which both they and the store are lost; those states persist the same stores as a crash
//     just before the store, so only the program's progress differs. FenceEffect.Ordered counts
//     what the barrier ordered; Persisted is 0.
//
// Unknown kinds act as Fence.
func (m *Of[P]) Barrier(kind uint8, t uint32) FenceEffect {
	switch {
	case kind == fenceDMB:
		return m.order(t)
	case kind == fenceLocked && m.cfg.Profile == ARM:
		return FenceEffect{}
	}
	return m.Fence(t)
}

// The fence kinds Barrier tells apart (trace.FenceKind; px86 does not import package trace).
const (
	fenceLocked = 3
	fenceDMB    = 5
)

// order records a DMB of thread t (Barrier).
func (m *Of[P]) order(t uint32) FenceEffect {
	var eff FenceEffect
	for _, l := range m.pending {
		if l.dead {
			continue
		}
		k := l.covered(t)
		if k == 0 {
			continue
		}
		id := l.entries[k-1].id
		eff.Ordered += k
		eff.Lines++
		found := false
		for i := range m.ordered {
			if o := &m.ordered[i]; o.thread == t && o.idx == l.idx {
				o.id, found = id, true
			}
		}
		if !found {
			m.ordered = append(m.ordered, orderMark{thread: t, idx: l.idx, id: id})
		}
	}
	return eff
}

// applyOrder persists what thread t's DMBs ordered before its next store (Barrier).
func (m *Of[P]) applyOrder(t uint32) {
	if len(m.ordered) == 0 {
		return
	}
	keep := m.ordered[:0]
	for _, o := range m.ordered {
		if o.thread != t {
			keep = append(keep, o)
			continue
		}
		l := m.lookup(o.idx)
		if l == nil {
			continue
		}
		n := 0
		for n < len(l.entries) && (l.entries[n].id <= o.id || l.entries[n].standsFor(o.id)) {
			n++
		}
		if n = min(n, l.covered(t)); n > 0 {
			m.persistPrefix(l, n)
		}
	}
	clear(m.ordered[len(keep):])
	m.ordered = keep
}

// dropOrder forgets thread t's DMB marks: a DSB completed its cleans.
func (m *Of[P]) dropOrder(t uint32) {
	keep := m.ordered[:0]
	for _, o := range m.ordered {
		if o.thread != t {
			keep = append(keep, o)
		}
	}
	clear(m.ordered[len(keep):])
	m.ordered = keep
}

// markFence records that thread t fenced after every store seen so far (Visible).
func (m *Of[P]) markFence(t uint32) {
	for i := range m.fenced {
		if m.fenced[i].thread == t {
			m.fenced[i].below = m.next
			return
		}
	}
	m.fenced = append(m.fenced, fenceMark{thread: t, below: m.next})
}

// PersistRange makes every entry on the cache lines overlapping [addr, addr+size) persisted:
// a library flushed those lines and fenced (PMDK at transaction commit). It returns the number
// of entries persisted.
func (m *Of[P]) PersistRange(addr, size uint64) int {
	n := 0
	for _, l := range m.collect(addr, size) {
		n += len(l.entries)
		m.remove(l)
	}
	return n
}

// DropRange forgets the unpersisted bytes in [addr, addr+size): the range was unmapped, or its
// contents were restored and made durable by someone else (PMDK rolling back an aborted
// transaction). Entries inside the range are removed, entries sticking out of it at one end
// are clipped to the part outside (their payloads through Payloads.Clip); an entry that sticks
// out at both ends is kept whole. It returns the number of entries removed.
func (m *Of[P]) DropRange(addr, size uint64) int {
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
		// kept[i]: entries before i that are kept, to move the threads' covers.
		var kept [MaxEntriesPerLine + 2]int
		n := 0
		for i, p := range l.entries {
			kept[i] = n
			olo, ohi := p.lo, p.hi
			switch {
			case lo <= p.lo && p.hi <= hi: // inside: drop
				removed++
				continue
			case p.lo < lo && lo < p.hi && p.hi <= hi: // sticks out below
				p.hi = lo
			case lo <= p.lo && p.lo < hi && hi < p.hi: // sticks out above
				p.lo = hi
			}
			if (p.lo != olo || p.hi != ohi) && m.cfg.Payloads != nil {
				m.cfg.Payloads.Clip(&p.pay, base+uint64(olo), uint64(ohi-olo), base+uint64(p.lo), uint64(p.hi-p.lo))
			}
			l.entries[n] = p
			n++
		}
		if n == 0 {
			m.remove(l)
			continue
		}
		kept[len(l.entries)] = n
		clear(l.entries[n:])
		m.entries -= len(l.entries) - n
		l.entries = l.entries[:n]
		m.npend += l.setCovers(func(c int) int { return kept[c] })
	}
	return removed
}

// Overlapping appends to buf the unpersisted entries that write at least one byte of
// [addr, addr+size), line by line in address order and in program order within a line, and
// returns the extended buf.
func (m *Of[P]) Overlapping(buf []StoreState, addr, size uint64) []StoreState {
	m.ForEachOverlapping(addr, size, func(s StoreState) bool {
		buf = append(buf, s)
		return true
	})
	return buf
}

// ForEachOverlapping calls fn for every unpersisted entry that writes at least one byte of
// [addr, addr+size), in the order of Overlapping, until fn returns false. fn must not change
// the model's state (it may query it).
func (m *Of[P]) ForEachOverlapping(addr, size uint64, fn func(StoreState) bool) {
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
		for i := range l.entries {
			p := &l.entries[i]
			if p.lo < hi && lo < p.hi {
				if !fn(m.viewAt(l, i, l.stateAt(i))) {
					return
				}
			}
		}
	}
}

// Unpersisted appends to buf every unpersisted entry on the cache lines overlapping
// [addr, addr+size) (whole lines), in address order of lines and program order within a line.
func (m *Of[P]) Unpersisted(buf []StoreState, addr, size uint64) []StoreState {
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
func (m *Of[P]) ForEachUnpersisted(fn func(StoreState) bool) {
	ls := m.scratch[:0]
	m.eachLine(func(l *line[P]) { ls = append(ls, l) })
	m.scratch = nil // fn may query the model; keep ls ours
	defer func() { m.scratch = ls[:0] }()
	for _, l := range ls {
		for i := range l.entries {
			if !fn(m.viewAt(l, i, l.stateAt(i))) {
				return
			}
		}
	}
}

// LineView is read access to one cache line's unpersisted entries and their payloads, valid
// until the model next changes.
type LineView[P any] struct {
	m *Of[P]
	l *line[P]
}

// Addr returns the address of the line's first byte.
func (v LineView[P]) Addr() uint64 { return v.l.idx << v.m.shift }

// Len returns the number of entries of the line, in program order.
func (v LineView[P]) Len() int { return len(v.l.entries) }

// Pending returns how many of the first entries are flush-pending (the rest are dirty).
func (v LineView[P]) Pending() int { return v.l.npending }

// At returns entry i (0 <= i < Len()) and its payload.
func (v LineView[P]) At(i int) (StoreState, *P) {
	e := &v.l.entries[i]
	return v.m.view(v.l, e, v.l.stateAt(i)), &e.pay
}

// ForEachLine calls fn for every cache line with unpersisted entries, in ascending address
// order, until fn returns false. fn must not change the model.
func (m *Of[P]) ForEachLine(fn func(LineView[P]) bool) {
	ls := m.collect(0, ^uint64(0))
	m.scratch = nil
	defer func() { m.scratch = ls[:0] }()
	for _, l := range ls {
		if !fn(LineView[P]{m, l}) {
			return
		}
	}
}

// PersistStore makes store id durable as if the program had written it back and fenced right
// after it: on every cache line of [addr, addr+size) that holds an entry of id, that entry and
// every entry before it on the line (a write-back carries the whole line) become persisted.
// Package crash uses it to explore later operations as if a reported durability bug were fixed.
// It returns the number of entries persisted (0: id is already durable).
func (m *Of[P]) PersistStore(id StoreID, addr, size uint64) int {
	n := 0
	for _, l := range m.collect(addr, size) {
		last := -1
		for i := range l.entries {
			if l.entries[i].standsFor(id) {
				last = i
			}
		}
		if last < 0 {
			continue
		}
		n += last + 1
		m.persistPrefix(l, last+1)
	}
	return n
}

// persistPrefix makes the first k entries of l persisted (they leave the model); it reports
// whether that removed the line.
func (m *Of[P]) persistPrefix(l *line[P], k int) bool {
	if k == len(l.entries) {
		m.remove(l)
		return true
	}
	rest := copy(l.entries, l.entries[k:])
	clear(l.entries[rest:])
	l.entries = l.entries[:rest]
	m.entries -= k
	m.npend += l.setCovers(func(c int) int { return c - k })
	return false
}

// StateOf returns the state of store id on the cache line holding addr: Persisted when the
// model no longer holds it (or never did). A merged entry answers for every store it stands for.
func (m *Of[P]) StateOf(id StoreID, addr uint64) State {
	l := m.lookup(addr >> m.shift)
	if l == nil {
		return Persisted
	}
	for i := range l.entries {
		if l.entries[i].standsFor(id) {
			return l.stateAt(i)
		}
	}
	return Persisted
}

// Durable reports whether every byte of [addr, addr+size) is durable: no unpersisted entry
// (dirty or flush-pending) writes any of them, so a crash now leaves in PM the last value stored
// to each. Bytes never stored to are durable, and so is an empty range. A merged entry stands
// for the bytes between its stores too (see "Bounded lines"), so such a byte may read as not
// durable while its line holds unpersisted stores on both sides of it.
func (m *Of[P]) Durable(addr, size uint64) bool {
	durable := true
	if size > 0 {
		m.ForEachOverlapping(addr, size, func(StoreState) bool {
			durable = false
			return false
		})
	}
	return durable
}

// LastFlush returns the last flush of the line holding addr recorded while the line held
// unpersisted stores.
func (m *Of[P]) LastFlush(addr uint64) (Origin, bool) {
	l := m.lookup(addr >> m.shift)
	if l == nil || !l.flushed {
		return Origin{}, false
	}
	return l.flush, true
}
