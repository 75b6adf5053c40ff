package explore

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/report"
)

// TestTimeline rebuilds the timeline of testdata/ordering.c's ordering violation (slot data and
// valid flag on two cache lines, each written back with clwb, one sfence for both: the crash
// before that sfence keeps the flag and loses the data), and checks the errors of a trace that is
// gone or is not the report's.
func TestTimeline(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	r := explore(t, dir, bin, "ordering.ops", 2, 5*time.Second)
	var c *report.Crash
	for _, f := range r.Findings {
		if f.Kind == report.OrderingViolation {
			c = f.Crash
			break
		}
	}
	if c == nil {
		t.Fatal("no ordering-violation")
	}
	tl, err := Timeline(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Crash != c.Event || tl.Start > tl.Crash {
		t.Errorf("window [%d, %d], crash point at event %d", tl.Start, tl.Crash, c.Event)
	}
	if len(tl.Lines) != len(c.State) {
		t.Fatalf("%d lines, the crash state has %d", len(tl.Lines), len(c.State))
	}
	kept, lost := 0, 0
	for i, l := range tl.Lines {
		k0, l0 := kept, lost
		if l.Addr != c.Lines[i].Addr || l.Offset < 0 || l.Offset%64 != 0 {
			t.Errorf("line %d at %#x (pool offset %#x), the report says %#x", i, l.Addr, l.Offset, c.Lines[i].Addr)
		}
		flushes := 0
		for j, e := range l.Events {
			if j > 0 && e.Event < l.Events[j-1].Event || e.Event < tl.Start || e.Event >= tl.Crash {
				t.Errorf("line %#x: event %d out of order or out of the window", l.Addr, e.Event)
			}
			switch {
			case e.Kind == "flush":
				flushes++
				if e.What != "clwb" || e.Location.Line == 0 {
					t.Errorf("line %#x: flush %+v, want a clwb with its source line", l.Addr, e)
				}
			case e.Fate != report.FateDurable:
				kept += e.Kept
				lost += e.Units - e.Kept
			}
		}
		if kept-k0 != c.State[i] || lost-l0 != c.Lines[i].Units-c.State[i] {
			t.Errorf("line %#x: %d stores kept and %d lost, the state persists %d of its %d units", l.Addr, kept-k0, lost-l0, c.State[i], c.Lines[i].Units)
		}
		if flushes != 1 {
			t.Errorf("line %#x: %d flushes in the window, want its clwb", l.Addr, flushes)
		}
	}
	// The data's line comes first (address order): lost; the flag's line: kept.
	if kept != 1 || lost != 1 || len(c.State) != 2 || c.State[0] != 0 || c.State[1] != 1 {
		t.Errorf("%d stores kept and %d lost in state %v, want the flag kept and the data lost ([0 1])", kept, lost, c.State)
	}
	if len(tl.Bytes) == 0 {
		t.Error("no differing bytes")
	}
	for _, b := range tl.Bytes {
		if bytes.Equal(b.Image, b.Other) || b.Offset < 0 || b.Location.Line == 0 {
			t.Errorf("byte diff %+v: equal bytes, no pool offset or no source line", b)
		}
	}

	gone := *c
	gone.Trace = filepath.Join(dir, "no.trace")
	other := *c
	other.CrashPoint += 1000
	for _, tc := range []struct {
		name string
		c    *report.Crash
		want string
	}{
		{"trace gone", &gone, "the finding's trace"},
		{"no such crash point", &other, "has no crash point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Timeline(tc.c, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
