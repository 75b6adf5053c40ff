package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Sentinel errors of the reader, for errors.Is. The errors Next and NewReader return wrap them
// with the byte offset and a detail (see *FormatError).
var (
	// ErrNotTrace: the input does not start with the 16-byte header of docs/trace-format.md
	// (wrong magic, or fewer than 16 bytes).
	ErrNotTrace = errors.New("not a scry trace")
	// ErrVersion: the header names a format version this package does not read.
	ErrVersion = errors.New("unsupported trace format version")
	// ErrTruncated: the trace was cut short (no END record, or a record cut in the middle),
	// typically because the program crashed or was killed. Every complete record before the
	// cut was delivered; callers should treat this as a warning and keep their results.
	ErrTruncated = errors.New("trace truncated")
	// ErrCorrupt: the bytes do not follow docs/trace-format.md (unknown record kind, varint
	// overflow, a size or count over the limits of the schema, a value its version does not
	// define, an undefined reference).
	ErrCorrupt = errors.New("trace corrupt")
)

// FormatError is the error Next and NewReader return for bad or cut input. It wraps one of
// ErrNotTrace, ErrVersion, ErrTruncated or ErrCorrupt.
type FormatError struct {
	Err    error  // the sentinel
	Offset int64  // byte offset in the file where the problem was found
	Record uint64 // index of the record (Event.Index) being read
	Detail string // what was wrong
}

// Error returns "<sentinel> at byte <offset> (record <index>): <detail>", or "<sentinel>:
// <detail>" for a problem of the file header (ErrNotTrace, ErrVersion, or a bad header field),
// which is in no record.
func (e *FormatError) Error() string {
	if e.Offset < HeaderSize && e.Record == 0 {
		return fmt.Sprintf("%v: %s", e.Err, e.Detail)
	}
	return fmt.Sprintf("%v at byte %d (record %d): %s", e.Err, e.Offset, e.Record, e.Detail)
}

// Unwrap returns the sentinel error.
func (e *FormatError) Unwrap() error { return e.Err }

// DefaultBufferSize is the size in bytes of the reader's window on its input. The window grows
// (up to MaxPayload plus a record's other fields) only when one record does not fit.
const DefaultBufferSize = 1 << 20

// initialBufferSize is the first window: short traces never allocate the full window.
const initialBufferSize = 64 << 10

// Reader decodes a trace stream record by record (docs/trace-format.md) with bounded memory:
// its input window, the site table and the call-stack table, which grow with the static size
// of the traced program, not with the length of the trace. A Reader is not safe for concurrent
// use.
type Reader struct {
	src    io.Reader
	closer io.Closer
	hdr    Header

	buf    []byte // window on the input: buf[pos:end] is not yet decoded
	target int    // size the window ramps up to once the input is longer than the first window
	pos    int
	end    int
	base   int64 // file offset of buf[0]
	eof    bool  // src returned io.EOF (or another error, kept in srcErr)

	srcErr error
	err    error // sticky error returned by Next

	ev    Event
	index uint64 // index of the next record

	last    uint64            // running address (the "last address" of the spec)
	thread  uint32            // current thread
	context uint32            // call-stack node current for thread
	ctxOf   map[uint32]uint32 // call-stack node of every thread seen, except the current one
	frames  []uint64          // activations of the current thread (never modified once delivered)
	lastHot bool              // the last record decoded was of a hot kind (see decode)
	frOf    map[uint32][]uint64
	deps    []Dep       // every dependence fact, in order of definition
	lists   recordLists // the list of the record being decoded

	sites    []Site         // every site, in order of definition
	siteIdx  map[uint32]int // site id -> index in sites
	roots    []string       // the project roots of the unit sites, in order of definition
	newSites []Site         // sites of the SITES record being read
	stacks   map[uint32]stackNode

	ended     bool
	endHow    EndHow
	endStatus int64
	sched     *Schedule // the last SCHEDULE record read
}

