// Package analysistest builds small traces for the tests of the analyses, in the spirit of
// golang.org/x/tools/go/analysis/analysistest: a test lists events, runs the analyzers and
// compares the findings, written "kind@line", with what it wants.
//
// Every site id n used by an event stands for the site "test.c:n:1" in function "fn<n>" (so a
// finding's line is the site id of its location), kind chosen from the first event using it.
package analysistest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// File is the source file of every generated site.
const File = "test.c"

// Builder accumulates the events of a trace. Methods return the builder for chaining.
type Builder struct {
	Events   []trace.Event
	Stacks   []trace.Event // STACK definitions, written right after the sites
	LineSize uint32
	Deps     []trace.Dep // static dependence facts, written right after the sites
	thread   uint32
	context  uint32
	frames   []uint64
	kinds    map[uint32]trace.SiteKind
	copyOf   map[uint32]uint32 // site -> the site whose source position it shares
	inlAt    map[uint32]uint32 // site -> its inlined-at site
	access   map[uint32]trace.SiteAccess
	// Flags are the header's flags (trace.HeaderNoFlush).
	Flags uint16
}

// New returns an empty builder for 64-byte cache lines.
func New() *Builder {
	return &Builder{LineSize: 64, kinds: map[uint32]trace.SiteKind{}, copyOf: map[uint32]uint32{},
		inlAt: map[uint32]uint32{}, access: map[uint32]trace.SiteAccess{}}
}

// Copy makes site stand for the same source position as site of (line, column and function):
// the copy of one instruction that inlining or unrolling made.
func (b *Builder) Copy(site, of uint32) *Builder { b.copyOf[site] = of; return b }

// InlinedAt says site's code was inlined at the call at site at (a trace.SiteInlined site, at
// line at in function fn<at>, calling fn<site's line>).
func (b *Builder) InlinedAt(site, at uint32) *Builder {
	b.inlAt[site] = at
	b.kinds[at] = trace.SiteInlined
	return b
}

func (b *Builder) add(ev trace.Event, sk trace.SiteKind) *Builder {
	ev.Thread, ev.Context, ev.Frames = b.thread, b.context, b.frames
	if ev.Site != 0 {
		if _, ok := b.kinds[ev.Site]; !ok {
			b.kinds[ev.Site] = sk
		}
	}
	b.Events = append(b.Events, ev)
	return b
}

// Access makes site a site of kind k that accesses memory as a says (an atomic's memory
// order), whatever events use it.
func (b *Builder) Access(site uint32, k trace.SiteKind, a trace.SiteAccess) *Builder {
	b.kinds[site], b.access[site] = k, a
	return b
}

// Sync adds a SYNC record: operation op on object (an address, or for SyncCreate and SyncJoin a
// thread id) at site (0: unknown).
func (b *Builder) Sync(op trace.SyncOp, object uint64, site uint32) *Builder {
	return b.add(trace.Event{Kind: trace.KindSync, Sync: op, Object: object, Site: site}, trace.SiteCall)
}

// Thread makes the following events belong to thread tid.
func (b *Builder) Thread(tid uint32) *Builder { b.thread = tid; return b }

// Context makes node the call stack of the following events (define it with Stack).
func (b *Builder) Context(node uint32) *Builder { b.context = node; return b }

// Frames makes serials the activations of the following events (outermost first; see
// trace.Event.Frames). Serials are per thread: set them again after Thread.
func (b *Builder) Frames(serials ...uint64) *Builder { b.frames = slices.Clone(serials); return b }

// Branch declares site as a branch site (trace.SiteBranch): a static fact, no event.
func (b *Builder) Branch(site uint32) *Builder { b.kinds[site] = trace.SiteBranch; return b }

// Dep adds the static dependence fact "from depends on to" of kind k. Sites named only here
// (and not by Branch or an event) become load sites.
func (b *Builder) Dep(from uint32, k trace.DepKind, to uint32) *Builder {
	b.Deps = append(b.Deps, trace.Dep{From: from, To: to, Kind: k})
	return b
}

