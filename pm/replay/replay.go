// Package replay is the one place where the records of a trace become state: which PM regions
// are mapped, which workload operations each thread runs, the PMDK transaction of each thread,
// the open pmemobj_reserve reservations, what the x86 persistency model (package px86) does
// with each store, flush and fence, and, optionally, the bytes of every region (package image).
// The analysis driver, the crash-state walker, inference, `scry fix` (its index of the trace and
// its windows) and `scry trace verify` all read a trace through a Machine and subscribe to the
// typed state changes it reports (Handler); none of them interprets region, transaction,
// allocation or operation records itself.
//
// # Decisions
//
// The rules below are decided here, once, for every consumer (docs/architecture.md lists them):
//
//   - What is PM. A write, flush or load whose first byte lies in no mapped region is not PM:
//     it is skipped (writes are counted, with one warning: the runtime records only PM
//     writes, so such a write means an inconsistent trace). A write that runs past the end of
//     its region is clipped to the region, with one warning.
//   - What the program says is not PM. A PM_EXCLUDE record (pmemcheck's
//     VALGRIND_PMC_REMOVE_PMEM_MAPPING, docs/pmemcheck.md) takes a range of a mapped region out
//     of PM until a PM_EXCLUDE with flag include puts it back or the region is unmapped: a
//     write, flush or load whose first byte lies there is no PM event (handlers and the model do
//     not see it; the image still gets a write's bytes, so that it equals the file). A
//     PM_EXCLUDE outside every mapped region is ignored, with a warning; one running past its
//     region's end is clipped. A SET_CLEAN (VALGRIND_PMC_SET_CLEAN) persists exactly its bytes
//     in the model (px86 DropRange: the parts of a store outside the range stay unpersisted),
//     reported as a durable effect (BeforeDurable). A TX_IGNORE
//     (VALGRIND_PMC_ADD_TO_GLOBAL_TX_IGNORE) exempts its bytes from the transaction checks of
//     every thread (pmdk.Tx.Ignored) until their region is unmapped.
//   - Mappings. A REGION_MAP whose id is still mapped, or whose range overlaps a mapped region,
//     first unmaps the old region exactly as a REGION_UNMAP would (handlers see Unmapping),
//     with a warning. A REGION_MAP whose range wraps the address space is ignored, with a
//     warning. A REGION_UNMAP of a region that is not mapped is ignored, with a warning.
//   - Operations are per thread (WITCHER, SOSP'21, §4.7). An OP_BEGIN ends the operation its
//     thread still has in flight (handlers see OpEnded first); an OP_END ends the operation
//     with its index, else the latest of its thread, else is ignored with a warning. The
//     operation of a record (Machine.OpOfRecord) is, for an OP_BEGIN, the operation it begins;
//     for an OP_END, the one it ends (whichever thread that runs on); for any other record,
//     that of its thread, else the latest begun (a helper thread working for it), else none.
//   - Transactions follow package pmdk (nesting per thread, the outermost commit persists the
//     added ranges, abort drops them). What each transaction record did is pmdk's typed
//     change (pmdk.Tx.Last: began, committed, committed outermost, aborted, ended, ended
//     outermost) and the transaction a record runs in is numbered per thread (pmdk.Tx.ID):
//     handlers read these, never the record kinds. A TX_ADD or TX_END outside a transaction is
//     ignored, with a warning.
//   - Reservations (pmemobj_reserve, flag reserve of ALLOC/FREE) are tracked for every
//     consumer; a plain ALLOC of a reserved address publishes the reservation.
//   - Library calls. A library call that makes bytes durable (EXTERNAL_WRITE flagged persisted,
//     the outermost TX_COMMIT) is reported before its effect (BeforeDurable); consecutive such
//     records of one call (same site and thread, with only records that change nothing in
//     between) form one run, and only the first of a run is a new call. In a run whose libpmem
//     skipped its flushes (trace.HeaderNoFlush: PMEM_NO_FLUSH=1, or a platform with persistent
//     caches) such a call wrote the bytes and only fenced: the model gets the writes and a fence
//     of the thread, which makes them durable under the eADR profile alone (px86.Profile).
//   - Happens-before (Machine.HB, hb.go): vector clocks per thread (Lamport 1978; Fidge 1988;
//     Mattern 1989), with edges from SYNC records (an unlock to later locks of the object, a
//     create to the child's first record, the joined thread's last record to the join, barrier
//     arrivals to later leaves, RMWs of one non-PM word in trace order, semaphore posts to later
//     waits) and from PM atomics (a store at a release-or-stronger or rmw site to a later load
//     at an acquire-or-stronger or rmw site of the same address). The edges of a record are
//     applied before handlers see it. With one thread nothing is kept; without SYNC records
//     (traces before version 9) threads are ordered only by PM atomics.
//   - A WARNING record (the runtime degraded: a pool it could not trace, a shadow it could not
//     allocate, a trace write that failed, ...) becomes the warning "results incomplete: " and
//     the runtime's message, once per message; inconsistencies of the trace become warnings
//     too (Machine.Warnings).
package replay

