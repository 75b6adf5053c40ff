// Package infer infers persistence properties of a PM program from one recorded trace, and
// declares the analyzers that check a trace against them without re-executing the program.
// docs/inference.md is the user-facing description.
//
// # What is inferred
//
// Two families of rules, over store sites (static instructions):
//
//   - The dissertation's properties (Huang's dissertation, USC 2023, ch. 5): DURA(st), every PM
//     store must eventually persist (§5.2.1, §5.5.2.1); MPB(st', st), the store st' must
//     persist before the store st (§5.2.2), inferred ONLY from pairs of loads where the later
//     load is control dependent on the earlier one (§5.3.4, Algorithm 5): st' is the store the
//     dependent load read from and st the store the guarding load read from; MPA(st1..stk), the
//     stores must persist atomically (§5.2.3), one property per strongly connected component
//     of at least two sites of the graph whose edges are the MPB properties (§5.2.5,
//     Algorithm 6).
//   - WITCHER's likely invariants (WITCHER, SOSP'21, §4.3.1, Table 1): RO1, a
//     store whose value or address depends on a load R(X) gives P(X) hb W(Y); RO2, a store
//     control dependent on R(X) gives the same; RO3, a guarded read R(Y) control dependent on
//     R(X) gives P(Y) hb W(X) (the MPB pairs, under WITCHER's name); RA1, two guardians (stores
//     read by RO3 guard loads) must persist atomically (§3.1).
//
// # How
//
// One streaming pass over the trace builds WITCHER's persistence program dependence graph on
// the fly (§4.3.2): the register-level facts come from the trace's DEPS records (the pass's
// static analysis, the dissertation's §5.5.1.2-5.5.1.3), the memory-level data dependence from
// the trace itself, each load depending on the latest store to the bytes it reads (a shadow of
// PM). Control dependence is transitive within a function (through the branch sites' own
// control facts, which include the pass's implicit flow out of loops: a read through the index
// a lookup loop left with depends on the loop's exit branches) and across calls: the events of a
// call are control dependent on the branches its call site depends on, in the caller's
// activation (the dissertation's inter-procedural extension, §5.5.1.2), and back through return
// values: a caller's branch on a call's result is guarded by the loads that decided the value the
// callee returned (its return sites' facts, evaluated in the callee's activation when it ends).
// Activations come from the FRAME records; a branch decided by a load governs only the events of
// the same activation (or of the calls it makes). The global order of the trace gives the
// inter-thread dependence through memory of §6.3 for free: a load reads from the latest store of
// any thread. CrossReadsAnalyzer lists the resulting inter-thread must-persist-before pairs (a
// store that depends on a load of another thread's durable store) for the schedule witnesses of
// package pipeline, which ask whether another schedule breaks them (ch. 6).
//
// # Checking
//
// Analyzers returns two analyzers (package analysis), mpb-violation and mpa-violation, which
// run in the normal single pass of the oracles and compare persistent intervals (the
// dissertation's Algorithms 7, 9 and 10) computed from the driver's persistency state (package
// px86 for x86, package pmdk for transactions). DURA violations (Algorithm 8) are what the
// unpersisted-store oracle already reports; they are not checked here.
package infer
