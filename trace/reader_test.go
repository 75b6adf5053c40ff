package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sampleSites is the site table of the sample traces.
var sampleSites = []Site{
	{ID: 1, Kind: SiteStore, Function: "btree_insert", File: "btree.c", Line: 42, Column: 7},
	{ID: 2, Kind: SiteLoad, Function: "btree_find", File: "btree.c", Line: 17, Column: 12},
	{ID: 3, Kind: SiteFlush, Function: "persist", File: "util.h", Line: 9, Column: 3},
	{ID: 4, Kind: SiteFence, Function: "persist", File: "util.h", Line: 10, Column: 3},
	{ID: 5, Kind: SiteLibCall, Function: "main", File: "main.c", Line: 30, Column: 9, Callee: "pmem_map_file"},
	{ID: 6, Kind: SiteCall, Function: "main", File: "main.c", Line: 55, Column: 5, Callee: "btree_insert"},
	{ID: 7, Kind: SiteRange, Function: "btree_insert", File: "btree.c", Line: 50, Column: 2},
	{ID: 8, Kind: SiteNTStore, Function: "copy", File: "copy.c", Line: 5, Column: 1, Access: AccessPlain},
	{ID: 9, Kind: SiteRMW, Function: "incr", File: "atomic.c", Line: 3, Column: 4, Access: AccessSeqCst},
	{ID: 10, Kind: SiteLibCall, Function: "main", File: "main.c", Line: 60, Column: 5, Callee: "pmemobj_tx_begin"},
	{ID: 11, Kind: SiteBranch, Function: "btree_insert", File: "btree.c", Line: 48, Column: 6},
}

var sampleDeps = []Dep{
	{From: 7, To: 11, Kind: DepControl},
	{From: 11, To: 2, Kind: DepValue},
	{From: 1, To: 2, Kind: DepAddress},
}

const base = 0x7f0000000000

