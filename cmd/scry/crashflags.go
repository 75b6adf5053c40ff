package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/crash"
	"github.com/scry-pm/scry/exec"
	"github.com/scry-pm/scry/explore"
	"github.com/scry-pm/scry/report"
)

// crashFlags are the crash-exploration flags shared by `check` (with {pool} in the target) and
// `explore` (docs/crash-exploration.md).
type crashFlags struct {
	pool         string
	strategies   []string
	opts         crash.Options
	jobs         int
	timeout      time.Duration
	checker      string
	outputFilter string
	maxInFlight  int

	// parsed by parse
	strats []*crash.Strategy
	chk    *exec.Checker
	filter *regexp.Regexp
}

func strategyNames() []string {
	var list []string
	for _, s := range crash.Strategies() {
		list = append(list, s.Name)
	}
	return list
}

// add registers the flags; withPool says whether --pool is registered (explore has it with
// another meaning than check).
func (f *crashFlags) add(c *cobra.Command, poolHelp string) {
	fl := c.Flags()
	fl.StringVar(&f.pool, "pool", "", poolHelp)
	fl.StringArrayVar(&f.strategies, "strategy", nil, "crash-state strategy `S` (repeatable or comma-separated; default "+strings.Join(explore.DefaultStrategies, ",")+"; known: "+strings.Join(strategyNames(), ", ")+")")
	fl.IntVar(&f.opts.MaxStates, "max-states", crash.DefaultMaxStates, "test at most `N` states per crash point and strategy (-1: no cap)")
	fl.Uint64Var(&f.opts.Seed, "seed", 1, "seed of the random strategy")
	fl.IntVar(&f.opts.Samples, "samples", explore.DefaultSamples, "states per crash point of the random strategy (`K`)")
	fl.BoolVar(&f.opts.AfterStores, "after-stores", false, "also place a crash point after every store")
	fl.IntVarP(&f.jobs, "jobs", "j", 0, "run `J` crash images at once (default: the number of CPUs)")
	fl.DurationVar(&f.timeout, "timeout", exec.DefaultTimeout, "a run on a crash image that takes longer than `D` is a hang")
	fl.StringVar(&f.checker, "checker", "", "also run the shell command `CMD` on every crash image ({image} is its path); non-zero exit is a failure")
	fl.StringVar(&f.outputFilter, "output-filter", "", "leave out the output lines matching `REGEX` when comparing outputs (e.g. '^seed:')")
	fl.IntVar(&f.maxInFlight, "max-in-flight", explore.DefaultMaxInFlight, "explore crash points with at most `M` operations in flight (concurrent operations: P(M,0)+...+P(M,M) legal outcomes each)")
}

// parse checks the flags before anything runs.
func (f *crashFlags) parse() error {
	for _, n := range f.strategies {
		for _, n := range strings.Split(n, ",") {
			s := crash.StrategyByName(strings.TrimSpace(n))
			if s == nil {
				return &exitError{code: 2, err: fmt.Errorf("unknown strategy %q (known: %s)", n, strings.Join(strategyNames(), ", "))}
			}
			f.strats = append(f.strats, s)
		}
	}
	if f.checker != "" {
		c, err := exec.ParseChecker(f.checker)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		c.Timeout = f.timeout
		f.chk = &c
	}
	if f.outputFilter != "" {
		re, err := regexp.Compile(f.outputFilter)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--output-filter: %w", err)}
		}
		f.filter = re
	}
	if f.timeout <= 0 {
		return &exitError{code: 2, err: errors.New("--timeout must be positive")}
	}
	if f.maxInFlight < 1 {
		return &exitError{code: 2, err: errors.New("--max-in-flight must be at least 1")}
	}
	return nil
}

// hasPool reports whether a target command line has the {pool} placeholder.
func hasPool(args []string) bool {
	for _, a := range args {
		if strings.Contains(a, exec.PoolPlaceholder) {
			return true
		}
	}
	return false
}

// explore runs the crash exploration of tracePath and adds its findings, rules and stats to
// rep. pool is the pool path the trace was recorded with ("" to pick its only file).
func (f *crashFlags) explore(cmd *cobra.Command, rep *report.Report, tracePath, workload string, args []string, pool, reportPath string) error {
	target, err := exec.ParseTarget(args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	target.Timeout, target.OutputFilter = f.timeout, f.filter
	w, err := explore.ReadWorkload(workload)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	ctx, stop := exec.SignalContext(context.Background())
	defer stop()
	res, xerr := explore.Run(ctx, explore.Config{
		Trace: tracePath, Target: target, Workload: w, Pool: pool, Strategies: f.strats,
		Options: f.opts, Checker: f.chk, Report: reportPath, MaxInFlight: f.maxInFlight,
		Exec: exec.Pool{Jobs: f.jobs, Progress: os.Stderr},
	})
	rep.Findings = append(rep.Findings, res.Findings...)
	rep.Warnings = append(rep.Warnings, res.Warnings...)
	rep.Rules = append(rep.Rules, explore.Rules...)
	st := res.Stats
	rep.Stats = &st
	rep.Sort()
	if xerr != nil {
		return &exitError{code: 2, err: fmt.Errorf("crash exploration: %w", xerr)}
	}
	return nil
}
