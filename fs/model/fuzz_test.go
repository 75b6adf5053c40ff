package model

import (
	"bytes"
	"testing"

	"github.com/scry-pm/scry/trace"
)

// FuzzBuildModel builds the model of a file and a directory with two FS_OP records of any
// kind, flags, offsets and sizes after them, and every persistence model's micro-operations:
// BuildModel must never panic, whatever the values (a trace that passes the reader's checks).
func FuzzBuildModel(f *testing.F) {
	f.Add(uint8(trace.FSWrite), uint32(trace.FSDataSync), uint64(2), uint64(3), int64(3), uint8(trace.FSCopyFileRange), uint32(0), uint64(1), uint64(1), int64(2))
	f.Add(uint8(trace.FSFallocate), uint32(trace.FSZeroRange), uint64(1<<62), uint64(1<<62), int64(0), uint8(trace.FSLink), uint32(0), uint64(0), uint64(0), int64(0))
	f.Add(uint8(trace.FSOpen), uint32(trace.FSTmpfile), uint64(0), uint64(0), int64(0), uint8(trace.FSCopyFileRange), uint32(0), uint64(0), uint64(1<<63-1), int64(1<<63-1))
	f.Fuzz(func(t *testing.T, k1 uint8, f1 uint32, o1, s1 uint64, r1 int64, k2 uint8, f2 uint32, o2, s2 uint64, r2 int64) {
		base := t.TempDir()
		var buf bytes.Buffer
		w, err := trace.NewWriter(&buf, 64)
		if err != nil {
			t.Fatal(err)
		}
		evs := []*trace.Event{
			{Kind: trace.KindFSOp, FS: trace.FSOpen, FSFlags: trace.FSCreate | trace.FSWriteOnly, Handle: 1, Path: "/w/a"},
			{Kind: trace.KindFSOp, FS: trace.FSWrite, Handle: 1, Path: "/w/a", Data: []byte("hello")},
		}
		for _, e := range []struct {
			k   uint8
			fl  uint32
			o   uint64
			s   uint64
			r   int64
			ind int
		}{{k1, f1, o1, s1, r1, 0}, {k2, f2, o2, s2, r2, 1}} {
			kind := trace.FSOpKind(e.k%uint8(trace.FSOpLast) + 1)
			evs = append(evs, &trace.Event{Kind: trace.KindFSOp, FS: kind, FSFlags: e.fl & trace.FSFlagsAll, Handle: uint64(1 + e.ind), Path: "/w/a",
				Path2: "/w/b", FileOffset: e.o, Size: e.s, Result: e.r, Data: []byte("xy")})
		}
		for _, ev := range evs {
			if err := w.Write(ev); err != nil {
				return // the writer refuses it: not a trace
			}
		}
		if err := w.Write(&trace.Event{Kind: trace.KindEnd, How: trace.EndExit}); err != nil {
			return
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReader(&buf)
		if err != nil {
			return
		}
		m, err := BuildModel(base, "/w", r)
		if err != nil {
			return
		}
		for _, a := range APMs() {
			for _, sp := range append([]Split{a.Base}, a.Splits...) {
				ms := a.Build(m, sp)
				if len(ms) < 64 {
					st := State{Persisted: make([]bool, len(ms))}
					for _, b := range APMs() {
						LegalUnder(m, ms, st, len(m.Ops)-1, b, nil)
					}
				}
			}
		}
	})
}
