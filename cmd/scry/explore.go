package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/crash"
	"github.com/scry-pm/scry/explore"
	"github.com/scry-pm/scry/report"
)

// newExploreCommand is `scry explore`: crash-state exploration of a recorded trace. With
// --dry-run it counts the crash points and the crash states each strategy would test
// (docs/crash-states.md); otherwise it re-executes the target on the crash images
// (docs/crash-exploration.md), like the crash part of `scry check` with {pool}.
func newExploreCommand() *cobra.Command {
	var (
		dryRun    bool
		format    string
		output    string
		tracePath string
		workload  string
		noH1      bool
		noH2      bool
		cf        crashFlags
	)
	list := strategyNames()
	c := &cobra.Command{
		Use:   "explore --dry-run [--strategy S]... TRACE | explore --trace T --workload FILE [flags] -- PROG ARGS({pool})",
		Short: "explore the crash states of a recorded trace (count them with --dry-run)",
		Long: `With --dry-run: walks TRACE once, places a crash point before every fence, every library call
that makes bytes durable, every unmap and at the end, and counts the crash states each strategy
would test there (docs/crash-states.md). Strategies: ` + strings.Join(list, ", ") + ` (default: all).
The invariants strategy first infers likely invariants from the trace (as scry infer does,
every rule) and counts the states violating them.

Without it: explores the crash states of the trace T recorded from PROG ARGS on the workload
FILE (with the pool where {pool} is) and re-executes PROG on every crash image with the rest of
the workload, comparing with the committed and rolled-back outcomes (docs/crash-exploration.md);
when threads run operations concurrently, with every order of every subset of the operations in
flight (at most --max-in-flight of them).
--pool names the pool path the trace was recorded with, when it maps several files.
Exit status: 0 no finding, 1 crash findings, 2 error.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.parse(); err != nil {
				return err
			}
			if noH1 {
				cf.opts.H1 = -1
			}
			if noH2 {
				cf.opts.H2 = -1
			}
			if dryRun {
				if !cmd.Flags().Changed("samples") {
					cf.opts.Samples = crash.DefaultSamples // the dry run counts with the engine's default
				}
				if err := exactArgs(1, "a trace file")(cmd, args); err != nil {
					return err
				}
				return dryRunExplore(cmd, args[0], cf.strats, cf.opts, format)
			}
			if tracePath == "" || workload == "" || !hasPool(args) {
				return &exitError{code: 2, err: errors.New("explore needs --trace T, --workload FILE and the program after `--` with {pool} (or --dry-run TRACE)")}
			}
			switch format {
			case "text", "json", "sarif":
			default:
				return &exitError{code: 2, err: fmt.Errorf("unknown --format %q: want text, json or sarif", format)}
			}
			abs, err := filepath.Abs(tracePath)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			rep := &report.Report{Trace: abs}
			reportPath := ""
			if output != "" && format == "json" {
				reportPath, _ = filepath.Abs(output)
			}
			xerr := cf.explore(cmd, rep, abs, workload, args, cf.pool, reportPath)
			af := analyzeFlags{format: format, output: output}
			werr := af.write(cmd, rep, nil)
			if xerr != nil {
				return xerr
			}
			return werr
		},
	}
	f := c.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "count crash points and states without building images or running anything")
	cf.add(c, "the pool path the trace was recorded with (default: the only file the trace maps)")
	f.IntVar(&cf.opts.H1, "h1", crash.DefaultH1, "heuristic H1: reorder at most `N` stores per segment")
	f.IntVar(&cf.opts.H2, "h2", crash.DefaultH2, "heuristic H2: stores older than `M` segments count as persisted")
	f.BoolVar(&noH1, "no-h1", false, "heuristic: no limit of stores per segment")
	f.BoolVar(&noH2, "no-h2", false, "heuristic: no age to persist")
	f.BoolVar(&cf.opts.NoH3, "no-h3", false, "heuristic: no ordering timestamps (reorder across segments)")
	f.StringVar(&format, "format", "text", "output `format`: text or json (and sarif without --dry-run)")
	f.StringVarP(&output, "output", "o", "", "write the report to `FILE` instead of standard output")
	f.StringVar(&tracePath, "trace", "", "the recorded trace `T`")
	f.StringVar(&workload, "workload", "", "the workload `FILE` the trace was recorded with (one operation per line)")
	return c
}

// dryRunExplore prints the crash points and per-strategy state counts of a trace.
func dryRunExplore(cmd *cobra.Command, path string, strats []*crash.Strategy, opts crash.Options, format string) error {
	if len(strats) == 0 {
		strats = crash.Strategies()
	}
	if format != "text" && format != "json" {
		return &exitError{code: 2, err: fmt.Errorf("--format %q: want text or json", format)}
	}
	r, err := openTrace(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if explore.NeedInvariants(strats) {
		// The invariants strategy tests the states violating the invariants inferred from
		// this trace (one more pass over it). A trace inference cannot read is reported by
		// the count below, with what it counted.
		invs, warning, err := explore.InferInvariants(path)
		if err != nil {
			warning = err.Error() + ": the invariants strategy counts no state"
		}
		if warning != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "scry: warning: %s\n", warning)
		}
		opts.Invariants = invs
	}
	sum, serr := crash.Summarize(r, strats, opts)
	if sum != nil {
		var werr error
		if format == "json" {
			werr = sum.WriteJSON(cmd.OutOrStdout(), path)
		} else {
			werr = sum.WriteText(cmd.OutOrStdout(), path)
		}
		if werr != nil {
			return &exitError{code: 2, err: werr}
		}
	}
	return traceErr(cmd, path, serr)
}