import (
	"errors"
	"fmt"
	"io"

	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/trace"
)

// WriteKind is what wrote the bytes of a Write.
type WriteKind uint8

// Write kinds.
const (
	Store            WriteKind = 1 // a STORE record: an instrumented store
	NTStore          WriteKind = 2 // an NT_STORE record: a non-temporal store
	LibraryStore     WriteKind = 3 // an EXTERNAL_WRITE: bytes an uninstrumented call wrote, not durable yet
	LibraryPersisted WriteKind = 4 // an EXTERNAL_WRITE flagged persisted: the library made them durable
	InitialContent   WriteKind = 5 // an EXTERNAL_WRITE flagged initial: the region's content at map time
)

// Write is one write inside a mapped region, after the machine applied it.
type Write struct {
	Event *trace.Event
	Kind  WriteKind
	// Addr and Size are the bytes written (bytes), clipped to the region; Data holds them.
	Addr, Size uint64
	Data       []byte
	Region     *pmdk.Region
	// Origin is the write's site, call stack and operation (index plus one, 0 none).
	Origin px86.Origin
	// Flags are the px86 store flags: NT for a non-temporal store, External for library bytes.
	Flags uint8
	// Tx is the transaction state of the writing thread.
	Tx *pmdk.Tx
	// Effect is what the px86 model found when it recorded the write (Recorded writes, with a
	// model).
	Effect px86.StoreEffect
}

// Recorded reports whether the write is an unpersisted store of the model (Store, NTStore,
// LibraryStore); LibraryPersisted and InitialContent writes are durable at once.
func (w *Write) Recorded() bool { return w.Kind <= LibraryStore }

// Handler receives the typed state changes of a Machine, each after (or, for the Before and
// -ing methods, before) the machine applied it. Embed Nop to implement only some.
type Handler interface {
	// Static: a SITES or DEPS record added static facts to the reader's tables.
	Static(ev *trace.Event)
	// Load: a LOAD record, at any address (Regions tells whether it is PM).
	Load(ev *trace.Event)
	// Mapped: region r was mapped; the model and the image know it.
	Mapped(ev *trace.Event, r pmdk.Region)
	// Unmapping: region r is about to be unmapped; its unpersisted stores are still in the
	// model. ev is the REGION_UNMAP, or the REGION_MAP that replaces r.
	Unmapping(ev *trace.Event, r pmdk.Region)
	// BeforeDurable: a library call is about to make bytes durable (ev is a persisted
	// EXTERNAL_WRITE or an outermost TX_COMMIT); newCall is false when ev continues the run
	// of durable effects of the call before it (see the package doc).
	BeforeDurable(ev *trace.Event, newCall bool)
	// Wrote: a write inside a mapped region was applied (model, image).
	Wrote(w *Write)
	// BeforeFlush: a FLUSH of a line inside a mapped region is about to be applied (the model
	// still holds the line's entries: Model.LineLen).
	BeforeFlush(ev *trace.Event)
	// Flushed: a FLUSH of a line inside a mapped region was applied.
	Flushed(ev *trace.Event, eff px86.FlushEffect)
	// BeforeFence: a FENCE is about to be applied.
	BeforeFence(ev *trace.Event)
	// Fenced: a FENCE was applied.
	Fenced(ev *trace.Event, eff px86.FenceEffect)
	// Tx: a TX_BEGIN, TX_COMMIT, TX_ABORT or TX_END changed tx, the thread's transaction
	// state; tx.Last says what it did (pmdk.Change). After an outermost commit the model holds
	// its ranges persisted; after an abort their unpersisted stores are dropped.
	Tx(ev *trace.Event, tx *pmdk.Tx)
	// TxAdded: a TX_ADD inside a transaction; redundant tells whether the range was already
	// covered (pmdk.Tx.Add).
	TxAdded(ev *trace.Event, tx *pmdk.Tx, redundant bool)
	// OpBegan and OpEnded: a workload operation began or ended (Ops already says so).
	OpBegan(ev *trace.Event, op Op)
	OpEnded(ev *trace.Event, op Op)
	// Output: an OUTPUT record, bytes the program printed (ev.Handle: 1 standard output, 2
	// standard error; ev.Data): in PM mode the runtime records what the program prints on its
	// standard output through the printf-like calls it hooks, in the printing thread (its
	// operation: Ops.Current).
	Output(ev *trace.Event)
	// Ended: the END record.
	Ended(ev *trace.Event)
}

