package pipeline

// The catalogue of every kind of finding scry reports, where the modes compose.
//
// Kinds lists, once, each kind with its class and its one doc text: the trace oracles (package
// oracle), the checks of inferred properties (package infer), the crash findings of exploration
// (package pm/explore) and of file-system mode (package fs/explore). `scry --help`,
// docs/oracles.md (a test checks they agree) and the SARIF rules all take their text from it. A
// Catalogue adds a checker's custom analyzers (cli.Main with analyzers) to scry's own kinds.
// Select turns the kinds a user names into the analyzers to run; AnalyzeSource runs them over a
// trace with the driver of package analysis, modeled on golang.org/x/tools/go/analysis.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	fsexplore "github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/pm/oracle"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Catalogue is the catalogue of finding kinds of one command line: scry's own (the trace
// oracles, the checks of inferred properties, the crash kinds of both modes) and, after them, the
// custom analyzers a checker built with cli.Main with analyzers adds. A nil *Catalogue is scry's
// own; NewCatalogue makes one with custom analyzers. A Catalogue does not change once made, and
// there is no global registry: whoever runs an analysis passes its catalogue (Analysis.Catalogue,
// AnalyzeOptions.Catalogue).
type Catalogue struct {
	custom []*analysis.Analyzer
}

// NewCatalogue returns scry's catalogue with the custom analyzers added, in the order given, after
// the trace analyzers of scry's own. Errors: a nil or invalid analyzer (analysis.Analyzer.Validate:
// a name that is not kebab-case, no doc, ...), one that reports no findings (no Class: an analyzer
// that only computes a result is reached through the Requires of one that reports), two with one
// name, a name that is one of scry's kinds or analyzers, a dependency cycle.
func NewCatalogue(custom ...*analysis.Analyzer) (*Catalogue, error) {
	var builtin *Catalogue
	names := map[string]bool{}
	for _, n := range builtin.Names() {
		names[n] = true
	}
	seen := map[string]bool{}
	for i, a := range custom {
		if a == nil {
			return nil, fmt.Errorf("custom analyzer %d is nil", i+1)
		}
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("custom analyzer %s: %w", a.Name, err)
		}
		switch {
		case a.Class == "":
			return nil, fmt.Errorf("custom analyzer %s reports no findings (no Class): give it the class of its findings, or let an analyzer that reports require it", a.Name)
		case names[a.Name]:
			return nil, fmt.Errorf("custom analyzer %s: %s is a kind of scry's own (see `scry check --help`); choose another name", a.Name, a.Name)
		case seen[a.Name]:
			return nil, fmt.Errorf("two custom analyzers are named %s", a.Name)
		}
		seen[a.Name] = true
	}
	// Requirements: no cycle, and no two analyzers of one name (a custom requirement named like
	// one of scry's analyzers, infer-properties say).
	if err := analysis.Validate(append(builtin.Analyzers(), custom...)); err != nil {
		return nil, fmt.Errorf("custom analyzers: %w", err)
	}
	return &Catalogue{custom: slices.Clone(custom)}, nil
}

// Custom returns the custom analyzers (none for scry's own catalogue).
func (c *Catalogue) Custom() []*analysis.Analyzer {
	if c == nil {
		return nil
	}
	return slices.Clone(c.custom)
}

// Analyzers returns every analyzer that reports findings from a trace, in catalogue order: the
// trace oracles, the checks of inferred properties, then the custom analyzers.
func (c *Catalogue) Analyzers() []*analysis.Analyzer {
	return append(append(oracle.All(), infer.Checks()...), c.Custom()...)
}

// Kinds returns every kind of finding, in catalogue order: the trace oracles, the checks of
// inferred properties, the custom analyzers, the crash findings of exploration, then the
// file-system crash findings of `scry fs check` (package fs/explore).
func (c *Catalogue) Kinds() []report.Rule {
	var out []report.Rule
	for _, a := range c.Analyzers() {
		out = append(out, a.Rule())
	}
	c.markCustom(out)
	out = append(out, explore.Kinds()...)
	return append(out, fsexplore.Kinds()...)
}

