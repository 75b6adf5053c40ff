package crash

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
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
	// output-equivalence oracles run (WITCHER, SOSP'21, §4.5).
	OpBegin PointKind = 6 // an OP_BEGIN record (the state before the operation's first store)
	OpEnd   PointKind = 7 // an OP_END record (every store of the operation issued)
	// BeforeFlush precedes a clflush that makes unpersisted stores durable at once (clflushopt
	// and clwb wait for a fence, whose point covers them).
	BeforeFlush PointKind = 8
	// TxEnd (Options.TxBoundaries) is the TX_END of an outermost PMDK transaction that committed,
	// inside an operation: not a crash point but a durable point of the operation, delivered like
	// an operation boundary (Index -1). Its fully persisted state is the consistent image with
	// the transaction's effects, its commit's log processing included; an operation made of
	// several transactions (mapcli's `n K`: one per key) may legally be cut after any of them.
	TxEnd PointKind = 9
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
	case BeforeFlush:
		return "flush"
	case TxEnd:
		return "tx-end"
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
	// Assumed, at an OpBegin boundary, lists the stores of Options.AssumeDurable that become
	// durable right after it: they are still units of Space here. Valid during the callback.
	Assumed []px86.StoreState
	// InFlight lists the operations begun and not ended at the point, in OP_BEGIN order (one
	// for a sequential workload; several when threads run operations concurrently). Op is the
	// one of the point's thread, or else the latest begun. At an OpEnd boundary the ended
	// operation is no longer in it. Valid during the callback only.
	InFlight []int64
	// LastStore is the site of the latest write to PM (a STORE, NT_STORE, or a library call's
	// unpersisted bytes) the point's thread issued since its operation began (OP_BEGIN), 0 when
	// none; crash points between two such writes see the same stores issued, only more or fewer
	// of them persisted.
	LastStore uint32

	rp  *image.Replayer
	gen uint64
	// OpStores, at an OpEnd boundary, lists the distinct sites of the writes to PM (as
	// LastStore counts them) the ending operation's thread issued in it, in the order of their
	// first write: the operation's persistent path, which tells operations that ran the same code
	// (an insert into a free slot) from those that ran other code (an insert that splits a node).
	// Valid during the callback only.
	OpStores []uint32
	// Quiet, at a TxEnd boundary, says that no operation in flight other than Op has written to
	// PM since it began: the consistent image there holds the operations ended before it, Op's
	// transactions so far, and nothing of the others.
	Quiet bool

	// opLast is the latest write site of each operation in flight (LastStoreOf).
	opLast map[int64]uint32
}

// LastStoreOf returns the site of the latest write to PM (as LastStore counts them) attributed to
// operation op (its writes' px86.Origin: the writes of its thread, and of helper threads while
// it is the latest begun) since it began, 0 when none or when op is not in flight. Valid during
// the callback only.
func (cp *CrashPoint) LastStoreOf(op int64) uint32 { return cp.opLast[op] }

// Clone returns a copy of cp that stays valid after the callback (its Space and units are
// copied); its image methods report an error.
func (cp *CrashPoint) Clone() *CrashPoint {
	c := *cp
	c.rp = nil
	c.Space = cp.Space.clone()
	c.InFlight = slices.Clone(cp.InFlight)
	c.opLast = maps.Clone(cp.opLast)
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
	// TxBoundaries also delivers, inside an operation, the TX_END of every outermost
	// transaction that committed as a point of kind TxEnd (like an operation boundary: Index -1,
	// not counted): a durable point of the operation.
	TxBoundaries bool
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
	// AssumeDurable are stores a trace oracle reported as never made durable (the
	// unpersisted-store oracle's oracle.NeverDurable: ID, Addr, Size). At every OP_BEGIN, those
	// issued before it are made durable in the model (px86's PersistStore: as if written back
	// and fenced right after the store), so that the crash states of later operations do not
	// all fail for that one known bug and the others stay visible. The operation that issued
	// such a store still sees it unpersisted. Nil: the literal model.
	AssumeDurable []px86.StoreState
	// AssumeLate extends AssumeDurable to every store still unpersisted at an OP_BEGIN that
	// starts a busy period (no other operation in flight): the stores the earlier operations (or
	// the setup before the first) left pending when they ended, which the program makes durable
	// late, through a later flush, or never. A crash inside a later operation that loses one of
	// them would blame that operation for an earlier one's missing persist; the boundary lists
	// them in CrashPoint.Assumed, so that the caller can prove the missing persist matters there
	// (crash exploration's durability states), and they are durable from then on.
	AssumeLate bool
}