// Nop implements every Handler method by doing nothing; embed it in a handler.
type Nop struct{}

func (Nop) Static(*trace.Event)                    {}
func (Nop) Load(*trace.Event)                      {}
func (Nop) Mapped(*trace.Event, pmdk.Region)       {}
func (Nop) Unmapping(*trace.Event, pmdk.Region)    {}
func (Nop) BeforeDurable(*trace.Event, bool)       {}
func (Nop) Wrote(*Write)                           {}
func (Nop) BeforeFlush(*trace.Event)               {}
func (Nop) Flushed(*trace.Event, px86.FlushEffect) {}
func (Nop) BeforeFence(*trace.Event)               {}
func (Nop) Fenced(*trace.Event, px86.FenceEffect)  {}
func (Nop) Tx(*trace.Event, *pmdk.Tx)              {}
func (Nop) TxAdded(*trace.Event, *pmdk.Tx, bool)   {}
func (Nop) OpBegan(*trace.Event, Op)               {}
func (Nop) OpEnded(*trace.Event, Op)               {}
func (Nop) Output(*trace.Event)                    {}
func (Nop) Ended(*trace.Event)                     {}

// Options say what a Machine keeps besides regions, operations, transactions and reservations.
type Options[P any] struct {
	// Model keeps the px86 persistency model (Machine.Model), configured by ModelConfig.
	Model       bool
	ModelConfig px86.Config[P]
	// Image keeps the bytes of every region (Machine.Image).
	Image bool
}

// Machine replays a trace into state; see the package doc. Its fields are the state, to read
// (not change) from handlers. A Machine is not safe for concurrent use.
type Machine[P any] struct {
	Reader   *trace.Reader
	Model    *px86.Of[P]     // nil without Options.Model
	Image    *image.Replayer // nil without Options.Image
	Regions  pmdk.Regions
	Txs      pmdk.Threads
	Reserved pmdk.Reservations
	Ops      Ops
	// Events is the number of records read so far; Event the record being applied.
	Events uint64
	Event  *trace.Event
	// Outside counts the writes that were skipped because no mapped region holds them.
	Outside uint64
	// Mapped counts the regions mapped so far (REGION_MAP records applied): 0 at the end of a
	// trace means the program used no PM scry could see.
	Mapped int
	// Excluded holds the bytes of mapped regions that are not PM (PM_EXCLUDE records; see the
	// package doc).
	Excluded pmdk.IntervalSet
	// HB is happens-before between the records of different threads, by vector clocks (hb.go,
	// and the package doc): HB.Epoch stamps a thread's current record, HB.Before tells whether
	// a stamped point happens before a thread's current one.
	HB HB

	persister pmdk.Persister
	// noFlush: the run's libpmem skipped its flushes (trace.HeaderNoFlush): a library's persist
	// is a fence of its thread (drainOnly).
	noFlush bool
	// The locked FENCE of an atomic read-modify-write whose STORE comes next (its thread and
	// site): that store is px86.Locked.
	rmwThread, rmwSite uint32
	rmwPending         bool
	warnings           []string
	warned             map[string]bool
	stop               error
	w                  Write
	// The library call whose durable effects are being applied (site, thread).
	inCall               bool
	callSite, callThread uint32
	// The operation the latest OP_BEGIN began or OP_END ended (OpOfRecord), and that record.
	recOp    Op
	recOpAt  uint64
	recOpSet bool
}

