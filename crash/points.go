package crash

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scry-pm/scry/image"
	"github.com/scry-pm/scry/pmdk"
	"github.com/scry-pm/scry/trace"
)

// PointKind says what a crash point precedes.
type PointKind uint8

// Crash point kinds.
const (
	BeforeFence   PointKind = 1 // a FENCE record (any kind, internal or not)
	BeforeLibrary PointKind = 2 // a library call's durable writes: persisted EXTERNAL_WRITEs or TX_COMMIT
	BeforeUnmap   PointKind = 3 // a REGION_UNMAP record
	AtEnd         PointKind = 4 // the END record, or the end of a truncated trace
	AfterStore    PointKind = 5 // a STORE or NT_STORE (Options.AfterStores)
	// Operation boundaries (Options.OpBoundaries): not crash points. They are delivered with
	// Index -1, are not counted in Stats, and only their fully persisted state is meaningful:
	// the consistent image before (OpBegin) or after (OpEnd) an operation, from which the
	// output-equivalence oracles run (WITCHER, seeds/000_c95c61c23c78e4d2.txt §4.5).
	OpBegin PointKind = 6 // an OP_BEGIN record (the state before the operation's first store)
	OpEnd   PointKind = 7 // an OP_END record (every store of the operation issued)
)

func (k PointKind) String() string {
	switch k {
	case BeforeFence:
		return "fence"
	case BeforeLibrary:
		return "library"
	case BeforeUnmap:
		return "unmap"
	case AtEnd:
		return "end"
	case AfterStore:
		return "store"
	case OpBegin:
		return "op-begin"
	case OpEnd:
		return "op-end"
	}
	return fmt.Sprintf("PointKind(%d)", uint8(k))
}

// CrashPoint is one place of the trace where a crash is simulated, with its state space.
//
// A CrashPoint passed to Walk's callback, its Space and the units' Old bytes are valid only
// during the callback: the engine reuses them and moves the image on. Patches, WriteImage and
// ImageWriter.Write must be called from inside the callback; Clone keeps a description (without
// image access).
type CrashPoint struct {
	Index   int       // 0-based among the crash points Walk delivered
	Event   uint64    // trace event index of the record the point precedes (AfterStore: follows)
	Kind    PointKind // what the point precedes
	Site    uint32    // site of the fence, library call, unmap or store (0 at END)
	Thread  uint32    // thread of that record
	Stack   uint32    // call-stack node of that thread (trace.Event.Context)
	Op      int64     // the workload operation running (OP_BEGIN index), -1 when none
	OpText  string    // its text
	Segment uint64    // fences before the point
	Space   *Space    // the unpersisted units; valid during the callback only
	// InFlight lists the operations begun and not ended at the point, in OP_BEGIN order (one
	// for a sequential workload; several when threads run operations concurrently). Op is the
	// one of the point's thread, or else the latest begun. At an OpEnd boundary the ended
	// operation is no longer in it. Valid during the callback only.
	InFlight []int64

	rp  *image.Replayer
	t   *tracker
	gen uint64
}

// Clone returns a copy of cp that stays valid after the callback (its Space and units are
// copied); its image methods report an error.
func (cp *CrashPoint) Clone() *CrashPoint {
	c := *cp
	c.rp, c.t = nil, nil
	c.Space = cp.Space.clone()
	c.InFlight = slices.Clone(cp.InFlight)
	return &c
}

// Options configure crash point placement and the strategies. The zero value gives the
// defaults.
type Options struct {
	// AfterStores adds a crash point after every STORE and NT_STORE.
	AfterStores bool
	// OpBoundaries also delivers every OP_BEGIN and OP_END record to Walk's callback as a
	// point of kind OpBegin or OpEnd (Index -1, Op the operation's index), which is not a crash
	// point: it is not counted, does not reset duplicate skipping, and has the same image access
	// as a crash point (its fully persisted state is the consistent image at the boundary).
	OpBoundaries bool
	// MaxStates caps the states a strategy yields per crash point (0: DefaultMaxStates; <0: no
	// cap). Counts report the full number as well.
	MaxStates int
	// Seed and Samples drive the random strategy (Samples 0: DefaultSamples).
	Seed    uint64
	Samples int
	// H1 is the heuristic strategy's limit of unpersisted stores per segment (0: DefaultH1,
	// <0: no limit); H2 its age to persist in segments (0: DefaultH2, <0: off); NoH3 turns
	// off its ordering timestamps. See the heuristic strategy.
	H1, H2 int
	NoH3   bool
	// Invariants drive the invariants strategy: the likely invariants inferred from the trace
	// (WITCHER §4.3), whose violating crash states it yields. Without them it yields nothing.
	Invariants []Invariant
}