// Defaults, from the evaluation of Fernandes's thesis (Automatic Testing of PM Applications, 2022, §6.5.1: a limit of 8
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
	Events    uint64   // records read
	Points    int      // crash points delivered
	Skipped   int      // crash points skipped as duplicates (nothing unpersisted, nothing changed)
	Truncated bool     // the trace had no END record
	MaxUnits  int      // most unpersisted units at one crash point
	MaxLines  int      // most lines with unpersisted units at one crash point
	Warnings  []string // the replay's warnings (package replay)
	// Assumed counts the stores of Options.AssumeDurable made durable at an OP_BEGIN while
	// still unpersisted (the others had been persisted by the program, or overwritten).
	Assumed int
	// AssumedLate counts the other stores Options.AssumeLate made durable at an OP_BEGIN: left
	// pending by an operation that had ended (units, as CrashPoint.Assumed lists them).
	AssumedLate int
	// AssumedVisible counts those of Assumed and AssumedLate that the eADR profile made durable
	// anyway (px86.Of.Visible: fenced after by their thread).
	AssumedVisible int
}

// ErrStop may be returned by Walk's callback to end the walk early; Walk then returns nil.
var ErrStop = errors.New("crash: stop")

// Walk reads the trace once and calls fn at every crash point (package doc, "Crash points").
// The trace is replayed by package replay with the px86 model at the grain of failure-atomic
// units (px86.Config.Units) and the image of every region; each unit keeps the bytes it
// overwrote. Memory stays bounded by the unpersisted units and the replayed image. It returns
// the walk's statistics and the first error: a reader error or fn's error. A truncated trace
// (the program died) still ends with an AtEnd crash point, then Walk returns the reader's error
// wrapping trace.ErrTruncated with Stats.Truncated set. The replay's warnings (an inconsistent
// trace, runtime degradation) are in Stats.Warnings.
func Walk(r *trace.Reader, opts Options, fn func(*CrashPoint) error) (Stats, error) {
	return WalkWith(r, opts, fn, nil)
}

// WalkWith is Walk with an observer of the same read of the trace: observe, if non-nil, is given
// the replay's operations in flight and returns a handler that sees every state change of the
// walk's replay, after the walker (replay.Tee), each before fn's crash points after it. A caller
// that needs both the crash points and facts of its own from the trace (pm/explore's plan: the
// operations' paths and costs, the first pool's size) reads it once.
func WalkWith(r *trace.Reader, opts Options, fn func(*CrashPoint) error, observe func(ops *replay.Ops) replay.Handler) (Stats, error) {
	var st Stats
	w := &walker{opts: opts, fn: fn, st: &st, r: r}
	w.assume = slices.SortedFunc(slices.Values(opts.AssumeDurable), func(a, b px86.StoreState) int { return cmp.Compare(a.ID, b.ID) })
	m, err := replay.New(r, replay.Options[unitData]{
		Model: true, Image: true,
		ModelConfig: px86.Config[unitData]{Units: true, Payloads: units{w}},
	})
	if err != nil {
		return st, err
	}
	w.m = m
	var h replay.Handler = w
	if observe != nil {
		h = replay.Tee(w, observe(&m.Ops))
	}
	err = m.Run(h)
	st.Events = m.Events
	if err != nil && errors.Is(err, trace.ErrTruncated) {
		st.Truncated = true
		if perr := w.point(AtEnd, m.Events, &trace.Event{}); perr != nil {
			err = perr
		}
	}
	st.Warnings = m.Warnings()
	if errors.Is(err, ErrStop) {
		err = nil
	}
	return st, err
}

