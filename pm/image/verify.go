package image

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// VerifyOptions tunes Verify.
type VerifyOptions struct {
	// PathMap redirects pool files: a region whose trace path is a key is compared with the file
	// named by the value (for a pool moved or copied since the run).
	PathMap map[string]string
	// ChunkSize is how many bytes of a file are read at a time (0: 1 MiB; rounded up to a
	// multiple of PageSize).
	ChunkSize int
}

// RegionResult is the comparison of one region's replayed bytes with its file.
type RegionResult struct {
	Path       string // the pool file as the trace names it
	File       string // the file compared (Path after VerifyOptions.PathMap)
	Region     uint32 // region id
	MapIndex   uint64 // Event.Index of the REGION_MAP record
	Base       uint64 // virtual address of the mapping
	FileOffset uint64 // offset in bytes of the mapping in the file
	Length     uint64 // bytes mapped
	Compared   int64  // bytes compared (Length unless the file could not be read)
	Differing  int64  // bytes that differ, counting bytes missing from a short file
	FirstDiff  int64  // file offset of the first differing byte, -1 if none
	OK         bool   // every byte of the mapped range equals the replayed image
	Err        error  // why the comparison is incomplete: file missing or unreadable, file too short
}

// VerifyResult is the outcome of a verification (replay.Verify): the trace replayed, then
// every final region compared with its file.
type VerifyResult struct {
	Regions  []RegionResult // one per final mapping, in mapping order
	Records  uint64         // trace records replayed
	Complete bool           // the trace ended with an END record
	// Warnings are the inconsistencies the replay found (writes outside every region or past
	// the end of one, unknown unmaps, overlapping mappings), as package replay words them.
	Warnings []string
	OK       bool // the trace replayed without inconsistency and every region is OK
}

// Compare compares, for every pool file, the replayed bytes of its final mapping among
// regions (Replayer.Regions, see FinalRegions) with the file on disk, ChunkSize bytes at a
// time; pages never written compare against zero bytes. Only the mapped range is compared, at
// its file offset; the file may be longer. A missing or unreadable file is reported in its
// RegionResult.Err.
func Compare(regions []*Region, opts VerifyOptions) []RegionResult {
	chunk := opts.ChunkSize
	if chunk <= 0 {
		chunk = 1 << 20
	}
	chunk = (chunk + PageSize - 1) / PageSize * PageSize
	buf := make([]byte, chunk)
	var out []RegionResult
	for _, g := range FinalRegions(regions) {
		file := g.Path
		if p, ok := opts.PathMap[g.Path]; ok {
			file = p
		}
		out = append(out, compareRegion(g, file, buf))
	}
	return out
}

// FinalRegions returns, from regions in mapping order (Replayer.Regions), those that hold the
// final bytes of their file: a region is dropped when the same path was mapped again after it
// was unmapped.
func FinalRegions(regions []*Region) []*Region {
	// lastMap[path] is the largest MapIndex of the path.
	lastMap := make(map[string]uint64)
	for _, g := range regions {
		if m, ok := lastMap[g.Path]; !ok || g.MapIndex > m {
			lastMap[g.Path] = g.MapIndex
		}
	}
	var out []*Region
	for _, g := range regions {
		if !g.Mapped && g.UnmapIndex < lastMap[g.Path] {
			continue // superseded by a later mapping of the same file
		}
		out = append(out, g)
	}
	return out
}

var zeroPage page

// compareRegion compares g with the file, chunk by chunk; buf is the chunk buffer (a multiple
// of PageSize bytes).
func compareRegion(g *Region, file string, buf []byte) RegionResult {
	rr := RegionResult{
		Path: g.Path, File: file, Region: g.ID, MapIndex: g.MapIndex, Base: g.Base,
		FileOffset: g.FileOffset, Length: g.Length, FirstDiff: -1,
	}
	f, err := os.Open(file)
	if err != nil {
		rr.Err = err
		rr.Differing = int64(g.Length)
		if g.Length > 0 {
			rr.FirstDiff = int64(g.FileOffset)
		}
		return rr
	}
	defer f.Close()
	for off := uint64(0); off < g.Length; {
		want := min(uint64(len(buf)), g.Length-off)
		n, err := f.ReadAt(buf[:want], int64(g.FileOffset+off))
		got := buf[:n]
		// Compare page by page (region-relative pages; chunks start on a page boundary).
		for p := 0; p < len(got); p += PageSize {
			fb := got[p:min(p+PageSize, len(got))]
			img := g.Page((off + uint64(p)) / PageSize)
			if img == nil {
				img = zeroPage[:]
			}
			img = img[:len(fb)]
			if bytes.Equal(fb, img) {
				continue
			}
			for i := range fb {
				if fb[i] != img[i] {
					if rr.FirstDiff < 0 {
						rr.FirstDiff = int64(g.FileOffset + off + uint64(p+i))
					}
					rr.Differing++
				}
			}
		}
		rr.Compared += int64(n)
		off += uint64(n)
		if uint64(n) < want {
			if err == nil || err == io.EOF {
				size := "unknown"
				if st, serr := f.Stat(); serr == nil {
					size = fmt.Sprint(st.Size())
				}
				err = fmt.Errorf("%s is %s bytes, shorter than the mapped range (file offset %d, %d bytes)",
					file, size, g.FileOffset, g.Length)
			}
			rr.Err = err
			missing := int64(g.Length - off)
			if rr.FirstDiff < 0 {
				rr.FirstDiff = int64(g.FileOffset + off)
			}
			rr.Differing += missing
			break
		}
	}
	rr.OK = rr.Err == nil && rr.Differing == 0
	return rr
}

// Write prints the result, one line per region then a summary line, for people.
func (res *VerifyResult) Write(w io.Writer) error {
	var b bytes.Buffer
	for _, rr := range res.Regions {
		name := rr.Path
		if rr.File != rr.Path {
			name = fmt.Sprintf("%s (as %s)", rr.Path, rr.File)
		}
		switch {
		case rr.OK:
			fmt.Fprintf(&b, "ok       %s: %d bytes at file offset %d match the trace\n", name, rr.Compared, rr.FileOffset)
		case rr.Err != nil && rr.Compared == 0:
			fmt.Fprintf(&b, "ERROR    %s: %v\n", name, rr.Err)
		default:
			fmt.Fprintf(&b, "MISMATCH %s: %d of %d bytes differ, first at file offset %d (%#x)\n",
				name, rr.Differing, rr.Length, rr.FirstDiff, rr.FirstDiff)
			if rr.Err != nil {
				fmt.Fprintf(&b, "         %v\n", rr.Err)
			}
		}
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "replay: %s\n", w)
	}
	verdict := "OK"
	if !res.OK {
		verdict = "FAILED"
	}
	complete := "complete"
	if !res.Complete {
		complete = "truncated"
	}
	fmt.Fprintf(&b, "%s: %d regions, %d records replayed (%s trace)\n", verdict, len(res.Regions), res.Records, complete)
	_, err := w.Write(b.Bytes())
	return err
}
