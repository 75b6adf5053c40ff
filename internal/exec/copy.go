package exec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// CopyFile copies the file src to dst (created or truncated, mode 0644): a copy-on-write clone
// (the FICLONE ioctl: XFS, Btrfs) where the file system supports it, else a copy that keeps
// holes: only the data ranges of src (SEEK_DATA / SEEK_HOLE) are copied, so a sparse pool of
// gigabytes with little data costs little. It is how a run gets its own copy of a pool, leaving
// the user's untouched. Errors name the file.
func CopyFile(dst, src string) error { return copyFile(dst, src, 0o644, os.O_TRUNC) }

// CloneFile is CopyFile for a new file: dst must not exist (its error is os.ErrExist's), and
// gets mode. File-system mode builds its crash directories so.
func CloneFile(dst, src string, mode os.FileMode) error { return copyFile(dst, src, mode, os.O_EXCL) }

func copyFile(dst, src string, mode os.FileMode, flag int) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|flag, mode)
	if err != nil {
		return err
	}
	if unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil {
		return out.Close()
	}
	if err := copySparse(out, in, fi.Size()); err != nil {
		out.Close()
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return out.Close()
}

func copySparse(out, in *os.File, size int64) error {
	fd := int(in.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		}
		if errors.Is(err, unix.EINVAL) {
			data = off // no SEEK_DATA on this file system: copy everything
		} else if err != nil {
			return err
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			hole = size
		}
		if _, err := out.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := in.Seek(data, io.SeekStart); err != nil {
			return err
		}
		// *os.File to *os.File with a limit: the kernel copies (copy_file_range).
		if _, err := io.CopyN(out, in, hole-data); err != nil {
			return err
		}
		off = hole
	}
	return out.Truncate(size)
}

// ResetFile makes the file dst (created, mode 0644, when it does not exist) a copy of src by
// writing only what differs: the ranges of dst that hold data where src has a hole are punched
// (FALLOC_FL_PUNCH_HOLE, zeros written where the file system cannot punch), the data ranges of
// src are compared with dst page by page (4 KiB) and the pages that differ written, and dst
// gets src's size. Afterwards dst reads exactly as src does, whatever dst held before: a run on
// a worker's working copy never sees a byte a previous run wrote. It is how a worker reuses one
// file for the crash images of a pool instead of a fresh copy per run (each run writes a few
// pages of a pool that is mostly the same from one image to the next). A dst that cannot be
// opened for writing, or is not a regular file, is replaced by a fresh CopyFile. Errors name
// the file. Sources.Reset does the same with src's data kept in memory between calls.
func ResetFile(dst, src string) error { return (*Sources)(nil).Reset(dst, src) }

// Sources keeps the data ranges of the source files of ResetFile in memory, so that resetting
// many working copies to the same source (the consistent image every crash image of an
// operation starts from) reads the source once instead of once per reset. A source is read
// again when its size, modification time or inode changed. At most limit bytes of data are
// kept, the least recently used sources dropped first; a source larger than limit is not kept.
// Safe for concurrent use; the nil *Sources keeps nothing.
type Sources struct {
	mu    sync.Mutex
	limit int64
	used  int64
	tick  uint64
	m     map[string]*source
}

// source is the data of one source file as it was when read: its data ranges and their bytes.
type source struct {
	id     sourceID
	ranges [][2]int64
	data   [][]byte // data[i] holds ranges[i]
	bytes  int64
	last   uint64 // Sources.tick when last used
}

type sourceID struct {
	dev, ino uint64
	size     int64
	mtime    int64 // nanoseconds
}

// NewSources returns a cache of sources holding at most limit bytes of data.
func NewSources(limit int64) *Sources {
	return &Sources{limit: limit, m: map[string]*source{}}
}

// Reset is ResetFile(dst, src), reading src's data from s when s holds it unchanged.
func (s *Sources) Reset(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
	if err == nil {
		if ofi, serr := out.Stat(); serr != nil || !ofi.Mode().IsRegular() {
			out.Close()
			err = fmt.Errorf("%s is not a regular file", dst)
		}
	}
	if err != nil {
		os.Remove(dst)
		return CopyFile(dst, src)
	}
	if err := s.resetSparse(out, in, src, fi); err != nil {
		out.Close()
		return fmt.Errorf("resetting %s to %s: %w", dst, src, err)
	}
	return out.Close()
}

// resetPage is the unit ResetFile compares and writes, resetChunk what it reads at once.
const (
	resetPage  = 4 << 10
	resetChunk = 256 << 10
)

