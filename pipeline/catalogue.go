package pipeline

// The catalogue of every kind of finding scry reports, where the modes compose.
//
// Kinds lists, once, each kind with its class and its one doc text: the trace oracles (package
// oracle), the checks of inferred properties (package infer), the crash findings of exploration
// (package pm/explore) and of file-system mode (package fs/explore). `scry --help`,
// docs/oracles.md (a test checks they agree) and the SARIF rules all take their text from it.
// Select turns the kinds a user names into the analyzers to run; AnalyzeSource runs them over a
// trace with the driver of package analysis, modeled on golang.org/x/tools/go/analysis.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/scry-pm/scry/analysis"
	fsexplore "github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/pm/oracle"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Analyzers returns every analyzer that reports findings from a trace, in catalogue order: the
// trace oracles, then the checks of inferred properties.
func Analyzers() []*analysis.Analyzer {
	return append(oracle.All(), infer.Checks()...)
}

// Kinds returns every kind of finding, in catalogue order: the trace oracles, the checks of
// inferred properties, the crash findings of exploration, then the file-system crash findings
// of `scry fs check` (package fs/explore).
func Kinds() []report.Rule {
	var out []report.Rule
	for _, a := range Analyzers() {
		out = append(out, a.Rule())
	}
	out = append(out, explore.Kinds()...)
	return append(out, fsexplore.Kinds()...)
}

// Names returns the names of every kind, in catalogue order.
func Names() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, string(k.Kind))
	}
	return out
}

// LookupKind returns the catalogue entry of the kind named name.
func LookupKind(name string) (report.Rule, bool) {
	for _, k := range Kinds() {
		if string(k.Kind) == name {
			return k, true
		}
	}
	return report.Rule{}, false
}

// Selection is what a run reports: the trace analyzers to run and whether crash states are
// explored.
type Selection struct {
	Analyzers []*analysis.Analyzer
	// Explore is set when a crash kind is selected (exploration runs when the target allows it).
	Explore bool
}

// Select returns the analyzers and exploration that report the kinds named (comma-separated
// names are split; every kind when names is empty). noInfer leaves out the checks of inferred
// properties (naming one is then an error). Errors: an unknown name (the error lists the known
// ones).
func Select(names []string, noInfer bool) (Selection, error) {
	var want []string
	for _, n := range names {
		for _, n := range strings.Split(n, ",") {
			if n = strings.TrimSpace(n); n != "" {
				want = append(want, n)
			}
		}
	}
	var unknown []string
	for _, n := range want {
		if _, ok := LookupKind(n); !ok {
			unknown = append(unknown, n)
		}
		for _, k := range fsexplore.Kinds() {
			if string(k.Kind) == n {
				return Selection{}, fmt.Errorf("%s is a finding of file-system mode (scry fs check), not of a PM trace", n)
			}
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return Selection{}, fmt.Errorf("unknown oracle %s (known: %s)", strings.Join(unknown, ", "), strings.Join(Names(), ", "))
	}
	all := len(want) == 0
	var sel Selection
	checks := infer.Checks()
	for _, a := range Analyzers() {
		if !all && !slices.Contains(want, a.Name) {
			continue
		}
		if slices.Contains(checks, a) && noInfer {
			if !all {
				return Selection{}, fmt.Errorf("--oracles %s needs inference, which --no-infer turns off", a.Name)
			}
			continue
		}
		sel.Analyzers = append(sel.Analyzers, a)
	}
	for _, k := range explore.Kinds() {
		if all || slices.Contains(want, string(k.Kind)) {
			sel.Explore = true
		}
	}
	return sel, nil
}

// AnalyzeOptions selects what AnalyzeSource runs.
type AnalyzeOptions struct {
	// Oracles names the kinds to report (Select); nil or empty: all.
	Oracles []string
	// NoInfer leaves out the checks of inferred properties.
	NoInfer bool
	// Suppressions removes matching findings (nil: none).
	Suppressions *report.Suppressions
	// Trace names the trace in the report.
	Trace string
	// Properties, if non-nil, are the properties already inferred from the trace (they are
	// then not inferred again).
	Properties *infer.Result
	// Keep, if non-nil, receives every analyzer's result (analysis.Config.Keep).
	Keep map[*analysis.Analyzer]any
}

// AnalyzeSource runs the trace analyzers selected by opts over the trace src opens (crash kinds are
// exploration's, not run here) and returns the report. See analysis.Run for how the end of a
// trace is handled. Errors: an unknown kind (nil report); the trace cannot be opened or is not a
// trace (nil report); a corrupt trace (the report so far and the error).
func AnalyzeSource(src analysis.Source, opts AnalyzeOptions) (*report.Report, error) {
	sel, err := Select(opts.Oracles, opts.NoInfer)
	if err != nil {
		return nil, err
	}
	cfg := analysis.Config{Suppressions: opts.Suppressions, Trace: opts.Trace, Keep: opts.Keep}
	if opts.Properties != nil {
		cfg.Results = map[*analysis.Analyzer]any{infer.Properties: opts.Properties}
	}
	rep, err := analysis.Run(src, sel.Analyzers, cfg)
	if rep != nil {
		// What the trace proves is not yet shown by a crash: with a workload, crash exploration
		// tests the durability claims (settleDurability) and says so.
		for i := range rep.Findings {
			if rep.Findings[i].Class == report.Correctness {
				rep.Findings[i].Evidence = report.EvidenceTrace
			}
		}
	}
	return rep, err
}

// AnalyzeFile runs AnalyzeSource on the trace at path; the report names it. Errors as AnalyzeSource, with
// the path.
func AnalyzeFile(path string, opts AnalyzeOptions) (*report.Report, error) {
	opts.Trace = path
	rep, err := AnalyzeSource(analysis.FileSource(path), opts)
	if err != nil && !errors.Is(err, trace.ErrNotTrace) && rep != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return rep, err
}
