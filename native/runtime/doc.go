// Package scryrt holds the scry C runtime, which is linked into every instrumented program and
// writes the trace of docs/trace-format.md. `make runtime` builds it into
// $(BUILD)/lib/scry/libscry_rt.a (see build.mk); programs link it with
// -Wl,--whole-archive libscry_rt.a -Wl,--no-whole-archive -lpthread -ldl, and
// -Wl,--dynamic-list=scry_rt.dynlist to export its symbols to instrumented shared libraries.
//
// The C files start with a `//go:build ignore` line so that the Go tool does not take them for
// cgo sources of this package. The Go files here are only integration tests: they build the
// runtime, compile the C programs of testdata/ (which call the callbacks and hooks by hand, as the
// LLVM pass would), run them, and check their traces with the trace package's reader, including
// that replaying the stores and external writes gives the pool file byte for byte.
package scryrt
