package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
)

// crashFlags are the crash-exploration flags shared by `check` (with {pool} in the target) and
// `explore` (docs/crash-exploration.md).
type crashFlags struct {
	pool            string
	strategies      []string
	opts            crash.Options
	jobs            int
	timeout         time.Duration
	checker         string
	outputFilter    string
	maxInFlight     int
	clusterFailures int
	noPriority      bool
	noForkServer    bool
	noStopEarly     bool
	noConverge      bool
	noHugePages     bool
	timeBudget      time.Duration
	noAssumeFixed   bool
}

func strategyNames() []string {
	var list []string
	for _, s := range crash.Strategies() {
		list = append(list, s.Name)
	}
	return list
}

// add registers the flags; poolHelp is --pool's help (explore has it with another meaning than
// check).
func (f *crashFlags) add(c *cobra.Command, poolHelp string) {
	fl := c.Flags()
	fl.StringVar(&f.pool, "pool", "", poolHelp)
	fl.StringArrayVar(&f.strategies, "strategy", nil, "crash-state strategy `S` (repeatable or comma-separated; default "+strings.Join(explore.DefaultStrategies, ",")+"; known: "+strings.Join(strategyNames(), ", ")+")")
	fl.IntVar(&f.opts.MaxStates, "max-states", crash.DefaultMaxStates, "test at most `N` states per crash point and strategy (-1: no cap; 0 is an error)")
	fl.Uint64Var(&f.opts.Seed, "seed", 1, "seed of the random strategy")
	fl.IntVar(&f.opts.Samples, "samples", explore.DefaultSamples, "states per crash point of the random strategy (`K`)")
	fl.BoolVar(&f.opts.AfterStores, "after-stores", false, "also place a crash point after every store")
	fl.IntVarP(&f.jobs, "jobs", "j", 0, "run `J` crash images at once (default: the number of CPUs)")
	fl.DurationVar(&f.timeout, "timeout", 0, fmt.Sprintf("a run on a crash image that takes longer than `D` is a hang (0, the default: %d times the longest run on a consistent image, between %v and %v)", explore.HangFactor, explore.MinHangTimeout, exec.DefaultTimeout))
	fl.StringVar(&f.checker, "checker", "", "also run the shell command `CMD` on every crash image ({image} is its path); non-zero exit is a failure")
	fl.StringVar(&f.outputFilter, "output-filter", "", "leave out the output lines matching `REGEX` when comparing outputs (e.g. '^seed:')")
	fl.BoolVar(&f.noAssumeFixed, "no-assume-fixed", false, "explore the literal model: by default, stores reported as never durable (unpersisted-store) are assumed durable in the crash states of later operations, so that one durability bug does not hide the others")
	fl.DurationVar(&f.timeBudget, "time-budget", 0, "explore for at most `D` (e.g. 5m), the report included: when the crash points left do not fit in the time left, an even share of them is explored, every operation path before any path a second time; the report says how many were left out (0: no budget)")
	fl.BoolVar(&f.noStopEarly, "no-stop-early", false, "run the program on every crash image to its end (default: a run is stopped at the first output line that matches neither legal outcome, its verdict decided)")
	fl.BoolVar(&f.noConverge, "no-converge", false, "run the program on every crash image past its first read of an operation (default: a run whose pool then equals a legal outcome's, outside a libpmemobj pool's logs, is stopped there with that outcome)")
	fl.BoolVar(&f.noHugePages, "no-huge-pages", false, "leave malloc's heap on ordinary pages in the runs of a program that links libpmemobj (default: GLIBC_TUNABLES=glibc.malloc.hugetlb=1, since libpmemobj's open allocates about 10 MiB per run)")
	fl.BoolVar(&f.noForkServer, "no-fork-server", false, "run the program by exec on every crash image (default: a program built with scry cc serves the runs as a fork server, stopped before main and forked per image)")
	fl.BoolVar(&f.noPriority, "no-priority", false, "explore the operations in trace order (default: in rounds of operation paths, the store, flush and fence sites an operation executes: one operation of every path, then the next, the rarest paths first, so that rare operations are reached early)")
	fl.IntVar(&f.clusterFailures, "cluster-failures", explore.DefaultClusterFailures, "once a finding has failed on `N` crash states, run only one in "+fmt.Sprint(explore.ClusterSampleEvery)+" further states that would fall in it (-1: run them all)")
	fl.IntVar(&f.maxInFlight, "max-in-flight", explore.DefaultMaxInFlight, "explore crash points with at most `M` operations in flight (concurrent operations: P(M,0)+...+P(M,M) legal outcomes each)")
}