type stackNode struct {
	parent uint32
	site   uint32
	depth  uint32
}

// Header is the fixed 16-byte file header of a trace (docs/trace-format.md, "File header").
type Header struct {
	Version  uint16 // format version, Version
	Flags    uint16 // HeaderNoFlush, HeaderAArch64; other bits reserved (0), ignored by readers
	LineSize uint32 // cache-line size in bytes (64 on x86-64)
}

// NoFlush reports whether the header has HeaderNoFlush: libpmem skipped its cache flushes
// (PMEM_NO_FLUSH=1, or a platform whose persistence domain holds the CPU caches, which
// pmem_has_auto_flush(3) reports), so libpmem's and libpmemobj's persists only fenced and the
// bytes they "persisted" are durable only where the caches are (the eADR profile, px86.EADR).
// The runtime sets it from the environment and /sys at start; the program's own flush
// instructions are recorded either way.
func (h Header) NoFlush() bool { return h.Flags&HeaderNoFlush != 0 }

// AArch64 reports whether the header has HeaderAArch64: the recorded program is an aarch64
// binary, whose flushes are DC instructions and fences DSB and DMB (the Arm profile applies).
func (h Header) AArch64() bool { return h.Flags&HeaderAArch64 != 0 }

// NewReader reads and checks the header of the trace r and returns a Reader positioned on the
// first record. It reads r through its own buffer (DefaultBufferSize bytes), so r need not be
// buffered. Errors wrap ErrNotTrace (no magic, or fewer than 16 bytes, even when those begin
// the magic), ErrVersion, ErrCorrupt (a cache-line size that is not a power of two), or are the
// I/O error of r.
func NewReader(r io.Reader) (*Reader, error) {
	return newReaderSize(r, DefaultBufferSize)
}

func newReaderSize(r io.Reader, size int) (*Reader, error) {
	if size < HeaderSize {
		size = HeaderSize
	}
	rd := &Reader{
		src:     r,
		buf:     make([]byte, min(size, initialBufferSize)),
		target:  size,
		ctxOf:   make(map[uint32]uint32),
		frOf:    make(map[uint32][]uint64),
		siteIdx: make(map[uint32]int),
		stacks:  make(map[uint32]stackNode),
	}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Open opens the trace file at path and reads its header. Close closes the file. Every error
// names path once: those of os.Open, "PATH: is a directory, not a trace file", and "PATH: "
// followed by NewReader's.
func Open(path string) (*Reader, error) {
	f, err := openPath(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.closer = f
	return r, nil
}

// openPath opens the file at path for reading. Errors: those of os.Open, and "PATH: is a
// directory, not a trace file".
func openPath(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory, not a trace file", path)
	}
	return f, nil
}

// Close closes the file opened by Open; for a Reader made by NewReader it does nothing.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	c := r.closer
	r.closer = nil
	return c.Close()
}

// Header returns the file header.
func (r *Reader) Header() Header { return r.hdr }

// Offset returns the number of bytes of the input consumed so far (header and complete records).
func (r *Reader) Offset() int64 { return r.base + int64(r.pos) }

// Site returns the site with the given id among the SITES records read so far.
func (r *Reader) Site(id uint32) (Site, bool) {
	i, ok := r.siteIdx[id]
	if !ok {
		return Site{}, false
	}
	return r.sites[i], true
}

// Sites returns every site read so far, in order of definition. The slice is the reader's own:
// do not modify it; later SITES records may append to it.
func (r *Reader) Sites() []Site { return r.sites[:len(r.sites):len(r.sites)] }

// ProjectRoots returns the root directories of the projects whose compilation units the program
// was built from (the `callee` of its SiteUnit sites read so far, each once, in order of
// definition): the program's own code is what lies under them. Empty for a trace without unit
// sites (format versions before 10, black-box mode).
func (r *Reader) ProjectRoots() []string { return r.roots[:len(r.roots):len(r.roots)] }