// walker is the replay handler of Walk: it places the crash points.
type walker struct {
	replay.Nop
	m        *replay.Machine[unitData]
	r        *trace.Reader // its site table says which stores are plain (UnitPlain)
	opts     Options
	fn       func(*CrashPoint) error
	st       *Stats
	seq      uint64 // units created so far (Unit.Seq)
	segment  uint64 // fences and durable library calls so far (Unit.Segment)
	changed  bool   // bytes changed since the last crash point
	inFlight []int64
	cp       CrashPoint
	space    Space
	lines    []Line
	units    []Unit
	starts   []int             // w.units[starts[i]:starts[i+1]] are the units of w.lines[i]
	ended    bool              // the END record was seen
	assume   []px86.StoreState // Options.AssumeDurable by ID, not yet applied
	assumed  []px86.StoreState // those applied at the current OP_BEGIN (CrashPoint.Assumed)
	// lastStore is each thread's latest recorded write to PM since its operation began (its site:
	// CrashPoint.LastStore); opStores the distinct sites of its writes (CrashPoint.OpStores).
	lastStore map[uint32]uint32
	opStores  map[uint32]*siteSet
	// opLast is each operation's latest recorded write (by its writes' Origin.Op, CrashPoint.
	// LastStoreOf), wrote the operations in flight that wrote to PM at all since they began
	// (CrashPoint.Quiet), committed the threads whose outermost transaction committed and has not
	// ended yet (TxBoundaries).
	opLast    map[int64]uint32
	wrote     map[int64]bool
	committed map[uint32]bool
}

// call runs fn and stops the replay on its error.
func (w *walker) call(err error) {
	if err != nil {
		w.m.Stop(err)
	}
}

func (w *walker) Mapped(*trace.Event, pmdk.Region) { w.changed = true }

func (w *walker) Unmapping(ev *trace.Event, r pmdk.Region) {
	w.call(w.point(BeforeUnmap, ev.Index, ev))
}

func (w *walker) BeforeDurable(ev *trace.Event, newCall bool) {
	if !newCall {
		return
	}
	w.call(w.point(BeforeLibrary, ev.Index, ev))
	// The library flushes and fences what it makes durable: a new segment begins.
	w.segment++
}

func (w *walker) Wrote(wr *replay.Write) {
	w.changed = true
	if op := int64(wr.Origin.Op) - 1; op >= 0 {
		if w.wrote == nil {
			w.wrote, w.opLast = map[int64]bool{}, map[int64]uint32{}
		}
		w.wrote[op] = true
		if wr.Recorded() {
			w.opLast[op] = wr.Origin.Site
		}
	}
	if wr.Recorded() {
		if w.lastStore == nil {
			w.lastStore, w.opStores = map[uint32]uint32{}, map[uint32]*siteSet{}
		}
		w.lastStore[wr.Event.Thread] = wr.Origin.Site
		set := w.opStores[wr.Event.Thread]
		if set == nil {
			set = &siteSet{seen: map[uint32]bool{}}
			w.opStores[wr.Event.Thread] = set
		}
		set.add(wr.Origin.Site)
	}
	if w.opts.AfterStores && (wr.Kind == replay.Store || wr.Kind == replay.NTStore) {
		w.call(w.point(AfterStore, wr.Event.Index, wr.Event))
	}
}

// BeforeFlush places a crash point before a clflush that persists something: clflush is durable
// at once, so the set of stores guaranteed durable changes there as it does at a fence, and an
// ordering bug between two clflushed lines ("store the token, clflush it, then clflush the
// value") has no other point to show at. When nothing was written since the previous crash
// point, the states here are a subset of that point's (persisting only removes choices): none is
// placed.
func (w *walker) BeforeFlush(ev *trace.Event) {
	if trace.FlushKind(ev.Flush) != trace.FlushCLFLUSH || !w.changed || w.m.Model.LineLen(ev.Addr) == 0 {
		return
	}
	w.call(w.point(BeforeFlush, ev.Index, ev))
}

func (w *walker) BeforeFence(ev *trace.Event) {
	w.call(w.point(BeforeFence, ev.Index, ev))
}

func (w *walker) Fenced(*trace.Event, px86.FenceEffect) { w.segment++ }

