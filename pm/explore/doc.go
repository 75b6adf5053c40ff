// Package explore re-executes a program on crash images and reports the crash states it does
// not recover from: the second half of crash-state exploration (the first, package crash,
// places crash points, enumerates states and builds images). docs/crash-exploration.md is the
// user's guide.
//
// # What is explored
//
// The trace of one run of the target on a workload (one operation per line of standard input,
// marked OP_BEGIN/OP_END by the runtime) is walked once ([crash.Walk] with
// crash.Options.OpBoundaries). Only crash points inside an operation k are explored: a crash
// during setup (pool creation, before the first operation) or teardown has no legal outcome to
// compare with, since the oracles are "operation k committed" and "operation k rolled back"
// (WITCHER, SOSP'21, §4.5, explores crash states of the operations of a
// test case too). At each such crash point the chosen strategies ([crash.Strategy]) yield
// crash states; each state becomes one crash image (WITCHER §4.4, crash NVM images).
//
// # Oracles
//
// For a crash during operation k of n, the target runs on its own copy of the crash image with
// operations k+1..n on standard input. Its outcome (exit status or signal, filtered standard
// output) must equal one of two legal outcomes (exec.Equivalent), each computed once per k:
// "committed", the same suffix run from the consistent image at OP_END k (every store of
// operations 0..k persisted), and "rolled back", the suffix run from the consistent image at
// OP_BEGIN k (every store before operation k persisted; operation k skipped). A signal, a hang
// (the target's timeout) or a non-zero exit where the oracle exited 0 are failures too. With a
// checker (exec.Checker) the user's command also runs on a fresh copy of the raw crash image,
// before any recovery, and must exit 0.
//
// An operation made of several PMDK transactions (mapcli's `n K` inserts each key in a
// transaction of its own) is durable at each: the run from the consistent image at the TX_END of
// each outermost transaction it committed before the crash point (crash.TxEnd) is a legal
// outcome too, "operation k applied up to its jth transaction".
//
// When threads run operations concurrently (OP_BEGIN and OP_END of different operations
// interleave), the oracle is durable linearizability (Izraelevitz, Mendes, Scott, DISC'16): a
// crash point has operations ended (D), in flight (F, M of them) and not begun (N); the
// crash-image run applies N, and the legal outcomes are, for every subset S of F, every order of
// D ∪ S consistent with real time (an operation that ended before another began comes first),
// applied, then N, plus the transaction cuts of the operations of F with what may follow them.
// They are computed by prep runs from the consistent image at the start of the busy period, or at
// a cut (oracles.go, which gives the counts); a period of one operation keeps the oracles above,
// read off the trace. Crash points with more than Options.MaxInFlight operations in flight, or
// more than MaxLegalOutcomes legal outcomes, are skipped.
//
// # Invariants
//
// With the invariants strategy ([crash.Strategy.NeedsInvariants]) the caller gives the likely
// invariants inferred from the trace in crash.Options.Invariants (package pipeline infers them,
// once for everything that needs them; [Invariants] converts properties), and findings on the
// states it chose name the invariants they violate. Without any, the strategy tests nothing and
// the result says so in a warning.
//
// # Findings
//
// A finding names the operation whose stores the failing state lost or reordered (the units'
// px86 origins: culprit, cause.go), which with overlapping operations may be another than the
// crash point's thread's. A failing state that is a program-order prefix (crash.State.Prefix)
// shows that operation k is not failure-atomic even without reordering: an atomicity-violation. A failing state that is
// not a prefix persisted some unit while an earlier one (in program order) was not: an
// ordering-violation, naming the persisted and unpersisted stores. A state that loses only stores
// an earlier operation left pending, right before the next operation, proves a
// durability-violation. Failures are clustered by root cause (cause.go: an ordering violation's
// window, an atomicity violation's persistent path, a durability violation's lost store's
// function; WITCHER's clustering by operation type and execution path, §4.6, without the
// workload's text), keeping the first failing state of each cluster, a count of failing states
// and a count of distinct sets of stores involved (variants). Pairs of stores that inferred
// properties ask to be ordered are confirmed differentially, with twins of the states that break
// them (cause.go, Pair).
//
// # Lazy exploration
//
// With the lazy strategy (crash.Strategy.Lazy; Jaaru, ASPLOS'21, §3–4) a crash point gets one
// run instead of one per state: on its fully applied image, with the cache lines of undetermined
// content listed for the runtime, which forks at the first access to each, one branch per
// distinct content; each leaf of the tree is judged as one crash state, like an eager one, and
// stands for every state that agrees with it on the lines it chose (lazy.go). A crash point
// whose lazy run falls back is explored with DefaultStrategies in a last walk.
// docs/lazy-exploration.md is the user's guide.
//
// # Images and parallelism
//
// Images are materialised inside the Walk callback, where crash points are valid: one
// crash.ImageWriter moves a working copy from state to state (it rewrites only what differs),
// and each run in progress works on a file of its own, reused from run to run and made equal to
// the item's base by writing only what differs (exec.ResetFile, storage.go) before the item's
// patches are written over it; the run then owns it (the target writes its pool). A run on a
// crash image of a one-operation period is stopped at its first output line that matches
// neither legal outcome (early.go). Items are collected operation by operation into batches of about
// Options.BatchStates images (the first batches smaller: 32, 64, ... states, so that the
// workers start at once); each batch runs on exec.Map's workers while the walk builds the next
// one (each run through Options.Runner: processes by default, an in-process fake in tests), so
// disk and memory stay bounded by two batches, and results are judged in item order, batch
// after batch, with the walk's choices for batch n+1 made on what batches up to n-1 showed, so
// they depend neither on the number of workers nor on timing (the thesis runs recovery on its snapshots in parallel
// the same way, Fernandes's thesis, Automatic Testing of PM Applications, 2022, §5.1.4).
package explore
