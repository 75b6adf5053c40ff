package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/optcheck"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
)

// addCrashFlags binds the crash-exploration flags shared by `check` (with {pool} in the target)
// and `explore` to o's fields (docs/crash-exploration.md): one flag line per option of
// explore.Options, whose CheckFlags validates them. poolHelp is --pool's help (explore has it with
// another meaning than check).
func addCrashFlags(c *cobra.Command, o *explore.Options, poolHelp string) {
	fl := c.Flags()
	fl.StringVar(&o.Pool, "pool", "", poolHelp)
	fl.StringArrayVar(&o.Strategies, "strategy", nil, "crash-state strategy `S` (repeatable or comma-separated; default "+strings.Join(explore.DefaultStrategies, ",")+"; known: "+strings.Join(explore.StrategyNames(), ", ")+")")
	fl.IntVar(&o.Crash.MaxStates, "max-states", crash.DefaultMaxStates, "test at most `N` states per crash point and strategy (-1: no cap; 0 is an error)")
	fl.Uint64Var(&o.Crash.Seed, "seed", 1, "seed of the random strategy")
	fl.IntVar(&o.Crash.Samples, "samples", explore.DefaultSamples, "states per crash point of the random strategy (`K`)")
	fl.BoolVar(&o.Crash.AfterStores, "after-stores", false, "also place a crash point after every store")
	fl.IntVarP(&o.Jobs, "jobs", "j", 0, "run `J` crash images at once (default: the number of CPUs)")
	fl.DurationVar(&o.Timeout, "timeout", 0, fmt.Sprintf("a run on a crash image that takes longer than `D` is a hang (0, the default: %d times the longest run on a consistent image, between %v and %v)", explore.HangFactor, explore.MinHangTimeout, exec.DefaultTimeout))
	fl.StringVar(&o.Checker, "checker", "", "also run the shell command `CMD` on every crash image ({image} is its path); non-zero exit is a failure")
	fl.StringVar(&o.Client, "client", "", "the program is a server: run it with {port} replaced by a free port, and the shell command `CMD` (with {port} too) as its client, which reads the workload on standard input, sends one request per line and prints the answers; each request is an operation (docs/servers.md)")
	fl.StringVar(&o.OutputFilter, "output-filter", "", "leave out the output lines matching `REGEX` when comparing outputs (e.g. '^seed:')")
	fl.BoolVar(&o.NoAssumeFixed, "no-assume-fixed", false, "explore the literal model: by default, stores reported as never durable (unpersisted-store) are assumed durable in the crash states of later operations, so that one durability bug does not hide the others")
	fl.DurationVar(&o.TimeBudget, "time-budget", 0, "explore for at most `D` (e.g. 5m), the report included: when the crash points left do not fit in the time left, an even share of them is explored, every operation path before any path a second time; the report says how many were left out (0: no budget)")
	fl.BoolVar(&o.NoStopEarly, "no-stop-early", false, "run the program on every crash image to its end (default: a run is stopped at the first output line that matches neither legal outcome, its verdict decided)")
	fl.BoolVar(&o.NoConverge, "no-converge", false, "run the program on every crash image past its first read of an operation (default: a run whose pool then equals a legal outcome's, outside a libpmemobj pool's logs, is stopped there with that outcome)")
	fl.BoolVar(&o.NoHugePages, "no-huge-pages", false, "leave malloc's heap on ordinary pages in the runs of a program that links libpmemobj (default: GLIBC_TUNABLES=glibc.malloc.hugetlb=1, since libpmemobj's open allocates about 10 MiB per run)")
	fl.BoolVar(&o.NoForkServer, "no-fork-server", false, "run the program by exec on every crash image (default: a program built with scry cc serves the runs as a fork server, stopped before main and forked per image)")
	fl.BoolVar(&o.NoPriority, "no-priority", false, "explore the operations in trace order (default: in rounds of operation paths, the store, flush and fence sites an operation executes: one operation of every path, then the next, the rarest paths first, so that rare operations are reached early)")
	fl.IntVar(&o.ClusterFailures, "cluster-failures", explore.DefaultClusterFailures, "once a finding has failed on `N` crash states, run only one in "+fmt.Sprint(explore.ClusterSampleEvery)+" further states that would fall in it (-1: run them all)")
	fl.IntVar(&o.MaxInFlight, "max-in-flight", explore.DefaultMaxInFlight, "explore crash points with at most `M` operations in flight (concurrent operations: P(M,0)+...+P(M,M) legal outcomes each, more when ended operations overlapped)")
}

// checkDuration rejects a negative duration for flag (optcheck.Duration).
func checkDuration(flag string, d time.Duration, zero string) error {
	return optcheck.Duration(flag, d, zero)
}
