package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/crash"
)

// newExploreCommand is `scry explore`: crash-state exploration of a recorded trace. For now only
// --dry-run exists: it counts the crash points and the crash states each strategy would test
// (docs/crash-states.md); re-executing the program on the crash images comes later.
func newExploreCommand() *cobra.Command {
	var (
		dryRun bool
		names  []string
		format string
		opts   crash.Options
		noH1   bool
		noH2   bool
	)
	var list []string
	for _, s := range crash.Strategies() {
		list = append(list, s.Name)
	}
	c := &cobra.Command{
		Use:   "explore --dry-run [--strategy S]... TRACE",
		Short: "count the crash points and crash states of a trace, per strategy",
		Long: `Walks TRACE once, places a crash point before every fence, every library call that makes
bytes durable, every unmap and at the end, and counts the crash states each strategy would test
there (docs/crash-states.md). Strategies: ` + strings.Join(list, ", ") + ` (default: all).

Only --dry-run is implemented: re-executing the program on the crash images comes later.`,
		Args: exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var strats []*crash.Strategy
			for _, n := range names {
				for _, n := range strings.Split(n, ",") {
					s := crash.StrategyByName(strings.TrimSpace(n))
					if s == nil {
						return &exitError{code: 2, err: fmt.Errorf("unknown strategy %q (known: %s)", n, strings.Join(list, ", "))}
					}
					strats = append(strats, s)
				}
			}
			if len(strats) == 0 {
				strats = crash.Strategies()
			}
			if format != "text" && format != "json" {
				return &exitError{code: 2, err: fmt.Errorf("--format %q: want text or json", format)}
			}
			if noH1 {
				opts.H1 = -1
			}
			if noH2 {
				opts.H2 = -1
			}
			if !dryRun {
				fmt.Fprintln(cmd.ErrOrStderr(), "scry explore: re-execution is not implemented yet; use --dry-run")
				return &exitError{code: 2}
			}
			r, err := openTrace(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			sum, serr := crash.Summarize(r, strats, opts)
			if sum != nil {
				var werr error
				if format == "json" {
					werr = sum.WriteJSON(cmd.OutOrStdout(), args[0])
				} else {
					werr = sum.WriteText(cmd.OutOrStdout(), args[0])
				}
				if werr != nil {
					return &exitError{code: 2, err: werr}
				}
			}
			return traceErr(cmd, args[0], serr)
		},
	}
	f := c.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "count crash points and states without building images or running anything")
	f.StringArrayVar(&names, "strategy", nil, "count strategy `S` (repeatable or comma-separated; default all: "+strings.Join(list, ", ")+")")
	f.IntVar(&opts.MaxStates, "max-states", crash.DefaultMaxStates, "test at most `N` states per crash point and strategy (-1: no cap)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the random strategy")
	f.IntVar(&opts.Samples, "samples", crash.DefaultSamples, "states per crash point of the random strategy (`K`)")
	f.IntVar(&opts.H1, "h1", crash.DefaultH1, "heuristic H1: reorder at most `N` stores per segment")
	f.IntVar(&opts.H2, "h2", crash.DefaultH2, "heuristic H2: stores older than `M` segments count as persisted")
	f.BoolVar(&noH1, "no-h1", false, "heuristic: no limit of stores per segment")
	f.BoolVar(&noH2, "no-h2", false, "heuristic: no age to persist")
	f.BoolVar(&opts.NoH3, "no-h3", false, "heuristic: no ordering timestamps (reorder across segments)")
	f.BoolVar(&opts.AfterStores, "after-stores", false, "also place a crash point after every store")
	f.StringVar(&format, "format", "text", "output `format`: text or json")
	return c
}
