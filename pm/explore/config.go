package explore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/workload"
)

// DefaultStrategies are the strategies `scry check` and `scry explore` use when none is given:
// every program-order prefix (finds atomicity violations; n+1 images for n unpersisted units)
// plus DefaultSamples random states per crash point (finds ordering violations: a state that
// persists a later unit without an earlier one; on a crash point with few lines every state is
// drawn). The heuristic strategy tests about ten times more states on mapcli
// (docs/crash-states.md) for little more coverage on small programs.
var DefaultStrategies = []string{"prefix", "random"}

// DefaultSamples is the random strategy's samples per crash point for exploration.
const DefaultSamples = 8

// DefaultClusterFailures is the number of failing states of one finding (cluster) after which
// further states that would fall in it are sampled: only one in ClusterSampleEvery is run,
// chosen by a hash of the state (the same in every run: judge.go, sampling). They cannot add a
// finding (the cluster exists), only count; states that break an inferred property (to confirm
// it) are always run.
//
// DefaultWindowStates bounds the states of one operation that fall in one window and kind (a
// split's thousands of states between two stores): once that many were considered, only one in
// ClusterSampleEvery further ones is run, whether or not any failed yet. The states of an
// operation are built before any of them runs (a batch ends only between operations), so
// without this bound one operation could hold the whole time budget.
const (
	DefaultClusterFailures = 8
	ClusterSampleEvery     = 16
	DefaultWindowStates    = 256
)

// HangFactor and MinHangTimeout make the adaptive bound of a run on a crash image (Config.Target
// with no Timeout): a run taking more than HangFactor times the longest run on a consistent
// image of the batches judged so far, and more than MinHangTimeout, is a hang. A crash image on
// which recovery loops forever (CCEH's Insert retrying a segment whose pattern never matches)
// then costs about a second instead of exec.DefaultTimeout.
const (
	HangFactor     = 10
	MinHangTimeout = time.Second
)

// BudgetBatches is the number of batches a time budget's exploration is at least cut into
// (batchLimit).
const BudgetBatches = 20

// DefaultBatchStates is the number of crash images materialised before they are run.
const DefaultBatchStates = 512

