// Package pmdk adds the semantics of PMDK's libpmemobj to the persistency model of package
// px86: which PM ranges are mapped, the transaction nesting of each thread, the ranges added to
// a transaction (TX_ADD) and the objects allocated in it (ALLOC), and what commit and abort
// make durable.
//
// Rules (docs/trace-format.md "Semantics the analyses rely on"):
//
//   - REGION_MAP / REGION_UNMAP define what is PM; events outside every mapped region are
//     ignored by the analyses.
//   - Transactions nest per thread. TX_ADD ranges and the objects allocated while the outermost
//     transaction runs belong to that outermost transaction (PMDK flattens nesting).
//   - At the outermost TX_COMMIT, PMDK flushes and fences the cache lines of exactly the added
//     ranges (except those added with POBJ_XADD_NO_FLUSH) and of the allocated objects: the
//     model persists those lines (px86.Model.PersistRange).
//   - At TX_ABORT (of any level: PMDK aborts the whole transaction) PMDK restores the snapshotted
//     ranges from the undo log and makes the restored bytes durable; the objects allocated in the
//     transaction are freed. Unpersisted stores to those bytes are no longer candidates for
//     anything: the model drops them (px86.Model.DropRange). Ranges added with
//     POBJ_XADD_NO_SNAPSHOT are not restored.
//   - What a TX_BEGIN, TX_COMMIT, TX_ABORT or TX_END did is a Change (Tx.Last: began, a
//     commit that persists nothing, the outermost commit, abort, end of a nested level, end of
//     the outermost), and the transaction a record runs in is numbered per thread (Tx.ID):
//     consumers read these rather than the record kinds and depths.
//   - EXTERNAL_WRITE: flag "initial" is the region's content at map time (already durable);
//     flag "persisted" means the library flushed and fenced those bytes (their cache lines are
//     persisted); otherwise the bytes are a dirty store of the library call's site, flagged
//     px86.External.
//
// The custom transaction oracles follow AGAMOTTO's PMDK checkers
// (AGAMOTTO, OSDI'20, §4.2.2).
package pmdk

import (
	"slices"
	"sort"

	"github.com/scry-pm/scry/trace"
)

// Range is a byte range [Addr, Addr+Size) of PM.
type Range struct {
	Addr, Size uint64
}

// End returns the first byte after the range.
func (r Range) End() uint64 { return r.Addr + r.Size }

// Region is one mapped PM region.
type Region struct {
	ID         uint32
	Base, Len  uint64
	Path       string
	FileOffset uint64
}

// Regions is the set of mapped regions, with a cache of the last hit. The zero value is empty.
type Regions struct {
	list []Region // sorted by Base
	last int      // index of the last hit, -1 none
	// The last hit's range, for Contains's inlined check (lastLen 0: none).
	lastBase, lastLen uint64
}

// Map adds (or replaces, when the id is already mapped) a region.
func (rs *Regions) Map(r Region) {
	rs.Unmap(r.ID)
	i := sort.Search(len(rs.list), func(i int) bool { return rs.list[i].Base >= r.Base })
	rs.list = slices.Insert(rs.list, i, r)
	rs.last, rs.lastLen = -1, 0
}

// Get returns region id.
func (rs *Regions) Get(id uint32) (Region, bool) {
	for _, r := range rs.list {
		if r.ID == id {
			return r, true
		}
	}
	return Region{}, false
}

// Unmap removes region id and returns it.
func (rs *Regions) Unmap(id uint32) (Region, bool) {
	for i, r := range rs.list {
		if r.ID == id {
			rs.list = slices.Delete(rs.list, i, i+1)
			rs.last, rs.lastLen = -1, 0
			return r, true
		}
	}
	return Region{}, false
}

// Overlapping returns the mapped regions that share at least one byte with [addr, addr+size),
// in address order.
func (rs *Regions) Overlapping(addr, size uint64) []Region {
	var out []Region
	for _, r := range rs.list {
		if size > 0 && r.Len > 0 && addr < r.Base+r.Len && r.Base < addr+size {
			out = append(out, r)
		}
	}
	return out
}

// Find returns the region holding addr.
func (rs *Regions) Find(addr uint64) (*Region, bool) {
	if uint(rs.last) < uint(len(rs.list)) {
		if r := &rs.list[rs.last]; addr-r.Base < r.Len {
			return r, true
		}
	}
	return rs.find(addr)
}

