package exec

import (
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestProgressLines: off a terminal, a Progress prints a line per tick and one when a phase with
// a total ends, none when a phase begins, against the phase's fixed total, with the figures, the elapsed time and an ETA from the
// phase's rate, at most the time left to the deadline; a phase without a total is a named
// ticking line; nothing is printed after Finish.
func TestProgressLines(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	var out strings.Builder
	p := newProgress(&out, nil, clock.now)
	steps := []struct {
		name string
		do   func()
		want string // the line printed ("" none)
	}{
		{"nothing before a phase", func() { clock.advance(2 * time.Second); p.tick() }, ""},
		{"planning", func() { p.Phase("planning", "", 0) }, ""},
		{"planning ticks", func() { clock.advance(10 * time.Second); p.tick() },
			"scry: planning; 12s elapsed"},
		{"exploring begins", func() { p.Phase("exploring", "crash points", 400); p.tick() },
			"scry: exploring: 0 of 400 crash points (0%); 12s elapsed"},
		{"a quarter in 10s", func() {
			clock.advance(10 * time.Second)
			p.Advance(100)
			p.Figures(Figures{States: 1500, Failed: 3, Findings: 1})
			for range 700 {
				p.Ran()
			}
			p.tick()
		}, "scry: exploring: 100 of 400 crash points (25%); 1500 states judged, 3 failed, 1 findings; 700 runs; 22s elapsed, ETA 30s"},
		{"a deadline nearer than the rate", func() {
			p.Deadline(clock.t.Add(20 * time.Second))
			clock.advance(5 * time.Second)
			p.tick()
		}, "scry: exploring: 100 of 400 crash points (25%); 1500 states judged, 3 failed, 1 findings; 700 runs; 27s elapsed, ETA 15s"},
		{"past the deadline", func() {
			clock.advance(30 * time.Second)
			p.Advance(1000) // at most the total
			p.tick()
		}, "scry: exploring: 400 of 400 crash points (100%); 1500 states judged, 3 failed, 1 findings; 700 runs; 57s elapsed, ETA 0s"},
		{"the final phase", func() { clock.advance(90 * time.Second); p.Phase("clustering findings", "", 0); p.tick() },
			"scry: exploring: 400 of 400 crash points (100%); 1500 states judged, 3 failed, 1 findings; 700 runs; 2m27s elapsed, ETA 0s\n" +
				"scry: clustering findings; 1500 states judged, 3 failed, 1 findings; 700 runs; 2m27s elapsed, ETA 0s"},
		{"finished", func() { p.Finish(); clock.advance(time.Hour); p.tick(); p.Phase("late", "", 1) }, ""},
	}
	for _, s := range steps {
		out.Reset()
		s.do()
		if got := strings.TrimSuffix(out.String(), "\n"); got != s.want {
			t.Errorf("%s: printed %q, want %q", s.name, got, s.want)
		}
	}
}

// TestProgressNil: a nil Progress reports nothing.
func TestProgressNil(t *testing.T) {
	var none *Progress // a nil Progress reports nothing
	none.Phase("x", "y", 1)
	none.Advance(1)
	none.Ran()
	none.Figures(Figures{})
	none.Deadline(time.Time{})
	none.Finish()
}

func TestSeconds(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{0, "0s"}, {1499 * time.Millisecond, "1s"}, {59 * time.Second, "59s"}, {185 * time.Second, "3m05s"}, {3720 * time.Second, "1h02m"}} {
		if got := seconds(c.d); got != c.want {
			t.Errorf("seconds(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
