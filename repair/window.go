package repair

import (
	"errors"
	"io"
	"slices"

	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// A window is the part of the trace a repair is computed from (Huang's dissertation, §4.3.4:
// most of a trace is unrelated to a bug and left out): the records of the operation in which a
// finding occurred, around its first occurrence, and, for a durability bug, the records after
// it that touch the store's cache lines up to the point where it must be durable.

// tevent is one record of a window, copied out of the trace.
type tevent struct {
	idx         uint64
	kind        trace.Kind
	thread      uint32
	site, stack uint32
	serials     []uint64
	addr, size  uint64
	flush       trace.FlushKind
	fence       trace.FenceKind
	internal    bool
	flags       uint8
	// dirty: a flush found a store its thread had not written back (not redundant);
	// persisted: a fence made some store durable (not redundant).
	dirty, persisted bool
	// pendingLines: the cache lines with flush-pending stores before a fence.
	pendingLines []uint64
	tail         bool // in the part after the window proper (only records touching its lines)
	// unmaps: the record unmapped the region [addr, addr+size) (a REGION_UNMAP, or a
	// REGION_MAP that replaced the region: replay's Unmapping).
	unmaps bool
	// What the replay decided about the record (package replay's doc), recorded as it was
	// applied. op: the OP_BEGIN record index plus one of the operation the record belongs to
	// (replay.Machine.OpOfRecord), 0 none. tx: the number of the thread's transaction the
	// record is in (pmdk.Tx.ID; a TX_END is in the transaction it ends), 0 none; txLevel: the
	// nesting level it is in (1 the outermost; a TX_BEGIN's is the level it opens, a TX_END's
	// the level it closes). txChange: what a transaction record did (pmdk.Tx.Last). logged: a
	// store lies wholly in what its transaction logs (pmdk.Tx.Covers). persists: the ranges an
	// outermost commit persisted (pmdk.Tx.CommitRanges).
	op       uint64
	tx       uint64
	txLevel  int
	txChange pmdk.Change
	logged   bool
	persists []pmdk.Range
}

// lines returns the cache lines the record's bytes touch.
func (e *tevent) lines(lineSize uint64) []uint64 {
	if e.size == 0 {
		if e.kind == trace.KindFlush {
			return []uint64{e.addr &^ (lineSize - 1)}
		}
		return nil
	}
	var out []uint64
	for l := e.addr &^ (lineSize - 1); l < e.addr+e.size; l += lineSize {
		out = append(out, l)
	}
	return out
}

// window is the records of one repair problem.
type window struct {
	thread   uint32
	start    uint64 // first record index of the window proper
	end      uint64 // last record index of the window proper
	deadline uint64 // last record of the tail (>= end)
	// tailLines: the tail keeps records touching these lines (the stores that must be
	// durable by the deadline).
	tailLines map[uint64]bool
	anchor    uint64 // the record that decides tailLines (a store), or none
	events    []tevent
	// initial: the unpersisted stores when the window starts.
	initial []px86.StoreState
	// initialFlush: the last flush of each line with flush-pending initial stores.
	initialFlush map[uint64]px86.Origin
	// anchors are the records the findings name; prev the earlier unpersisted store each
	// anchor store overwrote (px86's StoreEffect.Prev), when it did.
	anchors map[uint64]bool
	prev    map[uint64]uint64
}

// opSpan is one workload operation: its thread, its OP_BEGIN and the record that ended it (its
// OP_END, its thread's next OP_BEGIN, or the trace's last record).
type opSpan struct {
	thread     uint32
	begin, end uint64
}

// anchorAt is what the index knows of a record a finding names: its thread and the operation
// it belongs to, as the replay decides (replay.Machine.OpOfRecord).
type anchorAt struct {
	thread uint32
	op     opSpan
	hasOp  bool
}

// index is what a first read of the trace learns: where the trace ends and, for each record a
// finding names, its thread and operation.
type index struct {
	end      uint64
	at       map[uint64]anchorAt
	lineSize uint64
}

// indexer is the replay handler of readIndex: the span of every operation, by its OP_BEGIN.
type indexer struct {
	replay.Nop
	ops map[uint64]*opSpan
}

func (x *indexer) OpBegan(ev *trace.Event, op replay.Op) {
	x.ops[op.Begin] = &opSpan{thread: op.Thread, begin: op.Begin, end: ^uint64(0)}
}

func (x *indexer) OpEnded(ev *trace.Event, op replay.Op) {
	if o := x.ops[op.Begin]; o != nil {
		o.end = ev.Index
	}
}

// readIndex replays the trace at path once (package replay, without the model), recording the
// thread and operation of the records in anchors. A trace cut short is read up to its cut.
func readIndex(path string, anchors map[uint64]bool) (*index, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m, err := replay.New[struct{}](r, replay.Options[struct{}]{})
	if err != nil {
		return nil, err
	}
	ix := &index{at: map[uint64]anchorAt{}, lineSize: uint64(r.Header().LineSize)}
	x := &indexer{ops: map[uint64]*opSpan{}}
	opOf := map[uint64]uint64{} // anchor -> the OP_BEGIN of its operation
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, trace.ErrTruncated) || errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		m.Apply(ev, x)
		ix.end = ev.Index
		if anchors[ev.Index] {
			a := anchorAt{thread: ev.Thread}
			if op, ok := m.OpOfRecord(ev); ok {
				a.hasOp, opOf[ev.Index] = true, op.Begin
			}
			ix.at[ev.Index] = a
		}
	}
	for idx, begin := range opOf {
		a := ix.at[idx]
		a.op = *x.ops[begin]
		if a.op.end == ^uint64(0) {
			a.op.end = ix.end
		}
		ix.at[idx] = a
	}
	return ix, nil
}