func (w *walker) OpBegan(ev *trace.Event, op replay.Op) {
	delete(w.lastStore, ev.Thread)
	if set := w.opStores[ev.Thread]; set != nil {
		set.reset()
	}
	// The stores assumed durable from this operation on: those issued before it and still
	// unpersisted. The boundary shows them (CrashPoint.Assumed) before they are persisted.
	w.assumed = w.assumed[:0]
	for len(w.assume) > 0 && w.assume[0].ID < ev.Index {
		s := w.assume[0]
		w.assume = w.assume[1:]
		if w.m.Model.StateOf(s.ID, s.Addr) != px86.Persisted || s.Size > 1 && w.m.Model.StateOf(s.ID, s.Addr+s.Size-1) != px86.Persisted {
			w.assumed = append(w.assumed, s)
		}
	}
	explicit := len(w.assumed)
	if w.opts.AssumeLate && len(w.m.Ops.InFlight()) == 1 {
		// A new busy period: whatever is still unpersisted was issued before it, by operations
		// that have ended or before the first one.
		w.m.Model.ForEachUnpersisted(func(s px86.StoreState) bool {
			if !slices.ContainsFunc(w.assumed[:explicit], func(a px86.StoreState) bool { return a.ID == s.ID }) {
				w.assumed = append(w.assumed, s)
			}
			return true
		})
	}
	if w.opts.OpBoundaries {
		w.call(w.boundary(OpBegin, op, ev))
	}
	for i, s := range w.assumed {
		visible := w.m.Model.Visible(s)
		if w.m.Model.PersistStore(s.ID, s.Addr, s.Size) > 0 {
			if visible {
				w.st.AssumedVisible++
			}
			if i < explicit {
				w.st.Assumed++
			} else {
				w.st.AssumedLate++
			}
			w.changed = true
		}
	}
}

func (w *walker) OpEnded(ev *trace.Event, op replay.Op) {
	if w.opts.OpBoundaries {
		w.call(w.boundary(OpEnd, op, ev))
	}
	delete(w.wrote, op.Index)
	delete(w.opLast, op.Index)
}

// Tx delivers the TX_END of an outermost transaction that committed, inside an operation, as a
// TxEnd boundary (Options.TxBoundaries).
func (w *walker) Tx(ev *trace.Event, tx *pmdk.Tx) {
	if !w.opts.TxBoundaries {
		return
	}
	switch tx.Last() {
	case pmdk.CommittedOutermost:
		if w.committed == nil {
			w.committed = map[uint32]bool{}
		}
		w.committed[ev.Thread] = true
	case pmdk.Aborted:
		delete(w.committed, ev.Thread)
	case pmdk.EndedOutermost:
		if !w.committed[ev.Thread] {
			return
		}
		delete(w.committed, ev.Thread)
		if op, ok := w.m.Ops.Current(ev.Thread); ok {
			w.call(w.boundary(TxEnd, op, ev))
		}
	}
}

func (w *walker) Ended(ev *trace.Event) {
	if w.ended {
		return
	}
	w.ended = true
	if err := w.point(AtEnd, ev.Index, ev); err != nil {
		w.m.Stop(err)
	}
	// The walk reads on: nothing may follow END, and the reader reports data that does.
}

// current returns the operation running at a record of thread tid (replay.Ops.Current), -1
// when none, and fills w.inFlight.
func (w *walker) current(tid uint32) (int64, string) {
	w.inFlight = w.inFlight[:0]
	for _, f := range w.m.Ops.InFlight() {
		w.inFlight = append(w.inFlight, f.Index)
	}
	op, ok := w.m.Ops.Current(tid)
	if !ok {
		return -1, ""
	}
	return op.Index, op.Text
}

// boundary delivers an operation boundary (Options.OpBoundaries) of operation op: like a crash
// point, but not counted and without effect on duplicate skipping.
func (w *walker) boundary(kind PointKind, op replay.Op, ev *trace.Event) error {
	w.fillSpace()
	w.space.Kind = kind
	w.current(ev.Thread)
	w.cp = CrashPoint{
		Index: -1, Event: ev.Index, Kind: kind, Site: ev.Site, Thread: ev.Thread,
		Stack: ev.Context, Op: op.Index, OpText: op.Text, Segment: w.segment, Space: &w.space,
		InFlight: w.inFlight, rp: w.m.Image, opLast: w.opLast,
	}
	if kind == OpBegin {
		w.cp.Assumed = w.assumed
	}
	if set := w.opStores[ev.Thread]; kind == OpEnd && set != nil {
		w.cp.OpStores = set.order
	}
	if kind == TxEnd {
		w.cp.Quiet = !slices.ContainsFunc(w.inFlight, func(f int64) bool { return f != op.Index && w.wrote[f] })
	}
	w.cp.gen = w.m.Image.Advance()
	return w.fn(&w.cp)
}