// Stack defines call-stack node id as parent extended by a call at site.
func (b *Builder) Stack(id, parent, site uint32) *Builder {
	if _, ok := b.kinds[site]; !ok {
		b.kinds[site] = trace.SiteCall
	}
	b.Stacks = append(b.Stacks, trace.Event{Kind: trace.KindStack, Stack: id, Parent: parent, Site: site})
	return b
}

// Map maps region id: length bytes at base, file "pool<id>".
func (b *Builder) Map(id uint32, base, length uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindRegionMap, Region: id, Addr: base, Size: length,
		Path: fmt.Sprintf("pool%d", id)}, trace.SiteLibCall)
}

// Unmap unmaps region id at site.
func (b *Builder) Unmap(id, site uint32) *Builder {
	return b.add(trace.Event{Kind: trace.KindRegionUnmap, Region: id, Site: site}, trace.SiteLibCall)
}

func data(size uint64) []byte { return bytes.Repeat([]byte{0xab}, int(size)) }

// Store is a STORE of size bytes at addr.
func (b *Builder) Store(site uint32, addr, size uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindStore, Site: site, Addr: addr, Size: size, Data: data(size)}, trace.SiteStore)
}

// StoreBytes is a STORE of data at addr (Store stores 0xab bytes).
func (b *Builder) StoreBytes(site uint32, addr uint64, data []byte) *Builder {
	return b.add(trace.Event{Kind: trace.KindStore, Site: site, Addr: addr, Size: uint64(len(data)), Data: bytes.Clone(data)}, trace.SiteStore)
}

// NTStore is an NT_STORE of size bytes at addr.
func (b *Builder) NTStore(site uint32, addr, size uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindNTStore, Site: site, Addr: addr, Size: size, Data: data(size)}, trace.SiteNTStore)
}

// Load is a LOAD of size bytes at addr.
func (b *Builder) Load(site uint32, addr, size uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindLoad, Site: site, Addr: addr, Size: size, Data: data(size)}, trace.SiteLoad)
}

// LoadBytes is a LOAD of data at addr (Load reads 0xab bytes).
func (b *Builder) LoadBytes(site uint32, addr uint64, data []byte) *Builder {
	return b.add(trace.Event{Kind: trace.KindLoad, Site: site, Addr: addr, Size: uint64(len(data)), Data: bytes.Clone(data)}, trace.SiteLoad)
}

// External is an EXTERNAL_WRITE of size bytes at addr with flags.
func (b *Builder) External(site uint32, addr, size uint64, flags uint8) *Builder {
	return b.add(trace.Event{Kind: trace.KindExternalWrite, Site: site, Addr: addr, Size: size, Data: data(size), Flags: flags}, trace.SiteLibCall)
}

// Flush is a FLUSH of the line of addr.
func (b *Builder) Flush(site uint32, kind trace.FlushKind, addr uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindFlush, Site: site, Flush: kind, Addr: addr}, trace.SiteFlush)
}

// InternalFlush is a FLUSH with the internal bit.
func (b *Builder) InternalFlush(site uint32, kind trace.FlushKind, addr uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindFlush, Site: site, Flush: kind, Addr: addr, Internal: true}, trace.SiteFlush)
}

// Fence is a FENCE.
func (b *Builder) Fence(site uint32, kind trace.FenceKind) *Builder {
	return b.add(trace.Event{Kind: trace.KindFence, Site: site, Fence: kind}, trace.SiteFence)
}

// InternalFence is a FENCE with the internal bit.
func (b *Builder) InternalFence(site uint32, kind trace.FenceKind) *Builder {
	return b.add(trace.Event{Kind: trace.KindFence, Site: site, Fence: kind, Internal: true}, trace.SiteFence)
}

// Persist is clwb of every line of [addr, addr+size) then sfence, all at site.
func (b *Builder) Persist(site uint32, addr, size uint64) *Builder {
	ls := uint64(b.LineSize)
	for a := addr &^ (ls - 1); a < addr+size; a += ls {
		b.Flush(site, trace.FlushCLWB, a)
	}
	return b.Fence(site, trace.FenceSFENCE)
}