// maxSpan bounds the records of a window proper on each side of its anchor.
const maxSpan = 512

// spanAround returns the window proper around the anchor records lo..hi: the operation
// holding them, clipped to maxSpan records on each side.
func (ix *index) spanAround(lo, hi uint64) (start, end uint64) {
	start, end = lo, hi
	if a := ix.at[lo]; a.hasOp {
		start = a.op.begin
	} else if lo > 0 {
		start = 0
	}
	if a := ix.at[hi]; a.hasOp {
		end = a.op.end
	} else {
		end = ix.end
	}
	if lo > maxSpan && start < lo-maxSpan {
		start = lo - maxSpan
	}
	if end > hi+maxSpan {
		end = hi + maxSpan
	}
	return start, end
}

// collector is the replay handler that copies the windows' records.
type collector struct {
	replay.Nop
	m       *replay.Machine[px86.NoPayload]
	windows []*window
	pending []uint64 // lines with flush-pending stores, before a fence
	styles  []styleSite
	seen    map[uint32]bool
}

// maxStyleSites bounds the persisting sites kept as templates.
const maxStyleSites = 256

// collect replays the trace at path once and fills the windows. It returns the sites that
// flush, fence or add to a transaction (first occurrence of each, for the templates), and the
// trace's site table.
func collect(path string, windows []*window) ([]styleSite, report.SiteTable, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	m, err := replay.New[px86.NoPayload](r, replay.Options[px86.NoPayload]{Model: true})
	if err != nil {
		return nil, nil, err
	}
	c := &collector{m: m, windows: windows, seen: map[uint32]bool{}}
	if err := m.Run(c); err != nil && !errors.Is(err, trace.ErrTruncated) {
		return nil, nil, err
	}
	return c.styles, r, nil
}

// style keeps ev's site as a possible template.
func (c *collector) style(ev *trace.Event) {
	if ev.Internal || c.seen[ev.Site] || len(c.styles) >= maxStyleSites {
		return
	}
	c.seen[ev.Site] = true
	c.styles = append(c.styles, styleSite{site: ev.Site, stack: ev.Context, kind: ev.Kind, flush: ev.Flush, fence: ev.Fence})
}

// at calls fn for every window whose span holds record ev (proper or tail).
func (c *collector) at(ev *trace.Event, fn func(w *window, tail bool)) {
	for _, w := range c.windows {
		switch {
		case ev.Index == w.start:
			c.snapshot(w, ev)
			fn(w, false)
		case ev.Index > w.start && ev.Index <= w.end:
			fn(w, false)
		case ev.Index > w.end && ev.Index <= w.deadline:
			fn(w, true)
		}
	}
}

// snapshot keeps the model's unpersisted stores as the window's initial state.
func (c *collector) snapshot(w *window, ev *trace.Event) {
	if w.initialFlush != nil {
		return
	}
	w.initialFlush = map[uint64]px86.Origin{}
	md := c.m.Model
	md.ForEachUnpersisted(func(s px86.StoreState) bool {
		if len(w.initial) >= 4096 {
			return false
		}
		w.initial = append(w.initial, s)
		if s.State == px86.Pending {
			if o, ok := md.LastFlush(s.Addr); ok {
				w.initialFlush[md.LineOf(s.Addr)] = o
			}
		}
		return true
	})
}

