// Package analysis is scry's framework of trace analyses, and the public API for writing your own
// oracle over the persistent-memory (PM) state scry replays from a trace. It is modeled on
// golang.org/x/tools/go/analysis: an Analyzer is a static, declared unit (a name, one doc text,
// the class of its findings, the analyzers it requires, the type of its result); one driver, Run,
// runs a set of analyzers over a trace; cli.Main (package cli, scry's command line) turns a set of
// analyzers into a complete scry command line, the way go/analysis/multichecker does. It lives
// under pm/, the mode whose replayed state it gives analyzers, as go/analysis lives under go/.
//
// The idea of user-written oracles is AGAMOTTO's custom bug oracles (AGAMOTTO, OSDI'20, §4.2.2):
// a developer states what must hold of the program's own PM data (its undo log is never added to
// twice in a transaction, a structure is only changed inside a transaction, a log entry is durable
// before its commit flag is set) and the tool checks it on every explored state. In scry the
// state is that of a recorded run, replayed record by record; the built-in trace oracles (package
// pm/oracle) are analyzers of this package too, and are the best examples to read.
//
// # Writing an analyzer
//
// Declare the analyzer as a package-level variable. Its Name is the kind of its findings
// (kebab-case, not a kind scry already has: `scry check --help` lists them), Doc the one text
// --help, the SARIF rule and the reports show, Class the class of its findings
// (report.Correctness makes `scry check` exit 1; report.Performance and report.Unconfirmed do
// not). New creates the analyzer's state for one run; the driver calls every hook interface
// that state implements, and the value is also the analyzer's result (ResultType is its type):
//
//	var HeaderOutsideTx = &analysis.Analyzer{
//		Name:       "header-outside-tx",
//		Doc:        "a store to the pool's header (its first 4 KiB) outside a PMDK transaction",
//		Class:      report.Correctness,
//		ResultType: reflect.TypeOf((*headerOutsideTx)(nil)),
//		New:        func(*analysis.Pass) (any, error) { return &headerOutsideTx{}, nil },
//	}
//
//	type headerOutsideTx struct{}
//
//	func (*headerOutsideTx) OnStore(p *analysis.Pass, s *analysis.StoreInfo) {
//		off := s.Addr - s.Region.Base + s.Region.FileOffset // bytes into the pool file
//		if off >= 4096 || !s.Recorded() || s.Tx.InWork() {
//			return
//		}
//		if p.Dup(s.Origin.Site, s.Origin.Stack, s.Event.Index) {
//			return // already reported at this site and call stack: only counted
//		}
//		p.Report(analysis.Diagnostic{
//			Site: s.Origin.Site, Stack: s.Origin.Stack, Event: s.Event.Index, Op: s.Origin.Op,
//			Message: fmt.Sprintf("store of %d bytes to %s outside a transaction", s.Size, p.State.Where(s.Addr)),
//		})
//	}
//
// and build a checker with it (a main package; the example under examples/custom-oracle is a
// complete one, with its test):
//
//	func main() { cli.Main(HeaderOutsideTx) }
//
// The checker is scry, every command and flag of it, with the new kind in the catalogue: `check`
// and `analyze` run it with the built-in analyses, --oracles selects it, the text, JSON and
// SARIF reports carry it, a correctness finding exits 1.
//
// # What the analyzer sees
//
// The driver reads the trace once through a replay machine (package pm/replay) that applies each
// record to the state, then calls the hooks with what changed. Every hook runs after the state was
// updated for its record, except UnmapHook, which runs before the region's unpersisted stores are
// forgotten. Only records inside mapped PM regions reach the hooks (the replay's package doc lists
// its decisions: what is PM, clipping, operations per thread, transactions).
//
//   - StoreHook.OnStore(p, s): a STORE, NT_STORE or EXTERNAL_WRITE. s is a replay.Write: Addr and
//     Size (bytes, clipped to the region) and Data (the bytes stored); Kind (replay.Store, NTStore,
//     LibraryStore, LibraryPersisted, InitialContent; Recorded reports whether the model holds it
//     unpersisted); Region (the pmdk.Region: Base, Len, Path of the pool file, FileOffset);
//     Origin (px86.Origin: Site, the static site; Stack, the call-stack node; Op, the thread's
//     workload operation index plus one, 0 none; Thread); Tx, the thread's transaction
//     (pmdk.Tx); Effect (px86.StoreEffect: whether it rewrote an unpersisted store, which, and on
//     how many cache lines); Event, the record (trace.Event: Index, Thread, Context, Site).
//   - LoadHook.OnLoad(p, ev): a LOAD of PM (ev: Index, Thread, Context, Site, Addr, Size, and
//     Data, the bytes read). A trace recorded with SCRY_NO_LOADS has none.
//   - FlushHook.OnFlush(p, ev, eff): a FLUSH of a line in a region (ev.Flush: clflush,
//     clflushopt, clwb; ev.Addr). eff (px86.FlushEffect) counts the line's unpersisted entries
//     the flush wrote back (Dirty: 0 means it had nothing to write back), those already
//     flush-pending, those a clflush persisted, and the line's previous flush.
//   - FenceHook.OnFence(p, ev, eff): an sfence, mfence or locked read-modify-write while a region
//     is mapped; eff (px86.FenceEffect) counts the entries it made persisted and their cache
//     lines (0: it ordered nothing).
//   - TxHook.OnTx(p, ev, tx) and TxAddHook.OnTxAdd(p, ev, tx, redundant): PMDK transaction
//     records (ev.Kind TX_BEGIN, TX_COMMIT, TX_ABORT, TX_END; TX_ADD with ev.Addr and ev.Size).
//     tx (pmdk.Tx) is the thread's transaction after the record: Depth, InWork, Added ranges,
//     Allocs, Covers, Protects; redundant says a TX_ADD's range was already covered.
//   - OpBeginHook.OnOpBegin(p, ev, op) and OpEndHook.OnOpEnd(p, ev, op): a workload operation
//     (replay.Op: Index from 0, Text, the workload line, Thread) began or ended; an OP_BEGIN ends
//     its thread's previous operation first.
//   - MapHook.OnMap(p, ev, r): region r was mapped (pool opened or created: ev.Flags has
//     trace.RegionCreated when the program created the file).
//   - UnmapHook.OnUnmap(p, ev, r): region r is about to be unmapped (pool closed).
//   - EndHook.OnEnd(p, ev): the program exited normally. A program killed by a signal, or a
//     trace cut short, gets no OnEnd (its unpersisted stores are what a crash loses, not bugs by
//     themselves); Run says so in the report's warnings.
//
// Between hooks, p.State (a replay.Machine) is the whole replayed state, to read, never to
// change:
//
//   - p.State.Model (px86.Model), the x86 persistency model: the state of every unpersisted
//     store, per cache line of Model.LineSize() bytes (LineOf gives a line's first byte).
//     Durable(addr, size) tells whether a byte range is durable (no dirty or flush-pending store
//     writes it); StateOf(storeID, addr) is one store's state (px86.Dirty, Pending, Persisted; a
//     store's ID is its record's Event.Index); LineLen(addr) counts a line's unpersisted entries
//     (0: the line is persisted); Overlapping and ForEachOverlapping list the unpersisted stores
//     of a range, ForEachUnpersisted all of them; LastFlush is a line's last flush. The rules
//     (AGAMOTTO's dirty / flush-pending / persisted states, fences per thread, 8-byte failure
//     atomicity) are in px86's package doc.
//   - p.State.Regions (pmdk.Regions): the mapped regions; Find(addr) gives the region of an
//     address, Contains whether it is PM. p.State.Where(addr) describes an address for a message
//     ("pool+0xOFF").
//   - p.State.Txs.Get(thread) is a thread's transaction (pmdk.Tx); p.State.Reserved the
//     pmemobj_reserve reservations not yet published.
//   - p.State.Ops: the workload operations in flight; Ops.Current(thread) is the operation a
//     thread's record belongs to (its own, else the latest begun), p.State.OpOf(thread) its index
//     plus one as Diagnostic.Op wants it.
//   - p.State.Event is the record being applied and p.State.Events the records read so far.
//   - p.State.HB (replay.HB) is happens-before between the threads' records, by vector clocks,
//     its edges those of the replay's package doc (SYNC records: an unlock before later locks of
//     the object, a create before the child, the child before its join, barrier arrivals before
//     leaves, RMWs of one word in order; PM atomics: a release store before a later acquire load
//     of its address). HB.Epoch(thread) stamps a thread's current record (replay.Epoch: thread
//     and clock; keep it to compare later); HB.Before(e, thread) tells whether the record stamped
//     e happens before thread's current record (always for thread's own earlier records). Two
//     records of different threads, neither before the other, are concurrent: a race when they
//     touch the same bytes and one writes. A trace with one thread keeps no clocks; traces before
//     format version 9 have no SYNC records, so their threads are concurrent but for PM atomics.
//
// Units: addresses and sizes are bytes (virtual addresses of the traced run; subtract
// Region.Base and add Region.FileOffset for an offset in the pool file); cache lines are
// Model.LineSize() bytes, as the trace's header says; events are record indexes from 0
// (trace.Event.Index), which order everything that happened; operations are indexes from 0
// (replay.Op.Index), given plus one (0: none) in px86.Origin.Op and Diagnostic.Op.
//
// # Locations and reports
//
// A record names its static site (trace.Event.Site, a store's Origin.Site) and its call-stack node
// (trace.Event.Context, Origin.Stack). p.Site(id) is the site as the compiler pass recorded it
// (function, file, line, column, callee), p.Locate(id) its source location (report.Location;
// site 0 is "no call to blame", an unknown location), p.Frames(site, stack) its call stack,
// innermost first.
//
// p.Report(Diagnostic) records one occurrence: Site and Stack say where (the driver places the
// finding at the frame every execution through it shows, so a helper misused by one caller is
// reported at that caller), Event when (the finding keeps its earliest occurrence), Op the
// operation, Message what is wrong, Related other sites with their role (a report.Role: one of
// scry's, such as report.RoleFlush, or a name of the analyzer's own).
// Occurrences with the same kind, site and stack are one finding, counted: call p.Dup first with
// the same site, stack and event, so that a repeated occurrence costs no allocation. p.Warn adds
// a warning to the report (a result that may be incomplete).
//
// # Requiring another analyzer
//
// List the analyzers whose results you need in Requires and read them with ResultOf[T](p, a) in
// New or in any hook; they run first (a Prepass analyzer over its own read of the whole trace,
// before the streaming pass). The built-in results include the stores unpersisted-store found
// never durable (oracle.UnpersistedStore, *oracle.NeverDurable) and the inferred persistence
// properties (infer.Properties, *infer.Result). An analyzer that runs only because another
// requires it gives its result, not its findings. Occurrences are counted per (kind, site, call
// stack); at the end each kind's contexts are placed (report.Place) and the contexts placed alike
// become one finding.
//
// # Testing
//
// Package analysis/analysistest builds small traces event by event (stores, flushes, fences,
// transactions, operations), so that a test runs Run over them and compares the findings; the
// example of this package shows one.
//
// This package sits at the bottom of the analyses' import graph: the packages declaring analyzers
// (pm/oracle, pm/infer, yours) import it, and the catalogue of every kind of finding lives where
// the modes compose (package pipeline).
package analysis
