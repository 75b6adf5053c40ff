package exec

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress reports a command's progress phase by phase, each against a total fixed when the
// phase begins (Phase: the crash points of an exploration, counted by a planning walk before
// any runs), with the figures of the runs so far (Figures: states judged, failed, findings), the
// time elapsed and an estimate of the time left (ETA), through to the end: a phase without a
// total (clustering the findings, writing the report) is a named, ticking line. On a terminal,
// one progress bar per phase (github.com/schollz/progressbar), redrawn every TermInterval;
// elsewhere (CI logs, files) a line every ProgressInterval. A phase with a total ends with a line
// of its last figures, in both cases. A nil
// *Progress reports nothing. Safe for concurrent use.
type Progress struct {
	w    io.Writer
	term *os.File // the terminal bars are drawn on (nil: lines)
	now  func() time.Time
	stop chan struct{}

	mu         sync.Mutex
	bar        *progressbar.ProgressBar
	start      time.Time // when the Progress was made (the command's elapsed time)
	phase      string
	unit       string
	total      int // the phase's total (0: none, a ticking line)
	done       int
	phaseStart time.Time
	runs       int
	figures    Figures
	shown      bool      // the figures were set: the runs have begun
	deadline   time.Time // when a time budget ends (zero: none)
	finished   bool
}

// Figures are the running counts a Progress shows: crash states judged, those that failed, and
// the findings they make so far.
type Figures struct {
	States, Failed, Findings int
}

// ProgressInterval is how often a Progress off a terminal prints a line; TermInterval how often
// it redraws its bar on a terminal (the elapsed time and the ETA tick even when nothing ends).
const (
	ProgressInterval = 10 * time.Second
	TermInterval     = time.Second
)

// NewProgress returns a Progress writing to w (a bar when w is a terminal), or nil when w is
// nil. Its clock is the wall clock; its elapsed time counts from now.
func NewProgress(w io.Writer) *Progress {
	if w == nil {
		return nil
	}
	var tty *os.File
	if f, ok := w.(*os.File); ok && f != nil && term.IsTerminal(int(f.Fd())) {
		tty = f
	}
	p := newProgress(w, tty, time.Now)
	every := ProgressInterval
	if tty != nil {
		every = TermInterval
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.tick()
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

// NewProgressClock returns a Progress writing lines to w with the clock now and no ticker: the
// caller prints each line with Tick (tests, with a fake clock).
func NewProgressClock(w io.Writer, now func() time.Time) *Progress {
	return newProgress(w, nil, now)
}

// newProgress returns a Progress without its ticker.
func newProgress(w io.Writer, tty *os.File, now func() time.Time) *Progress {
	return &Progress{w: w, term: tty, now: now, start: now(), stop: make(chan struct{})}
}

// Tick prints a line (off a terminal) or redraws the bar: what the ticker does every interval.
func (p *Progress) Tick() {
	if p != nil {
		p.tick()
	}
}

// Phase begins a phase named name (a verb: "exploring", "clustering findings"), whose total
// units are total (0: none known: a ticking line) of unit (plural: "crash points"). The
// previous phase is ended (endPhase). Off a terminal the next tick's line names it.
func (p *Progress) Phase(name, unit string, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.endPhase()
	p.phase, p.unit, p.total, p.done, p.phaseStart = name, unit, max(total, 0), 0, p.now()
	if p.term != nil {
		max, opts := p.total, []progressbar.Option{
			progressbar.OptionSetWriter(p.term),
			progressbar.OptionSetDescription(p.describe(false)),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionSetElapsedTime(false),
			progressbar.OptionSetPredictTime(false),
		}
		if max > 0 {
			opts = append(opts, progressbar.OptionShowCount())
		} else {
			// A spinner turned by the ticks (its own goroutine would outlive the phase).
			max = -1
			opts = append(opts, progressbar.OptionSpinnerType(14), progressbar.OptionSetSpinnerChangeInterval(0))
		}
		p.bar = progressbar.NewOptions(max, opts...)
		_ = p.bar.RenderBlank()
	}
}

// Advance counts n more units of the phase done (at most its total).
func (p *Progress) Advance(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.total > 0 {
		p.done = min(p.done, p.total)
	}
	p.redraw()
}

// Figures sets the running counts (absolute, not added).
func (p *Progress) Figures(f Figures) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.figures, p.shown = f, true
	p.redraw()
}

// Deadline says when the command's time budget ends: the ETA is at most the time left to it.
func (p *Progress) Deadline(t time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deadline = t
}

// Ran counts one run of the program finished (shown with the figures).
func (p *Progress) Ran() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs++
}

// Finish ends the report: the last phase is ended (endPhase), the ticks stop.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	p.endPhase()
	close(p.stop)
}

// tick is the ticker's: a line off a terminal, the bar redrawn on one (the times change).
func (p *Progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished || p.phase == "" {
		return
	}
	if p.term != nil {
		p.redraw()
		return
	}
	fmt.Fprintln(p.w, p.describe(true))
}

// redraw updates the bar, if any.
func (p *Progress) redraw() {
	if p.bar == nil {
		return
	}
	p.bar.Describe(p.describe(false))
	if p.total > 0 {
		_ = p.bar.Set(p.done)
	}
}

// endPhase ends the phase: its bar, if any, is cleared (the next phase draws on the same line),
// and a phase with a total leaves its last figures as a line, on a terminal or not, so that a log
// shows what each phase did.
func (p *Progress) endPhase() {
	if p.bar != nil {
		_ = p.bar.Clear()
		p.bar = nil
	}
	if p.total > 0 {
		fmt.Fprintln(p.w, p.describe(true))
	}
}

// describe returns the phase's figures: as a whole line (off a terminal: "scry: exploring: 846
// of 3372 crash points (25%); 14472 states judged, 0 failed, 0 findings; 6122 runs; 21s elapsed,
// ETA 40s"),
// else the bar's text after its count.
func (p *Progress) describe(line bool) string {
	now := p.now()
	var b strings.Builder
	if line {
		b.WriteString("scry: ")
	}
	b.WriteString(p.phase)
	if line && p.total > 0 {
		fmt.Fprintf(&b, ": %d of %d %s (%d%%)", p.done, p.total, p.unit, 100*p.done/p.total)
	} else if p.unit != "" {
		b.WriteString(" " + p.unit)
	}
	if p.shown {
		f := p.figures
		fmt.Fprintf(&b, "; %d states judged, %d failed, %d findings", f.States, f.Failed, f.Findings)
	}
	if p.runs > 0 {
		fmt.Fprintf(&b, "; %d runs", p.runs)
	}
	fmt.Fprintf(&b, "; %s elapsed", seconds(now.Sub(p.start)))
	if eta, ok := p.eta(now); ok {
		fmt.Fprintf(&b, ", ETA %s", seconds(eta))
	}
	return b.String()
}

// eta estimates the time left: the phase's rate so far applied to its units left, at most the
// time left to the deadline (the deadline alone before the first unit is done). ok is false when
// there is nothing to estimate from.
func (p *Progress) eta(now time.Time) (time.Duration, bool) {
	var eta time.Duration
	ok := false
	if p.total > 0 && p.done > 0 {
		spent := now.Sub(p.phaseStart)
		eta, ok = time.Duration(float64(spent)*float64(p.total-p.done)/float64(p.done)), true
	}
	if !p.deadline.IsZero() {
		left := max(p.deadline.Sub(now), 0)
		if !ok || left < eta {
			eta, ok = left, true
		}
	}
	return eta, ok
}

// seconds formats d for a progress line: "42s", "3m05s", "1h02m".
func seconds(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}
