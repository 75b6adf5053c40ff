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
	if lineSize == 0 || lineSize&(lineSize-1) != 0 {
		return nil, fmt.Errorf("trace: cache-line size %d is not a power of two", lineSize)
	}
	wr := &Writer{bw: bufio.NewWriterSize(w, 1<<16), ctxOf: make(map[uint32]uint32), frOf: make(map[uint32][]uint64)}
	var h [HeaderSize]byte
	copy(h[:], Magic)
	binary.LittleEndian.PutUint16(h[8:], Version)
	binary.LittleEndian.PutUint32(h[12:], lineSize)
	if _, err := wr.bw.Write(h[:]); err != nil {
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
// string over MaxString bytes, a flush/fence/end kind out of range, site id 0 in SITES, STACK
// node 0), a record after END, or the write error of the underlying writer.
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
	b := w.scratch[:0]
	b = append(b, byte(ev.Kind))
	last := w.last
	addr := func(b []byte, a uint64) []byte {
		b = binary.AppendVarint(b, int64(a-last))
		last = a
		return b
	}
	var data []byte // payload written after b
	var tail = -1   // a byte written after data, if >= 0
	switch ev.Kind {
	case KindSites:
		b = binary.AppendUvarint(b, uint64(len(ev.Sites)))
		for _, s := range ev.Sites {
			if s.ID == 0 {
				return errors.New("trace: site id 0 is reserved for unknown sites")
			}
			if len(s.Function) > MaxString || len(s.File) > MaxString || len(s.Callee) > MaxString {
				return fmt.Errorf("trace: site %d has a string over %d bytes", s.ID, MaxString)
			}
			b = binary.AppendUvarint(b, uint64(s.ID))
			b = append(b, byte(s.Kind))
			b = appendStr(b, s.Function)
			b = appendStr(b, s.File)
			b = binary.AppendUvarint(b, uint64(s.Line))
			b = binary.AppendUvarint(b, uint64(s.Column))
			b = appendStr(b, s.Callee)
			b = binary.AppendUvarint(b, uint64(s.InlinedAt))
		}
	case KindThread:
		b = binary.AppendUvarint(b, uint64(ev.Thread))
	case KindRegionMap:
		if len(ev.Path) > MaxString {
			return fmt.Errorf("trace: path of %d bytes exceeds %d", len(ev.Path), MaxString)
		}
		b = binary.AppendUvarint(b, uint64(ev.Region))
		b = binary.AppendUvarint(b, ev.Addr)
		b = binary.AppendUvarint(b, ev.Size)
		b = binary.AppendUvarint(b, ev.FileOffset)
		b = appendStr(b, ev.Path)
		b = binary.AppendUvarint(b, uint64(ev.Site))
		b = append(b, ev.Flags)
	case KindRegionUnmap:
		b = binary.AppendUvarint(b, uint64(ev.Region))
		b = binary.AppendUvarint(b, uint64(ev.Site))
	case KindStore, KindNTStore, KindLoad, KindExternalWrite:
		if ev.Size != 0 && ev.Size != uint64(len(ev.Data)) {
			return fmt.Errorf("trace: %v with Size %d and %d bytes of Data", ev.Kind, ev.Size, len(ev.Data))
		}
		if len(ev.Data) > MaxPayload {
			return fmt.Errorf("trace: %v of %d bytes exceeds %d", ev.Kind, len(ev.Data), MaxPayload)
		}
		b = binary.AppendUvarint(b, uint64(ev.Site))
		b = addr(b, ev.Addr)
		b = binary.AppendUvarint(b, uint64(len(ev.Data)))
		data = ev.Data
		if ev.Kind == KindExternalWrite {
			tail = int(ev.Flags)
		}
	case KindFlush, KindFence:
		k := uint8(ev.Flush)
		if ev.Kind == KindFence {
			k = uint8(ev.Fence)
		}
		if k < 1 || k > 3 {
			return fmt.Errorf("trace: %v kind %d out of range", ev.Kind, k)
		}
		if ev.Internal {
			k |= InternalBit
		}
		b = binary.AppendUvarint(b, uint64(ev.Site))
		b = append(b, k)
		if ev.Kind == KindFlush {
			b = addr(b, ev.Addr)
		}
	case KindTxBegin, KindTxCommit, KindTxEnd:
		b = binary.AppendUvarint(b, uint64(ev.Site))
	case KindTxAbort:
		b = binary.AppendUvarint(b, uint64(ev.Site))
		b = binary.AppendUvarint(b, ev.Errnum)
	case KindTxAdd, KindAlloc, KindFree:
		b = binary.AppendUvarint(b, uint64(ev.Site))
		b = addr(b, ev.Addr)
		if ev.Kind != KindFree {
			b = binary.AppendUvarint(b, ev.Size)
		}
		b = append(b, ev.Flags)
	case KindOpBegin:
		if len(ev.Text) > MaxString {
			return fmt.Errorf("trace: operation text of %d bytes exceeds %d", len(ev.Text), MaxString)
		}
		b = binary.AppendUvarint(b, ev.Op)
		b = appendStr(b, ev.Text)
	case KindOpEnd:
		b = binary.AppendUvarint(b, ev.Op)
	case KindStack:
		if ev.Stack == 0 {
			return errors.New("trace: STACK node 0 is the empty stack")
		}
		b = binary.AppendUvarint(b, uint64(ev.Stack))
		b = binary.AppendUvarint(b, uint64(ev.Parent))
		b = binary.AppendUvarint(b, uint64(ev.Site))
	case KindContext:
		b = binary.AppendUvarint(b, uint64(ev.Stack))
	case KindFrame:
		if len(ev.Frames) > MaxDepth {
			return fmt.Errorf("trace: FRAME of %d activations exceeds %d", len(ev.Frames), MaxDepth)
		}
		b = binary.AppendUvarint(b, uint64(len(ev.Frames)))
		for _, f := range ev.Frames {
			b = binary.AppendUvarint(b, f)
		}
	case KindDeps:
		if len(ev.Deps) > MaxDeps {
			return fmt.Errorf("trace: DEPS of %d facts exceeds %d", len(ev.Deps), MaxDeps)
		}
		b = binary.AppendUvarint(b, uint64(len(ev.Deps)))
		for _, d := range ev.Deps {
			if d.Kind < DepControl || d.Kind > DepAddress {
				return fmt.Errorf("trace: dependence kind %d out of range", d.Kind)
			}
			b = binary.AppendUvarint(b, uint64(d.From))
			b = append(b, byte(d.Kind))
			b = binary.AppendUvarint(b, uint64(d.To))
		}
	case KindWarning:
		if len(ev.Text) > MaxString {
			return fmt.Errorf("trace: warning of %d bytes exceeds %d", len(ev.Text), MaxString)
		}
		b = appendStr(b, ev.Text)
	case KindFSOp, KindOutput:
		if len(ev.Data) > MaxPayload {
			return fmt.Errorf("trace: %v of %d bytes exceeds %d", ev.Kind, len(ev.Data), MaxPayload)
		}
		b = binary.AppendUvarint(b, uint64(ev.Site))
		if ev.Kind == KindFSOp {
			if ev.FS < FSOpen || ev.FS > FSOpLast {
				return fmt.Errorf("trace: FS_OP operation %d out of range", ev.FS)
			}
			if ev.FSFlags&^FSFlagsAll != 0 {
				return fmt.Errorf("trace: FS_OP flags %#x out of range", ev.FSFlags)
			}
			if len(ev.Path) > MaxString || len(ev.Path2) > MaxString {
				return fmt.Errorf("trace: FS_OP path over %d bytes", MaxString)
			}
			b = append(b, byte(ev.FS))
			b = binary.AppendUvarint(b, uint64(ev.FSFlags))
			b = binary.AppendUvarint(b, ev.Handle)
			b = binary.AppendUvarint(b, ev.FileOffset)
			b = binary.AppendUvarint(b, ev.Size)
			b = binary.AppendVarint(b, ev.Result)
			b = appendStr(b, ev.Path)
			b = appendStr(b, ev.Path2)
		} else {
			b = binary.AppendUvarint(b, ev.Handle)
		}
		b = binary.AppendUvarint(b, uint64(len(ev.Data)))
		data = ev.Data
	case KindEnd:
		if ev.How != EndExit && ev.How != EndSignal {
			return fmt.Errorf("trace: END kind %d out of range", ev.How)
		}
		b = append(b, byte(ev.How))
		b = binary.AppendVarint(b, ev.Status)
	default:
		return fmt.Errorf("trace: unknown record kind 0x%02x", uint8(ev.Kind))
	}
	w.scratch = b
	if _, err := w.bw.Write(b); err != nil {
		w.err = err
		return err
	}
	if len(data) > 0 {
		if _, err := w.bw.Write(data); err != nil {
			w.err = err
			return err
		}
	}
	if tail >= 0 {
		if err := w.bw.WriteByte(byte(tail)); err != nil {
			w.err = err
			return err
		}
	}
	w.last = last
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

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