// Config is one exploration.
type Config struct {
	// Trace is the path of the recorded trace.
	Trace string
	// Target is the program, with {pool} where the image goes; its OutputFilter normalises
	// outputs and its Timeout bounds every run. A Timeout <= 0 makes the bound of a run on a
	// crash image adaptive (hangTimeout): HangFactor times the longest run on a consistent
	// image so far, between MinHangTimeout and exec.DefaultTimeout; runs on consistent images
	// get exec.DefaultTimeout.
	Target exec.Target
	// Workload is the workload: Ops[k] is operation k's line (without newline); Path its file
	// (absolute, for reports).
	Workload workload.Workload
	// Pool is the pool file's path as the recorded program named it: the region of the trace
	// mapped from it is the one the images are built for. "" picks the only file the trace
	// maps (an error when it maps several).
	Pool string
	// Strategies choose the states of each crash point (default DefaultStrategies); the union
	// of their states is tested, each state once, attributed to the first strategy yielding it.
	Strategies []*crash.Strategy
	// Options drive the walk and the strategies (OpBoundaries is set by Run).
	Options crash.Options
	// Checker, if non-nil, also runs on every crash image.
	Checker *exec.Checker
	// Runner runs the target and the checker on images (nil: ProcessRunner of Target and
	// Checker, real processes). Tests give a fake to explore without compiling anything.
	Runner Runner
	// Pool of workers: Jobs, temporary directory parent.
	Exec exec.Pool
	// Progress, if non-nil, reports the exploration: the planning walk, then the crash points
	// explored or left out against their total, the runs and the figures of the states judged,
	// then the findings' clustering.
	Progress *exec.Progress
	// BatchStates bounds the images materialised at once (0: DefaultBatchStates); a batch
	// always holds whole operations, so one operation's states may exceed it.
	BatchStates int
	// Report is the path the JSON report will be written to ("" unknown), for the replay
	// command printed with each finding.
	Report string
	// MaxInFlight caps the operations in flight at an explored crash point (0:
	// DefaultMaxInFlight); crash points with more are skipped (Stats.SkippedConcurrent). M
	// operations in flight have P(M,0)+...+P(M,M) legal outcomes (oracles.go).
	MaxInFlight int
	// TimeBudget, when positive, bounds the exploration's time: when the estimated crash states
	// of the points a walk has left do not fit in the time left, an even share of them is
	// explored, a point with many states in part (explorer.pace; Stats.SkippedBudget,
	// Stats.PartialBudget), and the runs still going at ScheduleEnd are stopped.
	TimeBudget time.Duration
	// Start is when the time budget began (zero: when Run begins): a command that records and
	// analyses the trace first counts that time too (the budget is the command's).
	Start time.Time
	// Now is the clock (nil: time.Now), for tests.
	Now func() time.Time
	// AvoidTmpfs, when not "", says why crash images should not go on the tmpfs (the program
	// allocates its whole pool every time it opens it: pipeline.AllocatesPool); they go in the
	// temporary directory (exec.ScratchParent).
	AvoidTmpfs string
	// NoForkServer runs the target by exec every time, instead of through fork servers when
	// its program is built with scry cc (exec.ForkServers).
	NoForkServer bool
	// NoStopEarly runs every crash image's run to its end, instead of stopping it at the first
	// output line that matches no legal outcome (early.go; --no-stop-early).
	NoStopEarly bool
	// NoConverge runs every crash image's run past its first read of an operation even when
	// its pool then equals a legal outcome's (converge.go), instead of stopping it there with
	// that legal outcome's outcome.
	NoConverge bool
	// NoHugePages leaves glibc's malloc as it is in the runs of a program that links
	// libpmemobj, instead of putting its heap on transparent huge pages (exec.WithHugePages).
	NoHugePages bool
	// NoPriority explores the operations in trace order in one walk, instead of in rounds of
	// operation paths, every path before any path a second time (priority.go).
	NoPriority bool
	// ClusterFailures is the number of failing states after which a finding's cluster is
	// sampled (0: DefaultClusterFailures; <0: never): see sampledOut.
	ClusterFailures int
	// WindowStates is the number of states of one operation in one window and kind after
	// which further ones are sampled (0: DefaultWindowStates); ClusterFailures < 0 turns it
	// off too.
	WindowStates int
	// ConfirmPairs are the pairs of stores whose inferred properties' findings are to be
	// confirmed differentially (Pair): the states of the invariants strategy that break one are
	// each judged with a repaired twin, and Result.Pairs says what they showed.
	ConfirmPairs []Pair
	// Shard, when its Count is set, explores one shard of the trace's busy periods and fills
	// Result.Shard for the merge (shard.go).
	Shard shard.Shard
	// shardOps and shardInfo are set by plan: the operations of this shard, its report data.
	shardOps  []bool
	shardInfo report.Shard
	// Judged, if non-nil, is called (on the walk's goroutine) with every crash state judged and
	// the run it is judged by: a differential test of strategies compares them (test/lazy).
	Judged func(JudgedState)
}

// JudgedState is a crash state judged: its crash point (crash.CrashPoint.Index), the state, the
// strategy that chose it ("lazy" for a lazy run's leaf; "assumed-durable" for a durability
// state), the outcome of the run that judged it, whether it failed and, for a lazy leaf,
// Covers, which reports whether the leaf stands for the state k of the same crash point (nil
// otherwise).
type JudgedState struct {
	Point    int
	State    crash.State
	Strategy string
	Outcome  exec.Outcome
	Failed   bool
	Covers   func(k []int) bool
}