// StackOf returns the call-site ids of call-stack node `node` (STACK records read so far),
// outermost call first. Node 0 (the empty stack) and unknown nodes give nil.
func (r *Reader) StackOf(node uint32) []uint32 {
	n, ok := r.stacks[node]
	if !ok {
		return nil
	}
	out := make([]uint32, n.depth)
	for i := int(n.depth) - 1; i >= 0 && ok; i-- {
		out[i] = n.site
		n, ok = r.stacks[n.parent]
	}
	return out
}

// Deps returns every dependence fact read so far, in order of definition. The slice must not
// be modified.
func (r *Reader) Deps() []Dep { return r.deps[:len(r.deps):len(r.deps)] }

// End returns the END record if it has been read: how the program ended and its exit status or
// signal number.
func (r *Reader) End() (how EndHow, status int64, ok bool) {
	return r.endHow, r.endStatus, r.ended
}

// Schedule returns the schedule the trace was recorded under, as the last SCHEDULE record read
// gives it (the first one until the one before END is read; ok false before any, and for a
// trace recorded under the operating system's schedule).
func (r *Reader) Schedule() (s Schedule, ok bool) {
	if r.sched == nil {
		return Schedule{}, false
	}
	return *r.sched, true
}

func (r *Reader) fail(sentinel error, off int64, format string, args ...any) error {
	return &FormatError{Err: sentinel, Offset: off, Record: r.index, Detail: fmt.Sprintf(format, args...)}
}

// fill makes at least need bytes available in buf[pos:end], reading from src. It returns false
// when the input ends (or fails) first; r.srcErr then holds a non-EOF error, if any. The window
// grows only when it is full of undecoded bytes, so memory follows the bytes actually present.
func (r *Reader) fill(need int) bool {
	for r.end-r.pos < need {
		if r.eof {
			return false
		}
		if len(r.buf) < r.target {
			// Ramp up to the full window once the input proves longer than the first one.
			nb := make([]byte, r.target)
			r.end = copy(nb, r.buf[r.pos:r.end])
			r.base += int64(r.pos)
			r.pos, r.buf = 0, nb
		}
		if r.pos > 0 && (r.end == len(r.buf) || need > len(r.buf)-r.pos) {
			n := copy(r.buf, r.buf[r.pos:r.end])
			r.base += int64(r.pos)
			r.pos, r.end = 0, n
		}
		if r.end == len(r.buf) {
			size := 2 * len(r.buf)
			if need > len(r.buf) && size > need {
				size = max(need, len(r.buf)+64)
			}
			nb := make([]byte, size)
			copy(nb, r.buf[:r.end])
			r.buf = nb
		}
		n, err := r.readSome(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.eof = true
			if err != io.EOF {
				r.srcErr = err
			}
		}
	}
	return true
}

