package explore

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Timeline rebuilds the timeline of a PM crash finding for the HTML report (report.CrashTimeline)
// from the trace it names. It walks the trace as Rebuild does to the finding's crash point (same
// index and event; assume as for Rebuild) and takes the crash state's cache lines, their units
// (kept: among the first Crash.State[i] of line i, else lost) and the bytes each unit changes;
// then a second replay of the trace up to the crash point (package pm/replay) adds the other
// stores and the flushes to those lines and every fence from the earliest unit on. Errors: the
// trace cannot be read, has no such crash point, or a different state space there.
func Timeline(c *report.Crash, assume []px86.StoreState) (*report.CrashTimeline, error) {
	var tl *report.CrashTimeline
	var lineSize uint64
	err := atCrashPoint(c, assume, func(r *trace.Reader, cp *crash.CrashPoint) error {
		lineSize = uint64(r.Header().LineSize)
		tl = timelineAt(r, cp, StateOf(c))
		return nil
	})
	if err != nil {
		return nil, err
	}
	r2, err := trace.Open(c.Trace)
	if err != nil {
		return nil, fmt.Errorf("the finding's trace: %w", err)
	}
	defer r2.Close()
	m, err := replay.New(r2, replay.Options[struct{}]{})
	if err != nil {
		return nil, err
	}
	h := &timelineEvents{m: m, tl: tl, lineSize: lineSize, units: map[uint64]bool{}}
	for _, l := range tl.Lines {
		for _, ev := range l.Events {
			h.units[ev.Event] = true
		}
	}
	// A trace cut short ends with a crash point (crash.AtEnd) the replay reads up to the cut.
	if err := m.Run(h); err != nil && !errors.Is(err, trace.ErrTruncated) {
		return nil, err
	}
	for i := range tl.Lines {
		l := &tl.Lines[i]
		slices.SortStableFunc(l.Events, func(a, b report.TimelineEvent) int { return cmp.Compare(a.Event, b.Event) })
		if len(l.Events) > report.MaxTimelineEvents {
			tl.Omitted += len(l.Events) - report.MaxTimelineEvents
			l.Events = l.Events[len(l.Events)-report.MaxTimelineEvents:] // the latest, next to the crash point
		}
	}
	if len(tl.Fences) > report.MaxTimelineEvents {
		tl.Omitted += len(tl.Fences) - report.MaxTimelineEvents
		tl.Fences = tl.Fences[len(tl.Fences)-report.MaxTimelineEvents:]
	}
	return tl, nil
}

// timelineAt takes crash state st's lines and units at crash point cp (inside Walk's callback:
// the units' bytes and the image are valid there); a torn unit (st.Tear) is torn.
func timelineAt(r *trace.Reader, cp *crash.CrashPoint, st crash.State) *report.CrashTimeline {
	tl := &report.CrashTimeline{Start: cp.Event, Crash: cp.Event}
	k := st.K
	patches, _ := cp.Patches(st) // Check passed: len(k) matches
	for i, l := range cp.Space.Lines {
		if i == report.MaxTimelineLines {
			tl.Omitted += len(cp.Space.Lines) - i
			break
		}
		off := int64(-1)
		if l.Region != nil {
			off = int64(l.Region.FileOffset + l.Addr - l.Region.Base)
		}
		tl.Lines = append(tl.Lines, report.TimelineLine{Addr: l.Addr, Offset: off})
		// The line's bytes in the image with every issued store persisted (full) and in the
		// crash image (full with the state's patches).
		full := make([]byte, len(lineBytes(l)))
		if l.Region != nil {
			l.Region.ReadAt(full, int64(l.Addr-l.Region.Base))
		}
		img := bytes.Clone(full)
		for _, p := range patches {
			if p.Addr >= l.Addr && p.Addr < l.Addr+uint64(len(img)) {
				copy(img[p.Addr-l.Addr:], p.Data)
			}
		}
		byStore := map[uint64]int{} // the line's event of each store
		for j, u := range l.Units {
			fate, other := report.FateKept, u.Old
			switch {
			case st.Tear != nil && st.Tear.Line == i && j == k[i]:
				fate = report.FateTorn // its image bytes are part old, part new: shown against the old
			case j >= k[i]:
				fate, other = report.FateLost, full[u.Addr-l.Addr:][:u.Size]
			}
			loc := report.UserAt(r, u.Site, u.Stack)
			tl.Start = min(tl.Start, u.First)
			tl.Lines[i].Events = addUnit(tl.Lines[i].Events, byStore, u, fate, loc)
			im := img[u.Addr-l.Addr:][:u.Size]
			if u.Keep != nil || bytes.Equal(im, other) {
				continue // a merged unit's bytes are not one store's; equal bytes change nothing
			}
			if n := len(tl.Bytes); n > 0 {
				// The next unit of the same store with the same fate extends its range.
				if b := &tl.Bytes[n-1]; b.Store == u.Store && b.Fate == fate && b.Addr+uint64(len(b.Image)) == u.Addr {
					b.Image, b.Other = append(b.Image, im...), append(b.Other, other...)
					continue
				}
			}
			if len(tl.Bytes) == report.MaxTimelineBytes {
				tl.Omitted++
				continue
			}
			tl.Bytes = append(tl.Bytes, report.ByteDiff{
				Addr: u.Addr, Offset: unitOffset(off, l.Addr, u.Addr), Fate: fate, Image: bytes.Clone(im), Other: bytes.Clone(other),
				Store: u.Store, Location: loc,
			})
		}
	}
	return tl
}