// TxBegin is a TX_BEGIN.
func (b *Builder) TxBegin(site uint32) *Builder {
	return b.add(trace.Event{Kind: trace.KindTxBegin, Site: site}, trace.SiteLibCall)
}

// TxAdd is a TX_ADD of [addr, addr+size) with flags.
func (b *Builder) TxAdd(site uint32, addr, size uint64, flags uint8) *Builder {
	return b.add(trace.Event{Kind: trace.KindTxAdd, Site: site, Addr: addr, Size: size, Flags: flags}, trace.SiteLibCall)
}

// PMExclude is a PM_EXCLUDE of size bytes at addr (flags trace.PMInclude: PM again), as a
// Valgrind client request's site records it.
func (b *Builder) PMExclude(site uint32, addr, size uint64, flags uint8) *Builder {
	return b.add(trace.Event{Kind: trace.KindPMExclude, Site: site, Addr: addr, Size: size, Flags: flags}, trace.SiteLibCall)
}

// SetClean is a SET_CLEAN of size bytes at addr.
func (b *Builder) SetClean(site uint32, addr, size uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindSetClean, Site: site, Addr: addr, Size: size}, trace.SiteLibCall)
}

// TxIgnore is a TX_IGNORE of size bytes at addr.
func (b *Builder) TxIgnore(site uint32, addr, size uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindTxIgnore, Site: site, Addr: addr, Size: size}, trace.SiteLibCall)
}

// TxCommit is a TX_COMMIT.
func (b *Builder) TxCommit(site uint32) *Builder {
	return b.add(trace.Event{Kind: trace.KindTxCommit, Site: site}, trace.SiteLibCall)
}

// TxAbort is a TX_ABORT.
func (b *Builder) TxAbort(site uint32) *Builder {
	return b.add(trace.Event{Kind: trace.KindTxAbort, Site: site, Errnum: 1}, trace.SiteLibCall)
}

// TxEnd is a TX_END.
func (b *Builder) TxEnd(site uint32) *Builder {
	return b.add(trace.Event{Kind: trace.KindTxEnd, Site: site}, trace.SiteLibCall)
}

// Alloc is an ALLOC of size bytes at addr with flags.
func (b *Builder) Alloc(site uint32, addr, size uint64, flags uint8) *Builder {
	return b.add(trace.Event{Kind: trace.KindAlloc, Site: site, Addr: addr, Size: size, Flags: flags}, trace.SiteLibCall)
}

// Free appends FREE at site (kind libcall) with flags.
func (b *Builder) Free(site uint32, addr uint64, flags uint8) *Builder {
	return b.add(trace.Event{Kind: trace.KindFree, Site: site, Addr: addr, Flags: flags}, trace.SiteLibCall)
}

// OpBegin begins operation i with text.
func (b *Builder) OpBegin(i uint64, text string) *Builder {
	return b.add(trace.Event{Kind: trace.KindOpBegin, Op: i, Text: text}, 0)
}

// OpEnd ends operation i.
func (b *Builder) OpEnd(i uint64) *Builder {
	return b.add(trace.Event{Kind: trace.KindOpEnd, Op: i}, 0)
}

// Warning is a WARNING record: the runtime degraded, for the reason msg.
func (b *Builder) Warning(msg string) *Builder {
	return b.add(trace.Event{Kind: trace.KindWarning, Text: msg}, 0)
}

// Exit ends the trace: the program exited with status.
func (b *Builder) Exit(status int64) *Builder {
	return b.add(trace.Event{Kind: trace.KindEnd, How: trace.EndExit, Status: status}, 0)
}

// Output adds an OUTPUT record: text printed on standard output by the library call at site.
func (b *Builder) Output(site uint32, text string) *Builder {
	return b.add(trace.Event{Kind: trace.KindOutput, Site: site, Handle: 1, Data: []byte(text)}, trace.SiteLibCall)
}

// Signal ends the trace: the program was killed by signal sig.
func (b *Builder) Signal(sig int64) *Builder {
	return b.add(trace.Event{Kind: trace.KindEnd, How: trace.EndSignal, Status: sig}, 0)
}

