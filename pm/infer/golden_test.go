package infer_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/scry-pm/scry/pm/infer"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden compares the JSON and text outputs of `scry infer` (time 0) for a small trace
// with every rule with testdata/golden.json and testdata/golden.txt (go test -update rewrites
// them).
func TestGolden(t *testing.T) {
	b := guarded(pool().Branch(21).Dep(21, val, 13).Dep(14, ctl, 21).Dep(5, ctl, 20).Dep(6, val, 11)).
		Store(sY, Y, 8).Store(sX, X, 8).Store(sW, W, 8).Store(sZ, Z, 8).
		OpBegin(0, "get").
		Load(11, X, 8).Load(12, Y, 8).Load(13, Z, 8).Load(14, W, 8).Load(13, Y, 8).Load(14, X, 8).
		Store(5, W, 8).Store(6, Z, 8).
		OpEnd(0).Exit(0)
	res, err := infer.Infer(b.Reader(t), infer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"golden.json", func(w *bytes.Buffer) error { return infer.WriteJSON(w, res, 0) }},
		{"golden.txt", func(w *bytes.Buffer) error { return infer.WriteText(w, res, 0) }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", f.name)
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s differs:\n got:\n%s\nwant:\n%s", f.name, buf.Bytes(), want)
		}
	}
}
