package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
)

// File is a trace file opened once and read from its start as often as its consumers need:
// each Reader is one pass, a streaming Reader over its own section of the file (positioned
// reads, so passes may run at once). One `scry check` opens its trace once: the analyses, the
// inference, the exploration's plan and each of its walks are passes over one File.
type File struct {
	f      *os.File
	path   string
	hdr    Header
	passes atomic.Int64
}

// OpenFile opens the trace file at path and checks its header (its first HeaderSize bytes).
// Errors: as Open's, each naming path once.
func OpenFile(path string) (*File, error) {
	f, err := openPath(path)
	if err != nil {
		return nil, err
	}
	tf := &File{f: f, path: path}
	r, err := NewReader(io.NewSectionReader(f, 0, HeaderSize)) // the header alone
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tf.hdr = r.Header()
	return tf, nil
}

// Header returns the trace's header.
func (f *File) Header() Header { return f.hdr }

// section is the whole file as a reader of its own, from offset 0.
func (f *File) section() io.Reader { return io.NewSectionReader(f.f, 0, math.MaxInt64) }

// Reader starts a pass over the trace from its first record (Passes counts it). Its Close does
// nothing: the File is closed by Close. Errors: NewReader's, naming the path.
func (f *File) Reader() (*Reader, error) {
	f.passes.Add(1)
	r, err := NewReader(f.section())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	return r, nil
}

// Path is the file's path, as given to OpenFile.
func (f *File) Path() string { return f.path }

// Passes is the number of Readers made so far: how many times the trace was read (or begun to
// be read) from its start.
func (f *File) Passes() int { return int(f.passes.Load()) }

// Digest returns the hex SHA-256 of the file's bytes (a shard's report names the trace it
// explored by it). Errors: the file cannot be read.
func (f *File) Digest() (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f.section()); err != nil {
		return "", fmt.Errorf("%s: %w", f.path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Close closes the file; the Readers made from it must not be used after.
func (f *File) Close() error { return f.f.Close() }
