// Package checker builds a checker: scry's whole command line with custom analyzers added, the
// way golang.org/x/tools/go/analysis/multichecker builds a vet-like tool from a set of analyzers.
// A main package declares its analyzers (package analysis explains how to write one) and calls
// Main:
//
//	package main
//
//	import "github.com/scry-pm/scry/analysis/checker"
//
//	func main() { checker.Main(myoracle.Analyzer) }
//
// The resulting program is scry: every command and flag (`check`, `analyze`, `explore`, `replay`,
// `fix`, `fs check`, ...), with the analyzers' kinds in the catalogue after scry's own trace
// analyzers. `check` and `analyze` run them together with scry's own analyses over one replay of
// the trace; --help lists their kinds, classes and docs; --oracles selects them by name; the
// text, JSON and SARIF reports carry their findings (SARIF: their Doc is the rule's text); a
// correctness finding makes `check` and `analyze` exit 1, as scry's own do. Suppression files
// name their kinds like any other.
//
// The checker's `cc` and `c++` find scry's native parts (pass plugin, runtime) in the install
// root $SCRY_HOME (build/ of scry's source tree after `make`), since the checker does not live
// under it; or build the program with scry's own `scry cc`: the trace is the same. `fix`
// repairs scry's own kinds only: it runs the report's check again with scry's own catalogue, so
// a custom finding is listed as not repaired.
package checker

import (
	"os"
	"path/filepath"

	"github.com/scry-pm/scry/analysis"
	"github.com/scry-pm/scry/cmd/scry/cli"
)

// Main runs the process's command line as scry with analyzers added to its catalogue of finding
// kinds, and exits with its status (0, 1 for correctness findings, 2 for an error, 128 + signal
// when interrupted: package cli). The command's name in its help is the program's. Each analyzer
// must report findings (a Class) and be named in kebab-case, uniquely and unlike every kind of
// scry's own; analyzers they require may be any, scry's included. A set that breaks these rules
// is an error: Main prints it and exits 2 whatever the command line.
func Main(analyzers ...*analysis.Analyzer) {
	cli.Main(cli.Config{Name: filepath.Base(os.Args[0]), Analyzers: analyzers})
}
