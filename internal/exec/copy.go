package exec

import (
	"errors"
	"fmt"
	"io"
	"os"

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