func (rs *Regions) find(addr uint64) (*Region, bool) {
	i := sort.Search(len(rs.list), func(i int) bool { return rs.list[i].Base > addr }) - 1
	if i >= 0 && addr-rs.list[i].Base < rs.list[i].Len {
		rs.last, rs.lastBase, rs.lastLen = i, rs.list[i].Base, rs.list[i].Len
		return &rs.list[i], true
	}
	return nil, false
}

// Contains reports whether addr lies in a mapped region.
func (rs *Regions) Contains(addr uint64) bool {
	if addr-rs.lastBase < rs.lastLen { // the last hit, checked inline
		return true
	}
	_, ok := rs.find(addr)
	return ok
}

// All returns the mapped regions in address order (do not modify).
func (rs *Regions) All() []Region { return rs.list }

// Len returns the number of mapped regions.
func (rs *Regions) Len() int { return len(rs.list) }

// IntervalSet is a set of bytes kept as sorted, disjoint, non-adjacent ranges.
type IntervalSet struct {
	r []Range
}

// clampedEnd returns addr+size, or the top of the address space when that wraps.
func clampedEnd(addr, size uint64) uint64 {
	if end := addr + size; end >= addr {
		return end
	}
	return ^uint64(0)
}

// Add inserts [addr, addr+size).
func (s *IntervalSet) Add(addr, size uint64) {
	if size == 0 {
		return
	}
	end := clampedEnd(addr, size)
	// first range whose end >= addr (may merge), last range whose start <= end.
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].End() >= addr })
	j := i
	for j < len(s.r) && s.r[j].Addr <= end {
		j++
	}
	if i == j {
		s.r = slices.Insert(s.r, i, Range{addr, end - addr})
		return
	}
	lo := min(addr, s.r[i].Addr)
	hi := max(end, s.r[j-1].End())
	s.r[i] = Range{lo, hi - lo}
	s.r = slices.Delete(s.r, i+1, j)
}

// Covers reports whether every byte of [addr, addr+size) is in the set (true for size 0).
func (s *IntervalSet) Covers(addr, size uint64) bool {
	if size == 0 {
		return true
	}
	n := len(s.r)
	if n == 0 {
		return false
	}
	end := addr + size
	if n <= 4 {
		for _, r := range s.r {
			if r.Addr <= addr && end <= r.End() {
				return true
			}
		}
		return false
	}
	i := sort.Search(n, func(i int) bool { return s.r[i].End() > addr })
	return i < n && s.r[i].Addr <= addr && end <= s.r[i].End()
}

// Remove takes [addr, addr+size) out of the set (a range of it may split in two).
func (s *IntervalSet) Remove(addr, size uint64) {
	if size == 0 {
		return
	}
	end := clampedEnd(addr, size)
	out := s.r[:0:0]
	for _, r := range s.r {
		if r.End() <= addr || end <= r.Addr {
			out = append(out, r)
			continue
		}
		if r.Addr < addr {
			out = append(out, Range{r.Addr, addr - r.Addr})
		}
		if end < r.End() {
			out = append(out, Range{end, r.End() - end})
		}
	}
	s.r = out
}

// Len returns the number of disjoint ranges.
func (s *IntervalSet) Len() int { return len(s.r) }

// Ranges returns the disjoint ranges in address order (do not modify).
func (s *IntervalSet) Ranges() []Range { return s.r }

// Reset empties the set, keeping its storage.
func (s *IntervalSet) Reset() { s.r = s.r[:0] }

// Stage is the stage of a transaction (PMDK's TX_STAGE_*).
type Stage uint8

// Transaction stages.
const (
	StageWork     Stage = 1 // between TX_BEGIN and TX_COMMIT / TX_ABORT
	StageOnCommit Stage = 2
	StageOnAbort  Stage = 3
)

// AddedRange is one TX_ADD of a transaction.
type AddedRange struct {
	Range
	Flags uint8 // trace.TxAddNoSnapshot, trace.TxAddNoFlush
}

// Origin is one TX_ADD or allocation of a transaction, with the site and call stack of its call.
type Origin struct {
	Range
	Site, Stack uint32
	Alloc       bool // an allocation, not a TX_ADD
}

// Change is what one TX_BEGIN, TX_COMMIT, TX_ABORT or TX_END did to a thread's transaction
// (Tx.Last): the transaction notification a consumer reads instead of the record's kind and
// depth.
type Change uint8

