package replay

import "github.com/scry-pm/scry/trace"

// Happens-before over the replayed records, by vector clocks: the construction of Fidge
// ("Timestamps in Message-Passing Systems That Preserve the Partial Ordering", 1988) and Mattern
// ("Virtual Time and Global States of Distributed Systems", 1989) of Lamport's happened-before
// relation ("Time, Clocks, and the Ordering of Events in a Distributed System", CACM 1978), in
// the form race detectors use for locks (a clock per thread and one per synchronization
// object; FastTrack's epochs, Flanagan and Freund, PLDI'09, stamp single events).
//
// Edges come from the SYNC records (trace format version 9) and from the accesses of PM atomics:
//
//   - an unlock (mutex, rwlock, spin lock), a semaphore post, a barrier arrival and an RMW on a
//     word that is not PM release the thread's clock into the object's; a lock, a read lock, a
//     semaphore wait, a barrier leave and an RMW acquire the object's clock (so an unlock comes
//     before every later lock of the same object, RMWs of one word are ordered among themselves,
//     and every arrival at a barrier comes before every later leave of it);
//   - a create releases the parent's clock to the child, which acquires it at its first record;
//     a join acquires the joined thread's clock as of its last record;
//   - on PM, a STORE at a site whose access is release, acq_rel or seq_cst, or at an rmw site,
//     releases into the clock of its address; a LOAD at an acquire, acq_rel or seq_cst site, or
//     at an rmw site, acquires it. A releasing plain store replaces the address's clock (it heads
//     a new release sequence), an RMW's store joins it (it continues the sequence), and a store
//     at a site of known access that is not releasing (plain, volatile, relaxed) clears it.
//
// Edges are kept from the appearance of the trace's second thread on (its create, or its first
// record): before, with one thread, there is nothing to order, and a child created by a SYNC
// create inherits its parent's whole past through the create edge.
//
// Approximations, each of which can only add order, never remove it: a read lock acquires what
// earlier readers released (readers appear ordered); a barrier's clock accumulates over its
// rounds; a kernel thread id the trace reuses for a new thread continues the old one's clock.
// PM atomics are matched by the exact address of the record (an access that covers an atomic
// word from another address does not count); RMWs and atomics are ordered as their records are,
// which the runtime writes right after the instruction. Traces older than version 9, and
// threads created where the runtime could not see it, have no SYNC records: their threads are
// concurrent with each other except through PM atomics at sites of known access.

// Epoch stamps a point of one thread: the thread's trace id and its own clock there. The records
// of a thread between two of its releases share an epoch.
type Epoch struct {
	Thread uint32
	Clock  uint64
}

// HB is happens-before over the records a Machine replayed so far (Machine.HB). Until a second
// thread appears (a SYNC record, or a record of another thread) it keeps nothing and allocates
// nothing: every record happens before the later ones. Read it from handlers, which run after
// the machine applied the record's edges; do not change it.
type HB struct {
	single uint32 // the one thread seen so far (0: none), while !multi
	multi  bool

	idx     map[uint32]int // thread trace id -> index into ids, clocks, pending
	ids     []uint32
	clocks  [][]uint64 // clocks[i][j]: what thread i knows of thread j (missing entries are 0)
	pending []bool     // thread i released at its last record: its clock advances at its next

	lastTid uint32 // the thread of the previous record, and its index (a cache of idx)
	lastIdx int

	objects map[uint64][]uint64 // lock, semaphore, barrier or non-PM word -> the clock released into it
	created map[uint32][]uint64 // a created thread not seen yet -> its parent's clock at the create
	atomics map[uint64][]uint64 // PM address -> the clock of its release sequence
}

// Epoch returns the epoch of thread's latest record (of the record being applied, for its
// thread). A thread not seen yet gets the epoch its first record will have.
func (h *HB) Epoch(thread uint32) Epoch {
	if !h.multi {
		return Epoch{thread, 1}
	}
	i, ok := h.idx[thread]
	if !ok {
		return Epoch{thread, 1}
	}
	return Epoch{thread, h.clocks[i][i]}
}

// Before reports whether the point stamped e happens before the current point of thread (its
// latest record): true when e is thread's own (program order; e must stamp a record already
// replayed) or when thread synchronized, directly or through others, with e's thread after e.
// Two records of different threads neither of which is before the other are concurrent.
func (h *HB) Before(e Epoch, thread uint32) bool {
	if e.Thread == thread {
		return true
	}
	if !h.multi {
		return false
	}
	i, ok := h.idx[thread]
	j, ok2 := h.idx[e.Thread]
	if !ok || !ok2 {
		return false
	}
	vc := h.clocks[i]
	return j < len(vc) && vc[j] >= e.Clock
}

// Threads returns the number of threads the clocks know (0 while the trace has one thread).
func (h *HB) Threads() int { return len(h.ids) }

