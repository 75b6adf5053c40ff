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
	// NoForce says the command has no --force for this file: the messages do not suggest it.
	NoForce bool
}

// HeadSize is how many bytes of an existing file Policy.Ours sees.
const HeadSize = 4096

// ErrExists is matched (errors.Is) by the errors of Check and Create for a path scry may not
// replace. Their messages are whole sentences saying what exists and what to do; they do not
// end in this error's text.
var ErrExists = errors.New("exists")

// existsError is an error for a path scry may not replace: its message, and errors.Is(err,
// ErrExists).
type existsError struct{ msg string }

func (e *existsError) Error() string        { return e.msg }
func (e *existsError) Is(target error) bool { return target == ErrExists }

// Exists returns an error with the message fmt.Sprintf(format, args...) that matches ErrExists:
// for callers with a rule of their own about an existing path (a crash directory that must be
// new).
func Exists(format string, args ...any) error {
	return &existsError{fmt.Sprintf(format, args...)}
}

// refusal is the error for the regular file path that p does not allow replacing: what exists,
// why scry keeps it, and what to do (remove it, name another path, or pass --force where the
// command has it).
func (p Policy) refusal(path, why string) error {
	do := "remove it or name another path"
	if !p.NoForce {
		do = "remove it, name another path, or pass --force to replace it"
	}
	return Exists("%s %s exists%s; %s", p.name(), path, why, do)
}

// name is What, or "the file".
func (p Policy) name() string {
	if p.What == "" {
		return "the file"
	}
	return p.What
}

// Check tells whether path may be created or replaced under p, without changing anything: nil
// when it does not exist or is a regular file p allows replacing. Errors: a symbolic link, a
// directory or another non-regular file (never replaced, even with Force), a regular file p does
// not allow replacing (matching ErrExists, naming --force unless NoForce), or a path that cannot
// be examined.
func Check(path string, p Policy) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", p.name(), path, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return Exists("%s %s is a symbolic link: scry does not write through links; name the file itself or another path", p.name(), path)
	case fi.IsDir():
		return Exists("%s %s is a directory: name a file", p.name(), path)
	case !fi.Mode().IsRegular():
		return Exists("%s %s exists and is not a regular file: scry never replaces it; name another path", p.name(), path)
	case p.Force:
		return nil
	}
	if p.Ours != nil {
		head, err := readHead(path)
		if err != nil {
			return fmt.Errorf("%s %s: %w", p.name(), path, err)
		}
		if p.Ours(head) {
			return nil
		}
		return p.refusal(path, " and scry did not write it: scry does not overwrite files it did not create")
	}
	return p.refusal(path, ": scry does not overwrite files")
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
		return nil, fmt.Errorf("%s %s: replacing it: %w", p.name(), path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, Exists("%s %s appeared while scry was creating it: scry does not overwrite it; name another path", p.name(), path)
		}
		return nil, fmt.Errorf("%s %s: %w", p.name(), path, err)
	}
	return f, nil
}