// markCustom marks the rules of the custom analyzers' kinds (report.Rule.Custom).
func (c *Catalogue) markCustom(rules []report.Rule) {
	if c == nil {
		return
	}
	for i := range rules {
		for _, a := range c.custom {
			if rules[i].Kind == a.Kind() {
				rules[i].Custom = true
			}
		}
	}
}

// Names returns the names of every kind, in catalogue order.
func (c *Catalogue) Names() []string {
	var out []string
	for _, k := range c.Kinds() {
		out = append(out, string(k.Kind))
	}
	return out
}

// Lookup returns the catalogue entry of the kind named name.
func (c *Catalogue) Lookup(name string) (report.Rule, bool) {
	for _, k := range c.Kinds() {
		if string(k.Kind) == name {
			return k, true
		}
	}
	return report.Rule{}, false
}

// Analyzers returns the analyzers of scry's own catalogue (Catalogue.Analyzers).
func Analyzers() []*analysis.Analyzer { return (*Catalogue)(nil).Analyzers() }

// Kinds returns the kinds of scry's own catalogue (Catalogue.Kinds).
func Kinds() []report.Rule { return (*Catalogue)(nil).Kinds() }

// Selection is what a run reports: the trace analyzers to run and whether crash states are
// explored.
type Selection struct {
	Analyzers []*analysis.Analyzer
	// Explore is set when a crash kind is selected (exploration runs when the target allows it).
	Explore bool
}

// Select returns the analyzers and exploration of scry's own catalogue that report the kinds
// named (Catalogue.Select).
func Select(names []string, noInfer bool) (Selection, error) {
	return (*Catalogue)(nil).Select(names, noInfer)
}

// Select returns the analyzers and exploration that report the kinds named (comma-separated
// names are split; every kind when names is empty). noInfer leaves out the analyzers that need
// the inferred properties (infer.Properties: the checks of inferred properties, and a custom
// analyzer that requires them); naming one is then an error. Errors: an unknown name (the error
// lists the known ones), a kind of file-system mode.
func (c *Catalogue) Select(names []string, noInfer bool) (Selection, error) {
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
		if _, ok := c.Lookup(n); !ok {
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
		return Selection{}, fmt.Errorf("unknown oracle %s (known: %s)", strings.Join(unknown, ", "), strings.Join(c.Names(), ", "))
	}
	all := len(want) == 0
	var sel Selection
	for _, a := range c.Analyzers() {
		if !all && !slices.Contains(want, a.Name) {
			continue
		}
		if noInfer && requires(a, infer.Properties) {
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

// requires reports whether a requires r, directly or not.
func requires(a, r *analysis.Analyzer) bool {
	for _, q := range a.Requires {
		if q == r || requires(q, r) {
			return true
		}
	}
	return false
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
	// Catalogue holds the kinds Oracles names (nil: scry's own).
	Catalogue *Catalogue
	// Also are analyzers that run with the selection for their results (Keep) and report
	// nothing (a Class of "": the facts a check's later steps need, facts.go).
	Also []*analysis.Analyzer
	// Profile is the persistency profile the analyses' model applies (zero: ADR).
	Profile px86.Profile
}

// AnalyzeSource runs the trace analyzers selected by opts over the trace src opens (crash kinds are
// exploration's, not run here) and returns the report. See analysis.Run for how the end of a
// trace is handled. Errors: an unknown kind (nil report); the trace cannot be opened or is not a
// trace (nil report); a corrupt trace (the report so far and the error).
func AnalyzeSource(src analysis.Source, opts AnalyzeOptions) (*report.Report, error) {
	sel, err := opts.Catalogue.Select(opts.Oracles, opts.NoInfer)
	if err != nil {
		return nil, err
	}
	cfg := analysis.Config{Suppressions: opts.Suppressions, Trace: opts.Trace, Keep: opts.Keep, Profile: opts.Profile}
	if opts.Properties != nil {
		cfg.Results = map[*analysis.Analyzer]any{infer.Properties: opts.Properties}
	}
	rep, err := analysis.Run(src, append(slices.Clone(sel.Analyzers), opts.Also...), cfg)
	if rep != nil {
		opts.Catalogue.markCustom(rep.Rules)
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