// Defaults, from the thesis's evaluation (seeds/002_2a22ed230f71d116.txt §6.5.1: a limit of 8
// stores per segment; §6.5.2: an age to persist of 5 segments).
const (
	DefaultMaxStates = 4096
	DefaultSamples   = 16
	DefaultH1        = 8
	DefaultH2        = 5
)

func (o Options) maxStates() int64 {
	switch {
	case o.MaxStates == 0:
		return DefaultMaxStates
	case o.MaxStates < 0:
		return -1
	}
	return int64(o.MaxStates)
}

func (o Options) samples() int {
	if o.Samples <= 0 {
		return DefaultSamples
	}
	return o.Samples
}

// Stats summarises a walk.
type Stats struct {
	Events    uint64 // records read
	Points    int    // crash points delivered
	Skipped   int    // crash points skipped as duplicates (nothing unpersisted, nothing changed)
	Truncated bool   // the trace had no END record
	MaxUnits  int    // most unpersisted units at one crash point
	MaxLines  int    // most lines with unpersisted units at one crash point
}

// ErrStop may be returned by Walk's callback to end the walk early; Walk then returns nil.
var ErrStop = errors.New("crash: stop")

// Walk reads the trace once and calls fn at every crash point (package doc, "Crash points").
// Memory stays bounded by the unpersisted units and the replayed image. It returns the walk's
// statistics and the first error: a reader error, an inconsistent write (outside every region),
// or fn's error. A truncated trace (the program died) still ends with an AtEnd crash point, then
// Walk returns the reader's error wrapping trace.ErrTruncated with Stats.Truncated set.
func Walk(r *trace.Reader, opts Options, fn func(*CrashPoint) error) (Stats, error) {
	var st Stats
	t, err := newTracker(uint64(r.Header().LineSize))
	if err != nil {
		return st, err
	}
	w := &walker{t: t, opts: opts, fn: fn, st: &st}
	err = w.loop(r)
	if errors.Is(err, ErrStop) {
		err = nil
	}
	return st, err
}

type walker struct {
	t        *tracker
	opts     Options
	fn       func(*CrashPoint) error
	st       *Stats
	regions  pmdk.Regions
	threads  pmdk.Threads
	flights  []flight // operations in flight, in OP_BEGIN order
	inFlight []int64  // their indices, for CrashPoint.InFlight
	changed  bool     // bytes changed since the last crash point
	// The library call whose durable effects are being applied (site, thread), so that its
	// later records get no crash point of their own.
	inCall               bool
	callSite, callThread uint32
	cp                   CrashPoint
	space                Space
}

func (w *walker) loop(r *trace.Reader) error {
	t := w.t
	var last uint64
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.Is(err, trace.ErrTruncated) {
				w.st.Truncated = true
				if perr := w.point(AtEnd, last+1, &trace.Event{}); perr != nil {
					return perr
				}
			}
			return err
		}
		last = ev.Index
		w.st.Events = ev.Index + 1
		// A library call's run of durable effects continues only through records of the same
		// call (and records that change nothing).
		switch ev.Kind {
		case trace.KindThread, trace.KindContext, trace.KindStack, trace.KindSites, trace.KindLoad:
		case trace.KindExternalWrite, trace.KindTxCommit, trace.KindTxAdd, trace.KindAlloc, trace.KindFree:
			if w.inCall && (ev.Site != w.callSite || ev.Thread != w.callThread) {
				w.inCall = false
			}
			if ev.Kind == trace.KindExternalWrite && ev.Flags&trace.ExternalPersisted == 0 {
				w.inCall = false
			}
		default:
			w.inCall = false
		}
		switch ev.Kind {
		case trace.KindStore, trace.KindNTStore:
			if !w.regions.Contains(ev.Addr) {
				continue
			}
			var fl uint8
			if ev.Kind == trace.KindNTStore {
				fl = UnitNT
			}
			if err := t.store(ev, fl); err != nil {
				return err
			}
			w.changed = true
			if w.opts.AfterStores {
				if err := w.point(AfterStore, ev.Index, ev); err != nil {
					return err
				}
			}
		case trace.KindExternalWrite:
			if !w.regions.Contains(ev.Addr) {
				continue
			}
			switch {
			case ev.Flags&trace.ExternalInitial != 0:
				if err := t.apply(ev); err != nil {
					return err
				}
			case ev.Flags&trace.ExternalPersisted != 0:
				if err := w.libraryCall(ev); err != nil {
					return err
				}
				if err := t.apply(ev); err != nil {
					return err
				}
				t.PersistRange(ev.Addr, ev.Size)
			default:
				if err := t.store(ev, UnitExternal); err != nil {
					return err
				}
			}
			w.changed = true
		case trace.KindFlush:
			if w.regions.Contains(ev.Addr) {
				t.flush(ev.Flush, ev.Addr)
			}
		case trace.KindFence:
			if err := w.point(BeforeFence, ev.Index, ev); err != nil {
				return err
			}
			t.fence()
		case trace.KindRegionMap:
			if err := t.rp.Apply(ev); err != nil {
				return err
			}
			t.DropRange(ev.Addr, ev.Size)
			w.regions.Map(pmdk.Region{ID: ev.Region, Base: ev.Addr, Len: ev.Size, Path: ev.Path, FileOffset: ev.FileOffset})
			w.changed = true
		case trace.KindRegionUnmap:
			g, ok := w.regions.Get(ev.Region)
			if !ok {
				continue
			}
			if err := w.point(BeforeUnmap, ev.Index, ev); err != nil {
				return err
			}
			t.DropRange(g.Base, g.Len)
			w.regions.Unmap(ev.Region)
			if err := t.rp.Apply(ev); err != nil {
				return err
			}
		case trace.KindTxBegin:
			w.threads.Get(ev.Thread).Begin(ev.Site, ev.Context)
		case trace.KindTxAdd:
			w.threads.Get(ev.Thread).Add(ev.Addr, ev.Size, ev.Flags, ev.Site, ev.Context)
		case trace.KindTxCommit:
			tx := w.threads.Get(ev.Thread)
			if tx.Depth() == 1 {
				if err := w.libraryCall(ev); err != nil {
					return err
				}
			}
			tx.Commit(t)
		case trace.KindTxAbort:
			w.threads.Get(ev.Thread).Abort(t)
		case trace.KindTxEnd:
			w.threads.Get(ev.Thread).End()
		case trace.KindAlloc:
			if ev.Flags&trace.AllocReserve == 0 {
				w.threads.Get(ev.Thread).Alloc(ev.Addr, ev.Size, ev.Flags&trace.AllocInTx != 0, ev.Site, ev.Context)
			}
		case trace.KindOpBegin:
			// An operation of the same thread still open ends here (scry_op_begin ends the
			// previous one; the runtime writes its OP_END first, this covers a trace without).
			for i := len(w.flights) - 1; i >= 0; i-- {
				if f := w.flights[i]; f.thread == ev.Thread {
					w.flights = slices.Delete(w.flights, i, i+1)
					if w.opts.OpBoundaries {
						if err := w.boundary(OpEnd, f.op, f.text, ev); err != nil {
							return err
						}
					}
				}
			}
			w.flights = append(w.flights, flight{op: int64(ev.Op), text: strings.Clone(ev.Text), thread: ev.Thread})
			if w.opts.OpBoundaries {
				if err := w.boundary(OpBegin, int64(ev.Op), ev.Text, ev); err != nil {
					return err
				}
			}
		case trace.KindOpEnd:
			i := w.ending(ev)
			if i < 0 {
				continue
			}
			f := w.flights[i]
			w.flights = slices.Delete(w.flights, i, i+1)
			if w.opts.OpBoundaries {
				if err := w.boundary(OpEnd, f.op, f.text, ev); err != nil {
					return err
				}
			}
		case trace.KindEnd:
			return w.point(AtEnd, ev.Index, ev)
		}
	}
}

