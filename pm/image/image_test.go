package image_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

const (
	base     = 0x7f0000000000
	PageSize = image.PageSize
)

// replayAll replays evs (without END) into a fresh image and returns its replayer.
func replayAll(t *testing.T, evs []trace.Event) *image.Replayer {
	t.Helper()
	m, err := replay.New[struct{}](build(t, evs, false), replay.Options[struct{}]{Image: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(replay.Nop{}); err != nil && !errors.Is(err, trace.ErrTruncated) {
		t.Fatal(err)
	}
	if w := m.Warnings(); len(w) > 0 {
		t.Fatalf("warnings: %q", w)
	}
	return m.Image
}

// build writes evs (plus an END record when end) with trace.Writer and returns a Reader on it.
func build(t *testing.T, evs []trace.Event, end bool) *trace.Reader {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, 64)
	if err != nil {
		t.Fatal(err)
	}
	if end {
		evs = append(evs, trace.Event{Kind: trace.KindEnd, How: trace.EndExit})
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mapEv(id uint32, addr, length, off uint64, path string) trace.Event {
	return trace.Event{Kind: trace.KindRegionMap, Region: id, Addr: addr, Size: length, FileOffset: off, Path: path}
}

func store(addr uint64, data ...byte) trace.Event {
	return trace.Event{Kind: trace.KindStore, Addr: addr, Data: data}
}

func ext(addr uint64, flags uint8, data []byte) trace.Event {
	return trace.Event{Kind: trace.KindExternalWrite, Addr: addr, Data: data, Flags: flags}
}

func unmap(id uint32) trace.Event { return trace.Event{Kind: trace.KindRegionUnmap, Region: id} }

func TestReplayerReadAt(t *testing.T) {
	evs := []trace.Event{
		mapEv(1, base, 3*PageSize+100, 0, "/p"),
		store(base+PageSize-2, 1, 2, 3, 4), // straddles pages 0 and 1
		{Kind: trace.KindNTStore, Addr: base + 3*PageSize + 98, Data: []byte{9, 9}},
		store(base+2*PageSize, 0, 0, 0),                         // zeros: no page allocated
		{Kind: trace.KindLoad, Addr: base + 8, Data: []byte{7}}, // ignored
	}
	rp := replayAll(t, evs)
	g := rp.Regions()[0]
	if pages := g.TouchedPages(); len(pages) != 3 || pages[0] != 0 || pages[1] != 1 || pages[2] != 3 {
		t.Errorf("TouchedPages = %v", pages)
	}
	p := make([]byte, 6)
	if n, err := g.ReadAt(p, PageSize-3); n != 6 || err != nil || !bytes.Equal(p, []byte{0, 1, 2, 3, 4, 0}) {
		t.Errorf("ReadAt = %d %v %v", n, err, p)
	}
	if n, err := g.ReadAt(p, 3*PageSize+96); n != 4 || err != io.EOF || !bytes.Equal(p[:4], []byte{0, 0, 9, 9}) {
		t.Errorf("ReadAt at the end = %d %v %v", n, err, p)
	}
	if _, err := g.ReadAt(p, 3*PageSize+100); err != io.EOF {
		t.Errorf("ReadAt past the end: %v", err)
	}
	if _, err := g.ReadAt(p, -1); err == nil {
		t.Error("ReadAt(-1) succeeded")
	}
	if g.Page(2) != nil {
		t.Error("page 2 allocated for zero bytes")
	}
}

// TestGenerations checks Advance and PagesWrittenSince, which incremental crash images use.
func TestGenerations(t *testing.T) {
	rp := image.NewReplayer()
	g := rp.Map(1, base, 4*PageSize, 0, "/p", false, 0)
	rp.Write(base, []byte{1})
	gen := rp.Advance()
	rp.Write(base+2*PageSize, []byte{2})
	rp.Write(base+3*PageSize-1, []byte{3, 3}) // pages 2 and 3
	if got := g.PagesWrittenSince(gen); len(got) != 2 || got[0]+got[1] != 5 {
		t.Errorf("pages written since %d: %v, want 2 and 3", gen, got)
	}
	if rp.Write(base+4*PageSize-1, []byte{1, 2}) || rp.Write(2*base, []byte{1}) {
		t.Error("a write past the region or outside it was applied")
	}
	rp.Unmap(1, 9)
	if g.Mapped || g.UnmapIndex != 9 || rp.RegionAt(base) != nil {
		t.Errorf("after Unmap: %+v", g)
	}
}

// pool writes a file of size bytes: content at off, zeros elsewhere.
func pool(t *testing.T, dir, name string, size int, at map[int][]byte) string {
	t.Helper()
	b := make([]byte, size)
	for off, c := range at {
		copy(b[off:], c)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVerify(t *testing.T) {
	dir := t.TempDir()
	const size = 1 << 20
	header := []byte("PMEMPOOL")
	good := pool(t, dir, "good", size, map[int][]byte{0: header, 70000: {1, 2, 3, 4, 5, 6, 7, 8}, size - 2: {0xaa, 0xbb}})
	bad := pool(t, dir, "bad", size, map[int][]byte{0: header, 70000: {1, 2, 3, 4, 5, 6, 7, 9}, 900000: {1}})
	short := pool(t, dir, "short", size/2, map[int][]byte{0: header})
	// A file of 3 pages mapped from its second page for 1 page.
	offset := pool(t, dir, "offset", 3*PageSize, map[int][]byte{10: {0xff}, PageSize + 5: {0x42}, 2*PageSize + 1: {0xff}})
	writes := func(path string, id uint32, addr uint64) []trace.Event {
		return []trace.Event{
			mapEv(id, addr, size, 0, path),
			ext(addr, trace.ExternalInitial, header),
			store(addr+70000, 1, 2, 3, 4, 5, 6, 7, 8),
			ext(addr+size-2, trace.ExternalPersisted, []byte{0xaa, 0xbb}),
		}
	}
	var evs []trace.Event
	evs = append(evs, writes(good, 1, base)...)
	evs = append(evs, writes(bad, 2, 2*base)...)
	evs = append(evs, mapEv(3, 3*base, size, 0, short), ext(3*base, trace.ExternalInitial, header))
	evs = append(evs, mapEv(4, 4*base, size, 0, filepath.Join(dir, "missing")))
	evs = append(evs, mapEv(5, 5*base, PageSize, PageSize, offset), store(5*base+5, 0x42))
	res, err := replay.Verify(build(t, evs, true), image.VerifyOptions{ChunkSize: 3 * PageSize})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !res.Complete || len(res.Regions) != 5 || len(res.Warnings) != 0 {
		t.Fatalf("result %+v", res)
	}
	want := []struct {
		ok        bool
		compared  int64
		differing int64
		first     int64
		err       string
	}{
		{true, size, 0, -1, ""},
		{false, size, 4, 70007, ""},
		{false, size / 2, size / 2, size / 2, "shorter than the mapped range"},
		{false, 0, size, 0, "no such file"},
		{true, PageSize, 0, -1, ""},
	}
	for i, w := range want {
		rr := res.Regions[i]
		errText := ""
		if rr.Err != nil {
			errText = rr.Err.Error()
		}
		if rr.OK != w.ok || rr.Compared != w.compared || rr.Differing != w.differing || rr.FirstDiff != w.first ||
			(w.err == "") != (rr.Err == nil) || !strings.Contains(errText, w.err) {
			t.Errorf("region %d (%s): %+v, want %+v", i, rr.Path, rr, w)
		}
	}
	var out bytes.Buffer
	res.Write(&out)
	for _, s := range []string{"ok       " + good, "MISMATCH " + bad + ": 4 of 1048576 bytes differ, first at file offset 70007",
		"ERROR    " + filepath.Join(dir, "missing"), "FAILED: 5 regions"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}

// TestVerifyReopen: a pool mapped, written, closed and mapped again (its content re-sent as
// initial EXTERNAL_WRITEs) is checked against its last mapping only.
func TestVerifyReopen(t *testing.T) {
	dir := t.TempDir()
	path := pool(t, dir, "pool", 2*PageSize, map[int][]byte{0: {1, 2}, PageSize: {7}})
	evs := []trace.Event{
		mapEv(1, base, 2*PageSize, 0, path),
		store(base, 1, 2),
		store(base+PageSize, 3), // overwritten in the second run
		unmap(1),
		mapEv(2, 2*base, 2*PageSize, 0, path),
		ext(2*base, trace.ExternalInitial, []byte{1, 2}),
		ext(2*base+PageSize, trace.ExternalInitial, []byte{3}),
		store(2*base+PageSize, 7),
	}
	res, err := replay.Verify(build(t, evs, true), image.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || len(res.Regions) != 1 || res.Regions[0].Region != 2 {
		t.Errorf("result %+v", res)
	}
}

func TestVerifyPathMapAndTruncated(t *testing.T) {
	dir := t.TempDir()
	moved := pool(t, dir, "moved", PageSize, map[int][]byte{100: {5}})
	evs := []trace.Event{
		mapEv(1, base, PageSize, 0, "/mnt/pmem/original"),
		store(base+100, 5),
		store(base+PageSize, 1), // outside: a replay error, counted
	}
	res, err := replay.Verify(build(t, evs, false), image.VerifyOptions{PathMap: map[string]string{"/mnt/pmem/original": moved}})
	if !errors.Is(err, trace.ErrTruncated) {
		t.Fatalf("error %v, want ErrTruncated", err)
	}
	if res == nil || len(res.Regions) != 1 || !res.Regions[0].OK || res.Regions[0].File != moved || res.Complete {
		t.Fatalf("result %+v", res)
	}
	if res.OK || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "outside every mapped PM region") {
		t.Errorf("the inconsistent write is not reported: %+v", res)
	}
}

// TestVerifySparseLarge checks a 160 MiB pool with few writes: memory follows touched pages.
func TestVerifySparseLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 160 MiB sparse file")
	}
	dir := t.TempDir()
	const size = 160 << 20
	path := filepath.Join(dir, "big")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(size)
	f.WriteAt([]byte{1, 2, 3}, size-3)
	f.WriteAt([]byte{4}, 12345678)
	f.Close()
	evs := []trace.Event{mapEv(1, base, size, 0, path), store(base+size-3, 1, 2, 3), store(base+12345678, 4)}
	rp := replayAll(t, evs)
	if n := len(rp.Regions()[0].TouchedPages()); n != 2 {
		t.Errorf("%d pages held, want 2", n)
	}
	res, err := replay.Verify(build(t, evs, true), image.VerifyOptions{})
	if err != nil || !res.OK {
		t.Fatalf("%+v %v", res, err)
	}
}
