// Command gentrace writes the files generated from the trace schema (trace/schema.go; package
// trace/internal/schemagen says which), leaving those already up to date untouched. Run it
// through `go generate ./trace`; trace's TestGenerated fails when a generated file is stale.
//
// Usage: gentrace [-root DIR] (DIR: the repository root, default ..)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scry-pm/scry/trace/internal/schemagen"
)

func main() {
	root := flag.String("root", "..", "the repository root")
	flag.Parse()
	files, err := schemagen.Generate(func(path string) ([]byte, error) {
		return os.ReadFile(filepath.Join(*root, path))
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
	for _, f := range files {
		path := filepath.Join(*root, f.Path)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.Text) {
			continue
		}
		if err := os.WriteFile(path, f.Text, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gentrace:", err)
			os.Exit(1)
		}
	}
}