// Sites returns the site table: one site per id used.
func (b *Builder) Sites() []trace.Site {
	for _, d := range b.Deps {
		for _, s := range [2]uint32{d.From, d.To} {
			if _, ok := b.kinds[s]; !ok {
				b.kinds[s] = trace.SiteLoad
			}
		}
	}
	var ids []uint32
	for id := range b.kinds {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var sites []trace.Site
	for _, id := range ids {
		line := id
		if of, ok := b.copyOf[id]; ok {
			line = of
		}
		sites = append(sites, trace.Site{ID: id, Kind: b.kinds[id], Function: fmt.Sprintf("fn%d", line),
			File: File, Line: line, Column: 1, InlinedAt: b.inlAt[id], Access: b.access[id]})
	}
	return sites
}

// Encode writes the trace: header, SITES, DEPS, STACK definitions, then the events (as they are; add
// Exit for a complete trace).
func (b *Builder) Encode() ([]byte, error) {
	var buf bytes.Buffer
	w, err := trace.NewWriterFlags(&buf, b.LineSize, b.Flags)
	if err != nil {
		return nil, err
	}
	if sites := b.Sites(); len(sites) > 0 {
		if err := w.Write(&trace.Event{Kind: trace.KindSites, Sites: sites}); err != nil {
			return nil, err
		}
	}
	if len(b.Deps) > 0 {
		if err := w.Write(&trace.Event{Kind: trace.KindDeps, Deps: b.Deps}); err != nil {
			return nil, err
		}
	}
	for i := range b.Stacks {
		if err := w.Write(&b.Stacks[i]); err != nil {
			return nil, err
		}
	}
	for i := range b.Events {
		if err := w.Write(&b.Events[i]); err != nil {
			return nil, fmt.Errorf("event %d (%v): %w", i, b.Events[i].Kind, err)
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Reader encodes the trace and returns a reader on it, failing t on error.
func (b *Builder) Reader(t testing.TB) *trace.Reader {
	t.Helper()
	data, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Source encodes the trace and returns a framework source that reads it (as often as the
// driver needs), failing t on error.
func (b *Builder) Source(t testing.TB) func() (*trace.Reader, error) {
	t.Helper()
	data, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)) }
}

// RawWriter returns a function that writes events as they are (no sites or defaults added,
// unlike a Builder) into a trace of 64-byte cache lines, and one that ends the trace and returns
// its bytes, both failing tb on an error: for synthetic traces too large or too irregular to
// build record by record with a Builder (benchmarks).
func RawWriter(tb testing.TB) (write func(*trace.Event), done func() []byte) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, 64)
	if err != nil {
		tb.Fatal(err)
	}
	write = func(ev *trace.Event) {
		if err := w.Write(ev); err != nil {
			tb.Fatal(err)
		}
	}
	done = func() []byte {
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		return buf.Bytes()
	}
	return write, done
}

// WriteFiles encodes the trace into dir/NAME.trace and writes ops, one per line, into
// dir/NAME.ops (the workload a crash exploration of the trace re-executes), failing t on error.
// It returns both paths.
func (b *Builder) WriteFiles(t testing.TB, dir, name string, ops []string) (tracePath, workloadPath string) {
	t.Helper()
	data, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	tracePath, workloadPath = filepath.Join(dir, name+".trace"), filepath.Join(dir, name+".ops")
	if err := os.WriteFile(tracePath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(workloadPath, []byte(strings.Join(ops, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tracePath, workloadPath
}

// Summary returns the findings as "kind@line", sorted.
func Summary(rep *report.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, fmt.Sprintf("%s@%d", f.Kind, f.Location.Line))
	}
	slices.Sort(out)
	return out
}

// RecordedTrace returns the bytes of the recorded trace named by the environment variable
// SCRY_BENCH_TRACE, for the benchmarks that measure a real workload (docs/performance.md);
// it skips tb when the variable is unset and fails it when the file cannot be read.
func RecordedTrace(tb testing.TB) []byte {
	tb.Helper()
	path := os.Getenv("SCRY_BENCH_TRACE")
	if path == "" {
		tb.Skip("SCRY_BENCH_TRACE not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