// strats parses --strategy.
func (f *crashFlags) strats() ([]*crash.Strategy, error) {
	var out []*crash.Strategy
	for _, n := range f.strategies {
		for _, n := range strings.Split(n, ",") {
			s := crash.StrategyByName(strings.TrimSpace(n))
			if s == nil {
				return nil, fmt.Errorf("unknown strategy %q (known: %s)", n, strings.Join(strategyNames(), ", "))
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// exploration checks the flags before anything runs and returns the pipeline's view of them.
func (f *crashFlags) exploration() (pipeline.Exploration, error) {
	x := pipeline.Exploration{
		Options: f.opts, Jobs: f.jobs, Timeout: f.timeout, MaxInFlight: f.maxInFlight, ClusterFailures: f.clusterFailures, TimeBudget: f.timeBudget, NoPriority: f.noPriority, NoForkServer: f.noForkServer, NoStopEarly: f.noStopEarly, NoConverge: f.noConverge, NoHugePages: f.noHugePages,
		Start: time.Now(), Pool: f.pool, NoAssumeFixed: f.noAssumeFixed,
	}
	var err error
	if x.Strategies, err = f.strats(); err != nil {
		return x, err
	}
	if err := checkDuration("--timeout", f.timeout, "the adaptive default"); err != nil {
		return x, err
	}
	if f.checker != "" {
		c, err := exec.ParseChecker(f.checker)
		if err != nil {
			return x, err
		}
		c.Timeout = f.timeout
		x.Checker = &c
	}
	if f.outputFilter != "" {
		re, err := regexp.Compile(f.outputFilter)
		if err != nil {
			return x, fmt.Errorf("--output-filter: %w", err)
		}
		x.OutputFilter = re
	}
	if f.maxInFlight < 1 {
		return x, errors.New("--max-in-flight must be at least 1")
	}
	return x, f.checkCounts()
}

// checkCounts rejects counts that mean nothing: --max-states 0 or below -1, --samples below 1,
// --jobs or --time-budget below 0.
func (f *crashFlags) checkCounts() error {
	if err := checkShared(f.opts.MaxStates, f.jobs, f.timeBudget); err != nil {
		return err
	}
	if f.opts.Samples < 1 {
		return fmt.Errorf("--samples %d: give a positive number of states", f.opts.Samples)
	}
	if f.clusterFailures == 0 || f.clusterFailures < -1 {
		return fmt.Errorf("--cluster-failures %d: give a positive number of failing states, or -1 to run every state", f.clusterFailures)
	}
	return nil
}

// checkShared checks the flags `check` (and `explore`) and `fs check` share, which mean the same
// in both: --max-states N (positive, or -1 for no cap; 0 is an error), --jobs J (0: one per
// CPU) and --time-budget D (0: no budget).
func checkShared(maxStates, jobs int, timeBudget time.Duration) error {
	if maxStates == 0 || maxStates < -1 {
		return fmt.Errorf("--max-states %d: give a positive number of states, or -1 for no cap", maxStates)
	}
	if jobs < 0 {
		return fmt.Errorf("--jobs %d: give a positive number of runs at once, or 0 for one per CPU", jobs)
	}
	return checkDuration("--time-budget", timeBudget, "no budget")
}

// checkDuration rejects a negative duration for flag, whose 0 means zero (e.g. "the default of
// 10s"): every duration flag of scry is a positive duration or 0 for its default.
func checkDuration(flag string, d time.Duration, zero string) error {
	if d < 0 {
		return fmt.Errorf("%s %v: give a positive duration, or 0 for %s", flag, d, zero)
	}
	return nil
}
