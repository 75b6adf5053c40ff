package exec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestResetFile: whatever a previous run left in a worker's file (bytes written over the
// pool's data and holes, a file grown or shrunk, replaced by a symbolic link or missing),
// ResetFile makes it read exactly as the source, with no data where the source has holes.
func TestResetFile(t *testing.T) {
	const size = 1 << 20
	// The source: data at 0-8 KiB, 100-104 KiB and in the last page; holes between.
	src := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "base.img")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		for _, w := range []struct {
			off int64
			n   int
			b   byte
		}{{0, 8 << 10, 'a'}, {100 << 10, 4 << 10, 'b'}, {size - 4096, 4096, 'c'}} {
			if _, err := f.WriteAt(bytes.Repeat([]byte{w.b}, w.n), w.off); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	scribble := func(offs ...int64) func(t *testing.T, dst, base string) {
		return func(t *testing.T, dst, base string) {
			if err := CopyFile(dst, base); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(dst, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, o := range offs {
				if _, err := f.WriteAt([]byte("previous run's bytes"), o); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	tests := []struct {
		name string
		prev func(t *testing.T, dst, base string)
	}{
		{"no file yet", func(*testing.T, string, string) {}},
		{"the same image", scribble()},
		{"written over data", scribble(10, 100<<10+7, size-30)},
		{"written in holes", scribble(20<<10, 500<<10, 900<<10+4090)},
		{"grown past the end", scribble(size + 5000)},
		{"shrunk", func(t *testing.T, dst, base string) {
			scribble(3)(t, dst, base)
			if err := os.Truncate(dst, 50<<10); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symbolic link", func(t *testing.T, dst, base string) {
			if err := os.Symlink(base, dst); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base := src(t, dir)
			want, err := os.ReadFile(base)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, "worker.img")
			tc.prev(t, dst, base)
			if err := ResetFile(dst, base); err != nil {
				t.Fatal(err)
			}
			// With the source's data kept in memory: read once, then from memory after the
			// previous run's bytes are written again.
			srcs := NewSources(64 << 20)
			for range 2 {
				os.Remove(dst)
				tc.prev(t, dst, base)
				if err := srcs.Reset(dst, base); err != nil {
					t.Fatal(err)
				}
			}
			if len(srcs.m) > 1 {
				t.Errorf("%d sources kept, want at most 1", len(srcs.m))
			}
			if fi, err := os.Lstat(dst); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s is not a regular file: %v", dst, err)
			}
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from its source (%d bytes, want %d)", dst, len(got), len(want))
			}
			if b, _ := os.ReadFile(base); !bytes.Equal(b, want) {
				t.Fatal("the source changed")
			}
			// No data where the source has a hole (where the file system tells holes).
			f, err := os.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if off, err := unix.Seek(int(f.Fd()), 200<<10, unix.SEEK_DATA); err == nil && off < size-4096 {
				t.Errorf("data at %d, in a hole of the source", off)
			} else if err != nil && !errors.Is(err, unix.ENXIO) && !errors.Is(err, unix.EINVAL) {
				t.Error(err)
			}
		})
	}
}

func TestSubtractRanges(t *testing.T) {
	for _, tc := range []struct {
		a, b, want [][2]int64
	}{
		{[][2]int64{{0, 10}}, nil, [][2]int64{{0, 10}}},
		{[][2]int64{{0, 10}}, [][2]int64{{0, 10}}, nil},
		{[][2]int64{{0, 10}}, [][2]int64{{2, 4}, {6, 8}}, [][2]int64{{0, 2}, {4, 6}, {8, 10}}},
		{[][2]int64{{0, 4}, {6, 12}}, [][2]int64{{3, 7}, {11, 20}}, [][2]int64{{0, 3}, {7, 11}}},
	} {
		got := subtractRanges(tc.a, tc.b)
		if len(got) != len(tc.want) {
			t.Errorf("%v - %v = %v, want %v", tc.a, tc.b, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%v - %v = %v, want %v", tc.a, tc.b, got, tc.want)
				break
			}
		}
	}
}

// TestSources: a source changed since it was kept is read again, and the least recently used
// sources are dropped beyond the limit.
func TestSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b byte, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte{b}, n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a", 'a', 8192), write("b", 'b', 8192)
	dst := filepath.Join(dir, "dst")
	s := NewSources(12 << 10) // room for one of them
	check := func(src string, want byte, n int) {
		t.Helper()
		if err := s.Reset(dst, src); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, bytes.Repeat([]byte{want}, n)) {
			t.Fatalf("reset to %s: %q..., want %d bytes of %q", src, got[:min(len(got), 8)], n, want)
		}
	}
	check(a, 'a', 8192)
	check(b, 'b', 8192)
	if _, ok := s.m[a]; ok || len(s.m) != 1 || s.used > s.limit {
		t.Errorf("kept %d sources (%d bytes, limit %d), a among them: %v", len(s.m), s.used, s.limit, ok)
	}
	// b rewritten with other bytes and size: read again.
	os.Remove(b)
	write("b", 'c', 4096)
	check(b, 'c', 4096)
	check(a, 'a', 8192)
}
