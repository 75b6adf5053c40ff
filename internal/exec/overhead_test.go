package exec

import (
	"os"
	"path/filepath"
	"testing"
)

// The per-run costs scry adds to a run on a crash image, on a pool like mapcli btree's (160 MiB
// file, about 3 MiB of data): building the image (a fresh sparse copy, or resetting a working
// copy a run wrote a few pages of) and cleaning up after the run (the /proc scan, or the sweep
// of scry's children). `go test -bench Overhead ./internal/exec` (make bench).

func benchPool(b *testing.B) (dir, base string) {
	b.Helper()
	dir = b.TempDir()
	if d, err := os.MkdirTemp(ShmDir, "scry-bench-*"); err == nil {
		dir = d
		b.Cleanup(func() { os.RemoveAll(d) })
	}
	base = filepath.Join(dir, "base.img")
	f, err := os.Create(base)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(160 << 20); err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	for off := int64(0); off < 3<<20; off += int64(len(chunk)) {
		// Data spread over the pool, as PMDK's heap zones are.
		if _, err := f.WriteAt(chunk, off*50); err != nil {
			b.Fatal(err)
		}
	}
	return dir, base
}

func BenchmarkOverheadImageCopy(b *testing.B) {
	dir, base := benchPool(b)
	dst := filepath.Join(dir, "img")
	for b.Loop() {
		os.Remove(dst)
		if err := CopyFile(dst, base); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOverheadImageReset(b *testing.B) { benchReset(b, nil) }

// BenchmarkOverheadImageResetKept: the source's data kept in memory (Sources), as crash
// exploration keeps the consistent images its working copies are reset to.
func BenchmarkOverheadImageResetKept(b *testing.B) { benchReset(b, NewSources(64<<20)) }

func benchReset(b *testing.B, srcs *Sources) {
	dir, base := benchPool(b)
	dst := filepath.Join(dir, "img")
	if err := CopyFile(dst, base); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		// What a run does to the image: a few pages written.
		f, err := os.OpenFile(dst, os.O_RDWR, 0)
		if err != nil {
			b.Fatal(err)
		}
		for _, off := range []int64{4096, 1 << 20, 40 << 20, 100 << 20} {
			f.WriteAt([]byte("a run's store"), off)
		}
		f.Close()
		if err := srcs.Reset(dst, base); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOverheadCleanupScan(b *testing.B) {
	for b.Loop() {
		killTagged(0, "SCRY_RUN_ID=bench.none")
	}
}

func BenchmarkOverheadCleanupSweep(b *testing.B) {
	if !subreaper() {
		b.Skip("no child subreaper here")
	}
	for b.Loop() {
		sweepRun(0, 0, "SCRY_RUN_ID=bench.none")
	}
}
