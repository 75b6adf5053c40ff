package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Writer encodes events as a trace (docs/trace-format.md). It is the Go twin of the C runtime's
// writer, used by tests, by tools that rewrite traces, and by front ends written in Go. It
// keeps the running address of the `addr` encoding and the current thread and call stack, and
// emits THREAD and CONTEXT records itself when an event's Thread or Context differ from the
// current ones. A Writer is not safe for concurrent use; errors are sticky.
type Writer struct {
	bw      *bufio.Writer
	version uint16            // the format version written
	last    uint64            // running address
	thread  uint32            // current thread
	context uint32            // call-stack node current for thread
	ctxOf   map[uint32]uint32 // call-stack node of the other threads
	frames  []uint64          // activations current for thread
	frOf    map[uint32][]uint64
	scratch []byte
	ended   bool
	err     error
}

// NewWriter writes the 16-byte file header (format Version, cache-line size lineSize in bytes,
// which must be a power of two) to w and returns a Writer that buffers its output: call Flush
// at the end. Errors: a bad lineSize, or the write error of w.
func NewWriter(w io.Writer, lineSize uint32) (*Writer, error) {
	return newWriterVersion(w, lineSize, Version)
}

// NewWriterFlags is NewWriter with header flags (HeaderNoFlush, HeaderAArch64). Errors: NewWriter's, and an
// unknown flag.
func NewWriterFlags(w io.Writer, lineSize uint32, flags uint16) (*Writer, error) {
	if known := uint16(HeaderNoFlush | HeaderAArch64); flags&^known != 0 {
		return nil, fmt.Errorf("trace: unknown header flags %#x", flags&^known)
	}
	return newWriterHeader(w, Header{Version: Version, Flags: flags, LineSize: lineSize})
}

// newWriterVersion is NewWriter for format version v (MinVersion..Version): the records,
// fields and values a version lacks are rejected or left out, as its readers expect.
func newWriterVersion(w io.Writer, lineSize uint32, v uint16) (*Writer, error) {
	return newWriterHeader(w, Header{Version: v, LineSize: lineSize})
}

// newWriterHeader writes header h (its version, flags and line size) and returns the Writer.
func newWriterHeader(w io.Writer, h Header) (*Writer, error) {
	lineSize, v := h.LineSize, h.Version
	if lineSize == 0 || lineSize&(lineSize-1) != 0 {
		return nil, fmt.Errorf("trace: cache-line size %d is not a power of two", lineSize)
	}
	if v < MinVersion || v > Version {
		return nil, fmt.Errorf("trace: format version %d; this package writes versions %d to %d", v, MinVersion, Version)
	}
	wr := &Writer{bw: bufio.NewWriterSize(w, 1<<16), version: v, ctxOf: make(map[uint32]uint32), frOf: make(map[uint32][]uint64)}
	if _, err := wr.bw.Write(appendHeader(nil, h)); err != nil {
		return nil, err
	}
	return wr, nil
}

// Flush writes buffered records to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	return w.err
}

// Write encodes one record from ev; ev.Kind selects the fields, as documented on Event. For
// STORE, NT_STORE, LOAD and EXTERNAL_WRITE the size written is len(ev.Data) (ev.Size must be 0
// or equal to it). For FLUSH and FENCE the kind byte is ev.Flush or ev.Fence, with InternalBit
// when ev.Internal. A THREAD record sets the current thread to ev.Thread, a CONTEXT record the
// current thread's stack to ev.Stack. For every other kind except SITES, STACK and END, Write
// first emits THREAD and CONTEXT records when ev.Thread or ev.Context differ from the current
// ones. ev.Index is ignored.
//
// Errors: an unknown kind, a value the format cannot carry (a payload over MaxPayload bytes, a
// string over MaxString bytes, an enum value out of range, site id 0 in SITES, STACK node 0,
// unknown FS_OP flags), a record after END, or the write error of the underlying writer.
func (w *Writer) Write(ev *Event) error {
	if w.err != nil {
		return w.err
	}
	if w.ended {
		return errors.New("trace: record written after END")
	}
	switch ev.Kind {
	case KindSites, KindStack, KindThread, KindContext, KindEnd, KindDeps, KindFrame:
	default:
		if ev.Thread != w.thread {
			if err := w.Write(&Event{Kind: KindThread, Thread: ev.Thread}); err != nil {
				return err
			}
		}
		if ev.Context != w.context {
			if err := w.Write(&Event{Kind: KindContext, Stack: ev.Context}); err != nil {
				return err
			}
		}
		if !slices.Equal(ev.Frames, w.frames) {
			if err := w.Write(&Event{Kind: KindFrame, Frames: ev.Frames}); err != nil {
				return err
			}
		}
	}
	if err := w.encode(ev); err != nil {
		return err
	}
	switch ev.Kind {
	case KindThread:
		if ev.Thread != w.thread {
			w.ctxOf[w.thread] = w.context
			w.context = w.ctxOf[ev.Thread]
			delete(w.ctxOf, ev.Thread)
			w.frOf[w.thread] = w.frames
			w.frames = w.frOf[ev.Thread]
			delete(w.frOf, ev.Thread)
			w.thread = ev.Thread
		}
	case KindContext:
		w.context = ev.Stack
	case KindFrame:
		w.frames = slices.Clone(ev.Frames)
	case KindEnd:
		w.ended = true
	}
	return nil
}

// inlineData is the largest payload appended to the record bytes rather than written on its own.
const inlineData = 64

// data adds the payload data to the record bytes b: appended when small (the bytes of a load
// or store), else written after b without a copy (then b is returned emptied for the rest of
// the record).
func (w *Writer) data(b, data []byte) []byte {
	if len(data) <= inlineData {
		return append(b, data...)
	}
	return w.put(b, data)
}

// put writes the record bytes b, then data, and returns b emptied. A write error is kept in
// w.err.
func (w *Writer) put(b, data []byte) []byte {
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
	if w.err == nil {
		_, w.err = w.bw.Write(data)
	}
	return b[:0]
}

// encode checks ev against the format version of w, then writes its record: nothing when ev is
// not valid (the error says why), so that the writer's state changes only with a record.
func (w *Writer) encode(ev *Event) error {
	b, err := w.appendRecord(w.scratch[:0], ev)
	if err != nil {
		return err
	}
	w.scratch = b[:0]
	if len(b) > 0 {
		if _, err := w.bw.Write(b); err != nil {
			w.err = err
		}
	}
	return w.err
}

// bitIf returns mask when set, else 0.
func bitIf(set bool, mask byte) byte {
	if set {
		return mask
	}
	return 0
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
