package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader (run: go test -fuzz=FuzzReader ./trace). The
// reader must never panic, must end with io.EOF, ErrTruncated, ErrCorrupt, ErrNotTrace or
// ErrVersion, must keep its window within twice the input size, and must read the same records
// whatever its buffer size.
func FuzzReader(f *testing.F) {
	if data, err := os.ReadFile("testdata/small.trace"); err == nil {
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add(writeTrace(f, sampleEvents()[:5]))
	f.Add(benchTrace(f, 50))
	f.Add(cat(header(), []byte{0x05, 1, 0}, uv(MaxPayload)))
	f.Add(cat(header(), []byte{0x01}, uv(1000), []byte{1, 1, 0, 0, 0, 0, 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var results [2][]Event
		var errs [2]error
		for i, size := range []int{HeaderSize, DefaultBufferSize} {
			r, err := newReaderSize(bytes.NewReader(data), size)
			if err != nil {
				if !errors.Is(err, ErrNotTrace) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("NewReader: unexpected error %v", err)
				}
				return
			}
			results[i], errs[i] = readAll(r)
			err = errs[i]
			if err != io.EOF && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error %v", err)
			}
			if limit := max(size, 2*len(data)+128); len(r.buf) > limit {
				t.Fatalf("window of %d bytes for %d bytes of input", len(r.buf), len(data))
			}
			if r.Offset() > int64(len(data)) {
				t.Fatalf("offset %d past the input's %d bytes", r.Offset(), len(data))
			}
			// Exercise the tables and the dump on whatever was read.
			for _, s := range r.Sites() {
				r.StackOf(s.ID)
			}
		}
		if len(results[0]) != len(results[1]) || errs[0].Error() != errs[1].Error() {
			t.Fatalf("buffer sizes disagree: %d records, %v / %d records, %v",
				len(results[0]), errs[0], len(results[1]), errs[1])
		}
		r, _ := NewReader(bytes.NewReader(data))
		Dump(io.Discard, r, DumpOptions{SiteTable: true, Stacks: true})
		r, _ = NewReader(bytes.NewReader(data))
		ComputeStats(r)
	})
}