// sampleEvents returns one event of every kind (as the Writer takes them: THREAD and CONTEXT
// records are generated from Thread and Context), forming a small complete trace.
func sampleEvents() []Event {
	return []Event{
		{Kind: KindSchedule, Text: "pm:7:3", Policy: SchedPM, Seed: 7, Depth: 3, Steps: 10000, Threads: 1},
		{Kind: KindSites, Sites: sampleSites},
		{Kind: KindDeps, Deps: sampleDeps},
		{Kind: KindStack, Stack: 1, Parent: 0, Site: 6},
		{Kind: KindRegionMap, Thread: 100, Region: 1, Addr: base, Size: 1 << 20, FileOffset: 0, Path: "/mnt/pmem/pool", Site: 5, Flags: RegionCreated},
		{Kind: KindExternalWrite, Thread: 100, Site: 5, Addr: base, Data: []byte("PMEMPOOL"), Flags: ExternalInitial},
		{Kind: KindOpBegin, Thread: 100, Op: 0, Text: "insert 1 one"},
		{Kind: KindStore, Thread: 100, Context: 1, Frames: []uint64{1}, Site: 1, Addr: base + 64, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{Kind: KindStore, Thread: 100, Context: 1, Frames: []uint64{1}, Site: 7, Addr: base + 128, Data: bytes.Repeat([]byte{0xab}, 40)},
		{Kind: KindNTStore, Thread: 100, Context: 1, Frames: []uint64{2}, Site: 8, Addr: base + 4096, Data: []byte{9, 9, 9, 9}},
		{Kind: KindLoad, Thread: 100, Context: 1, Frames: []uint64{2}, Site: 2, Addr: base + 64, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{Kind: KindFlush, Thread: 100, Context: 1, Site: 3, Addr: base + 64, Flush: FlushCLWB},
		{Kind: KindFlush, Thread: 100, Context: 1, Site: 3, Addr: base, Flush: FlushCLFLUSHOPT, Internal: true},
		{Kind: KindFlush, Thread: 100, Site: 3, Addr: base + 128, Flush: FlushCLFLUSH},
		{Kind: KindFence, Thread: 100, Site: 4, Fence: FenceSFENCE},
		{Kind: KindFence, Thread: 101, Frames: []uint64{7, 300000}, Site: 9, Fence: FenceLocked, Internal: true},
		{Kind: KindFence, Thread: 101, Site: 4, Fence: FenceMFENCE},
		{Kind: KindTxBegin, Thread: 100, Context: 1, Site: 10},
		{Kind: KindTxAdd, Thread: 100, Context: 1, Site: 10, Addr: base + 256, Size: 64, Flags: TxAddNoFlush},
		{Kind: KindAlloc, Thread: 100, Context: 1, Site: 10, Addr: base + 8192, Size: 128, Flags: AllocInTx | AllocZeroed},
		{Kind: KindFree, Thread: 100, Context: 1, Site: 10, Addr: base + 8192, Flags: AllocInTx},
		{Kind: KindTxAbort, Thread: 100, Context: 1, Site: 10, Errnum: 12},
		{Kind: KindTxCommit, Thread: 100, Context: 1, Site: 10},
		{Kind: KindTxEnd, Thread: 100, Context: 1, Site: 10},
		{Kind: KindExternalWrite, Thread: 100, Site: 10, Addr: base + 512, Data: []byte{0xff, 0xee}, Flags: ExternalPersisted},
		{Kind: KindWarning, Thread: 100, Text: "more than 64 PM regions; the rest are not traced"},
		{Kind: KindPMExclude, Thread: 100, Site: 10, Addr: base + 576, Size: 8},
		{Kind: KindPMExclude, Thread: 100, Site: 10, Addr: base + 576, Size: 8, Flags: PMInclude},
		{Kind: KindSetClean, Thread: 100, Site: 10, Addr: base + 64, Size: 16},
		{Kind: KindTxIgnore, Thread: 101, Site: 10, Addr: base + 640, Size: 64},
		{Kind: KindFSOp, Thread: 100, Site: 10, FS: FSOpen, FSFlags: FSCreate | FSTrunc | FSWriteOnly, Handle: 1, Result: 3, Path: "/w/out"},
		{Kind: KindFSOp, Thread: 100, Site: 10, FS: FSWrite, Handle: 1, FileOffset: 4096, Size: 3, Result: 3, Data: []byte("abc")},
		{Kind: KindFSOp, Thread: 101, Site: 4, FS: FSRename, FSFlags: FSNoReplace, Path: "/w/out", Path2: "/w/new"},
		{Kind: KindOutput, Thread: 100, Site: 10, Handle: 1, Data: []byte("saved\n")},
		{Kind: KindSync, Thread: 100, Sync: SyncCreate, Object: 101},
		{Kind: KindSync, Thread: 101, Sync: SyncLock, Object: base - 64, Site: 6},
		{Kind: KindSync, Thread: 100, Sync: SyncJoin, Object: 101},
		{Kind: KindOpEnd, Thread: 100, Op: 0},
		{Kind: KindRegionUnmap, Thread: 100, Region: 1, Site: 5},
		{Kind: KindSchedule, Thread: 100, Text: "pm:7:3", Policy: SchedPM, Seed: 7, Depth: 3, Steps: 10000, Flags: SchedEnd,
			Points: 41, Switches: 12, Threads: 2, Timed: 1},
		{Kind: KindEnd, Thread: 100, How: EndExit, Status: 0},
	}
}

func writeTrace(t testing.TB, evs []Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, 64)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatalf("writing event %d (%v): %v", i, evs[i].Kind, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every record, copying events, until an error (io.EOF included).
func readAll(r *Reader) ([]Event, error) {
	var out []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		c := *ev
		c.Data = bytes.Clone(ev.Data)
		c.Sites = append([]Site(nil), ev.Sites...)
		c.Deps = append([]Dep(nil), ev.Deps...)
		out = append(out, c)
	}
}

// normalize strips what the reader fills in but the writer ignores, for comparisons.
func normalize(ev Event) Event {
	ev.Index = 0
	if len(ev.Data) == 0 {
		ev.Data = nil
	}
	if len(ev.Sites) == 0 {
		ev.Sites = nil
	}
	if len(ev.Deps) == 0 {
		ev.Deps = nil
	}
	if len(ev.Frames) == 0 {
		ev.Frames = nil
	}
	switch ev.Kind {
	case KindStore, KindNTStore, KindLoad, KindExternalWrite:
		ev.Size = uint64(len(ev.Data))
	}
	return ev
}

func TestRoundTripEveryKind(t *testing.T) {
	want := sampleEvents()
	seen := map[Kind]bool{}
	for _, ev := range want {
		seen[ev.Kind] = true
	}
	for k := KindSites; k <= KindLast; k++ {
		if !seen[k] && k != KindThread && k != KindContext && k != KindFrame {
			t.Errorf("sample trace lacks a %v record", k)
		}
	}
	for _, size := range []int{HeaderSize, 17, 64, 1000, DefaultBufferSize} {
		data := writeTrace(t, want)
		r, err := newReaderSize(bytes.NewReader(data), size)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(r)
		if err != io.EOF {
			t.Fatalf("buffer %d: got error %v, want io.EOF", size, err)
		}
		compareWritten(t, fmt.Sprintf("buffer %d", size), got, want)
		if how, st, ok := r.End(); !ok || how != EndExit || st != 0 {
			t.Errorf("End() = %v %v %v", how, st, ok)
		}
		if !reflect.DeepEqual(r.Deps(), sampleDeps) {
			t.Errorf("Deps() = %+v", r.Deps())
		}
		if r.Header() != (Header{Version: Version, LineSize: 64}) {
			t.Errorf("Header() = %+v", r.Header())
		}
		if r.Offset() != int64(len(data)) {
			t.Errorf("Offset() = %d, want %d", r.Offset(), len(data))
		}
		if s, ok := r.Site(5); !ok || s != sampleSites[4] {
			t.Errorf("Site(5) = %+v %v", s, ok)
		}
		if _, ok := r.Site(12); ok {
			t.Error("Site(12) found")
		}
		if !reflect.DeepEqual(r.Sites(), sampleSites) {
			t.Errorf("Sites() = %+v", r.Sites())
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("Next after EOF: %v", err)
		}
	}
}

// compareWritten compares the events read back (got) with those written (want), after dropping
// the THREAD, CONTEXT and FRAME records the writer generated and checking indexes.
func compareWritten(t *testing.T, what string, got, want []Event) {
	t.Helper()
	var evs []Event
	for i, ev := range got {
		if ev.Index != uint64(i) {
			t.Fatalf("%s: record %d has Index %d", what, i, ev.Index)
		}
		if ev.Kind != KindThread && ev.Kind != KindContext && ev.Kind != KindFrame {
			evs = append(evs, ev)
		}
	}
	if len(evs) != len(want) {
		t.Fatalf("%s: read %d events, want %d", what, len(evs), len(want))
	}
	for i := range want {
		w := normalize(want[i])
		g := normalize(evs[i])
		switch w.Kind {
		case KindSites, KindStack, KindEnd, KindDeps: // carry the current thread/context, unspecified in want
			w.Thread, w.Context, w.Frames = g.Thread, g.Context, g.Frames
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: event %d:\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}

// TestRoundTripTable checks each kind alone, field by field, including extreme values.
func TestRoundTripTable(t *testing.T) {
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	tests := []struct {
		name string
		ev   Event
	}{
		{"store", Event{Kind: KindStore, Site: 1, Addr: 0x1000, Data: []byte{1}}},
		{"store-empty", Event{Kind: KindStore, Site: 1, Addr: 0x1000}},
		{"store-big", Event{Kind: KindStore, Site: 1, Addr: 0x1000, Data: big}},
		{"store-top-address", Event{Kind: KindStore, Site: 1, Addr: ^uint64(0) - 7, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}},
		{"nt-store", Event{Kind: KindNTStore, Site: 1 << 31, Addr: 8, Data: []byte{1, 2}}},
		{"load", Event{Kind: KindLoad, Site: 2, Addr: 0x40, Data: []byte{0, 0, 0, 0}}},
		{"external", Event{Kind: KindExternalWrite, Site: 0, Addr: 0x40, Data: []byte{5}, Flags: 3}},
		{"flush-clflush", Event{Kind: KindFlush, Site: 3, Addr: 0x80, Flush: FlushCLFLUSH}},
		{"flush-clflushopt-internal", Event{Kind: KindFlush, Site: 3, Addr: 0x80, Flush: FlushCLFLUSHOPT, Internal: true}},
		{"flush-clwb", Event{Kind: KindFlush, Site: 3, Addr: 0, Flush: FlushCLWB}},
		{"fence-sfence", Event{Kind: KindFence, Site: 4, Fence: FenceSFENCE}},
		{"fence-mfence-internal", Event{Kind: KindFence, Site: 4, Fence: FenceMFENCE, Internal: true}},
		{"fence-locked", Event{Kind: KindFence, Site: 4, Fence: FenceLocked}},
		{"region-map", Event{Kind: KindRegionMap, Region: 7, Addr: 1 << 46, Size: 160 << 20, FileOffset: 4096, Path: "/tmp/pool with space", Site: 5, Flags: 1}},
		{"region-unmap", Event{Kind: KindRegionUnmap, Region: 7, Site: 5}},
		{"tx-begin", Event{Kind: KindTxBegin, Site: 10}},
		{"tx-add", Event{Kind: KindTxAdd, Site: 10, Addr: 99, Size: 1 << 40, Flags: TxAddNoSnapshot}},
		{"tx-commit", Event{Kind: KindTxCommit, Site: 10}},
		{"tx-abort", Event{Kind: KindTxAbort, Site: 10, Errnum: ^uint64(0)}},
		{"tx-end", Event{Kind: KindTxEnd, Site: 10}},
		{"alloc", Event{Kind: KindAlloc, Site: 10, Addr: 0x2000, Size: 64, Flags: AllocZeroed}},
		{"free", Event{Kind: KindFree, Site: 10, Addr: 0x2000, Flags: AllocInTx}},
		{"op-begin", Event{Kind: KindOpBegin, Op: 3, Text: "get ключ"}},
		{"op-begin-max-text", Event{Kind: KindOpBegin, Op: 3, Text: strings.Repeat("x", MaxString)}},
		{"op-end", Event{Kind: KindOpEnd, Op: 3}},
		{"thread", Event{Kind: KindThread, Thread: 4000000000}},
		{"context", Event{Kind: KindContext, Stack: 0}},
		{"end-exit", Event{Kind: KindEnd, How: EndExit, Status: 3}},
		{"end-signal", Event{Kind: KindEnd, How: EndSignal, Status: 11}},
		{"end-negative", Event{Kind: KindEnd, How: EndExit, Status: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{HeaderSize, DefaultBufferSize} {
				evs := []Event{tt.ev}
				if tt.ev.Kind != KindEnd {
					evs = append(evs, Event{Kind: KindEnd, Thread: tt.ev.Thread, How: EndExit})
				}
				data := writeTrace(t, evs)
				r, err := newReaderSize(bytes.NewReader(data), size)
				if err != nil {
					t.Fatal(err)
				}
				got, err := readAll(r)
				if err != io.EOF {
					t.Fatalf("error %v, want io.EOF", err)
				}
				if len(got) != len(evs) {
					t.Fatalf("read %d records, want %d", len(got), len(evs))
				}
				w, g := normalize(tt.ev), normalize(got[0])
				if tt.ev.Kind == KindContext {
					w.Context = w.Stack
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("\n got %+v\nwant %+v", trimEv(g), trimEv(w))
				}
			}
		})
	}
}

func trimEv(ev Event) Event {
	if len(ev.Data) > 16 {
		ev.Data = ev.Data[:16]
	}
	if len(ev.Text) > 16 {
		ev.Text = ev.Text[:16]
	}
	return ev
}

// TestThreadContexts checks that each thread keeps its own call stack across switches.
func TestThreadContexts(t *testing.T) {
	evs := []Event{
		{Kind: KindSites, Sites: sampleSites},
		{Kind: KindStack, Stack: 1, Site: 6},
		{Kind: KindStack, Stack: 2, Parent: 1, Site: 6},
		{Kind: KindStack, Stack: 3, Parent: 2, Site: 5},
		{Kind: KindFence, Thread: 1, Context: 3, Site: 4, Fence: FenceSFENCE},
		{Kind: KindFence, Thread: 2, Context: 0, Site: 4, Fence: FenceSFENCE},
		{Kind: KindFence, Thread: 2, Context: 1, Site: 4, Fence: FenceSFENCE},
		{Kind: KindFence, Thread: 1, Context: 3, Site: 4, Fence: FenceSFENCE},
		{Kind: KindFence, Thread: 2, Context: 1, Site: 4, Fence: FenceSFENCE},
		{Kind: KindEnd, How: EndExit},
	}
	data := writeTrace(t, evs)
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(r)
	if err != io.EOF {
		t.Fatal(err)
	}
	var fences []Event
	kinds := ""
	for _, ev := range got {
		kinds += ev.Kind.String()[:2] + " "
		if ev.Kind == KindFence {
			fences = append(fences, ev)
		}
	}
	// Switching back to thread 1 must not need a CONTEXT record: thread 1 kept node 3.
	if want := "SI ST ST ST TH CO FE TH FE CO FE TH FE TH FE EN "; kinds != want {
		t.Errorf("records %q, want %q", kinds, want)
	}
	for i, want := range [][2]uint32{{1, 3}, {2, 0}, {2, 1}, {1, 3}, {2, 1}} {
		if fences[i].Thread != want[0] || fences[i].Context != want[1] {
			t.Errorf("fence %d: thread %d context %d, want %v", i, fences[i].Thread, fences[i].Context, want)
		}
	}
	if s := r.StackOf(3); !reflect.DeepEqual(s, []uint32{6, 6, 5}) {
		t.Errorf("StackOf(3) = %v", s)
	}
	if s := r.StackOf(0); s != nil {
		t.Errorf("StackOf(0) = %v", s)
	}
	if s := r.StackOf(9); s != nil {
		t.Errorf("StackOf(9) = %v", s)
	}
}

// TestTruncatedEverywhere cuts the sample trace at every byte offset: the reader must deliver
// every complete record, then report ErrTruncated (ErrNotTrace alone inside the header).
func TestTruncatedEverywhere(t *testing.T) {
	data := writeTrace(t, sampleEvents())
	r, _ := NewReader(bytes.NewReader(data))
	full, err := readAll(r)
	if err != io.EOF {
		t.Fatal(err)
	}
	// ends[i] is the offset after record i.
	var ends []int64
	{
		r, _ := NewReader(bytes.NewReader(data))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			ends = append(ends, r.Offset())
		}
	}
	for cut := 0; cut < len(data); cut++ {
		for _, size := range []int{HeaderSize, 100, DefaultBufferSize} {
			r, err := newReaderSize(bytes.NewReader(data[:cut]), size)
			if cut < HeaderSize {
				if !errors.Is(err, ErrNotTrace) {
					t.Fatalf("cut %d: NewReader error %v, want ErrNotTrace", cut, err)
				}
				if errors.Is(err, ErrTruncated) {
					t.Fatalf("cut %d: NewReader error %v is also ErrTruncated: a file without a header is no trace, not a cut one", cut, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
			got, err := readAll(r)
			if !errors.Is(err, ErrTruncated) {
				t.Fatalf("cut %d: error %v, want ErrTruncated", cut, err)
			}
			want := 0
			for want < len(ends) && ends[want] <= int64(cut) {
				want++
			}
			if len(got) != want {
				t.Fatalf("cut %d: %d records delivered, want %d", cut, len(got), want)
			}
			for i := range got {
				if !reflect.DeepEqual(normalize(got[i]), normalize(full[i])) {
					t.Fatalf("cut %d: record %d differs", cut, i)
				}
			}
			start := int64(HeaderSize) // where the cut record starts
			if want > 0 {
				start = ends[want-1]
			}
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset != start || fe.Record != uint64(want) {
				t.Fatalf("cut %d: error %#v, want offset %d record %d", cut, err, start, want)
			}
			if _, err2 := r.Next(); err2 != err {
				t.Fatalf("cut %d: error not sticky: %v then %v", cut, err, err2)
			}
		}
	}
}

func header() []byte {
	h := make([]byte, HeaderSize)
	copy(h, Magic)
	binary.LittleEndian.PutUint16(h[8:], Version)
	binary.LittleEndian.PutUint32(h[12:], 64)
	return h
}

func TestHeaderErrors(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrNotTrace, "not a scry trace: the file is empty"},
		{"short text", []byte("hello\n"), ErrNotTrace, "the file of 6 bytes is shorter than the 16-byte header"},
		{"magic prefix", []byte("SCRYTRC"), ErrNotTrace, "not a scry trace: the file of 7 bytes ends inside the 16-byte header"},
		{"text", []byte("hello, this is not a trace at all"), ErrNotTrace, `not a scry trace: it begins with "hello, t", not the magic`},
		{"version", func() []byte { h := header(); h[8] = 12; return h }(), ErrVersion, "version 12; this scry reads versions 1 to 11"},
		{"line-size", func() []byte { h := header(); h[12] = 48; return h }(), ErrCorrupt, "cache-line size 48"},
		{"line-size-zero", func() []byte { h := header(); h[12] = 0; return h }(), ErrCorrupt, "cache-line size 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(tt.data))
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
}

func uv(v uint64) []byte { return binary.AppendUvarint(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestCorrupt(t *testing.T) {
	overflow := bytes.Repeat([]byte{0xff}, 10)
	tests := []struct {
		name   string
		body   []byte
		msg    string
		offset int64
	}{
		{"unknown-kind", []byte{0x7f}, "unknown record kind 0x7f", 16},
		{"kind-zero", []byte{0x00}, "unknown record kind 0x00", 16},
		{"reserved-kind", cat([]byte{0x02, 0x01}, []byte{0x40}), "unknown record kind 0x40", 18},
		{"varint-overflow", cat([]byte{0x05}, overflow), "varint overflow in the site", 16},
		{"varint-overflow-10th", cat([]byte{0x02}, bytes.Repeat([]byte{0x80}, 9), []byte{0x02}), "varint overflow", 16},
		{"site-32bit", cat([]byte{0x05}, uv(1<<32)), "exceeds 32 bits", 16},
		{"payload-limit", cat([]byte{0x05, 1, 0}, uv(MaxPayload+1)), "exceeds the 67108864-byte limit", 16},
		{"string-limit", cat([]byte{0x12, 0}, uv(MaxString+1)), "exceeds the 65536-byte limit", 16},
		{"flush-kind", []byte{0x08, 1, 8, 0}, "unknown FLUSH kind 8", 16},
		{"fence-kind", []byte{0x09, 1, 0x80}, "unknown FENCE kind 0", 16},
		{"end-kind", []byte{0x16, 3, 0}, "unknown END how 3", 16},
		{"after-end", []byte{0x16, 1, 0, 0x09, 1, 1}, "data after the END record", 19},
		{"stack-zero", []byte{0x14, 0, 0, 1}, "node 0", 16},
		{"stack-parent", []byte{0x14, 1, 2, 1}, "undefined node 2", 16},
		{"stack-dup", []byte{0x14, 1, 0, 1, 0x14, 1, 0, 1}, "defined twice", 20},
		{"sites-limit", cat([]byte{0x01}, uv(MaxSites+1)), "exceeds the limit", 16},
		{"sites-count-overflow", cat([]byte{0x01}, overflow), "varint overflow in the count of a SITES record", 16},
		{"site-zero", []byte{0x01, 1, 0, 1, 0, 0, 0, 0, 0}, "bad site id 0", 18},
		{"site-kind", []byte{0x01, 1, 1, 14, 0, 0, 0, 0, 0, 0}, "unknown site kind 14", 18},
		{"site-inlined-self", []byte{0x01, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0}, "site 1: bad inlined-at site 1", 18},
		{"site-dup", []byte{0x01, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0}, "site 1 defined twice", 27},
		{"site-dup-later", []byte{0x01, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0x01, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, "site 1 defined twice", 29},
		{"site-string", cat([]byte{0x01, 1, 1, 1}, uv(MaxString+1)), "function of 65537 bytes in a site", 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{HeaderSize, DefaultBufferSize} {
				r, err := newReaderSize(bytes.NewReader(cat(header(), tt.body)), size)
				if err != nil {
					t.Fatal(err)
				}
				_, err = readAll(r)
				var fe *FormatError
				if !errors.Is(err, ErrCorrupt) || !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("error %v, want ErrCorrupt containing %q", err, tt.msg)
				}
				if fe.Offset != tt.offset {
					t.Errorf("offset %d, want %d (%v)", fe.Offset, tt.offset, err)
				}
			}
		})
	}
}

type errReader struct{ data []byte }

var errDisk = errors.New("disk on fire")

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, errDisk
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

func TestIOError(t *testing.T) {
	data := writeTrace(t, sampleEvents())
	r, err := NewReader(&errReader{data: data[:100]})
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(r)
	if !errors.Is(err, errDisk) || errors.Is(err, ErrTruncated) {
		t.Fatalf("error %v, want the I/O error", err)
	}
}

func TestWriterErrors(t *testing.T) {
	if _, err := NewWriter(io.Discard, 48); err == nil {
		t.Error("NewWriter accepted line size 48")
	}
	bad := []Event{
		{Kind: 0x40},
		{Kind: KindStore, Size: 3, Data: []byte{1}},
		{Kind: KindFlush, Flush: 8},
		{Kind: KindFence},
		{Kind: KindEnd},
		{Kind: KindStack},
		{Kind: KindSites, Sites: []Site{{ID: 0}}},
		{Kind: KindOpBegin, Text: strings.Repeat("x", MaxString+1)},
		{Kind: KindRegionMap, Path: strings.Repeat("x", MaxString+1)},
	}
	for _, ev := range bad {
		w, _ := NewWriter(io.Discard, 64)
		if err := w.Write(&ev); err == nil {
			t.Errorf("Write(%+v) succeeded", trimEv(ev))
		}
	}
	w, _ := NewWriter(io.Discard, 64)
	w.Write(&Event{Kind: KindEnd, How: EndExit})
	if err := w.Write(&Event{Kind: KindFence, Fence: FenceSFENCE}); err == nil {
		t.Error("Write after END succeeded")
	}
}

// benchTrace builds a trace of the n small events of benchEvents.
func benchTrace(tb testing.TB, n int) []byte {
	return writeTrace(tb, benchEvents(n))
}

func BenchmarkReader(b *testing.B) {
	const n = 1 << 20
	data := benchTrace(b, n)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for range b.N {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Next()
			if err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(len(data))/float64(n), "bytes/event")
}

func TestReaderNoAllocs(t *testing.T) {
	data := benchTrace(t, 10000)
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for range 100 { // past the SITES and REGION_MAP records
		r.Next()
	}
	allocs := testing.AllocsPerRun(5000, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per event, want 0", allocs)
	}
}

// TestProjectRoots: the unit sites' roots, each once, in order of definition, across SITES
// records (a module loaded later adds its own); a unit site without a root adds none.
func TestProjectRoots(t *testing.T) {
	unit := func(id uint32, file, root string) Site {
		return Site{ID: id, Kind: SiteUnit, File: file, Callee: root}
	}
	data := writeTrace(t, []Event{
		{Kind: KindSites, Sites: []Site{sampleSites[0], unit(20, "/src/a/main.c", "/src/a"), unit(21, "/src/a/lib.c", "/src/a")}},
		{Kind: KindSites, Sites: []Site{unit(22, "/opt/plugin/p.c", "/opt/plugin"), unit(23, "x.c", "")}},
		{Kind: KindEnd, How: EndExit},
	})
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.ProjectRoots(); len(got) != 0 {
		t.Errorf("before any SITES record: %q", got)
	}
	if _, err := readAll(r); err != io.EOF {
		t.Fatal(err)
	}
	if got, want := r.ProjectRoots(), []string{"/src/a", "/opt/plugin"}; !slices.Equal(got, want) {
		t.Errorf("roots %q, want %q", got, want)
	}
}
