package explore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/trace"
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

// Config is one exploration: the user's Options and what the caller computed for this trace.
type Config struct {
	Options
	// Trace is the path of the recorded trace.
	Trace string
	// Args is the program under test and its arguments, with {pool} where the image goes
	// (exec.ParseTarget; Options.Target adds the timeout, output filter and environment).
	Args []string
	// Workload is the workload: Ops[k] is operation k's line (without newline); Path its file
	// (absolute, for reports).
	Workload workload.Workload
	// ConfirmPairs are the pairs of stores whose inferred properties' findings are to be
	// confirmed differentially (Pair): the states of the invariants strategy that break one are
	// each judged with a repaired twin, and Result.Pairs says what they showed.
	ConfirmPairs []Pair
	// DurableAfter lists, for pairs of ConfirmPairs whose After store is made durable by the
	// program before a crash point where the Before store still is not (inter-thread
	// inconsistency: another thread persists its derived store at once), the trace event
	// indexes of those After stores, ascending. A crash point after such a store, where it is no
	// longer in the space (durable), breaks the pair in every state that leaves a Before store
	// issued before it unpersisted (Pair).
	DurableAfter map[Pair][]uint64
	// File, if non-nil, is the trace at Trace opened by the caller, which closes it: Run reads it
	// instead of opening Trace (a command reads one trace file through one open file).
	File *trace.File
	// AvoidTmpfs, when not "", says why crash images should not go on the tmpfs (the program
	// allocates its whole pool every time it opens it: pipeline.AllocatesPool); they go in the
	// temporary directory (exec.ScratchParent).
	AvoidTmpfs string
	// OpBegin and OpEnd name the functions whose calls marked the operations of the recorded run
	// (record.Options.OpBegin, OpEnd; "" for lines read from standard input and scry_op_begin):
	// the prep runs recorded to tell what each operation printed mark theirs alike
	// (responses.go).
	OpBegin, OpEnd string
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
	// OpBegin and OpEnd name the functions whose calls marked the recorded run's operations
	// (record.Options), for the prep runs recorded to tell what each operation printed
	// (TargetOutputs).
	OpBegin, OpEnd string
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

// setup validates c and resolves it for Run: the strategies, the target (with huge pages for a
// program that links libpmemobj, exec.WithHugePages), the runner, the defaults. The pool path is
// made absolute. Errors: a bad option (Options.Check), no trace, no target, an empty workload.
func (c *Config) setup() (target exec.Target, strats []*crash.Strategy, hugePages bool, err error) {
	if c.Trace == "" {
		return target, nil, false, errors.New("explore: no trace")
	}
	if len(c.Args) == 0 {
		return target, nil, false, errors.New("explore: no target")
	}
	if err := c.Options.Check(); err != nil {
		return target, nil, false, err
	}
	if len(c.Workload.Ops) == 0 {
		return target, nil, false, errors.New("explore: the workload has no operations: crash states are explored inside operations (one per line of standard input)")
	}
	if target, err = c.Target(c.Args); err != nil {
		return target, nil, false, err
	}
	hugePages = c.Runner == nil && !c.NoHugePages && exec.LinksLibrary(target.Args[0], "libpmemobj.so")
	if hugePages {
		// libpmemobj's open allocates about 10 MiB per run (exec.WithHugePages).
		target.Env = exec.WithHugePages(target.Env)
	}
	if c.Runner, err = c.runner(target); err != nil {
		return target, nil, false, err
	}
	if pr, ok := c.Runner.(ProcessRunner); ok {
		pr.OpBegin, pr.OpEnd = c.OpBegin, c.OpEnd
		c.Runner = pr
	}
	if strats, err = c.strategies(); err != nil {
		return target, nil, false, err
	}
	if c.Crash.Samples == 0 {
		c.Crash.Samples = DefaultSamples
	}
	if c.BatchStates <= 0 {
		c.BatchStates = DefaultBatchStates
	}
	c.Crash.OpBoundaries, c.Crash.TxBoundaries = true, true
	if c.Pool != "" {
		if c.Pool, err = filepath.Abs(c.Pool); err != nil {
			return target, nil, false, err
		}
	}
	return target, strats, hugePages, nil
}

// ReproduceWords returns the shell words of a command that runs target on image with env set
// (ReproduceCommand), each quoted for the shell: the NAME=VALUE variables, and the program and
// its arguments with {pool} replaced by image; an aarch64 program's run under qemu-aarch64
// (exec.Emulator).
func ReproduceWords(target, env []string, image string) (vars, args []string) {
	if t, err := exec.Command(target); err == nil {
		target = t
	}
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

// ReproduceSession is ReproduceCommand for a server driven by client (its --client command; ""
// none: ReproduceCommand): the server is started in the background on image with {port} set to
// ReproducePort, the client gets the rest of the workload once the server has had a second to
// listen, and the server is stopped after it.
func ReproduceSession(target, env []string, client, workload string, k, nops int, image string) string {
	if client == "" {
		return ReproduceCommand(target, env, workload, k, nops, image)
	}
	vars, args := ReproduceWords(exec.WithPort(target, ReproducePort), env, image)
	server := "env " + strings.Join(append(vars, args...), " ")
	cli := strings.ReplaceAll(client, exec.PortPlaceholder, strconv.Itoa(ReproducePort))
	input := "< /dev/null"
	if k+1 < nops {
		input = fmt.Sprintf("< <(tail -n +%d %s)", k+2, exec.ShellQuote(workload))
	}
	return fmt.Sprintf("bash -c %s", exec.ShellQuote(fmt.Sprintf("%s & sleep 1; /bin/sh -c %s %s; kill $!; wait", server, exec.ShellQuote(cli), input)))
}

// ReproducePort is the port ReproduceSession's command gives a server (exploration's sessions
// each use a free one).
const ReproducePort = 17211

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