// Transaction changes.
const (
	// Began: TX_BEGIN opened a level (Depth 1: the outermost transaction, which Tx.ID numbers).
	Began Change = iota + 1
	// Committed: TX_COMMIT of a level that makes nothing durable: a nested level (PMDK commits
	// the flattened transaction at the outermost level only), or a transaction already aborted.
	Committed
	// CommittedOutermost: TX_COMMIT of the outermost level of a transaction not aborted: its
	// ranges (CommitRanges) are persisted now.
	CommittedOutermost
	// Aborted: TX_ABORT, of any level: PMDK aborts the whole transaction.
	Aborted
	// Ended: TX_END of a nested level.
	Ended
	// EndedOutermost: TX_END of the outermost level: the transaction is over and its ranges
	// forgotten (Depth 0).
	EndedOutermost
)

var changeNames = [...]string{Began: "began", Committed: "committed", CommittedOutermost: "committed-outermost",
	Aborted: "aborted", Ended: "ended", EndedOutermost: "ended-outermost"}

func (c Change) String() string {
	if int(c) < len(changeNames) && changeNames[c] != "" {
		return changeNames[c]
	}
	return "none"
}

// Tx is the transaction state of one thread: the nesting stack and the outermost transaction's
// added ranges and allocated objects.
type Tx struct {
	stages []Stage // one per nesting level, outermost first
	last   Change  // what the latest TX_BEGIN, TX_COMMIT, TX_ABORT or TX_END did
	serial uint64  // outermost transactions begun so far
	Added  []AddedRange
	Allocs []Range
	Logged IntervalSet // union of Added and Allocs: bytes the transaction takes care of
	// Origins lists every TX_ADD and allocation of the open transaction with its site, so that
	// a redundant TX_ADD can name the earlier call that already covered its range.
	Origins []Origin
	// Coverer is, after Add reported a redundant range, the latest earlier TX_ADD or allocation
	// overlapping it.
	Coverer Origin
	aborted bool
	// BeginSite and BeginStack locate the outermost TX_BEGIN of the open transaction.
	BeginSite, BeginStack uint32
	// ignored are the bytes exempt from the transaction checks, shared by every thread
	// (Threads.Ignore).
	ignored *IntervalSet
	// prot caches the bytes the transaction protects (Protects), built for protKey.
	prot    IntervalSet
	protKey [2]int // len(Added), len(Allocs) when prot was built; -1: stale
}

// Depth returns the nesting depth (0: no transaction).
func (t *Tx) Depth() int { return len(t.stages) }

// Last returns what the latest TX_BEGIN, TX_COMMIT, TX_ABORT or TX_END of the thread did (0
// before any).
func (t *Tx) Last() Change { return t.last }

// ID returns the number of the open outermost transaction among the thread's transactions (1
// for its first), 0 when none is open. A nested level has the ID of its outermost transaction.
func (t *Tx) ID() uint64 {
	if len(t.stages) == 0 {
		return 0
	}
	return t.serial
}

// Serial returns the number of outermost transactions the thread began so far: the open one's
// ID, or after TX_END the ID the transaction just ended had.
func (t *Tx) Serial() uint64 { return t.serial }

// InWork reports whether the thread is inside a transaction whose innermost level is in its work
// stage (stores there are transactional).
func (t *Tx) InWork() bool {
	n := len(t.stages)
	return n > 0 && t.stages[n-1] == StageWork && !t.aborted
}

// Covers reports whether [addr, addr+size) lies wholly in ranges added to the open transaction
// or objects allocated in it.
func (t *Tx) Covers(addr, size uint64) bool {
	return len(t.stages) > 0 && t.Logged.Covers(addr, size)
}

// Ignored reports whether [addr, addr+size) lies wholly in ranges exempt from the transaction
// checks (TX_IGNORE records: pmemcheck's VALGRIND_PMC_ADD_TO_GLOBAL_TX_IGNORE, docs/pmemcheck.md).
// Such bytes are neither logged nor protected: only the check that a transactional store was
// added to its transaction skips them.
func (t *Tx) Ignored(addr, size uint64) bool {
	return t.ignored != nil && t.ignored.Len() > 0 && t.ignored.Covers(addr, size)
}

