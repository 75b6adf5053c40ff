package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// TreeOptions tune CopyTree.
type TreeOptions struct {
	// Skip, if non-nil, leaves out an entry (a directory with everything below it); rel is its
	// path relative to the tree's root.
	Skip func(rel string, d fs.DirEntry) bool
	// MaxBytes, if positive, bounds the bytes of regular files copied (ErrTreeTooLarge beyond).
	MaxBytes int64
	// SkipSpecial leaves out devices, sockets and fifos; without it they are an error.
	SkipSpecial bool
}

// CopyTree's errors: a tree holding more than TreeOptions.MaxBytes, a special file.
var (
	ErrTreeTooLarge = errors.New("the directory tree is too large to copy")
	ErrSpecialFile  = errors.New("special files (devices, sockets, fifos) are not supported")
)

// CopyTree copies the directory tree src into dst, which must not exist, keeping modes,
// symbolic links (as links) and hard links between files of the tree; regular files are cloned
// or copied with their holes (CloneFile). It is how file-system mode snapshots a workload
// directory and how scry fix copies a source tree to rebuild it. Errors: an entry that cannot
// be read or written, a special file (wrapping ErrSpecialFile, unless SkipSpecial), a tree larger than
// MaxBytes (wrapping ErrTreeTooLarge); a partial copy is left for the caller to remove.
func CopyTree(dst, src string, o TreeOptions) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	links := map[[2]uint64]string{}
	var total int64
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		if o.Skip != nil && o.Skip(rel, d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		out := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			return os.Mkdir(out, fi.Mode().Perm()|0o700)
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(t, out)
		case fi.Mode().IsRegular():
			if k, ok := HardLinked(fi); ok {
				if first, ok := links[k]; ok {
					return os.Link(first, out)
				}
				links[k] = out
			}
			if total += fi.Size(); o.MaxBytes > 0 && total > o.MaxBytes {
				return fmt.Errorf("%w: %s holds more than %d MiB", ErrTreeTooLarge, src, o.MaxBytes>>20)
			}
			return CloneFile(out, p, fi.Mode().Perm())
		}
		if o.SkipSpecial {
			return nil
		}
		return fmt.Errorf("%s: %w", p, ErrSpecialFile)
	})
}

// HardLinked returns the identity (device, inode) of a regular file that has other hard links,
// and whether it has: the files of a tree that are one file.
func HardLinked(fi fs.FileInfo) ([2]uint64, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Nlink > 1 {
		return [2]uint64{uint64(st.Dev), st.Ino}, true
	}
	return [2]uint64{}, false
}