// New returns a machine reading r. Errors: the model cannot be built for the trace's cache-line
// size.
func New[P any](r *trace.Reader, o Options[P]) (*Machine[P], error) {
	m := &Machine[P]{Reader: r, warned: map[string]bool{}, persister: nopPersister{}}
	if o.Model {
		// The profile fits the trace's architecture: an aarch64 program's trace is checked
		// under ARM (asked for ADR, the zero value, or ARM), an x86 one's never is.
		cfg := o.ModelConfig
		if r.Header().AArch64() && cfg.Profile == px86.ADR {
			cfg.Profile = px86.ARM
		}
		var ps []px86.Profile
		if cfg.Profile != px86.ADR {
			ps = []px86.Profile{cfg.Profile}
		}
		if _, err := px86.ForTrace(ps, r.Header().AArch64()); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		md, err := px86.NewOf[P](uint64(r.Header().LineSize), cfg)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		m.Model, m.persister = md, md
		if r.Header().NoFlush() {
			m.noFlush, m.persister = true, drainOnly[P]{m}
		}
	}
	if o.Image {
		m.Image = image.NewReplayer()
	}
	return m, nil
}

// drainOnly is the persister of a run whose libpmem skipped its cache flushes
// (trace.HeaderNoFlush): PMDK's persist of a range at a commit, or libpmem's of bytes a library
// wrote, flushed nothing and only fenced, so it is a fence of the calling thread. The px86 model
// then makes the range durable under the eADR profile, where a fence drains what the thread
// stored, and leaves it unpersisted under ADR, where nothing wrote the lines back.
type drainOnly[P any] struct{ m *Machine[P] }

func (d drainOnly[P]) PersistRange(addr, size uint64) int {
	if d.m.Event != nil {
		d.m.Model.Fence(d.m.Event.Thread)
	}
	return 0
}

func (d drainOnly[P]) DropRange(addr, size uint64) int { return d.m.Model.DropRange(addr, size) }

type nopPersister struct{}

func (nopPersister) PersistRange(addr, size uint64) int { return 0 }
func (nopPersister) DropRange(addr, size uint64) int    { return 0 }

// Warnings returns the warnings so far (see the package doc), each once, in order.
func (m *Machine[P]) Warnings() []string { return m.warnings }

// Warn adds a warning once per key.
func (m *Machine[P]) warn(key, format string, args ...any) {
	if m.warned[key] {
		return
	}
	m.warned[key] = true
	m.warnings = append(m.warnings, fmt.Sprintf(format, args...))
}

// Stop makes Run return err after the record being applied (a handler's way to end early or
// to fail).
func (m *Machine[P]) Stop(err error) {
	if m.stop == nil {
		m.stop = err
	}
}

// ErrStopped is what a handler may give Stop to end the replay early without an error: Run then
// returns nil.
var ErrStopped = errors.New("replay: stopped")

// Run reads the trace to its end, applying every record and reporting the changes to h. It
// returns nil at the end of the trace (io.EOF) or after Stop(ErrStopped), the handler's error
// given to Stop, or the reader's error (an error wrapping trace.ErrTruncated for a trace cut
// short: the state is that of its last complete record).
func (m *Machine[P]) Run(h Handler) error {
	for {
		ev, err := m.Reader.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		m.Events = ev.Index + 1
		m.Event = ev
		m.Apply(ev, h)
		if m.stop != nil {
			if errors.Is(m.stop, ErrStopped) {
				return nil
			}
			return m.stop
		}
	}
}

// OpOfRecord returns the operation record ev belongs to, once the machine applied it (see the
// package doc): an OP_BEGIN's is the operation it begins, an OP_END's the one it ends, any other
// record's that of its thread, else the latest begun; false for none. Handlers may call it for
// the record they are told about (the operation is known before OpBegan and OpEnded).
func (m *Machine[P]) OpOfRecord(ev *trace.Event) (Op, bool) {
	if (ev.Kind == trace.KindOpBegin || ev.Kind == trace.KindOpEnd) && m.recOpSet && m.recOpAt == ev.Index {
		return m.recOp, true
	}
	return m.Ops.Current(ev.Thread)
}

