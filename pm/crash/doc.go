// Package crash is scry's crash-state engine: it walks a trace once, stops at every crash point,
// describes the crash states possible there as a small state space, lets a strategy choose which
// states to test, and builds the crash image of a chosen state. Re-executing the program on the
// images is another package's job.
//
// # Crash points
//
// A crash point is a place in the trace where a crash is simulated ([Walk]). One is placed
// immediately before every FENCE record (sfence, mfence, locked read-modify-write, and the
// fences the runtime writes for pmem_drain / pmem_persist): a fence is where persistency state
// changes, so the thesis takes its snapshots of reorderings just before fences
// (Fernandes's thesis, Automatic Testing of PM Applications, 2022, §4.6-4.7, §5.1.1 "Instrumenting fences"). One is placed
// before each library call that makes bytes durable at once: a run of EXTERNAL_WRITE records
// flagged persisted from one call (same site and thread), and TX_COMMIT, where PMDK persists the
// transaction's ranges; the call's effects land together when it returns, so there is a crash
// point before them and none inside. One is placed before REGION_UNMAP and one at END (or at the
// end of a truncated trace). With Options.AfterStores one also follows every STORE and
// NT_STORE, the thesis's failure points at stores (§4.4).
//
// A crash point where no store is unpersisted and no byte changed since the previous crash
// point would only repeat the previous images; it is skipped and counted (Stats.Skipped).
//
// # Units and the state space
//
// The engine keeps the persistency state of the px86 package (dirty, flush-pending,
// persisted, per cache line; clflush persists at once; clflushopt/clwb and non-temporal stores
// are pending until the next fence; library writes flagged persisted are durable at once; the
// pmdk package's commit and abort rules), but at a finer grain: every unpersisted store is cut
// into units, its bytes on one cache line further cut at 8-byte-aligned boundaries. An aligned
// 8-byte word is failure-atomic and a wider or misaligned store may tear at 8-byte granularity
// (package px86), so a unit is the smallest thing that persists or does not.
// For each unit the engine keeps the bytes it overwrote, so that the image can roll it back.
//
// On one cache line the units form a sequence in program order (a multi-unit store's units in
// ascending address order). A crash state chooses, for each line with unpersisted units, a
// prefix length k between 0 and n: the first k units persisted, the rest not. Every other
// store the trace issued is durable. Why per-line prefixes are the whole story:
//
//   - Same line: a line is written back as a whole, so its stores persist in program order
//     (WITCHER, SOSP'21, §4.4.1; the thesis §4.7.3 scenario 1). The
//     persisted stores of a line are a prefix of its sequence.
//   - Across lines: the Px86 table (Huang's dissertation, USC 2023, §2.1, Table 2.1, as the px86
//     package reconstructs it) orders persistence across lines only through clflush (ordered
//     with every later store and clflush) and through a flush followed by a fence. The model
//     makes a clflushed line durable at once, and a fence makes every line flushed before it
//     durable. Both turn the ordering into durability: the earlier store is no longer
//     unpersisted at any later crash point, so it never appears in a state space together with
//     the later store it is ordered before. Among the stores still unpersisted at a crash
//     point no persist-before edge crosses lines, and condition (c) of the crash-state
//     definition holds for every choice of per-line prefixes.
//   - Non-temporal stores bypass the cache: they are unordered with cached stores to other
//     lines and pending until the next fence, so they too only constrain their own line. As in
//     px86, an NT store evicts its line, making the line's earlier stores pending; the line's
//     sequence stays in program order and the prefix rule stands.
//
// The size of the space is the product over lines of (n+1) ([Space.Size], a *big.Int: it
// passes 2^64 as soon as 64 lines hold one unpersisted unit each). A state is a
// program-order prefix ([State.Prefix]) when the persisted units are exactly the first j units
// of the trace order (store id, then address): no reordering. A finding on such a state is an
// atomicity violation; one that needs a non-prefix state is an ordering violation.
//
// # Strategies and images
//
// A [Strategy] turns a space into the states to test: exhaustive (Yat), prefix (pmreorder's
// accumulative mode), heuristic (the thesis's H1-H3), random, and invariants (WITCHER: before
// fences, the least states violating the likely invariants of Options.Invariants, which the
// caller infers; see invariants.go). [CrashPoint.Patches] and
// [CrashPoint.WriteImage] build the image of a state from the replayed image at the crash
// point by writing back, for every unit not persisted, the bytes it overwrote (WITCHER §4.4,
// crash NVM images). docs/crash-states.md describes all of this with an example.
package crash
