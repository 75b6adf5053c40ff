// Package safefile creates the files scry writes for the user (traces, reports, crash images)
// without harming anything the user owns: it never writes through a symbolic link, never
// replaces a directory or a special file, and replaces an existing regular file only when the
// caller recognises it as one scry wrote earlier (an old trace or report) or the user asked for
// it (--force). Files are created with O_EXCL, so a file that appears between the check and the
// creation is not clobbered either.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Policy says which existing files at a path may be replaced.
type Policy struct {
	// What names the file in messages ("the trace", "--out").
	What string
	// Ours, if non-nil, recognises a regular file scry wrote earlier from its first bytes (at
	// most HeadSize, fewer for a short file): such a file is replaced without --force.
	Ours func(head []byte) bool
	// Force replaces any existing regular file (the user's --force).
	Force bool
}

// HeadSize is how many bytes of an existing file Policy.Ours sees.
const HeadSize = 4096

// ErrExists is wrapped by the errors of Check and Create for a path scry may not replace.
var ErrExists = errors.New("exists")

// Check tells whether path may be created or replaced under p, without changing anything: nil
// when it does not exist or is a regular file p allows replacing. Errors: a symbolic link, a
// directory or another non-regular file (never replaced, even with Force), a regular file p does
// not allow replacing (wrapping ErrExists, naming --force when it would help), or a path that
// cannot be examined.
func Check(path string, p Policy) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", p.What, path, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %s is a symbolic link: scry does not write through links; name the file itself or another path: %w", p.What, path, ErrExists)
	case fi.IsDir():
		return fmt.Errorf("%s %s is a directory: name a file: %w", p.What, path, ErrExists)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s %s exists and is not a regular file: %w", p.What, path, ErrExists)
	case p.Force:
		return nil
	}
	if p.Ours != nil {
		head, err := readHead(path)
		if err != nil {
			return fmt.Errorf("%s %s: %w", p.What, path, err)
		}
		if p.Ours(head) {
			return nil
		}
		return fmt.Errorf("%s %s exists and is not a file scry wrote: scry does not replace it; remove it yourself or name another path: %w", p.What, path, ErrExists)
	}
	return fmt.Errorf("%s %s exists: scry does not replace files; remove it, name another path, or pass --force: %w", p.What, path, ErrExists)
}

func readHead(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, HeadSize)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// Create creates path for writing under p (Check's rules): a file p allows replacing is
// removed first, then the file is created with O_EXCL (mode 0644 before the umask), so that
// nothing that appears in between is overwritten. The caller owns the returned file.
func Create(path string, p Policy) (*os.File, error) {
	if err := Check(path, p); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s %s: replacing it: %w", p.What, path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s %s appeared while scry was creating it: %w", p.What, path, ErrExists)
		}
		return nil, fmt.Errorf("%s %s: %w", p.What, path, err)
	}
	return f, nil
}