func (r *Reader) readSome(p []byte) (int, error) {
	for range 100 {
		n, err := r.src.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

func (r *Reader) readHeader() error {
	if !r.fill(HeaderSize) {
		if r.srcErr != nil {
			return r.srcErr
		}
		// Not even a header: nothing of a run to analyse, whether the bytes present begin the
		// magic (a file cut before the runtime wrote its header) or not.
		got := r.buf[:r.end]
		switch m := min(len(got), len(Magic)); {
		case len(got) == 0:
			return &FormatError{Err: ErrNotTrace, Detail: "the file is empty"}
		case string(got[:m]) == Magic[:m]:
			return &FormatError{Err: ErrNotTrace, Offset: int64(len(got)),
				Detail: fmt.Sprintf("the file of %d bytes ends inside the %d-byte header", len(got), HeaderSize)}
		}
		return &FormatError{Err: ErrNotTrace,
			Detail: fmt.Sprintf("the file of %d bytes is shorter than the %d-byte header, and does not begin with its magic %q", len(got), HeaderSize, Magic)}
	}
	b := r.buf[:HeaderSize]
	if string(b[:8]) != Magic {
		return &FormatError{Err: ErrNotTrace, Detail: fmt.Sprintf("it begins with %q, not the magic %q", b[:8], Magic)}
	}
	r.hdr = decodeHeader(b)
	if r.hdr.Version < MinVersion || r.hdr.Version > Version {
		return &FormatError{Err: ErrVersion, Offset: 8,
			Detail: fmt.Sprintf("the trace has format version %d; this scry reads versions %d to %d", r.hdr.Version, MinVersion, Version)}
	}
	if ls := r.hdr.LineSize; ls == 0 || ls&(ls-1) != 0 {
		return &FormatError{Err: ErrCorrupt, Offset: 12, Detail: fmt.Sprintf("cache-line size %d is not a power of two", ls)}
	}
	r.pos = HeaderSize
	return nil
}

// Next decodes the next record and returns it as an Event (see Event for the fields of each
// kind). Event.Index is the record's 0-based position among all records of the trace, SITES,
// THREAD, CONTEXT and STACK records included. The returned *Event, its Data and its Sites are
// reused by the next call to Next: copy what you keep.
//
// Next returns io.EOF after a complete trace (the END record was delivered and the input
// ended). When the input ends without an END record or in the middle of a record, it returns an
// error wrapping ErrTruncated, after having delivered every complete record. Bad data gives an
// error wrapping ErrCorrupt, with the byte offset; an I/O error of the input is returned as is.
// Once Next returns an error, it returns the same error on every later call. Next never panics
// on any input, and rejects sizes over MaxPayload and MaxString before allocating.
func (r *Reader) Next() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		b := r.buf[r.pos:r.end]
		if len(b) > 0 {
			if r.ended {
				r.err = r.fail(ErrCorrupt, r.Offset(), "data after the END record")
				return nil, r.err
			}
			n, need, err := r.decode(b)
			if n > 0 {
				r.pos += n
				r.ev.Index = r.index
				r.index++
				return &r.ev, nil
			}
			if err != nil {
				r.err = err
				return nil, err
			}
			if need == 0 { // a SITES record: read site by site
				if err := r.readSites(); err != nil {
					r.err = err
					return nil, err
				}
				r.ev.Index = r.index
				r.index++
				return &r.ev, nil
			}
			if r.fill(need) {
				continue
			}
		} else if r.fill(1) {
			continue
		}
		// The input ended (or failed) before a whole record.
		if r.srcErr != nil {
			r.err = fmt.Errorf("reading the trace at byte %d: %w", r.Offset(), r.srcErr)
			return nil, r.err
		}
		if r.end > r.pos {
			r.err = r.fail(ErrTruncated, r.Offset(), "cut in the middle of a %v record (%d bytes of it present)",
				Kind(r.buf[r.pos]), r.end-r.pos)
		} else if r.ended {
			r.err = io.EOF
		} else {
			r.err = r.fail(ErrTruncated, r.Offset(), "no END record after %d records", r.index)
		}
		return nil, r.err
	}
}

// Varint decoding. uvarint returns the new index, or -1 when b ends first, -2 on overflow.

func uvarint(b []byte, i int) (uint64, int) {
	if uint(i) < uint(len(b)) {
		if c := b[i]; c < 0x80 {
			return uint64(c), i + 1
		}
	}
	return uvarintSlow(b, i)
}