func (c *collector) add(w *window, ev *trace.Event, tail bool, e tevent) {
	if tail {
		// The tail keeps what touches the window's lines, fences, and the deadline.
		keep := ev.Index == w.deadline || e.kind == trace.KindFence || e.kind == trace.KindTxCommit
		for _, l := range e.lines(c.m.Model.LineSize()) {
			if w.tailLines[l] {
				keep = true
			}
		}
		if !keep {
			return
		}
		if e.kind == trace.KindFence && len(w.events) > 0 {
			// A fence matters to the tail only after a flush of its lines by its thread.
			last := w.events[len(w.events)-1]
			if last.kind == trace.KindFence && last.thread == e.thread && last.tail {
				return
			}
		}
		e.tail = true
	}
	e.idx, e.thread, e.site, e.stack = ev.Index, ev.Thread, ev.Site, ev.Context
	e.serials = slices.Clone(ev.Frames)
	if e.kind == 0 {
		e.kind = ev.Kind
	}
	if op, ok := c.m.OpOfRecord(ev); ok {
		e.op = op.Begin + 1
	}
	if e.txChange == 0 {
		tx := c.m.Txs.Get(ev.Thread)
		e.tx, e.txLevel = tx.ID(), tx.Depth()
	}
	w.events = append(w.events, e)
	if ev.Index == w.anchor && w.tailLines != nil {
		for _, l := range e.lines(c.m.Model.LineSize()) {
			w.tailLines[l] = true
		}
	}
}

func (c *collector) Wrote(wr *replay.Write) {
	if wr.Kind == replay.InitialContent {
		return
	}
	ev := wr.Event
	if wr.Effect.Overwrote {
		for _, w := range c.windows {
			if w.anchors[ev.Index] {
				if w.prev == nil {
					w.prev = map[uint64]uint64{}
				}
				w.prev[ev.Index] = wr.Effect.Prev.ID
			}
		}
	}
	logged := wr.Tx.Covers(wr.Addr, wr.Size)
	c.at(ev, func(w *window, tail bool) {
		c.add(w, ev, tail, tevent{addr: wr.Addr, size: wr.Size, flags: ev.Flags, logged: logged})
	})
}

func (c *collector) Flushed(ev *trace.Event, eff px86.FlushEffect) {
	c.style(ev)
	c.at(ev, func(w *window, tail bool) {
		c.add(w, ev, tail, tevent{addr: ev.Addr, flush: ev.Flush, internal: ev.Internal, dirty: eff.Dirty > 0})
	})
}

func (c *collector) BeforeFence(ev *trace.Event) {
	c.pending = c.pending[:0]
	if c.m.Model == nil || c.m.Model.PendingLen() == 0 {
		return
	}
	n := 0
	c.m.Model.ForEachLine(func(v px86.LineView[px86.NoPayload]) bool {
		if v.Pending() > 0 {
			c.pending = append(c.pending, v.Addr())
		}
		n++
		return n < 4096
	})
}

func (c *collector) Fenced(ev *trace.Event, eff px86.FenceEffect) {
	c.style(ev)
	c.at(ev, func(w *window, tail bool) {
		c.add(w, ev, tail, tevent{fence: ev.Fence, internal: ev.Internal, persisted: eff.Persisted > 0, pendingLines: slices.Clone(c.pending)})
	})
}

func (c *collector) Tx(ev *trace.Event, tx *pmdk.Tx) {
	e := tevent{txChange: tx.Last(), tx: tx.ID(), txLevel: tx.Depth()}
	switch e.txChange {
	case pmdk.Ended, pmdk.EndedOutermost:
		e.tx, e.txLevel = tx.Serial(), e.txLevel+1
	case pmdk.CommittedOutermost:
		tx.CommitRanges(func(r pmdk.Range) { e.persists = append(e.persists, r) })
	}
	c.at(ev, func(w *window, tail bool) { c.add(w, ev, tail, e) })
}

func (c *collector) TxAdded(ev *trace.Event, tx *pmdk.Tx, redundant bool) {
	c.style(ev)
	c.at(ev, func(w *window, tail bool) {
		if !tail {
			c.add(w, ev, tail, tevent{addr: ev.Addr, size: ev.Size, flags: ev.Flags})
		}
	})
}

func (c *collector) Unmapping(ev *trace.Event, r pmdk.Region) {
	c.at(ev, func(w *window, tail bool) {
		e := tevent{addr: r.Base, size: r.Len, unmaps: true}
		if tail {
			// Kept whatever lines the tail follows: it is where stores must be durable.
			e.tail = true
			e.idx, e.kind, e.thread = ev.Index, ev.Kind, ev.Thread
			w.events = append(w.events, e)
			return
		}
		c.add(w, ev, tail, e)
	})
}

func (c *collector) OpBegan(ev *trace.Event, op replay.Op) {
	c.at(ev, func(w *window, tail bool) {
		if !tail {
			c.add(w, ev, tail, tevent{})
		}
	})
}