// Protects reports whether the open transaction, in its work stage, protects the bytes
// [addr, addr+size): they lie wholly in ranges added with a snapshot and flushed at commit
// (neither POBJ_XADD_NO_SNAPSHOT nor POBJ_XADD_NO_FLUSH) or in objects allocated
// transactionally. A store there takes effect only at the outermost commit (a crash or an abort
// before rolls it back) and is durable after it: the persistent interval of a transactional
// store in the dissertation's Algorithm 7 (Huang, USC 2023, §5.5.3).
func (t *Tx) Protects(addr, size uint64) bool {
	if !t.InWork() || !t.Logged.Covers(addr, size) {
		return false
	}
	plain := len(t.Origins) == len(t.Added)+len(t.Allocs)
	for _, a := range t.Added {
		if a.Flags&(trace.TxAddNoFlush|trace.TxAddNoSnapshot) != 0 {
			plain = false
			break
		}
	}
	if plain { // every byte the transaction logs is protected
		return true
	}
	if k := [2]int{len(t.Added), len(t.Allocs)}; k != t.protKey {
		t.prot.Reset()
		for _, a := range t.Added {
			if a.Flags&(trace.TxAddNoFlush|trace.TxAddNoSnapshot) == 0 {
				t.prot.Add(a.Addr, a.Size)
			}
		}
		for _, a := range t.Allocs {
			t.prot.Add(a.Addr, a.Size)
		}
		t.protKey = k
	}
	return t.prot.Covers(addr, size)
}

// Persister is what commit and abort act on (a *px86.Model satisfies it).
type Persister interface {
	PersistRange(addr, size uint64) int
	DropRange(addr, size uint64) int
}

// Begin opens a (possibly nested) transaction; site and stack locate the TX_BEGIN.
func (t *Tx) Begin(site, stack uint32) {
	if len(t.stages) == 0 {
		t.BeginSite, t.BeginStack = site, stack
		t.serial++
	}
	t.stages = append(t.stages, StageWork)
	t.last = Began
}

// Add records a TX_ADD in the outermost transaction and reports whether the range was already
// wholly covered by earlier added ranges or allocated objects (the redundant-tx-add rule).
// It reports ok=false when no transaction is open. site and stack locate the call; when the
// range is redundant, Coverer names the latest earlier add or allocation overlapping it.
func (t *Tx) Add(addr, size uint64, flags uint8, site, stack uint32) (redundant, ok bool) {
	if len(t.stages) == 0 {
		return false, false
	}
	redundant = t.Logged.Covers(addr, size)
	if redundant {
		t.Coverer = Origin{}
		for i := len(t.Origins) - 1; i >= 0; i-- {
			o := t.Origins[i]
			if o.Addr < addr+size && addr < o.End() {
				t.Coverer = o
				break
			}
		}
	}
	t.Added = append(t.Added, AddedRange{Range{addr, size}, flags})
	t.Origins = append(t.Origins, Origin{Range{addr, size}, site, stack, false})
	t.Logged.Add(addr, size)
	return redundant, true
}

// Alloc records an object allocated while the transaction is open. Objects allocated
// transactionally (inTx, ALLOC flag tx) are persisted at commit and freed at abort; every object
// allocated while the transaction runs counts as logged for the tx-unlogged-store rule (it is
// new, so nothing written before the transaction can depend on its contents).
func (t *Tx) Alloc(addr, size uint64, inTx bool, site, stack uint32) {
	if len(t.stages) == 0 {
		return
	}
	if inTx {
		t.Allocs = append(t.Allocs, Range{addr, size})
	}
	t.Origins = append(t.Origins, Origin{Range{addr, size}, site, stack, true})
	t.Logged.Add(addr, size)
}

// Commit handles TX_COMMIT of the innermost level. At the outermost level of a transaction not
// aborted it persists the ranges of CommitRanges through p and returns true (Last is then
// CommittedOutermost, else Committed).
func (t *Tx) Commit(p Persister) bool {
	n := len(t.stages)
	if n == 0 {
		return false
	}
	t.stages[n-1] = StageOnCommit
	t.last = Committed
	if n > 1 || t.aborted {
		return false
	}
	t.last = CommittedOutermost
	t.CommitRanges(func(r Range) { p.PersistRange(r.Addr, r.Size) })
	return true
}

// CommitRanges calls fn with every range the outermost commit of the open transaction
// persists: the added ranges except those added with POBJ_XADD_NO_FLUSH, then the objects
// allocated transactionally.
func (t *Tx) CommitRanges(fn func(Range)) {
	for _, a := range t.Added {
		if a.Flags&trace.TxAddNoFlush == 0 {
			fn(a.Range)
		}
	}
	for _, a := range t.Allocs {
		fn(a)
	}
}