func (s *Sources) resetSparse(out, in *os.File, path string, fi os.FileInfo) error {
	size := fi.Size()
	if err := out.Truncate(size); err != nil {
		return err
	}
	cached := s.get(path, fi)
	var srcData [][2]int64
	if cached != nil {
		srcData = cached.ranges
	} else {
		var err error
		if srcData, err = dataRanges(in, size); err != nil {
			return err
		}
	}
	dstData, err := dataRanges(out, size)
	if err != nil {
		return err
	}
	// Data of dst where src has a hole: punched, or zeroed.
	for _, r := range subtractRanges(dstData, srcData) {
		if err := unix.Fallocate(int(out.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, r[0], r[1]-r[0]); err != nil {
			if _, err := out.WriteAt(make([]byte, r[1]-r[0]), r[0]); err != nil {
				return err
			}
		}
	}
	keep := cached == nil && s.fits(srcData)
	var data [][]byte
	buf, b := make([]byte, resetChunk), make([]byte, resetChunk) // src's chunk when not kept, dst's
	for i, r := range srcData {
		var whole []byte // the range's bytes: cached, or read now (and kept when keep)
		switch {
		case cached != nil:
			whole = cached.data[i]
		case keep:
			whole = make([]byte, r[1]-r[0])
			if _, err := in.ReadAt(whole, r[0]); err != nil {
				return err
			}
			data = append(data, whole)
		}
		for off := r[0]; off < r[1]; off += resetChunk {
			n := int(min(resetChunk, r[1]-off))
			var a []byte
			if whole != nil {
				a = whole[off-r[0] : off-r[0]+int64(n)]
			} else {
				a = buf[:n]
				if _, err := in.ReadAt(a, off); err != nil {
					return err
				}
			}
			if _, err := out.ReadAt(b[:n], off); err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			if err := writeDiffering(out, a, b[:n], off); err != nil {
				return err
			}
		}
	}
	if keep {
		s.put(path, fi, srcData, data)
	}
	return nil
}

// writeDiffering writes to out, at off, the pages (resetPage bytes) of a that differ from b
// (the same range of out as it reads now), each run of differing pages at once.
func writeDiffering(out *os.File, a, b []byte, off int64) error {
	n := len(a)
	for p := 0; p < n; {
		if bytes.Equal(a[p:min(p+resetPage, n)], b[p:min(p+resetPage, n)]) {
			p += resetPage
			continue
		}
		q := p + resetPage
		for q < n && !bytes.Equal(a[q:min(q+resetPage, n)], b[q:min(q+resetPage, n)]) {
			q += resetPage
		}
		q = min(q, n)
		if _, err := out.WriteAt(a[p:q], off+int64(p)); err != nil {
			return err
		}
		p = q
	}
	return nil
}

func idOf(fi os.FileInfo) sourceID {
	id := sourceID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), st.Ino
	}
	return id
}

// get returns the cached data of the file at path when it is unchanged (fi), else nil.
func (s *Sources) get(path string, fi os.FileInfo) *source {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.m[path]
	if c == nil || c.id != idOf(fi) {
		return nil
	}
	s.tick++
	c.last = s.tick
	return c
}

// fits reports whether data ranges rs can be kept.
func (s *Sources) fits(rs [][2]int64) bool {
	if s == nil {
		return false
	}
	var n int64
	for _, r := range rs {
		n += r[1] - r[0]
	}
	return n <= s.limit
}

// put keeps the data of the file at path, dropping the least recently used sources beyond the
// limit.
func (s *Sources) put(path string, fi os.FileInfo, rs [][2]int64, data [][]byte) {
	c := &source{id: idOf(fi), ranges: rs, data: data}
	for _, r := range rs {
		c.bytes += r[1] - r[0]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.m[path]; old != nil {
		s.used -= old.bytes
	}
	s.tick++
	c.last = s.tick
	s.m[path] = c
	s.used += c.bytes
	for s.used > s.limit {
		var lru string
		for p, e := range s.m {
			if lru == "" || e.last < s.m[lru].last {
				lru = p
			}
		}
		s.used -= s.m[lru].bytes
		delete(s.m, lru)
	}
}

// dataRanges returns the data ranges [start, end) of f below size (SEEK_DATA / SEEK_HOLE); the
// whole file when the file system cannot tell.
func dataRanges(f *os.File, size int64) ([][2]int64, error) {
	fd := int(f.Fd())
	var rs [][2]int64
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break
		}
		if errors.Is(err, unix.EINVAL) {
			return [][2]int64{{off, size}}, nil
		} else if err != nil {
			return nil, err
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			hole = size
		}
		hole = min(hole, size)
		if hole > data {
			rs = append(rs, [2]int64{data, hole})
		}
		off = hole
	}
	return rs, nil
}

// subtractRanges returns the parts of the sorted, disjoint ranges a outside those of b.
func subtractRanges(a, b [][2]int64) [][2]int64 {
	var out [][2]int64
	j := 0
	for _, r := range a {
		start := r[0]
		for j < len(b) && b[j][1] <= start {
			j++
		}
		for k := j; k < len(b) && b[k][0] < r[1]; k++ {
			if b[k][0] > start {
				out = append(out, [2]int64{start, b[k][0]})
			}
			start = max(start, b[k][1])
		}
		if start < r[1] {
			out = append(out, [2]int64{start, r[1]})
		}
	}
	return out
}