// Runner runs the program under test, and the checker, on an image. The run of the target on
// an image must not depend on anything but the image and its standard input.
type Runner interface {
	// Target runs the target on image with stdin; dir is the worker's private directory,
	// which the runner may use for files of its own. timeout, when > 0, bounds the run instead
	// of the runner's own limit (a longer run is a hang).
	Target(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) exec.Outcome
	// HasChecker reports whether there is a checker to run on every crash image.
	HasChecker() bool
	// Checker runs the checker on image (dir as for Target); ok is false when there is no
	// checker.
	Checker(ctx context.Context, image, dir string) (out exec.Outcome, ok bool)
}

// ProcessRunner runs a Target and an optional Checker as processes (package exec), in the
// working directory scry was started in, so that a target or checker named relative to it
// (./wrap.sh running ./prog) behaves as on the user's command line. The images themselves live
// in scry's temporary directory.
type ProcessRunner struct {
	Prog  exec.Target
	Check *exec.Checker
	// Servers, if non-nil, run the target through fork servers (exec.ForkServers; Run makes
	// them unless Config.NoForkServer).
	Servers *exec.ForkServers
}

// Target runs the target process.
func (r ProcessRunner) Target(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) exec.Outcome {
	if r.Servers != nil {
		return r.Servers.RunWithin(ctx, image, stdin, "", timeout)
	}
	t := r.Prog
	if timeout > 0 {
		t.Timeout = timeout
	}
	return t.Run(ctx, image, stdin, "")
}

// HasChecker reports whether a checker is set.
func (r ProcessRunner) HasChecker() bool { return r.Check != nil }

// Checker runs the checker process, if any.
func (r ProcessRunner) Checker(ctx context.Context, image, dir string) (exec.Outcome, bool) {
	if r.Check == nil {
		return exec.Outcome{}, false
	}
	return r.Check.Run(ctx, image, ""), true
}

// check validates a Config and fills defaults.
func (c *Config) check() error {
	if c.Trace == "" {
		return errors.New("explore: no trace")
	}
	if len(c.Target.Args) == 0 {
		return errors.New("explore: no target")
	}
	if c.Runner == nil {
		c.Runner = ProcessRunner{Prog: c.Target, Check: c.Checker}
	}
	if len(c.Workload.Ops) == 0 {
		return errors.New("explore: the workload has no operations: crash states are explored inside operations (one per line of standard input)")
	}
	if len(c.Strategies) == 0 {
		for _, n := range DefaultStrategies {
			c.Strategies = append(c.Strategies, crash.StrategyByName(n))
		}
	}
	if c.Options.Samples == 0 {
		c.Options.Samples = DefaultSamples
	}
	if c.BatchStates <= 0 {
		c.BatchStates = DefaultBatchStates
	}
	c.Options.OpBoundaries = true
	if c.Pool != "" {
		abs, err := filepath.Abs(c.Pool)
		if err != nil {
			return err
		}
		c.Pool = abs
	}
	return c.plan()
}

// ReproduceWords returns the shell words of a command that runs target on image with env set
// (ReproduceCommand), each quoted for the shell: the NAME=VALUE variables, and the program and
// its arguments with {pool} replaced by image.
func ReproduceWords(target, env []string, image string) (vars, args []string) {
	args = make([]string, len(target))
	for i, a := range target {
		args[i] = exec.ShellQuote(strings.ReplaceAll(a, exec.PoolPlaceholder, image))
	}
	vars = make([]string, len(env))
	for i, kv := range env {
		vars[i] = exec.ShellQuote(kv)
	}
	return vars, args
}

// ReproduceCommand is the shell command that runs target on image with the workload from
// operation k+1 on (line k+2) on standard input, with env set (exec.Target.ReproduceEnv: the
// variables the runs of scry had that the command must carry, among them PMDK forced to treat
// the file as PM and an instrumented program tracing into /dev/null).
func ReproduceCommand(target, env []string, workload string, k, nops int, image string) string {
	vars, args := ReproduceWords(target, env, image)
	cmd := "env " + strings.Join(append(vars, args...), " ")
	if k+1 >= nops {
		return cmd + " < /dev/null"
	}
	return fmt.Sprintf("tail -n +%d %s | %s", k+2, exec.ShellQuote(workload), cmd)
}
