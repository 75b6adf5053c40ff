package workload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Workload is a workload file split into operations, one per line: what a target reads on
// standard input, operation by operation (docs/architecture.md, the driver protocol).
type Workload struct {
	// Path is the file's absolute path ("" for a workload that is not a file).
	Path string
	// Ops[k] is operation k's line, without its newline.
	Ops []string
}

// Read reads a workload file: one operation per line, a final line without newline counted
// too. Errors: the file cannot be read.
func Read(path string) (Workload, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Workload{}, fmt.Errorf("workload: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Workload{}, err
	}
	return Parse(abs, b), nil
}

// Parse splits a workload's contents into operations, one per line (a final line without
// newline counted too; a line keeps a trailing \r, which the program reads too). Path is
// recorded as is. It accepts any input.
func Parse(path string, b []byte) Workload {
	w := Workload{Path: path}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i]
			b = b[i+1:]
		} else {
			b = nil
		}
		w.Ops = append(w.Ops, string(line))
	}
	return w
}

// Suffix returns the standard input of a run after operation k: lines k+1..n, each ending in a
// newline (k = -1: every line).
func (w Workload) Suffix(k int) []byte {
	var b bytes.Buffer
	for i := k + 1; i < len(w.Ops); i++ {
		b.WriteString(w.Ops[i])
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Lines returns the standard input of a run applying the operations ops, in that order.
func (w Workload) Lines(ops []int) []byte {
	var b bytes.Buffer
	for _, i := range ops {
		b.WriteString(w.Ops[i])
		b.WriteByte('\n')
	}
	return b.Bytes()
}