//go:noinline
func uvarintSlow(b []byte, i int) (uint64, int) {
	var x uint64
	var s uint
	for j := 0; j < 10; j++ {
		if i+j >= len(b) {
			return 0, -1
		}
		c := b[i+j]
		if c < 0x80 {
			if j == 9 && c > 1 {
				return 0, -2
			}
			return x | uint64(c)<<s, i + j + 1
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, -2
}

func svarint(b []byte, i int) (int64, int) {
	ux, i := uvarint(b, i)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, i
}

// Errors of the generated decoders (reader_gen.go). k names what holds the field: a record of
// kind k, or for KindSites one site of it (a SITES record is decoded site by site); what is
// the field's name in docs/trace-format.md.

// holder is "a STORE record", or "a site" for KindSites.
func holder(k Kind) string {
	if k == KindSites {
		return "a site"
	}
	name := k.String()
	if strings.ContainsRune("AEIOU", rune(name[0])) {
		return "an " + name + " record"
	}
	return "a " + name + " record"
}

// short reports a varint that could not be decoded at index i < 0 of the window b: the need of
// decode when b ends first, else an overflow.
func (r *Reader) short(b []byte, i int, k Kind, what string) (int, int, error) {
	if i == -1 {
		return 0, len(b) + 1, nil
	}
	return 0, 0, r.fail(ErrCorrupt, r.Offset(), "varint overflow in the %s of %s", what, holder(k))
}

func (r *Reader) over32(k Kind, what string, v uint64) error {
	return r.fail(ErrCorrupt, r.Offset(), "%s %d of %s exceeds 32 bits", what, v, holder(k))
}

func (r *Reader) overBytes(k Kind, what string, v uint64, limit int) error {
	return r.fail(ErrCorrupt, r.Offset(), "%s of %d bytes in %s exceeds the %d-byte limit", what, v, holder(k), limit)
}

func (r *Reader) overCount(k Kind, what string, v uint64, limit int) error {
	return r.fail(ErrCorrupt, r.Offset(), "%s %d of %s exceeds the limit of %d", what, v, holder(k), limit)
}

func (r *Reader) zero(k Kind, what, why string) error {
	name := "site"
	if k != KindSites {
		name = k.String()
	}
	return r.fail(ErrCorrupt, r.Offset(), "bad %s %s 0: %s", name, what, why)
}

func (r *Reader) badValue(k Kind, what string, v uint64) error {
	name := "site"
	if k != KindSites {
		name = k.String()
	}
	return r.fail(ErrCorrupt, r.Offset(), "unknown %s %s %d in format version %d", name, what, v, r.hdr.Version)
}

func (r *Reader) badFlags(k Kind, what string, v uint64) error {
	return r.fail(ErrCorrupt, r.Offset(), "unknown bits in the %s %#x of %s", what, v, holder(k))
}

// str decodes a str at b[i:]. On failure it returns next < 0 with need/err as decode does.
func (r *Reader) str(b []byte, i int, k Kind, what string) (s string, next, need int, err error) {
	var v uint64
	if v, i = uvarint(b, i); i < 0 {
		_, need, err = r.short(b, i, k, what+" length")
		return "", -1, need, err
	}
	if v > MaxString {
		return "", -1, 0, r.overBytes(k, what, v, MaxString)
	}
	end := i + int(v)
	if end > len(b) {
		return "", -1, end, nil
	}
	return string(b[i:end]), end, 0, nil
}

// apply applies the record in r.ev (whose n bytes decode read) to the reader's state: the
// current thread and its call stack and activations, the call-stack and dependence tables, the
// end. It runs after the fields of a kind marked State in the schema; it returns decode's
// results, and rejects a record that names what is not defined.
func (r *Reader) apply(n int) (int, int, error) {
	ev := &r.ev
	switch ev.Kind {
	case KindThread:
		if t := ev.Thread; t != r.thread {
			r.ctxOf[r.thread] = r.context
			r.context = r.ctxOf[t]
			delete(r.ctxOf, t)
			if r.frames != nil {
				r.frOf[r.thread] = r.frames
			}
			r.frames = r.frOf[t]
			delete(r.frOf, t)
			r.thread = t
		}
		ev.Context, ev.Frames = r.context, r.frames
	case KindFrame:
		// A new slice: the Frames of events already delivered stay as they were.
		fr := make([]uint64, len(ev.Frames))
		copy(fr, ev.Frames)
		r.frames, ev.Frames = fr, fr
	case KindDeps:
		for _, d := range ev.Deps {
			for _, id := range [2]uint32{d.From, d.To} {
				if _, ok := r.siteIdx[id]; !ok {
					return 0, 0, r.fail(ErrCorrupt, r.Offset(), "dependence fact names undefined site %d", id)
				}
			}
		}
		r.deps = append(r.deps, ev.Deps...)
	case KindContext:
		r.context = ev.Stack
		ev.Context = r.context
	case KindStack:
		if _, dup := r.stacks[ev.Stack]; dup {
			return 0, 0, r.fail(ErrCorrupt, r.Offset(), "STACK node %d defined twice", ev.Stack)
		}
		depth := uint32(1)
		if ev.Parent != 0 {
			p, ok := r.stacks[ev.Parent]
			if !ok {
				return 0, 0, r.fail(ErrCorrupt, r.Offset(), "STACK node %d extends undefined node %d", ev.Stack, ev.Parent)
			}
			depth = p.depth + 1
		}
		r.stacks[ev.Stack] = stackNode{parent: ev.Parent, site: ev.Site, depth: depth}
	case KindEnd:
		r.ended, r.endHow, r.endStatus = true, ev.How, ev.Status
	case KindSchedule:
		s := ScheduleOf(ev)
		r.sched = &s
	}
	return n, 0, nil
}

// readSites reads the SITES record at r.pos site by site (a SITES record may be larger than the
// window), then adds the new sites to the table.
func (r *Reader) readSites() error {
	start := r.Offset()
	cut := func() error {
		if r.srcErr != nil {
			return fmt.Errorf("reading the trace at byte %d: %w", r.Offset(), r.srcErr)
		}
		return r.fail(ErrTruncated, start, "cut in the middle of a SITES record")
	}
	// Kind byte and count.
	var count uint64
	for {
		b := r.buf[r.pos:r.end]
		var i int
		if count, i = uvarint(b, 1); i >= 0 {
			r.pos += i
			break
		} else if i == -2 {
			return r.fail(ErrCorrupt, start, "varint overflow in the count of a SITES record")
		} else if !r.fill(len(b) + 1) {
			return cut()
		}
	}
	if count > uint64(MaxSites-len(r.sites)) {
		return r.fail(ErrCorrupt, start, "SITES record of %d sites exceeds the limit of %d sites in a trace", count, MaxSites)
	}
	r.newSites = r.newSites[:0]
	for j := uint64(0); j < count; j++ {
		for {
			var s Site
			n, need, err := r.decodeSite(r.buf[r.pos:r.end], &s)
			if err != nil {
				return err
			}
			if n > 0 {
				if _, dup := r.siteIdx[s.ID]; dup || r.isNewSite(s.ID) {
					return r.fail(ErrCorrupt, r.Offset(), "site %d defined twice", s.ID)
				}
				if s.InlinedAt == s.ID {
					return r.fail(ErrCorrupt, r.Offset(), "site %d: bad inlined-at site %d (itself)", s.ID, s.InlinedAt)
				}
				r.newSites = append(r.newSites, s)
				r.pos += n
				break
			}
			if !r.fill(need) {
				return cut()
			}
		}
	}
	for _, s := range r.newSites {
		r.siteIdx[s.ID] = len(r.sites)
		r.sites = append(r.sites, s)
		if s.Kind == SiteUnit && s.Callee != "" && !slices.Contains(r.roots, s.Callee) {
			r.roots = append(r.roots, s.Callee)
		}
	}
	r.ev = Event{Kind: KindSites, Thread: r.thread, Context: r.context, Frames: r.frames, Sites: r.newSites}
	r.lastHot = false
	return nil
}

func (r *Reader) isNewSite(id uint32) bool {
	// Sites of one record are almost always in increasing order; check the last one first.
	if n := len(r.newSites); n > 0 && r.newSites[n-1].ID < id {
		return false
	}
	for _, s := range r.newSites {
		if s.ID == id {
			return true
		}
	}
	return false
}