// Abort handles TX_ABORT: PMDK aborts the whole transaction, so the first abort restores the
// snapshotted ranges (except no_snapshot ones) and frees the allocated objects by dropping
// their unpersisted stores through p. It returns true when it did that. Last is then Aborted.
func (t *Tx) Abort(p Persister) bool {
	n := len(t.stages)
	if n == 0 {
		return false
	}
	for i := range t.stages {
		t.stages[i] = StageOnAbort
	}
	t.last = Aborted
	if t.aborted {
		return false
	}
	t.aborted = true
	for _, a := range t.Added {
		if a.Flags&trace.TxAddNoSnapshot == 0 {
			p.DropRange(a.Addr, a.Size)
		}
	}
	for _, a := range t.Allocs {
		p.DropRange(a.Addr, a.Size)
	}
	return true
}

// End handles TX_END: it closes the innermost level (Last is Ended) and, after the outermost
// (EndedOutermost), forgets the transaction's ranges. It returns false when no transaction was
// open.
func (t *Tx) End() bool {
	n := len(t.stages)
	if n == 0 {
		return false
	}
	t.stages = t.stages[:n-1]
	t.last = Ended
	if n == 1 {
		t.last = EndedOutermost
		t.Added = t.Added[:0]
		t.Allocs = t.Allocs[:0]
		t.Origins = t.Origins[:0]
		t.Logged.Reset()
		t.aborted = false
		t.prot.Reset()
		t.protKey = [2]int{}
	}
	return true
}

// Threads holds the transaction state of every thread, with a cache of the last one.
type Threads struct {
	m       map[uint32]*Tx
	lastTid uint32
	last    *Tx
	ignored IntervalSet
}

// Ignore exempts [addr, addr+size) from the transaction checks of every thread (a TX_IGNORE
// record; Tx.Ignored).
func (ts *Threads) Ignore(addr, size uint64) { ts.ignored.Add(addr, size) }

// Forget drops the exemptions inside [addr, addr+size) (an unmapped region).
func (ts *Threads) Forget(addr, size uint64) { ts.ignored.Remove(addr, size) }

// Get returns the transaction state of thread tid, creating it.
func (ts *Threads) Get(tid uint32) *Tx {
	if ts.last != nil && ts.lastTid == tid {
		return ts.last
	}
	if ts.m == nil {
		ts.m = map[uint32]*Tx{}
	}
	t := ts.m[tid]
	if t == nil {
		t = &Tx{ignored: &ts.ignored}
		ts.m[tid] = t
	}
	ts.last, ts.lastTid = t, tid
	return t
}

// Open returns the number of threads with an open transaction.
func (ts *Threads) Open() int {
	n := 0
	for _, t := range ts.m {
		if t.Depth() > 0 {
			n++
		}
	}
	return n
}

// Reservations tracks memory handed out by pmemobj_reserve / pmemobj_xreserve and not yet
// published or cancelled (ALLOC and FREE records with flag trace.AllocReserve,
// docs/trace-format.md). Such memory is not allocated in the persistent heap: a crash leaves it
// free, so what the program writes into it before publishing cannot be seen by recovery, and
// overwriting it before it persists is no bug (PMDK's action API, pmemobj_action(3)). The set
// is small (a program holds few reservations at a time): a slice sorted by address.
type Reservations struct {
	r []Range
}

// Reserve records a reservation of size bytes at addr.
func (s *Reservations) Reserve(addr, size uint64) {
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].Addr >= addr })
	if i < len(s.r) && s.r[i].Addr == addr {
		s.r[i].Size = size
		return
	}
	s.r = slices.Insert(s.r, i, Range{addr, size})
}

// End removes the reservation starting at addr (published or cancelled) and reports whether
// there was one.
func (s *Reservations) End(addr uint64) bool {
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].Addr >= addr })
	if i < len(s.r) && s.r[i].Addr == addr {
		s.r = slices.Delete(s.r, i, i+1)
		return true
	}
	return false
}

// Contains reports whether [addr, addr+size) lies wholly in one open reservation.
func (s *Reservations) Contains(addr, size uint64) bool {
	if len(s.r) == 0 {
		return false
	}
	i := sort.Search(len(s.r), func(i int) bool { return s.r[i].Addr > addr })
	if i == 0 {
		return false
	}
	r := s.r[i-1]
	return addr >= r.Addr && addr+size <= r.End()
}

// Len returns the number of open reservations.
func (s *Reservations) Len() int { return len(s.r) }
