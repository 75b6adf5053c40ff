package report

import (
	"cmp"
	"fmt"
	"slices"
)

// svgTimeline is a crash finding's timeline laid out for the SVG of the HTML report: one row
// per cache line, one column per event (stores, flushes, fences in trace order), the crash point
// last. Exact says it was drawn from the trace (CrashTimeline), not from the crash state alone.
type svgTimeline struct {
	Width, Height int
	Top, Bottom   int
	Exact         bool
	Rows          []svgRow
	Fences        []svgMark
	Marks         []svgMark
	CrashX        int
	CrashLabel    string
	Kept, Lost    int
}

type svgRow struct {
	Y     int
	Label string
	Title string
}

// svgMark is one event: Shape "store" (a circle; Class its fate) or "flush" (a triangle, Path),
// "fence" (a dashed line across the rows, Label its instruction).
type svgMark struct {
	X, Y         int
	Shape, Class string
	Path         string
	Label, Title string
	Event        uint64
}

// Geometry of the timeline (SVG user units, pixels at 100 %).
const (
	svgLeft   = 150 // the rows' labels
	svgTop    = 34  // the fences' labels
	svgRowH   = 42
	svgRight  = 70 // the crash point's label
	svgMaxW   = 1100
	svgMinCol = 14
	svgMaxCol = 44
)

// layout returns the x of each of n columns and the drawing's width.
func layout(n int) (step, width int) {
	step = svgMaxCol
	if n > 0 {
		step = min(svgMaxCol, max(svgMinCol, (svgMaxW-svgLeft-svgRight)/(n+1)))
	}
	return step, svgLeft + (n+1)*step + svgRight
}

// frame sets the drawing's size for rows cache lines and cols columns, the crash point's label
// (CrashLabel, set before) to the right of the last column; it returns the column step.
func (t *svgTimeline) frame(rows, cols int) int {
	step, w := layout(cols)
	t.Width, t.Top = w+7*max(0, len(t.CrashLabel)-8), svgTop
	t.Bottom = svgTop + rows*svgRowH
	t.Height = t.Bottom + 12
	t.CrashX = svgLeft + cols*step + step/2
	return step
}

// row adds the row of the cache line at addr (its pool-file offset off, -1 when unknown) and
// returns its y.
func (t *svgTimeline) row(i int, addr uint64, off int64, title string) int {
	y := svgTop + i*svgRowH + svgRowH/2
	label := fmt.Sprintf("line %#x", addr)
	if off >= 0 {
		label = fmt.Sprintf("pool+%#x", off)
		title += fmt.Sprintf(" (address %#x)", addr)
	}
	t.Rows = append(t.Rows, svgRow{Y: y, Label: label, Title: title})
	return y
}

func storeMark(x, y int, fate, title string, event uint64) svgMark {
	return svgMark{X: x, Y: y, Shape: "store", Class: fate, Title: title, Event: event,
		Path: fmt.Sprintf("M%d %d L%d %d M%d %d L%d %d", x-4, y-4, x+4, y+4, x-4, y+4, x+4, y-4)}
}

