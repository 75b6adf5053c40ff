// Package explore is the crash-state exploration of file-system mode (docs/fs-mode.md): it
// chooses crash states of a recorded run's model, judges each in a crash directory, clusters
// the failing ones into findings, and rebuilds a finding's crash directory on demand. It is the
// last stage of the pipeline strace -> model -> explore (packages fs/strace, fs/model,
// fs/explore); package pipeline composes the three (pipeline.FSCheck) and package report writes
// the findings.
//
// # Input and output
//
// [Explore] takes a model of the run (model.BuildModel), the user's [Options] (the checker's
// command and timeout, the persistence model's name, the strategies, the bounds, the jobs, the
// time budget, the shard: what the flags of `scry fs check` and `scry fs explore` set, checked
// by [Options.Check]) and a [Setup] derived from them and the recorded run (the persistence
// model, the oracles: a checker command, output equivalence with a workload, or both; the
// sites; the directory under which the workers hold the crash directories). It returns an [Explored]: the findings (report.Finding of kind fs-ordering-violation,
// fs-atomicity-violation or fs-durability-violation, [Kinds]), the statistics (report.Stats:
// crash points, states tested, failures, legal-outcome runs, inconclusive states, wall-clock
// seconds to the end and to the first failure) and warnings.
//
// # Strategies
//
// A crash point is a logical operation with micro-operations: a crash right after it. At each,
// the strategies choose legal states under the model's splits ([Strategies], run in this
// order; [DefaultStrategies] are the first three):
//
//   - prefix: every operation up to the crash point persisted; a run of failing crash points
//     is an across-operation atomicity violation, and its operations are left out of the
//     next two strategies;
//   - omit-one: one operation lost and every later one up to a later crash point persisted,
//     while that is legal: an ordering violation, or a durability violation when the later
//     operation is an output;
//   - split: part of one operation persisted, with and without an earlier piece lost, under
//     each of the model's splits: an atomicity violation;
//   - exhaustive: every legal state of a crash point where at most Options.MaxFree
//     micro-operations may be lost (so at most 2^MaxFree states, 1 024 by default), except
//     those another strategy judged.
//
// # Oracles
//
// The checker runs inside each crash directory with $SCRY_STDOUT and $SCRY_STDERR naming files
// of what the program had printed before the crash, and $SCRY_CRASH_DIR; it must exit 0. It
// must accept the initial and the final state, which are consistent by definition: otherwise
// Explore fails with [ErrCheckerFails]. With a workload, [Equivalence] judges a crash during
// workload operation k by running the program in the crash directory on operations k+1..n and
// comparing its exit status and output with the two crash-free runs from operation k committed
// and rolled back; a state whose two legal outcomes both failed to complete is inconclusive.
//
// # Findings and replay
//
// Failing states are clustered by static pair, the call stacks of the operation that must
// persist first (or whole) and of the one persisted after it, with report.ClusterID ids; the
// pairs of logical operations of a cluster are its dynamic vulnerabilities (at most
// report.MaxFSDynamic kept). Each finding records its failing state exactly (report.FSState:
// the split, the persisted micro-operations, the crash point and the digest of the judged
// directory, model.Digest), and [Replay] rebuilds that directory later from the kept snapshot
// and trace, checks its digest, and gives the command that judges it again
// ([ReproduceCommand]), for `scry replay`.
//
// # Shards
//
// With Options.Shard, Explore explores one shard of the crash states (shard.go): every shard
// judges every prefix state, which decide what the other strategies test, and the states of
// omit-one, split and exhaustive are split by logical operation; [MergeShards] combines the
// shards' findings into those of the unsharded exploration (`scry fs explore --shard`, `scry
// merge`, docs/distributed.md).
//
// # Sources
//
// ALICE (Pillai et al., OSDI'14): §4.3 for the exploration (prefix states for across-syscall
// atomicity, one operation omitted for ordering, operations split for atomicity, the checker
// run on each state) and for static vulnerabilities as the source locations of dynamic ones;
// §3.2 for the crash states a persistence model allows. Barowsky et al., "Improving
// Application Crash Consistency with Symbolic Execution and Fuzzing" (2021): §3.1.3 for the
// checker-judged exploration and the dynamic and static vulnerabilities as scry reports them,
// §7.1 for the durability class (data that must persist before the program prints that it is
// done: the copy trapdoor), and §7.3 for counting vulnerabilities by distinct pairs of code
// locations with library code set aside (scry pairs whole call stacks, the PM clustering rule).
// WITCHER (SOSP'21) §4.5 for output equivalence with committed and rolled-back oracles, as PM
// mode uses it.
//
// # Errors
//
// Options.Check: a count or duration out of range, an unknown persistence model or strategy,
// MaxStates with a shard, each named by its flag. Explore: an unknown strategy, no oracle
// (neither a checker nor a workload), MaxStates with a shard, [ErrCheckerFails]
// (wrapped, naming the state and the checker's verdict), a crash directory that cannot be
// built, a checker or a legal-outcome run that cannot be started; when ctx is cancelled, ctx's
// error. Past its checks of the options it returns the findings so far with its error, and it
// removes its crash directories in every case. Replay: report.ErrNoFSState for a finding without a state; a malformed state;
// an output path or one of its side files that exists (wrapping safefile.ErrExists); a kept
// snapshot, trace or workload that is gone (the message names the path); a persistence model
// or split the report names that scry does not have; a trace, model or digest that differ from
// the report's (the snapshot or the trace changed); I/O errors. It leaves nothing behind when
// it fails.
package explore
