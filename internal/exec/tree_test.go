package exec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCopyTree: modes, symbolic and hard links are kept, skipped entries and special files
// are left out or refused, a tree over the bound is refused, an existing destination too.
func TestCopyTree(t *testing.T) {
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "sub", ".git"), 0o755))
	must(os.WriteFile(filepath.Join(src, "a"), []byte("hello"), 0o640))
	must(os.WriteFile(filepath.Join(src, "sub", ".git", "HEAD"), []byte("ref"), 0o644))
	must(os.Symlink("a", filepath.Join(src, "link")))
	must(os.Link(filepath.Join(src, "a"), filepath.Join(src, "sub", "hard")))
	must(syscall.Mkfifo(filepath.Join(src, "fifo"), 0o600))
	skipGit := func(rel string, d fs.DirEntry) bool { return d.IsDir() && d.Name() == ".git" }

	dst := filepath.Join(t.TempDir(), "copy")
	if err := CopyTree(dst, src, TreeOptions{Skip: skipGit}); !errors.Is(err, ErrSpecialFile) {
		t.Errorf("a fifo: %v, want ErrSpecialFile", err)
	}
	dst = filepath.Join(t.TempDir(), "copy")
	must(CopyTree(dst, src, TreeOptions{Skip: skipGit, SkipSpecial: true}))
	if b, err := os.ReadFile(filepath.Join(dst, "a")); err != nil || string(b) != "hello" {
		t.Errorf("a: %q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "a")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("a's mode: %v %v", fi, err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "a" {
		t.Errorf("link: %q %v", l, err)
	}
	var sa, sh syscall.Stat_t
	must(syscall.Stat(filepath.Join(dst, "a"), &sa))
	must(syscall.Stat(filepath.Join(dst, "sub", "hard"), &sh))
	if sa.Ino != sh.Ino {
		t.Errorf("the hard link became two files")
	}
	if _, err := os.Lstat(filepath.Join(dst, "sub", ".git")); !os.IsNotExist(err) {
		t.Errorf("the skipped directory was copied: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "fifo")); !os.IsNotExist(err) {
		t.Errorf("the fifo was copied: %v", err)
	}
	if err := CopyTree(dst, src, TreeOptions{SkipSpecial: true}); !errors.Is(err, os.ErrExist) {
		t.Errorf("an existing destination: %v", err)
	}
	big := filepath.Join(t.TempDir(), "copy")
	if err := CopyTree(big, src, TreeOptions{SkipSpecial: true, MaxBytes: 4}); !errors.Is(err, ErrTreeTooLarge) {
		t.Errorf("over the bound: %v", err)
	}
}
