// Package trace defines scry's trace: the versioned binary stream of PM events (in file-system
// mode, of system calls) that the instrumented program writes and every analysis reads, with
// its streaming Reader, its Writer, Dump and ComputeStats. docs/trace-format.md is the normative
// specification.
//
// The format is declared once, as data: the table of schema.go (Schema) lists every record kind
// with its fields in order, the enums, the flag bits, the limits and the versions. `go generate`
// (trace/internal/gentrace) writes from it what follows from it: the constants and names
// (schema_gen.go), the per-record decoding of the Reader (reader_gen.go), the per-record
// encoding of the Writer (writer_gen.go), the per-record fields of Dump (dump_gen.go), the C
// header of the runtime (native/include/scry_trace_format.h: constants and record encoders) and
// the tables of docs/trace-format.md. TestGenerated fails when one of them is stale. The rest is
// written by hand: the Reader's window on its input (bounded memory, zero allocations per
// load, store, flush or fence), its errors (ErrTruncated, ErrCorrupt with byte offsets), the
// state it keeps across records (threads, call stacks, activations, sites, dependence facts),
// and the THREAD, CONTEXT and FRAME records the Writer emits before an event.
package trace