// libraryCall places the crash point before the durable effects of a library call, unless the
// call's run already has one.
func (w *walker) libraryCall(ev *trace.Event) error {
	if w.inCall {
		return nil
	}
	w.inCall, w.callSite, w.callThread = true, ev.Site, ev.Thread
	err := w.point(BeforeLibrary, ev.Index, ev)
	// The library flushes and fences what it makes durable: a new segment begins.
	w.t.segment++
	return err
}

// flight is an operation in flight: begun (OP_BEGIN), not ended.
type flight struct {
	op     int64
	text   string
	thread uint32
}

// ending returns the index in w.flights of the operation an OP_END ends: the one with its
// index, else the latest of its thread; -1 when none is in flight (an OP_END without OP_BEGIN).
func (w *walker) ending(ev *trace.Event) int {
	for i, f := range w.flights {
		if f.op == int64(ev.Op) {
			return i
		}
	}
	for i := len(w.flights) - 1; i >= 0; i-- {
		if w.flights[i].thread == ev.Thread {
			return i
		}
	}
	return -1
}

// current returns the operation running at a record of thread tid: the operation in flight on
// that thread, else the latest begun (a helper thread working for it), else -1. With one
// operation in flight (sequential workloads) it is that operation.
func (w *walker) current(tid uint32) (int64, string) {
	w.inFlight = w.inFlight[:0]
	for _, f := range w.flights {
		w.inFlight = append(w.inFlight, f.op)
	}
	if len(w.flights) == 0 {
		return -1, ""
	}
	for i := len(w.flights) - 1; i >= 0; i-- {
		if f := w.flights[i]; f.thread == tid {
			return f.op, f.text
		}
	}
	f := w.flights[len(w.flights)-1]
	return f.op, f.text
}

// boundary delivers an operation boundary (Options.OpBoundaries) of operation op: like a crash
// point, but not counted and without effect on duplicate skipping.
func (w *walker) boundary(kind PointKind, op int64, text string, ev *trace.Event) error {
	t := w.t
	w.fillSpace()
	w.space.Kind = kind
	w.current(ev.Thread)
	w.cp = CrashPoint{
		Index: -1, Event: ev.Index, Kind: kind, Site: ev.Site, Thread: ev.Thread,
		Stack: ev.Context, Op: op, OpText: text, Segment: t.segment, Space: &w.space, rp: t.rp,
		InFlight: w.inFlight,
	}
	t.gen++
	w.cp.gen = t.gen
	w.cp.t = t
	return w.fn(&w.cp)
}

// fillSpace loads the tracker's lines into the walker's Space, sorted by address.
func (w *walker) fillSpace() {
	t := w.t
	sp := &w.space
	sp.Lines = sp.Lines[:0]
	for _, l := range t.lines {
		sp.Lines = append(sp.Lines, l)
	}
	slices.SortFunc(sp.Lines, func(a, b *Line) int {
		switch {
		case a.Addr < b.Addr:
			return -1
		case a.Addr > b.Addr:
			return 1
		}
		return 0
	})
	sp.units, sp.Segment, sp.order, sp.Kind = t.units, t.segment, sp.order[:0], 0
}

// point delivers a crash point, or counts it as skipped when it would repeat the last one.
func (w *walker) point(kind PointKind, index uint64, ev *trace.Event) error {
	t := w.t
	if t.units == 0 && !w.changed {
		w.st.Skipped++
		return nil
	}
	w.changed = false
	w.fillSpace()
	sp := &w.space
	sp.Kind = kind
	op, text := w.current(ev.Thread)
	w.cp = CrashPoint{
		Index: w.st.Points, Event: index, Kind: kind, Site: ev.Site, Thread: ev.Thread,
		Stack: ev.Context, Op: op, OpText: text, Segment: t.segment, Space: sp, rp: t.rp,
		InFlight: w.inFlight,
	}
	w.st.Points++
	t.gen++
	w.cp.gen = t.gen
	w.cp.t = t
	w.st.MaxUnits = max(w.st.MaxUnits, t.units)
	w.st.MaxLines = max(w.st.MaxLines, len(sp.Lines))
	return w.fn(&w.cp)
}
