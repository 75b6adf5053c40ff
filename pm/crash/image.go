package crash

import (
	"fmt"
	"os"
	"slices"
	"syscall"

	"github.com/scry-pm/scry/pm/image"
)

// region returns the region with id at the crash point (the latest mapping with that id).
func (cp *CrashPoint) region(id uint32) (*image.Region, error) {
	rs, err := cp.regions()
	if err != nil {
		return nil, err
	}
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].ID == id {
			return rs[i], nil
		}
	}
	return nil, fmt.Errorf("crash: no region %d at crash point %d", id, cp.Index)
}

// regionPatches returns the region with id at the crash point (region) and the patches of st on
// it.
func (cp *CrashPoint) regionPatches(id uint32, st State) (*image.Region, []Patch, error) {
	g, err := cp.region(id)
	if err != nil {
		return nil, nil, err
	}
	ps, err := cp.Patches(st)
	if err != nil {
		return nil, nil, err
	}
	n := 0
	for _, p := range ps {
		if p.Region == g.ID {
			ps[n] = p
			n++
		}
	}
	return g, ps[:n], nil
}

// WriteImage writes the crash image of state st for region (a region id of the trace) to the
// file path: the pool file's bytes at the crash point with exactly the units st persists.
// The file is created (or truncated) and made sparse: it is sized to the region's end in the
// pool file (FileOffset+Length bytes; bytes before FileOffset are zero), then only the pages
// holding non-zero bytes and the patches are written. The cost is proportional to the data
// written to the pool, not to its size (WITCHER §4.4's crash NVM images; the copy-on-write
// snapshots of Fernandes's thesis, Automatic Testing of PM Applications §5.1.2, serve the same purpose).
// It must be called during the Walk callback that delivered cp.
func (cp *CrashPoint) WriteImage(path string, region uint32, st State) error {
	g, ps, err := cp.regionPatches(region, st)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if err := writeFull(f, g); err != nil {
		f.Close()
		return err
	}
	if err := writePatches(f, ps); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeFull sizes f to the region's end and writes every page of g holding non-zero bytes,
// joining consecutive pages into one write.
func writeFull(f *os.File, g *image.Region) error {
	if err := f.Truncate(int64(g.FileOffset + g.Length)); err != nil {
		return err
	}
	const maxRun = 256 // pages per write
	var buf []byte
	var start uint64
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := f.WriteAt(buf, int64(g.FileOffset+start*image.PageSize))
		buf = buf[:0]
		return err
	}
	for _, p := range g.TouchedPages() {
		data := g.Page(p)
		if data == nil || allZero(data) {
			continue
		}
		if end := g.Length - p*image.PageSize; end < image.PageSize {
			data = data[:end]
		}
		if len(buf) > 0 && (p != start+uint64(len(buf))/image.PageSize || len(buf) >= maxRun*image.PageSize) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(buf) == 0 {
			start = p
		}
		buf = append(buf, data...)
	}
	return flush()
}

// Generation identifies the image state of the crash point (or boundary) for Delta.
func (cp *CrashPoint) Generation() uint64 { return cp.gen }

// Delta returns the pages of region (a region id of the trace) written since the earlier point
// of the same walk whose Generation is gen, with their bytes at cp, as patches at their offsets
// in the pool file, and their total size in bytes. Applied (ApplyPatches) to the image
// WriteImage wrote at that point with its FullState, they give the image of cp's FullState, to
// which Patches then apply: an image stored as a base file shared by many crash points plus
// what changed since (WITCHER §4.4's crash images; an image costs what it changes). The region
// must be the same mapping at both points. It must be called during the Walk callback that
// delivered cp.
func (cp *CrashPoint) Delta(region uint32, gen uint64) ([]Patch, int, error) {
	g, err := cp.region(region)
	if err != nil {
		return nil, 0, err
	}
	pages := g.PagesWrittenSince(gen)
	slices.Sort(pages)
	var out []Patch
	total := 0
	for _, p := range pages {
		off := p * image.PageSize
		if off >= g.Length {
			continue
		}
		n := min(image.PageSize, g.Length-off)
		data := make([]byte, n)
		g.ReadAt(data, int64(off))
		// Join consecutive pages into one patch.
		if k := len(out) - 1; k >= 0 && out[k].Addr+uint64(len(out[k].Data)) == g.Base+off {
			out[k].Data = append(out[k].Data, data...)
		} else {
			out = append(out, Patch{Region: g.ID, Path: g.Path, Offset: int64(g.FileOffset + off), Addr: g.Base + off, Data: data})
		}
		total += int(n)
	}
	return out, total, nil
}

// ApplyPatches writes the patches into the existing file at path (a crash image's base).
func ApplyPatches(path string, ps []Patch) error {
	if len(ps) == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	if err := writePatches(f, ps); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// RegionPatches returns Patches(st) restricted to region (a region id of the trace).
func (cp *CrashPoint) RegionPatches(region uint32, st State) ([]Patch, error) {
	_, ps, err := cp.regionPatches(region, st)
	return ps, err
}

func writePatches(f *os.File, ps []Patch) error {
	for _, p := range ps {
		if _, err := f.WriteAt(p.Data, p.Offset); err != nil {
			return err
		}
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ImageWriter keeps one working copy of a region's crash image in a file and moves it from
// one crash image to the next by rewriting only what differs: the previous state's patches
// are undone, the pages written since the previous crash point are rewritten, and the new
// state's patches applied. One ImageWriter per worker; the first Write (or one for another
// region) writes the whole image as WriteImage does. Not safe for concurrent use.
type ImageWriter struct {
	path    string
	f       *os.File
	g       *image.Region
	rp      *image.Replayer
	gen     uint64  // the crash point whose fully applied image the file holds under patches
	patches []Patch // patches applied to the file
}

// NewImageWriter returns a writer of the working copy at path (created on first Write).
func NewImageWriter(path string) *ImageWriter { return &ImageWriter{path: path} }

// Write turns the working copy into the crash image of st for region at cp (during the Walk
// callback that delivered cp). Crash points must come in trace order.
func (w *ImageWriter) Write(cp *CrashPoint, region uint32, st State) error {
	g, ps, err := cp.regionPatches(region, st)
	if err != nil {
		return err
	}
	if w.f == nil || w.g != g || w.rp != cp.rp || cp.gen < w.gen {
		if w.f != nil {
			w.f.Close()
		}
		w.f, err = os.OpenFile(w.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if err := writeFull(w.f, g); err != nil {
			return err
		}
	} else {
		// Undo the previous patches with the current bytes, then bring the pages written since
		// the previous crash point up to date.
		for _, p := range w.patches {
			buf := make([]byte, len(p.Data))
			g.ReadAt(buf, int64(p.Addr-g.Base))
			if _, err := w.f.WriteAt(buf, p.Offset); err != nil {
				return err
			}
		}
		if cp.gen != w.gen {
			page := make([]byte, image.PageSize)
			for _, p := range g.PagesWrittenSince(w.gen) {
				n, _ := g.ReadAt(page, int64(p*image.PageSize))
				if _, err := w.f.WriteAt(page[:n], int64(g.FileOffset+p*image.PageSize)); err != nil {
					return err
				}
			}
		}
	}
	if err := writePatches(w.f, ps); err != nil {
		return err
	}
	w.g, w.rp, w.gen, w.patches = g, cp.rp, cp.gen, ps
	return nil
}

// Path returns the working copy's file name.
func (w *ImageWriter) Path() string { return w.path }

// Close closes the working copy (the file stays).
func (w *ImageWriter) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
