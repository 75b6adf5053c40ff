package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// newExploreCommand is `scry explore`: crash-state exploration of a recorded trace. With
// --dry-run it counts the crash points and the crash states each strategy would test
// (docs/crash-states.md); otherwise it re-executes the target on the crash images
// (docs/crash-exploration.md), like the crash part of `scry check` with {pool}.
func newExploreCommand() *cobra.Command {
	var (
		dryRun       bool
		format       string
		output       string
		tracePath    string
		workload     string
		noH1         bool
		persistency  string
		noH2         bool
		strict       bool
		force        bool
		shard        string
		verdictCache string
		x            pipeline.Exploration
	)
	list := explore.StrategyNames()
	c := &cobra.Command{
		Use:   "explore --dry-run [--strategy S]... TRACE | explore --trace T --workload FILE [flags] -- PROG ARGS({pool})",
		Short: "explore the crash states of a recorded trace (count them with --dry-run)",
		Long: `With --dry-run: walks TRACE once, places a crash point before every fence, every clflush that
persists a store, every library call that makes bytes durable, every unmap and at the end, and counts the crash states each strategy
would test there (docs/crash-states.md). Strategies: ` + strings.Join(list, ", ") + ` (default: all).
The invariants strategy first infers likely invariants from the trace (as scry infer does,
every rule) and counts the states violating them.

Without it: explores the crash states of the trace T recorded from PROG ARGS on the workload
FILE (with the pool where {pool} is) and re-executes PROG on every crash image with the rest of
the workload, comparing with the committed and rolled-back outcomes, and with the operation cut
after each PMDK transaction it committed (docs/crash-exploration.md); when threads run operations
concurrently, with the outcomes durable linearizability allows: every order consistent with real
time of the operations ended and of every subset of those in flight (at most --max-in-flight of
them).
--pool names the pool path the trace was recorded with, when it maps several files.
Exit status: 0 no finding, 1 crash findings, 2 error.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if noH1 {
				x.Crash.H1 = -1
			}
			if noH2 {
				x.Crash.H2 = -1
			}
			if persistency != "" {
				ps, err := px86.ParseProfiles(persistency)
				if err != nil {
					return fmt.Errorf("--persistency: %w", err)
				}
				x.Profiles = ps
			}
			if err := x.CheckFlags(); err != nil {
				return err
			}
			x.Start = time.Now()
			if dryRun {
				if !cmd.Flags().Changed("samples") {
					x.Crash.Samples = crash.DefaultSamples // the dry run counts with the engine's default
				}
				if err := exactArgs(1, "a trace file")(cmd, args); err != nil {
					return err
				}
				strats, err := explore.ResolveStrategies(x.Strategies) // none: every strategy
				if err != nil {
					return err
				}
				return dryRunExplore(cmd, args[0], strats, x.Crash, x.NoAssumeFixed, format)
			}
			var err error
			if x.Shard, err = shardFromEnv(shard); err != nil {
				return err
			}
			if x.Shard.Count > 0 && format != "json" {
				return errors.New("--shard writes what scry merge needs in the JSON report: add --format json -o FILE")
			}
			if tracePath == "" || workload == "" || !pipeline.HasPool(args) {
				return errors.New("explore needs --trace T, --workload FILE and the program after `--` with {pool} (or --dry-run TRACE)")
			}
			af := analyzeFlags{format: format, output: output, strict: strict, force: force}
			if err := report.CheckFormat(format); err != nil {
				return err
			}
			if output != "" {
				if err := safefile.Check(output, report.Policy(force)); err != nil {
					return err
				}
			}
			if output != "" && format == "json" {
				x.Report, _ = filepath.Abs(output)
			}
			var vc *verdict
			if verdictCache != "" {
				var err error
				shardKey := []string{fmt.Sprintf("shard=%+v", x.Shard)} // also when it came from the environment
				if vc, err = lookupVerdict(cmd, verdictCache, args, workload, []string{tracePath}, shardKey); err != nil {
					return err
				}
				if vc.hit != nil {
					return af.finish(cmd, vc.hit, nil)
				}
			}
			ctx, stop := exec.SignalContext(context.Background())
			defer stop()
			x.Progress = exec.NewProgress(os.Stderr)
			rep, xerr := pipeline.ExploreTrace(ctx, tracePath, workload, args, x)
			x.Progress.Finish()
			vc.store(cmd, rep, xerr)
			return af.finish(cmd, rep, xerr)
		},
	}
	f := c.Flags()
	f.StringVar(&verdictCache, "verdict-cache", "", verdictHelp+"; the trace's contents are part of the key")
	f.BoolVar(&dryRun, "dry-run", false, "count crash points and states without building images or running anything")
	addCrashFlags(c, &x.Options, "the pool path the trace was recorded with (default: the only file the trace maps)")
	f.StringArrayVar(&x.Env, "env", nil, "add `NAME=VALUE` to the environment of every re-execution (repeatable); the printed reproduce commands carry it")
	f.IntVar(&x.Crash.H1, "h1", crash.DefaultH1, "heuristic H1: reorder at most `N` stores per segment")
	f.IntVar(&x.Crash.H2, "h2", crash.DefaultH2, "heuristic H2: stores older than `M` segments count as persisted")
	f.StringVar(&persistency, "persistency", "", "judge crash states under the persistency profiles `P` (comma-separated: adr, eadr, gpf (an alias of eadr), arm for an aarch64 program, or all): eadr adds the states it allows, and every finding says under which profiles it occurs (default: adr, arm for an aarch64 program, unlabelled; docs/persistency-profiles.md)")
	f.BoolVar(&noH1, "no-h1", false, "heuristic: no limit of stores per segment")
	f.BoolVar(&noH2, "no-h2", false, "heuristic: no age to persist")
	f.BoolVar(&x.Crash.NoH3, "no-h3", false, "heuristic: no ordering timestamps (reorder across segments)")
	f.StringVar(&format, "format", "text", "output `format`: text or json (and sarif or html without --dry-run)")
	f.StringVarP(&output, "output", "o", "", "write the report to `FILE` instead of standard output")
	f.BoolVar(&strict, "strict", false, "exit with status 2 when the report has a warning (the results are incomplete, or nothing could be tested): for CI")
	f.BoolVar(&force, "force", false, "let -o replace an existing file that is not a report of scry")
	f.StringVar(&tracePath, "trace", "", "the recorded trace `T`")
	f.StringVar(&workload, "workload", "", "the workload `FILE` the trace was recorded with (one operation per line)")
	f.StringVar(&shard, "shard", "", "explore shard `I/N` (from 0) of the trace's operations, balanced by estimated cost; \"auto\" or \"auto/N\" takes I (and N) from a Slurm array, a Kubernetes Indexed Job or SCRY_SHARD_INDEX/SCRY_SHARD_COUNT; combine the shards' JSON reports with scry merge (docs/distributed.md)")
	return c
}

// dryRunExplore prints the crash points and per-strategy state counts of a trace.
func dryRunExplore(cmd *cobra.Command, path string, strats []*crash.Strategy, opts crash.Options, noAssumeFixed bool, format string) error {
	if format != "text" && format != "json" {
		return fmt.Errorf("--format %q: want text or json", format)
	}
	// A file that is no trace is an error of its own, before the strategies say what they could
	// not count in it.
	r, err := trace.Open(path)
	if err != nil {
		return err // names path
	}
	r.Close()
	sum, warning, serr := pipeline.DryRun(path, strats, opts, noAssumeFixed)
	if warning != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "scry: warning: %s\n", warning)
	}
	if sum != nil {
		var werr error
		if format == "json" {
			werr = sum.WriteJSON(cmd.OutOrStdout(), path)
		} else {
			werr = sum.WriteText(cmd.OutOrStdout(), path)
		}
		if werr != nil {
			return werr
		}
	}
	return traceErr(cmd, path, serr)
}
