package trace

import (
	"bytes"
	"io"
	"testing"
)

// TestReaderSchedule: the reader keeps the last SCHEDULE record it read, the one after the
// header until the one before END arrives; a trace without one has none.
func TestReaderSchedule(t *testing.T) {
	r, err := NewReader(bytes.NewReader(writeTrace(t, sampleEvents())))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Schedule(); ok {
		t.Fatal("a schedule before any record")
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	first := Schedule{Spec: "pm:7:3", Policy: SchedPM, Seed: 7, Depth: 3, Steps: 10000, Threads: 1}
	if s, ok := r.Schedule(); !ok || s != first || s.Replayable() {
		t.Errorf("after the first record: %+v, %v; want %+v, not replayable", s, ok, first)
	}
	if _, err := readAll(r); err != io.EOF {
		t.Fatal(err)
	}
	last := first
	last.End, last.Points, last.Switches, last.Threads, last.Timed = true, 41, 12, 2, 1
	if s, ok := r.Schedule(); !ok || s != last || s.Replayable() {
		t.Errorf("at the end: %+v, %v; want %+v, not replayable (timed)", s, ok, last)
	}
	last.Timed = 0
	if !last.Replayable() {
		t.Errorf("%+v: not replayable", last)
	}

	var plain []Event
	for _, ev := range sampleEvents() {
		if ev.Kind != KindSchedule {
			plain = append(plain, ev)
		}
	}
	r, err = NewReader(bytes.NewReader(writeTrace(t, plain)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(r); err != io.EOF {
		t.Fatal(err)
	}
	if s, ok := r.Schedule(); ok {
		t.Errorf("a trace without SCHEDULE records: schedule %+v", s)
	}
}