// fillSpace copies the model's unpersisted units into the walker's Space, lines in address
// order.
func (w *walker) fillSpace() {
	sp := &w.space
	w.lines, w.units, w.starts = w.lines[:0], w.units[:0], w.starts[:0]
	rp := w.m.Image
	var g *image.Region
	w.m.Model.ForEachLine(func(v px86.LineView[unitData]) bool {
		addr := v.Addr()
		if g == nil || !g.Contains(addr) {
			g = rp.RegionAt(addr)
		}
		w.lines = append(w.lines, Line{Addr: addr, Region: g, Pending: v.Pending()})
		w.starts = append(w.starts, len(w.units))
		for i := 0; i < v.Len(); i++ {
			s, d := v.At(i)
			flags := s.Flags &^ px86.Spans
			if site, ok := w.r.Site(s.Origin.Site); ok && site.Access == trace.AccessPlain {
				flags |= UnitPlain
			}
			if w.m.Model.Visible(s) {
				flags |= UnitVisible
			}
			w.units = append(w.units, Unit{
				Store: s.ID, First: s.First, Seq: d.seq, Addr: s.Addr, Size: int(s.Size), Segment: d.segment,
				Site: s.Origin.Site, Stack: s.Origin.Stack, Op: s.Origin.Op, Flags: flags, Old: d.old, Keep: d.keep,
			})
		}
		return true
	})
	w.starts = append(w.starts, len(w.units))
	sp.Lines = sp.Lines[:0]
	for i := range w.lines {
		l := &w.lines[i]
		l.Units = w.units[w.starts[i]:w.starts[i+1]:w.starts[i+1]]
		sp.Lines = append(sp.Lines, l)
		for j := range l.Units {
			if u := &l.Units[j]; u.Flags&UnitPlain != 0 && u.Segment == w.segment && u.Size >= 2 && u.Size <= 8 {
				u.Changed = changed(l, j)
			}
		}
	}
	sp.units, sp.Segment, sp.order, sp.Kind = len(w.units), w.segment, sp.order[:0], 0
}

// changed returns the bytes of unit j of line l that differ from those it overwrote
// (Unit.Changed): its new bytes are those the next unit of the line that writes them overwrote,
// or the image's when none does.
func changed(l *Line, j int) uint8 {
	u := l.Units[j]
	var buf [8]byte
	if g := l.Region; g != nil {
		g.ReadAt(buf[:u.Size], int64(u.Addr-g.Base))
	}
	var mask uint8
	for b := 0; b < u.Size; b++ {
		addr := u.Addr + uint64(b)
		v := buf[b]
		for _, later := range l.Units[j+1:] {
			if later.Addr <= addr && addr < later.Addr+uint64(later.Size) && (later.Keep == nil || later.Keep[addr-later.Addr]) {
				v = later.Old[addr-later.Addr]
				break
			}
		}
		if v != u.Old[b] {
			mask |= 1 << b
		}
	}
	return mask
}

// point delivers a crash point, or counts it as skipped when it would repeat the last one.
func (w *walker) point(kind PointKind, index uint64, ev *trace.Event) error {
	if w.m.Model.Len() == 0 && !w.changed {
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
		Stack: ev.Context, Op: op, OpText: text, Segment: w.segment, Space: sp, rp: w.m.Image,
		InFlight: w.inFlight, LastStore: w.lastStore[ev.Thread], opLast: w.opLast,
	}
	w.st.Points++
	w.cp.gen = w.m.Image.Advance()
	w.st.MaxUnits = max(w.st.MaxUnits, sp.units)
	w.st.MaxLines = max(w.st.MaxLines, len(sp.Lines))
	return w.fn(&w.cp)
}

// siteSet is the distinct sites of one operation's writes, in the order of their first write.
type siteSet struct {
	seen  map[uint32]bool
	order []uint32
}

func (s *siteSet) add(site uint32) {
	if !s.seen[site] {
		s.seen[site] = true
		s.order = append(s.order, site)
	}
}

func (s *siteSet) reset() {
	clear(s.seen)
	s.order = s.order[:0]
}
