// Package layers states how scry's top-level folders may import each other, and its test holds
// the tree to it, in the style of the Go standard library's go/build/deps_test.go: no folder
// imports one above it, so no two folders import each other and each can be read, tested and
// changed knowing only the folders below it (docs/architecture.md, "The layers").
//
// The rules (Rules) list the folders from the bottom up, one level per "<", the folders of one
// level separated by commas: a package may import the packages of its own folder and of every
// folder on a lower level, never of its level's other folders or of a higher level. Only the
// imports of packages count, not those of their tests (an external test package, such as
// pm/oracle's, is a client of what it tests and may import from above), as in the standard
// library's rules.
package layers

// Rules is the layering of scry's top-level folders, lowest first.
//
//   - internal: plumbing no mode owns (processes, safe files, scry cc, z3, shards and the time
//     budget's schedule, what tests need);
//   - trace: the trace format, the one contract between the program and the analyses;
//   - report: what a finding is, and its writers; workload: the workload file and its
//     generators;
//   - pm and fs: the two modes, persistent memory and file systems, neither knowing the other;
//   - pipeline: the commands' compositions of the stages, the catalogue of kinds;
//   - repair: `scry fix`, which runs a recorded check again through pipeline;
//   - cli: the command line and its public Main; cmd: the scry binary, one call of cli.Main;
//   - test, examples, native: the integration tests and benchmarks, the example programs and
//     their harness, and the tests of the native parts (native's Go packages hold only tests).
const Rules = `
internal
< trace
< report, workload
< pm, fs
< pipeline
< repair
< cli
< cmd
< test, examples, native
`