// step applies ev's edges; sites gives the access of a site (nil: none known).
func (h *HB) step(ev *trace.Event, sites *trace.Reader) {
	t := ev.Thread
	if t == 0 {
		return // before any THREAD record: SITES, DEPS, SCHEDULE belong to no thread
	}
	if !h.multi {
		if ev.Kind != trace.KindSync && (h.single == 0 || h.single == t) {
			h.single = t
			return
		}
		h.grow()
	}
	i := h.thread(t)
	if h.pending[i] {
		h.clocks[i][i]++
		h.pending[i] = false
	}
	switch ev.Kind {
	case trace.KindSync:
		h.sync(i, ev)
	case trace.KindLoad:
		if acquiring(access(sites, ev.Site)) {
			if c, ok := h.atomics[ev.Addr]; ok {
				h.clocks[i] = join(h.clocks[i], c)
			}
		}
	case trace.KindStore, trace.KindNTStore:
		a, rmw := access(sites, ev.Site)
		switch {
		case rmw:
			h.atomics[ev.Addr] = join(h.atomics[ev.Addr], h.clocks[i])
			h.pending[i] = true
		case a == trace.AccessRelease || a == trace.AccessAcqRel || a == trace.AccessSeqCst:
			h.atomics[ev.Addr] = append(h.atomics[ev.Addr][:0], h.clocks[i]...)
			h.pending[i] = true
		case a != trace.AccessUnknown && len(h.atomics) > 0:
			delete(h.atomics, ev.Addr)
		}
	}
}

// sync applies a SYNC record of thread index i.
func (h *HB) sync(i int, ev *trace.Event) {
	switch ev.Sync {
	case trace.SyncLock, trace.SyncRdLock, trace.SyncSemWait, trace.SyncBarrierLeave:
		if c, ok := h.objects[ev.Object]; ok {
			h.clocks[i] = join(h.clocks[i], c)
		}
	case trace.SyncUnlock, trace.SyncSemPost, trace.SyncBarrierArrive:
		h.objects[ev.Object] = join(h.objects[ev.Object], h.clocks[i])
		h.pending[i] = true
	case trace.SyncRMW:
		if c, ok := h.objects[ev.Object]; ok {
			h.clocks[i] = join(h.clocks[i], c)
		}
		h.objects[ev.Object] = join(h.objects[ev.Object], h.clocks[i])
		h.pending[i] = true
	case trace.SyncCreate:
		child := uint32(ev.Object)
		if j, ok := h.idx[child]; ok {
			// A reused id: the new thread continues the old one's clock, from a new epoch.
			h.clocks[j] = join(h.clocks[j], h.clocks[i])
			h.clocks[j][j]++
		} else {
			h.created[child] = join(h.created[child], h.clocks[i])
		}
		h.pending[i] = true
	case trace.SyncJoin:
		if j, ok := h.idx[uint32(ev.Object)]; ok {
			h.clocks[i] = join(h.clocks[i], h.clocks[j])
		}
	}
}

// grow starts the clocks: a second thread appeared.
func (h *HB) grow() {
	h.multi = true
	h.idx = map[uint32]int{}
	h.objects = map[uint64][]uint64{}
	h.created = map[uint32][]uint64{}
	h.atomics = map[uint64][]uint64{}
	if h.single != 0 {
		h.thread(h.single)
	}
}

// thread returns the index of thread t, adding it (clock 1, and its creator's clock when a
// create named it) at its first record.
func (h *HB) thread(t uint32) int {
	if t == h.lastTid && h.lastIdx < len(h.ids) && h.ids[h.lastIdx] == t {
		return h.lastIdx
	}
	i, ok := h.idx[t]
	if !ok {
		i = len(h.ids)
		h.idx[t] = i
		h.ids = append(h.ids, t)
		vc := make([]uint64, i+1)
		if c, ok := h.created[t]; ok {
			vc = join(vc, c)
			delete(h.created, t)
		}
		vc[i] = 1
		h.clocks = append(h.clocks, vc)
		h.pending = append(h.pending, false)
	}
	h.lastTid, h.lastIdx = t, i
	return i
}

// join returns dst with each entry the maximum of its own and src's (dst grows to src's length).
func join(dst, src []uint64) []uint64 {
	for len(dst) < len(src) {
		dst = append(dst, 0)
	}
	for k, v := range src {
		if v > dst[k] {
			dst[k] = v
		}
	}
	return dst
}

// access returns the access of site id and whether it is an rmw site.
func access(r *trace.Reader, id uint32) (trace.SiteAccess, bool) {
	if r == nil || id == 0 {
		return trace.AccessUnknown, false
	}
	s, ok := r.Site(id)
	if !ok {
		return trace.AccessUnknown, false
	}
	return s.Access, s.Kind == trace.SiteRMW
}

// acquiring reports whether a load of that access (and rmw-ness) acquires.
func acquiring(a trace.SiteAccess, rmw bool) bool {
	return rmw || a == trace.AccessAcquire || a == trace.AccessAcqRel || a == trace.AccessSeqCst
}