// addUnit adds unit u of a crash state's line, kept or lost (fate), to the line's events: a new
// store event, or one more unit of the store's event (byStore: index by store), whose fate is
// then torn when the state kept some of its units and lost others.
func addUnit(events []report.TimelineEvent, byStore map[uint64]int, u crash.Unit, fate string, loc report.Location) []report.TimelineEvent {
	kept := 0
	if fate == report.FateKept {
		kept = 1
	}
	if i, ok := byStore[u.Store]; ok {
		e := &events[i]
		end := max(e.Addr+e.Size, u.Addr+uint64(u.Size))
		e.Addr = min(e.Addr, u.Addr)
		e.Size = end - e.Addr
		e.Units++
		e.Kept += kept
		if e.Fate != fate {
			e.Fate = report.FateTorn
		}
		return events
	}
	kind := "store"
	switch {
	case u.Flags&crash.UnitExternal != 0:
		kind = "library"
	case u.Flags&crash.UnitNT != 0:
		kind = "nt-store"
	}
	byStore[u.Store] = len(events)
	return append(events, report.TimelineEvent{
		Event: u.Store, Kind: kind, Addr: u.Addr, Size: uint64(u.Size), Fate: fate, Units: 1, Kept: kept, Location: loc,
	})
}

// unitOffset is the pool-file offset of the byte at addr on a line at lineAddr whose offset is
// lineOff (-1: unknown).
func unitOffset(lineOff int64, lineAddr, addr uint64) int64 {
	if lineOff < 0 {
		return -1
	}
	return lineOff + int64(addr-lineAddr)
}

// lineBytes returns a slice as long as line l spans: up to the end of its last unit, at least
// one 64-byte cache line.
func lineBytes(l *crash.Line) []byte {
	n := uint64(64)
	for _, u := range l.Units {
		n = max(n, u.Addr-l.Addr+uint64(u.Size))
	}
	return make([]byte, n)
}

// timelineEvents is the second replay of Timeline: the stores (other than the crash state's
// units), flushes and fences of the window.
type timelineEvents struct {
	replay.Nop
	m        *replay.Machine[struct{}]
	tl       *report.CrashTimeline
	lineSize uint64
	units    map[uint64]bool // the units' store events, already in the timeline
}

// line returns the index of the timeline's line holding addr, -1 for none.
func (h *timelineEvents) line(addr uint64) int {
	for i, l := range h.tl.Lines {
		if addr >= l.Addr && addr < l.Addr+h.lineSize {
			return i
		}
	}
	return -1
}

// in reports whether event ev is in the window, and stops the replay past it.
func (h *timelineEvents) in(ev *trace.Event) bool {
	if ev.Index >= h.tl.Crash {
		h.m.Stop(replay.ErrStopped)
		return false
	}
	return ev.Index >= h.tl.Start
}

func (h *timelineEvents) Wrote(w *replay.Write) {
	if !w.Recorded() || !h.in(w.Event) || h.units[w.Event.Index] {
		return
	}
	kind := map[replay.WriteKind]string{replay.Store: "store", replay.NTStore: "nt-store", replay.LibraryStore: "library"}[w.Kind]
	for a := w.Addr &^ (h.lineSize - 1); a < w.Addr+w.Size; a += h.lineSize {
		if i := h.line(a); i >= 0 {
			h.tl.Lines[i].Events = append(h.tl.Lines[i].Events, report.TimelineEvent{
				Event: w.Event.Index, Kind: kind, Addr: w.Addr, Size: w.Size, Fate: report.FateDurable,
				Location: report.UserAt(h.m.Reader, w.Origin.Site, w.Origin.Stack), Thread: w.Event.Thread,
			})
		}
	}
}

func (h *timelineEvents) BeforeFlush(ev *trace.Event) {
	if !h.in(ev) {
		return
	}
	if i := h.line(ev.Addr); i >= 0 {
		h.tl.Lines[i].Events = append(h.tl.Lines[i].Events, report.TimelineEvent{
			Event: ev.Index, Kind: "flush", What: trace.FlushKind(ev.Flush).String(), Addr: ev.Addr,
			Location: report.UserAt(h.m.Reader, ev.Site, ev.Context), Thread: ev.Thread,
		})
	}
}

func (h *timelineEvents) BeforeFence(ev *trace.Event) {
	if !h.in(ev) {
		return
	}
	h.tl.Fences = append(h.tl.Fences, report.TimelineEvent{
		Event: ev.Index, Kind: "fence", What: trace.FenceKind(ev.Fence).String(),
		Location: report.UserAt(h.m.Reader, ev.Site, ev.Context), Thread: ev.Thread,
	})
}
