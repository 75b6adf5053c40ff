package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/scry-pm/scry/internal/exec"
)

// AllocatesPool reports whether the target allocates its whole pool file every time it opens
// one: run once, with no input, on a sparse copy of pool (the pool the recorded run left: its
// pages of zeros left out), does the file come back fully allocated? libpmem's pmem_map_file
// with PMEM_FILE_CREATE does this (posix_fallocate of the whole length) on every open, where
// pmemobj_open does not. A disk file system allocates such a file as extents, a tmpfs page by
// page in memory, so crash images then go on the disk (explore.Config.AvoidTmpfs; Level
// Hashing's 2 000 operations explore in 35 s there and 48 s on tmpfs, mapcli's 20 % faster on
// tmpfs). The reason is returned ("" when the program does not, or the probe could not tell);
// the probe's run is not a test of anything else. dir holds the copy.
func AllocatesPool(ctx context.Context, t exec.Target, pool, dir string) string {
	fi, err := os.Stat(pool)
	if err != nil || fi.Size() < 1<<20 {
		return ""
	}
	probe := filepath.Join(dir, "allocation-probe.pool")
	defer os.Remove(probe)
	if err := sparseCopy(probe, pool); err != nil {
		return ""
	}
	before := allocated(probe)
	if before > fi.Size()/2 {
		return "" // the pool is mostly data: nothing to tell
	}
	if o := t.Run(ctx, probe, nil, ""); o.Err != nil {
		return ""
	}
	if after := allocated(probe); after >= fi.Size()*9/10 {
		return fmt.Sprintf("the program allocates its whole %d MiB pool every time it opens it (posix_fallocate), which on tmpfs costs memory page by page", fi.Size()>>20)
	}
	return ""
}

// allocated returns the bytes the file system allocated to path (0 on error).
func allocated(path string) int64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return st.Blocks * 512
}

// sparseCopy copies src to a new file dst, leaving out its blocks of zeros (holes).
func sparseCopy(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	zero := make([]byte, len(buf))
	var off int64
	for {
		n, rerr := io.ReadFull(in, buf)
		if n > 0 && !bytes.Equal(buf[:n], zero[:n]) {
			if _, err := out.WriteAt(buf[:n], off); err != nil {
				out.Close()
				return err
			}
		}
		off += int64(n)
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			out.Close()
			return rerr
		}
	}
	if err := out.Truncate(off); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
