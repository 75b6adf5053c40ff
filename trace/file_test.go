package trace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFile: a trace file opened once is read from its start by every pass, each the whole trace,
// passes counted; a file that is no trace, a directory and a missing file are errors naming the
// path; the digest is the file's SHA-256.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.trace")
	var buf bytes.Buffer
	w, err := NewWriter(&buf, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []Event{
		{Kind: KindRegionMap, Region: 1, Addr: 4096, Size: 4096, Path: "/p/a.pool"},
		{Kind: KindEnd, How: EndExit},
	} {
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tf, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	if tf.Passes() != 0 || tf.Path() != path {
		t.Errorf("a new file: %d passes, path %q", tf.Passes(), tf.Path())
	}
	for pass := 1; pass <= 3; pass++ {
		r, err := tf.Reader()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if err != nil {
				break
			}
			n++
		}
		r.Close() // does not close the file
		if n != 2 || tf.Passes() != pass {
			t.Errorf("pass %d: %d records, %d passes counted", pass, n, tf.Passes())
		}
	}
	d, err := tf.Digest()
	if err != nil || d != "" && len(d) != 64 {
		t.Errorf("digest %q, %v", d, err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("not a trace at all"), 0o644)
	if _, err := OpenFile(bad); !errors.Is(err, ErrNotTrace) || !strings.Contains(err.Error(), bad) {
		t.Errorf("no trace: %v", err)
	}
	if _, err := OpenFile(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := OpenFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