// OpOf returns the operation of thread tid as px86.Origin.Op: its index plus one, 0 for none.
func (m *Machine[P]) OpOf(tid uint32) uint32 {
	if op, ok := m.Ops.Current(tid); ok {
		return uint32(op.Index) + 1
	}
	return 0
}

// Where describes a PM address for messages: "path+0xOFF" for an address in a mapped region
// (the offset in the pool file), else the address in hex.
func (m *Machine[P]) Where(addr uint64) string {
	if r, ok := m.Regions.Find(addr); ok {
		return fmt.Sprintf("%s+%#x", r.Path, addr-r.Base+r.FileOffset)
	}
	return fmt.Sprintf("%#x", addr)
}

// Apply applies one record and reports its changes to h. Run calls it for every record; it is
// exported for consumers that read records themselves.
func (m *Machine[P]) Apply(ev *trace.Event, h Handler) {
	m.trackCall(ev)
	m.HB.step(ev, m.Reader)
	switch ev.Kind {
	case trace.KindLoad:
		if m.excluded(ev.Addr) {
			return
		}
		h.Load(ev)
	case trace.KindStore:
		m.write(ev, Store, h)
	case trace.KindNTStore:
		m.write(ev, NTStore, h)
	case trace.KindExternalWrite:
		switch {
		case ev.Flags&trace.ExternalInitial != 0:
			m.write(ev, InitialContent, h)
		case ev.Flags&trace.ExternalPersisted != 0:
			m.write(ev, LibraryPersisted, h)
		default:
			m.write(ev, LibraryStore, h)
		}
	case trace.KindFlush:
		if !m.Regions.Contains(ev.Addr) || m.excluded(ev.Addr) {
			return
		}
		h.BeforeFlush(ev)
		var eff px86.FlushEffect
		if m.Model != nil {
			eff = m.Model.Flush(uint8(ev.Flush), ev.Addr, m.origin(ev))
		}
		h.Flushed(ev, eff)
	case trace.KindFence:
		if ev.Fence == trace.FenceLocked {
			// The STORE of this read-modify-write follows, at its site (px86.Locked).
			m.rmwThread, m.rmwSite, m.rmwPending = ev.Thread, ev.Site, true
		}
		h.BeforeFence(ev)
		var eff px86.FenceEffect
		if m.Model != nil {
			eff = m.Model.Barrier(uint8(ev.Fence), ev.Thread)
		}
		h.Fenced(ev, eff)
	case trace.KindRegionMap:
		m.mapRegion(ev, h)
	case trace.KindRegionUnmap:
		r, ok := m.Regions.Get(ev.Region)
		if !ok {
			m.warn(fmt.Sprint("unmap", ev.Region), "record %d: REGION_UNMAP of region %d, which is not mapped (ignored)", ev.Index, ev.Region)
			return
		}
		m.unmap(ev, r, h)
	case trace.KindTxBegin:
		tx := m.Txs.Get(ev.Thread)
		tx.Begin(ev.Site, ev.Context)
		h.Tx(ev, tx)
	case trace.KindTxAdd:
		tx := m.Txs.Get(ev.Thread)
		redundant, ok := tx.Add(ev.Addr, ev.Size, ev.Flags, ev.Site, ev.Context)
		if !ok {
			m.warn("txadd", "record %d: TX_ADD outside a transaction (ignored)", ev.Index)
			return
		}
		h.TxAdded(ev, tx, redundant)
	case trace.KindTxCommit:
		tx := m.Txs.Get(ev.Thread)
		if tx.Depth() == 1 {
			m.durable(ev, h)
		}
		tx.Commit(m.persister)
		h.Tx(ev, tx)
	case trace.KindTxAbort:
		tx := m.Txs.Get(ev.Thread)
		tx.Abort(m.persister)
		h.Tx(ev, tx)
	case trace.KindTxEnd:
		tx := m.Txs.Get(ev.Thread)
		if !tx.End() {
			m.warn("txend", "record %d: TX_END outside a transaction (ignored)", ev.Index)
			return
		}
		h.Tx(ev, tx)
	case trace.KindAlloc:
		if ev.Flags&trace.AllocReserve != 0 {
			m.Reserved.Reserve(ev.Addr, ev.Size)
			return
		}
		m.Reserved.End(ev.Addr) // a publish, when the object was reserved
		m.Txs.Get(ev.Thread).Alloc(ev.Addr, ev.Size, ev.Flags&trace.AllocInTx != 0, ev.Site, ev.Context)
	case trace.KindFree:
		if ev.Flags&trace.AllocReserve != 0 {
			m.Reserved.End(ev.Addr)
		}
	case trace.KindOpBegin:
		m.opBegin(ev, h)
	case trace.KindOpEnd:
		op, ok := m.Ops.end(ev)
		if !ok {
			m.warn("opend", "record %d: OP_END of operation %d, which is not in flight (ignored)", ev.Index, ev.Op)
			return
		}
		m.recOp, m.recOpAt, m.recOpSet = op, ev.Index, true
		h.OpEnded(ev, op)
	case trace.KindOutput:
		h.Output(ev)
	case trace.KindSites, trace.KindDeps:
		h.Static(ev)
	case trace.KindEnd:
		h.Ended(ev)
	case trace.KindWarning:
		m.warn("runtime:"+ev.Text, "results incomplete: %s", ev.Text)
	case trace.KindPMExclude, trace.KindSetClean, trace.KindTxIgnore:
		m.declared(ev, h)
	}
}