// drawTimeline lays out a timeline rebuilt from the trace.
func drawTimeline(tl *CrashTimeline, pointKind string) *svgTimeline {
	t := &svgTimeline{Exact: true, CrashLabel: crashLabel(pointKind)}
	var events []uint64
	for _, l := range tl.Lines {
		for _, e := range l.Events {
			events = append(events, e.Event)
		}
	}
	for _, e := range tl.Fences {
		events = append(events, e.Event)
	}
	slices.Sort(events)
	events = slices.Compact(events)
	// With events of several threads in the window, each mark says its thread (T2: thread 2).
	threads := map[uint32]bool{}
	for _, l := range tl.Lines {
		for _, e := range l.Events {
			threads[e.Thread] = true
		}
	}
	for _, e := range tl.Fences {
		threads[e.Thread] = true
	}
	who := func(e TimelineEvent) string { return "" }
	if len(threads) > 1 {
		who = func(e TimelineEvent) string { return fmt.Sprintf("thread %d, ", e.Thread) }
	}
	tag := func(e TimelineEvent, label string) string {
		if len(threads) > 1 {
			return fmt.Sprintf("T%d %s", e.Thread, label)
		}
		return label
	}
	step := t.frame(len(tl.Lines), len(events))
	x := func(ev uint64) int {
		i, _ := slices.BinarySearch(events, ev)
		return svgLeft + i*step + step/2
	}
	for i, l := range tl.Lines {
		y := t.row(i, l.Addr, l.Offset, fmt.Sprintf("cache line at pool offset %#x: %d events in the window", l.Offset, len(l.Events)))
		for _, e := range l.Events {
			where := e.Location.String()
			if e.Kind == "flush" {
				t.Marks = append(t.Marks, svgMark{X: x(e.Event), Y: y, Shape: "flush", Class: "flush", Event: e.Event, Label: tag(e, lineLabel(e.Location)),
					Path:  fmt.Sprintf("M%d %d L%d %d L%d %d Z", x(e.Event)-6, y-7, x(e.Event)+6, y-7, x(e.Event), y+6),
					Title: fmt.Sprintf("event %d: %s%s of %#x at %s", e.Event, who(e), e.What, e.Addr, where)})
				continue
			}
			t.Kept += e.Kept
			t.Lost += e.Units - e.Kept
			fate := fateText(e.Fate)
			if e.Fate == FateTorn {
				fate = fmt.Sprintf("torn: %d of its %d units kept by the crash state", e.Kept, e.Units)
			}
			m := storeMark(x(e.Event), y, e.Fate,
				fmt.Sprintf("event %d: %s%s of %d bytes at %#x, %s, at %s", e.Event, who(e), e.Kind, e.Size, e.Addr, fate, where), e.Event)
			m.Label = tag(e, lineLabel(e.Location))
			t.Marks = append(t.Marks, m)
		}
	}
	for _, e := range tl.Fences {
		t.Fences = append(t.Fences, svgMark{X: x(e.Event), Shape: "fence", Class: "fence", Label: tag(e, e.What), Event: e.Event,
			Title: fmt.Sprintf("event %d: %s%s at %s", e.Event, who(e), e.What, e.Location.String())})
	}
	return t
}

// drawState lays out the crash state alone (no trace): each line's units in program order, the
// first State[i] kept.
func drawState(c *Crash) *svgTimeline {
	t := &svgTimeline{CrashLabel: crashLabel(c.PointKind)}
	n := min(len(c.Lines), len(c.State), MaxTimelineLines)
	cols := 0
	for _, l := range c.Lines[:n] {
		cols = max(cols, min(l.Units, MaxTimelineEvents))
	}
	step := t.frame(n, cols)
	for i, l := range c.Lines[:n] {
		y := t.row(i, l.Addr, -1, fmt.Sprintf("cache line %#x: %d units not durable at the crash point, %d persisted by the crash state", l.Addr, l.Units, c.State[i]))
		for j := range min(l.Units, MaxTimelineEvents) {
			fate := FateLost
			if j < c.State[i] {
				fate = FateKept
				t.Kept++
			} else {
				t.Lost++
			}
			t.Marks = append(t.Marks, storeMark(svgLeft+j*step+step/2, y, fate,
				fmt.Sprintf("unit %d of %d of line %#x (program order): %s", j+1, l.Units, l.Addr, fateText(fate)), 0))
		}
	}
	slices.SortStableFunc(t.Marks, func(a, b svgMark) int { return cmp.Compare(a.X, b.X) })
	return t
}

// crashLabel labels the crash point: what it precedes (Crash.PointKind).
func crashLabel(pointKind string) string {
	switch pointKind {
	case "":
		return "crash"
	case "store":
		return "crash (after the store)"
	case "op-begin":
		return "crash (before the operation)"
	}
	return "crash (before the " + pointKind + ")"
}

// lineLabel is the short label of an event's mark: its source line (":47"), "" when unknown.
func lineLabel(l Location) string {
	if l.Line <= 0 {
		return ""
	}
	return fmt.Sprintf(":%d", l.Line)
}

func fateText(fate string) string {
	switch fate {
	case FateKept:
		return "kept by the crash state"
	case FateLost:
		return "lost by the crash state"
	case FateDurable:
		return "durable before the crash point"
	}
	return fate
}
