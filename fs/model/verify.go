package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/scry-pm/scry/internal/exec"
)

// Verify rebuilds the state of the finished run from the model (every micro-operation
// persisted) in scratch (which must not exist; removed before returning) and compares it with
// the directory the run left, root: the model is right when they hold the same names, types,
// symbolic links and file contents (modes and times are not compared). It returns the
// differences, one line each ("out: contents differ"). Errors: I/O errors.
func Verify(m *Model, apm *APM, root, scratch string) ([]string, error) {
	ms := apm.Build(m, apm.Base)
	st := State{Persisted: make([]bool, len(ms))}
	for i := range st.Persisted {
		st.Persisted[i] = true
	}
	defer os.RemoveAll(scratch)
	if _, _, err := Materialize(m, ms, st, scratch); err != nil {
		return nil, err
	}
	return compareTrees(scratch, root)
}

func compareTrees(a, b string) ([]string, error) {
	var diffs []string
	seen := map[string]bool{}
	err := walkTree(b, func(p, rel string, fb fs.FileInfo) error {
		seen[rel] = true
		q := filepath.Join(a, rel)
		fa, err := os.Lstat(q)
		if err != nil {
			diffs = append(diffs, rel+": missing from the model")
			if fb.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case fa.Mode().Type() != fb.Mode().Type():
			diffs = append(diffs, rel+": type differs")
		case fb.Mode().IsRegular():
			x, err1 := os.ReadFile(q)
			y, err2 := os.ReadFile(p)
			if err1 != nil || err2 != nil {
				return fmt.Errorf("comparing %s: %v %v", rel, err1, err2)
			}
			if !bytes.Equal(x, y) {
				diffs = append(diffs, fmt.Sprintf("%s: contents differ (%d bytes modeled, %d on disk)", rel, len(x), len(y)))
			}
		case fb.Mode()&fs.ModeSymlink != 0:
			x, _ := os.Readlink(q)
			y, _ := os.Readlink(p)
			if x != y {
				diffs = append(diffs, rel+": link target differs")
			}
		}
		return nil
	})
	if err != nil {
		return diffs, err
	}
	err = walkTree(a, func(_, rel string, fi fs.FileInfo) error {
		if !seen[rel] {
			diffs = append(diffs, rel+": modeled but not on disk")
			if fi.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return diffs, err
}

// Summarize joins the first n differences.
func Summarize(diffs []string, n int) string {
	s := strings.Join(diffs[:min(n, len(diffs))], "; ")
	if len(diffs) > n {
		s += fmt.Sprintf("; %d more", len(diffs)-n)
	}
	return s
}

// Digest returns "sha256:" and the hex SHA-256 of crash directory dir and of the output printed
// before the crash: every entry's path relative to dir (in lexical order), its type, a regular
// file's contents, a symbolic link's target, and for a further name of a hard-linked file the
// name it shares its inode with. Modes and times are left out (they follow the umask). Errors:
// dir cannot be walked or a file read.
func Digest(dir string, stdout, stderr []byte) (string, error) {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	links := map[[2]uint64]string{}
	err := walkTree(dir, func(p, rel string, fi fs.FileInfo) error {
		field([]byte(rel))
		switch {
		case fi.IsDir():
			field([]byte("dir"))
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			field([]byte("symlink"))
			field([]byte(t))
		case fi.Mode().IsRegular():
			if k, ok := exec.HardLinked(fi); ok {
				if first, ok := links[k]; ok {
					field([]byte("link"))
					field([]byte(first))
					return nil
				}
				links[k] = rel
			}
			field([]byte("file"))
			return hashFile(h, p)
		default:
			field([]byte("special"))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	field([]byte("stdout"))
	field(stdout)
	field([]byte("stderr"))
	field(stderr)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile adds a file's size and contents to h.
func hashFile(h hash.Hash, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(fi.Size()))
	h.Write(n[:])
	_, err = io.Copy(h, f)
	return err
}
