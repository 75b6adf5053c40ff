package model

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	err := WalkTree(b, func(p, rel string, fb fs.FileInfo) error {
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
	err = WalkTree(a, func(_, rel string, fi fs.FileInfo) error {
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
