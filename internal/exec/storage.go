package exec

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ShmDir is the tmpfs crash images and crash directories are built on when it is large enough
// (ScratchParent).
const ShmDir = "/dev/shm"

// minShmFree is the least free space ShmDir must have for scratch files, whatever their size.
const minShmFree = 1 << 30

// ScratchParent chooses the directory under which an exploration builds its crash images (PM
// mode) or crash directories (file-system mode), and says where, for the report
// (report.Stats.Images): "in DIR", "on tmpfs (...)", with the reason when the tmpfs is not used.
// An explicit choice wins: dir (the caller's exec.Pool.Dir), else $TMPDIR when the user set
// it. Otherwise the tmpfs ShmDir when it is one and has at least max(1 GiB, 4 × need) free
// (need, in bytes, bounds what one crash image or directory may hold: a pool's length, a
// workload directory with everything the run wrote), since creating, patching and deleting
// hundreds of files a second costs the file system's journal on a disk and nothing on tmpfs;
// else os.TempDir(). A non-empty avoid says why the tmpfs would cost more than a disk (the
// program allocates its whole pool in every run: on tmpfs that is memory, page by page): then
// os.TempDir(), and where says why.
func ScratchParent(dir string, need uint64, avoid string) (parent, where string) {
	if dir != "" {
		return dir, "in " + dir
	}
	if t := os.Getenv("TMPDIR"); t != "" {
		return t, "in $TMPDIR (" + t + ")"
	}
	if avoid != "" {
		return os.TempDir(), fmt.Sprintf("in %s, not on the tmpfs %s: %s", os.TempDir(), ShmDir, avoid)
	}
	var fs unix.Statfs_t
	want := max(uint64(minShmFree), 4*need)
	if err := unix.Statfs(ShmDir, &fs); err == nil && fs.Type == unix.TMPFS_MAGIC {
		free := fs.Bavail * uint64(fs.Bsize)
		if free >= want && unix.Access(ShmDir, unix.W_OK) == nil {
			return ShmDir, fmt.Sprintf("on tmpfs (%s, %s free)", ShmDir, mib(free))
		}
		return os.TempDir(), fmt.Sprintf("in %s: the tmpfs %s has %s free, %s wanted", os.TempDir(), ShmDir, mib(free), mib(want))
	}
	return os.TempDir(), fmt.Sprintf("in %s (no tmpfs at %s)", os.TempDir(), ShmDir)
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }
