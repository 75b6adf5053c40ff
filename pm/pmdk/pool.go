package pmdk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The on-media layout of a libpmemobj pool file (PMDK 1.x, the version Debian ships), as far as
// ScratchRanges reads it: a 4 KiB pool header whose signature is "PMEMOBJ\0", then the pool
// descriptor's persistent part (2 KiB: the layout name (1 024 bytes), then lanes_offset, nlanes
// and heap_offset, u64 little-endian, ...), five u64 fields (root_offset, run_id, root_size,
// conversion_flags, heap_size), the persistent statistics (one u64) and 496 reserved bytes; then,
// up to lanes_offset, the pool's run-time state, which libpmemobj keeps in the mapped file (the
// mapping's address, the heap's and lanes' run-time descriptors, locks). The lanes are nlanes
// consecutive lane layouts of laneSize bytes from lanes_offset, each holding one thread's
// internal redo log, external redo log and undo log.
const (
	poolSignature    = "PMEMOBJ\x00"
	poolHeaderSize   = 4096
	poolLayoutSize   = 1024
	poolDescriptorAt = poolHeaderSize + poolLayoutSize       // lanes_offset, nlanes, heap_offset
	poolRuntimeAt    = poolHeaderSize + 2048 + 5*8 + 8 + 496 // the run-time state
	laneSize         = 3072
)

// ScratchRanges returns the byte ranges [start, end) of the libpmemobj pool file r of size
// bytes whose content does not decide what a program does with the pool once it has opened it
// (pmemobj_open has recovered it): the pool's run-time state, which every open writes anew
// (addresses of this process), and the lanes, the undo and redo logs of the transactions and
// atomic operations in flight. libpmemobj reads a lane's log only after writing it anew in a
// later transaction, or at the recovery after another crash: the stale entries a lane keeps
// (those of the last transaction that used it, with a generation number that invalidates them)
// never decide what a run does, yet they differ between a crash image and the consistent images
// of the same operation. Comparing the states of two runs of an opened pool (exec.Converge)
// ignores these ranges. Returns no range and no error when r is not a libpmemobj pool (its
// signature differs, or it is shorter than the descriptor), and an error naming the field when
// the descriptor's values are inconsistent (lanes outside the file, or overlapping the heap).
func ScratchRanges(r io.ReaderAt, size int64) ([][2]int64, error) {
	var hdr [poolDescriptorAt + 24]byte
	if size < int64(len(hdr)) {
		return nil, nil
	}
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil
		}
		return nil, err
	}
	if !bytes.Equal(hdr[:len(poolSignature)], []byte(poolSignature)) {
		return nil, nil
	}
	lanes := binary.LittleEndian.Uint64(hdr[poolDescriptorAt:])
	n := binary.LittleEndian.Uint64(hdr[poolDescriptorAt+8:])
	heap := binary.LittleEndian.Uint64(hdr[poolDescriptorAt+16:])
	const maxLanes = 1 << 20
	switch {
	case lanes < poolRuntimeAt || lanes%8 != 0:
		return nil, fmt.Errorf("libpmemobj pool: lanes_offset %d is not past the pool descriptor", lanes)
	case lanes >= heap || heap > uint64(size):
		return nil, fmt.Errorf("libpmemobj pool: lanes_offset %d and heap_offset %d do not fit a %d-byte file", lanes, heap, size)
	case n == 0 || n > maxLanes:
		return nil, fmt.Errorf("libpmemobj pool: nlanes %d is out of range", n)
	case lanes+n*laneSize > heap:
		return nil, fmt.Errorf("libpmemobj pool: %d lanes of %d bytes at %d overlap the heap at %d", n, laneSize, lanes, heap)
	}
	return [][2]int64{{poolRuntimeAt, int64(lanes + n*laneSize)}}, nil
}