// excluded reports whether addr lies in a range the program took out of PM (PM_EXCLUDE).
func (m *Machine[P]) excluded(addr uint64) bool {
	return m.Excluded.Len() > 0 && m.Excluded.Covers(addr, 1)
}

// declared applies what a program declared through pmemcheck's client requests (PM_EXCLUDE,
// SET_CLEAN, TX_IGNORE; see the package doc), clipped to the region holding the range's first
// byte.
func (m *Machine[P]) declared(ev *trace.Event, h Handler) {
	r, ok := m.Regions.Find(ev.Addr)
	if !ok {
		m.warn(fmt.Sprint("declared", ev.Kind), "record %d: %v of %d bytes at %#x outside every mapped PM region (ignored)",
			ev.Index, ev.Kind, ev.Size, ev.Addr)
		return
	}
	size := min(ev.Size, r.Len-(ev.Addr-r.Base))
	switch ev.Kind {
	case trace.KindPMExclude:
		if ev.Flags&trace.PMInclude != 0 {
			m.Excluded.Remove(ev.Addr, size)
		} else {
			m.Excluded.Add(ev.Addr, size)
		}
	case trace.KindSetClean:
		m.durable(ev, h)
		if m.Model != nil {
			m.Model.DropRange(ev.Addr, size)
		}
	case trace.KindTxIgnore:
		m.Txs.Ignore(ev.Addr, size)
	}
}

func (m *Machine[P]) origin(ev *trace.Event) px86.Origin {
	return px86.Origin{Site: ev.Site, Stack: ev.Context, Op: m.OpOf(ev.Thread), Thread: ev.Thread}
}

// trackCall follows runs of one library call's durable effects (see the package doc): the run
// goes on through records that change nothing and through EXTERNAL_WRITE (persisted), TX_COMMIT,
// TX_ADD, ALLOC and FREE records of the same site and thread.
func (m *Machine[P]) trackCall(ev *trace.Event) {
	switch ev.Kind {
	case trace.KindThread, trace.KindContext, trace.KindStack, trace.KindSites, trace.KindLoad, trace.KindWarning:
	case trace.KindExternalWrite, trace.KindTxCommit, trace.KindTxAdd, trace.KindAlloc, trace.KindFree:
		if m.inCall && (ev.Site != m.callSite || ev.Thread != m.callThread) {
			m.inCall = false
		}
		if ev.Kind == trace.KindExternalWrite && ev.Flags&trace.ExternalPersisted == 0 {
			m.inCall = false
		}
	default:
		m.inCall = false
	}
}

// durable reports a library call's durable effect before it is applied.
func (m *Machine[P]) durable(ev *trace.Event, h Handler) {
	newCall := !m.inCall
	m.inCall, m.callSite, m.callThread = true, ev.Site, ev.Thread
	h.BeforeDurable(ev, newCall)
}

