// Package analysis runs scry's trace oracles over a recorded trace and returns a report.
//
// It is the front door of the analyses: the declared-analyzer framework of
// golang.org/x/tools/go/analysis, adapted to one streaming pass over a trace, lives in
// analysis/framework (re-exported here) and the oracle catalogue in package oracle
// (docs/oracles.md). Analyze and AnalyzeFile run the catalogue; Run runs any set of analyzers.
package analysis

import (
	"errors"
	"fmt"

	"github.com/scry-pm/scry/analysis/framework"
	"github.com/scry-pm/scry/oracle"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Re-exported framework types (see package analysis/framework).
type (
	Analyzer    = framework.Analyzer
	Pass        = framework.Pass
	State       = framework.State
	Diagnostic  = framework.Diagnostic
	RelatedSite = framework.RelatedSite
	StoreInfo   = framework.StoreInfo
	StoreHook   = framework.StoreHook
	FlushHook   = framework.FlushHook
	FenceHook   = framework.FenceHook
	TxAddHook   = framework.TxAddHook
	UnmapHook   = framework.UnmapHook
	EndHook     = framework.EndHook
)

// PMState is the shared persistency-state provider every oracle requires.
var PMState = framework.PMState

// Options selects what Analyze runs.
type Options struct {
	// Oracles names the oracles to run (docs/oracles.md); nil or empty runs all.
	Oracles []string
	// Suppressions removes matching findings (nil: none).
	Suppressions *report.Suppressions
}

// Run analyses the trace read by r with the given analyzers in one pass (opts.Oracles is
// ignored; the analyzers are given). See framework.Run for how the end of a trace is handled.
func Run(r *trace.Reader, analyzers []*Analyzer, opts Options) (*report.Report, error) {
	return framework.Run(r, analyzers, framework.Config{Suppressions: opts.Suppressions})
}

// Analyze runs the oracles selected by opts over the trace read by r. A truncated trace (the
// program crashed) gives the findings made so far, a warning and a nil error; a corrupt trace
// gives the findings made so far and the error. An unknown oracle name is an error.
func Analyze(r *trace.Reader, opts Options) (*report.Report, error) {
	as, err := oracle.ByName(opts.Oracles)
	if err != nil {
		return nil, err
	}
	return Run(r, as, opts)
}

// AnalyzeFile opens the trace at path, runs Analyze on it and closes it. The report names the
// trace path. Errors: the file cannot be opened or is not a scry trace (nil report), the trace
// is corrupt (the report so far and the error), an unknown oracle name.
func AnalyzeFile(path string, opts Options) (*report.Report, error) {
	as, err := oracle.ByName(opts.Oracles)
	if err != nil {
		return nil, err
	}
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rep, err := framework.Run(r, as, framework.Config{Suppressions: opts.Suppressions, Trace: path})
	if err != nil && !errors.Is(err, trace.ErrNotTrace) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return rep, err
}
