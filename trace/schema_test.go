package trace_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/scry-pm/scry/trace/internal/schemagen"
)

// TestGenerated fails when a file generated from the schema (trace/schema.go) differs from what
// the generator writes now: the Go constants, codecs and dump of this package, the C header of
// the runtime and the tables of docs/trace-format.md. Run `go generate ./trace`.
func TestGenerated(t *testing.T) {
	read := func(path string) ([]byte, error) { return os.ReadFile(filepath.Join("..", path)) }
	files, err := schemagen.Generate(read)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{schemagen.PathConsts, schemagen.PathReader, schemagen.PathWriter, schemagen.PathDump,
		schemagen.PathC, schemagen.PathDoc}
	if len(files) != len(want) {
		t.Fatalf("%d generated files, want %d", len(files), len(want))
	}
	for i, f := range files {
		if f.Path != want[i] {
			t.Errorf("generated file %d is %s, want %s", i, f.Path, want[i])
		}
		got, err := read(f.Path)
		if err != nil {
			t.Errorf("reading the generated file: %v", err)
			continue
		}
		if !bytes.Equal(got, f.Text) {
			t.Errorf("%s is stale: run `go generate ./trace`", f.Path)
		}
	}
}