// write applies a write record of kind k.
func (m *Machine[P]) write(ev *trace.Event, k WriteKind, h Handler) {
	r, ok := m.Regions.Find(ev.Addr)
	if ok && m.excluded(ev.Addr) {
		if m.Image != nil {
			data := ev.Data
			if rest := r.Len - (ev.Addr - r.Base); uint64(len(data)) > rest {
				data = data[:rest]
			}
			m.Image.Write(ev.Addr, data)
		}
		return
	}
	if !ok {
		if len(ev.Data) > 0 {
			m.Outside++
			m.warn("outside", "record %d: %v of %d bytes at %#x outside every mapped PM region (ignored, as are later ones: the trace is inconsistent)",
				ev.Index, ev.Kind, ev.Size, ev.Addr)
		}
		return
	}
	w := &m.w
	*w = Write{Event: ev, Kind: k, Addr: ev.Addr, Size: ev.Size, Data: ev.Data, Region: r}
	if rest := r.Len - (ev.Addr - r.Base); w.Size > rest {
		m.warn(fmt.Sprint("past", r.ID), "record %d: %v of %d bytes at %#x runs %d bytes past the end of region %d (%s): the bytes past it are ignored",
			ev.Index, ev.Kind, ev.Size, ev.Addr, w.Size-rest, r.ID, r.Path)
		w.Size = rest
		if uint64(len(w.Data)) > rest {
			w.Data = w.Data[:rest]
		}
	}
	w.Origin = m.origin(ev)
	w.Tx = m.Txs.Get(ev.Thread)
	switch k {
	case NTStore:
		w.Flags = px86.NT
	case LibraryStore, LibraryPersisted, InitialContent:
		w.Flags = px86.External
	case Store:
		if m.rmwPending && ev.Thread == m.rmwThread && ev.Site == m.rmwSite {
			w.Flags = px86.Locked
		}
	}
	m.rmwPending = false
	if k == LibraryPersisted {
		m.durable(ev, h)
	}
	if m.Model != nil {
		switch k {
		case Store, NTStore, LibraryStore:
			m.Model.StoreInto(&w.Effect, ev.Index, w.Origin, w.Addr, w.Size, w.Flags)
		case LibraryPersisted:
			if m.noFlush {
				// Written, then only fenced (drainOnly).
				m.Model.StoreInto(&w.Effect, ev.Index, w.Origin, w.Addr, w.Size, w.Flags)
				m.Model.Fence(ev.Thread)
			} else {
				m.Model.PersistRange(w.Addr, w.Size)
			}
		}
	}
	if m.Image != nil {
		m.Image.Write(w.Addr, w.Data)
	}
	h.Wrote(w)
}

// mapRegion applies a REGION_MAP.
func (m *Machine[P]) mapRegion(ev *trace.Event, h Handler) {
	if ev.Size > 0 && ev.Addr+ev.Size < ev.Addr {
		m.warn(fmt.Sprint("wrap", ev.Region), "record %d: region %d (%s) at %#x of %d bytes wraps the address space (ignored)",
			ev.Index, ev.Region, ev.Path, ev.Addr, ev.Size)
		return
	}
	if old, ok := m.Regions.Get(ev.Region); ok {
		m.warn(fmt.Sprint("remap", ev.Region), "record %d: region %d mapped again (%s) while still mapped (%s): the old mapping is unmapped first",
			ev.Index, ev.Region, ev.Path, old.Path)
		m.unmap(ev, old, h)
	}
	for _, o := range m.Regions.Overlapping(ev.Addr, ev.Size) {
		m.warn(fmt.Sprint("overlap", ev.Region, o.ID), "record %d: region %d (%s, %#x-%#x) overlaps mapped region %d (%s, %#x-%#x): the old mapping is unmapped first",
			ev.Index, ev.Region, ev.Path, ev.Addr, ev.Addr+ev.Size, o.ID, o.Path, o.Base, o.Base+o.Len)
		m.unmap(ev, o, h)
	}
	r := pmdk.Region{ID: ev.Region, Base: ev.Addr, Len: ev.Size, Path: ev.Path, FileOffset: ev.FileOffset}
	if m.Model != nil {
		m.Model.DropRange(ev.Addr, ev.Size) // stale state of an earlier mapping
		m.Model.AddRange(ev.Addr, ev.Size)  // index the region's lines densely
	}
	m.Regions.Map(r)
	m.Mapped++
	if m.Image != nil {
		m.Image.Map(ev.Region, ev.Addr, ev.Size, ev.FileOffset, ev.Path, ev.Flags&trace.RegionCreated != 0, ev.Index)
	}
	h.Mapped(ev, r)
}

