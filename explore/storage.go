package explore

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/scry-pm/scry/trace"
)

// ShmDir is the tmpfs crash images are built on when it is large enough (imageParent).
const ShmDir = "/dev/shm"

// minShmFree is the least free space ShmDir must have for crash images, whatever the pool.
const minShmFree = 1 << 30

// imageParent chooses the directory under which an exploration builds its crash images, and
// says where in a line for the report (Stats.Images). An explicit choice wins: dir (the
// caller's exec.Pool.Dir), else $TMPDIR when the user set it. Otherwise images go on the tmpfs
// ShmDir when it is one and has at least max(1 GiB, 4 × poolBytes) free (a crash image costs
// what it changes, but a pool may be written whole: the region's length, in bytes, bounds
// that), since creating, patching and deleting hundreds of image files a second costs the file
// system's journal on a disk and nothing on tmpfs; else os.TempDir().
func imageParent(dir string, poolBytes uint64) (parent, images string) {
	if dir != "" {
		return dir, "images in " + dir
	}
	if t := os.Getenv("TMPDIR"); t != "" {
		return t, "images in $TMPDIR (" + t + ")"
	}
	var fs unix.Statfs_t
	need := max(uint64(minShmFree), 4*poolBytes)
	if err := unix.Statfs(ShmDir, &fs); err == nil && fs.Type == unix.TMPFS_MAGIC {
		free := fs.Bavail * uint64(fs.Bsize)
		if free >= need && unix.Access(ShmDir, unix.W_OK) == nil {
			return ShmDir, fmt.Sprintf("images on tmpfs (%s, %s free)", ShmDir, mib(free))
		}
		return os.TempDir(), fmt.Sprintf("images in %s: the tmpfs %s has %s free, %s wanted", os.TempDir(), ShmDir, mib(free), mib(need))
	}
	return os.TempDir(), fmt.Sprintf("images in %s (no tmpfs at %s)", os.TempDir(), ShmDir)
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

// firstRegionBytes returns the length in bytes of the first PM region the trace at path maps
// (looked for among its first 100 000 records), or 0.
func firstRegionBytes(path string) uint64 {
	r, err := trace.Open(path)
	if err != nil {
		return 0
	}
	defer r.Close()
	for i := 0; i < 100000; i++ {
		ev, err := r.Next()
		if err != nil {
			return 0
		}
		if ev.Kind == trace.KindRegionMap {
			return ev.Size
		}
	}
	return 0
}
