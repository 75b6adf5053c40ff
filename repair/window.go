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
	// txOpen: the window starts inside a transaction of its thread.
	txOpen bool
	// anchors are the records the findings name; prev the earlier unpersisted store each
	// anchor store overwrote (px86's StoreEffect.Prev), when it did.
	anchors map[uint64]bool
	prev    map[uint64]uint64
}

// opSpan is one workload operation of one thread: its OP_BEGIN and the record that ended it.
type opSpan struct {
	thread     uint32
	begin, end uint64
}

// index is what a first read of the trace learns: the operations of every thread, where the
// trace ends, where each region is unmapped, and the thread of each record a finding names.
type index struct {
	ops      []opSpan
	end      uint64
	regions  []regionSpan
	threadOf map[uint64]uint32
	lineSize uint64
}

type regionSpan struct {
	base, len        uint64
	mapped, unmapped uint64 // record indexes; unmapped is the trace's end when never unmapped
	hasUnmap         bool
}

// readIndex reads the trace at path once, recording the threads of the records in anchors.
func readIndex(path string, anchors map[uint64]bool) (*index, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	ix := &index{threadOf: map[uint64]uint32{}, lineSize: uint64(r.Header().LineSize)}
	open := map[uint32]int{}    // thread -> index in ops of its open operation
	byID := map[uint64]int{}    // operation index -> ops index
	regions := map[uint32]int{} // region id -> regions index, while mapped
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, trace.ErrTruncated) || errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		ix.end = ev.Index
		if anchors[ev.Index] {
			ix.threadOf[ev.Index] = ev.Thread
		}
		switch ev.Kind {
		case trace.KindOpBegin:
			if i, ok := open[ev.Thread]; ok {
				ix.ops[i].end = ev.Index
			}
			open[ev.Thread] = len(ix.ops)
			byID[ev.Op] = len(ix.ops)
			ix.ops = append(ix.ops, opSpan{thread: ev.Thread, begin: ev.Index, end: ^uint64(0)})
		case trace.KindOpEnd:
			if i, ok := byID[ev.Op]; ok && ix.ops[i].end == ^uint64(0) {
				ix.ops[i].end = ev.Index
				if open[ix.ops[i].thread] == i {
					delete(open, ix.ops[i].thread)
				}
			}
		case trace.KindRegionMap:
			regions[ev.Region] = len(ix.regions)
			ix.regions = append(ix.regions, regionSpan{base: ev.Addr, len: ev.Size, mapped: ev.Index, unmapped: ^uint64(0)})
		case trace.KindRegionUnmap:
			if i, ok := regions[ev.Region]; ok {
				ix.regions[i].unmapped, ix.regions[i].hasUnmap = ev.Index, true
				delete(regions, ev.Region)
			}
		}
	}
	for i := range ix.ops {
		if ix.ops[i].end == ^uint64(0) {
			ix.ops[i].end = ix.end
		}
	}
	for i := range ix.regions {
		if ix.regions[i].unmapped == ^uint64(0) {
			ix.regions[i].unmapped = ix.end
		}
	}
	return ix, nil
}

// opOf returns the operation of thread t in flight at record idx.
func (ix *index) opOf(t uint32, idx uint64) (opSpan, bool) {
	for i := len(ix.ops) - 1; i >= 0; i-- {
		o := ix.ops[i]
		if o.thread == t && o.begin <= idx && idx <= o.end {
			return o, true
		}
	}
	return opSpan{}, false
}

// deadlineOf returns the record by which a store at addr written at record idx must be durable:
// the unmap of its region, or the end of the trace.
func (ix *index) deadlineOf(addr, idx uint64) uint64 {
	for _, r := range ix.regions {
		if r.mapped <= idx && idx <= r.unmapped && addr >= r.base && addr < r.base+r.len {
			return r.unmapped
		}
	}
	return ix.end
}

// maxSpan bounds the records of a window proper on each side of its anchor.
const maxSpan = 512

// spanAround returns the window proper around the records lo..hi of thread t: the operation
// holding them, clipped to maxSpan records on each side.
func (ix *index) spanAround(t uint32, lo, hi uint64) (start, end uint64) {
	start, end = lo, hi
	if o, ok := ix.opOf(t, lo); ok {
		start = o.begin
	} else if lo > 0 {
		start = 0
	}
	if o, ok := ix.opOf(t, hi); ok {
		end = o.end
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
	c.styles = append(c.styles, styleSite{site: ev.Site, stack: ev.Context, kind: ev.Kind, flush: ev.Flush})
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
	w.txOpen = c.m.Txs.Get(w.thread).Depth() > 0
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
	c.at(ev, func(w *window, tail bool) {
		c.add(w, ev, tail, tevent{addr: wr.Addr, size: wr.Size, flags: ev.Flags})
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
	c.at(ev, func(w *window, tail bool) { c.add(w, ev, tail, tevent{}) })
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
		e := tevent{addr: r.Base, size: r.Len}
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
			f := report.Loc(s).Frame()
			f.Inlined = s.InlinedAt != 0
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