// unmap unmaps region r: handlers first, then the model forgets its stores.
func (m *Machine[P]) unmap(ev *trace.Event, r pmdk.Region, h Handler) {
	h.Unmapping(ev, r)
	if m.Model != nil {
		m.Model.DropRange(r.Base, r.Len)
		m.Model.RemoveRange(r.Base, r.Len)
	}
	m.Regions.Unmap(r.ID)
	m.Excluded.Remove(r.Base, r.Len)
	m.Txs.Forget(r.Base, r.Len)
	if m.Image != nil {
		m.Image.Unmap(r.ID, ev.Index)
	}
}

// opBegin applies an OP_BEGIN: the thread's operation still in flight ends first.
func (m *Machine[P]) opBegin(ev *trace.Event, h Handler) {
	op := newOp(ev)
	m.recOp, m.recOpAt, m.recOpSet = op, ev.Index, true
	for {
		ended, ok := m.Ops.endThread(ev.Thread)
		if !ok {
			break
		}
		h.OpEnded(ev, ended)
	}
	m.Ops.begin(op)
	h.OpBegan(ev, op)
}

// Tee returns a Handler that passes every state change to a, then to b: two consumers of one
// replay (crash.WalkWith's walker and its observer), so that one read of the trace serves both.
func Tee(a, b Handler) Handler { return tee{a, b} }

type tee struct{ a, b Handler }

func (t tee) Static(ev *trace.Event)                   { t.a.Static(ev); t.b.Static(ev) }
func (t tee) Load(ev *trace.Event)                     { t.a.Load(ev); t.b.Load(ev) }
func (t tee) Mapped(ev *trace.Event, r pmdk.Region)    { t.a.Mapped(ev, r); t.b.Mapped(ev, r) }
func (t tee) Unmapping(ev *trace.Event, r pmdk.Region) { t.a.Unmapping(ev, r); t.b.Unmapping(ev, r) }
func (t tee) BeforeDurable(ev *trace.Event, newCall bool) {
	t.a.BeforeDurable(ev, newCall)
	t.b.BeforeDurable(ev, newCall)
}
func (t tee) Wrote(w *Write)              { t.a.Wrote(w); t.b.Wrote(w) }
func (t tee) BeforeFlush(ev *trace.Event) { t.a.BeforeFlush(ev); t.b.BeforeFlush(ev) }
func (t tee) Flushed(ev *trace.Event, eff px86.FlushEffect) {
	t.a.Flushed(ev, eff)
	t.b.Flushed(ev, eff)
}
func (t tee) BeforeFence(ev *trace.Event) { t.a.BeforeFence(ev); t.b.BeforeFence(ev) }
func (t tee) Fenced(ev *trace.Event, eff px86.FenceEffect) {
	t.a.Fenced(ev, eff)
	t.b.Fenced(ev, eff)
}
func (t tee) Tx(ev *trace.Event, tx *pmdk.Tx) { t.a.Tx(ev, tx); t.b.Tx(ev, tx) }
func (t tee) Output(ev *trace.Event)          { t.a.Output(ev); t.b.Output(ev) }
func (t tee) TxAdded(ev *trace.Event, tx *pmdk.Tx, redundant bool) {
	t.a.TxAdded(ev, tx, redundant)
	t.b.TxAdded(ev, tx, redundant)
}
func (t tee) OpBegan(ev *trace.Event, op Op) { t.a.OpBegan(ev, op); t.b.OpBegan(ev, op) }
func (t tee) OpEnded(ev *trace.Event, op Op) { t.a.OpEnded(ev, op); t.b.OpEnded(ev, op) }
func (t tee) Ended(ev *trace.Event)          { t.a.Ended(ev); t.b.Ended(ev) }