func (c *collector) OpEnded(ev *trace.Event, op replay.Op) {
	if ev.Kind != trace.KindOpEnd {
		return // ended by the thread's next OP_BEGIN, which OpBegan adds
	}
	c.at(ev, func(w *window, tail bool) {
		if !tail {
			c.add(w, ev, tail, tevent{})
		}
	})
}

func (c *collector) Ended(ev *trace.Event) {
	c.at(ev, func(w *window, tail bool) { c.add(w, ev, tail, tevent{}) })
}

// Frames of an event with the activation each frame belongs to.

// aframe is one frame of an event (report.FramesAt's frames, without folding recursion) with
// the call depth of the activation it is in and that activation's serial (0 at depth 0).
type aframe struct {
	report.Frame
	depth  int
	serial uint64
}

// framesOf returns the frames of an event at site in call-stack node stack with activation
// serials serials (trace.Event.Frames), innermost first, as report.FramesAt orders them.
func framesOf(t report.SiteTable, site, stack uint32, serials []uint64) []aframe {
	var out []aframe
	serialAt := func(d int) uint64 {
		if d >= 1 && d <= len(serials) {
			return serials[d-1]
		}
		return 0
	}
	add := func(id uint32, depth int) {
		for n := 0; id != 0 && n < trace.MaxDepth; n++ {
			s, ok := t.Site(id)
			if !ok {
				return
			}
			f := report.SiteFrame(t, s)
			out = append(out, aframe{Frame: f, depth: depth, serial: serialAt(depth)})
			id = s.InlinedAt
		}
	}
	var ids []uint32
	if stack != 0 {
		ids = t.StackOf(stack)
	}
	add(site, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		add(ids[i], i)
	}
	return out
}

// callerAt is one caller of a finding reported at its instruction (report.RoleCaller): its
// location and the first record of the instruction reached through it.
type callerAt struct {
	loc   report.Location
	event uint64
}

// findCallers fills f.callers for the selected trace findings that list callers: one pass over
// the trace, in which each record at the finding's instruction (the position of its stack's
// first frame) is matched against the callers' positions in its frames. Every execution
// through a listed caller shows the finding (report.Place), so the first one found is an
// occurrence. A finding some of whose callers are not found is left to its own location.
func (f *fixer) findCallers(sel []int) error {
	type want struct {
		n       int
		own     report.Location
		callers []report.Related
		found   []uint64 // per caller, 1 + its record (0: not yet)
	}
	var wants []*want
	for _, n := range sel {
		fd := &f.rep.Findings[n-1]
		if _, bad := f.reasons[n]; bad || fd.Crash != nil || len(fd.Stack) == 0 {
			continue
		}
		w := &want{n: n, own: fd.Stack[0].Location()}
		for _, r := range fd.Related {
			if r.Role == report.RoleCaller {
				w.callers = append(w.callers, r)
			}
		}
		if len(w.callers) > 0 {
			w.found = make([]uint64, len(w.callers))
			wants = append(wants, w)
		}
	}
	f.callers = map[int][]callerAt{}
	if len(wants) == 0 {
		return nil
	}
	r, err := trace.Open(f.trace)
	if err != nil {
		return err
	}
	defer r.Close()
	// at: l is at the source position of own (sameLoc's test: file, line, column).
	at := func(l report.Location, own report.Location) bool { return sameLoc(l, own.Related("")) }
	atOwn := map[uint32]bool{} // per site: at some finding's instruction
	seen := map[report.Context]bool{}
	left := 0
	for _, w := range wants {
		left += len(w.callers)
	}
	for left > 0 {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, trace.ErrTruncated) || errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		if ev.Site == 0 {
			continue
		}
		own, ok := atOwn[ev.Site]
		if !ok {
			l := report.At(r, ev.Site)
			for _, w := range wants {
				own = own || at(l, w.own)
			}
			atOwn[ev.Site] = own
		}
		c := report.Context{Site: ev.Site, Stack: ev.Context}
		if !own || seen[c] {
			continue
		}
		seen[c] = true
		frames := report.FramesAt(r, ev.Site, ev.Context)
		for _, w := range wants {
			if len(frames) == 0 || !at(frames[0].Location(), w.own) {
				continue
			}
			for i, cl := range w.callers {
				if w.found[i] != 0 {
					continue
				}
				for _, fr := range frames[1:] {
					if sameLoc(fr.Location(), cl) {
						w.found[i] = ev.Index + 1
						left--
						break
					}
				}
			}
		}
	}
	for _, w := range wants {
		if slices.Contains(w.found, 0) {
			continue
		}
		for i, cl := range w.callers {
			f.callers[w.n] = append(f.callers[w.n], callerAt{loc: cl.Location(), event: w.found[i] - 1})
		}
	}
	return nil
}
