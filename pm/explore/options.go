package explore

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/optcheck"
	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
)

// Options are the choices of one crash exploration, spelled once: the command line binds its
// flags to these fields (package cli: `scry check` with {pool}, `scry explore`), package pipeline
// embeds them in its Exploration and hands them on whole, and Run reads them from Config. A new
// option is one field here (with its doc) and one flag line there.
//
// The fields set by flags hold what the user wrote (strategy names, the checker's shell command,
// the output filter's regular expression); Check validates them and Run resolves them. The
// zero value of every field is its default.
type Options struct {
	// Pool is the pool file's path as the recorded program named it (--pool): the region of
	// the trace mapped from it is the one the images are built for. "" picks the only file the
	// trace maps (an error when it maps several). `scry check` also creates the pool there.
	Pool string
	// Strategies name the strategies that choose the states of each crash point (--strategy,
	// repeatable, each a comma-separated list; crash.Strategies; nil: DefaultStrategies); the
	// union of their states is tested, each state once, attributed to the first strategy
	// yielding it.
	Strategies []string
	// Profiles are the persistency profiles crash states are judged under (--persistency;
	// px86.Profile; nil: ADR alone, findings unlabelled). With EADR the eadr strategy's states
	// join the strategies' (each state once); without ADR only the states EADR allows are run
	// (crash.Space.Allows), and the lazy strategy, which covers every ADR state, is refused.
	// Every finding is labelled with the profiles that allow one of its failing states
	// (report.Finding.Profiles).
	Profiles []px86.Profile
	// Crash drives the walk and the strategies: MaxStates (--max-states), Seed (--seed),
	// Samples (--samples, 0: DefaultSamples), AfterStores (--after-stores), the heuristic
	// strategy's H1 and H2 (--no-h1, --no-h2); the invariants and the stores assumed durable are
	// filled in by the caller (package pipeline). OpBoundaries is set by Run.
	Crash crash.Options
	// Jobs is the number of runs at once (--jobs; 0: one per CPU).
	Jobs int
	// Timeout bounds every run on an image (--timeout; a longer run is a hang). 0 makes the
	// bound of a run on a crash image adaptive (hangTimeout): HangFactor times the longest run
	// on a consistent image so far, between MinHangTimeout and exec.DefaultTimeout; runs on
	// consistent images get exec.DefaultTimeout.
	Timeout time.Duration
	// Checker is a shell command run on every crash image (--checker; {image} is its path); a
	// non-zero exit is a failure. "" none.
	Checker string
	// OutputFilter is a regular expression: the output lines it matches are left out when
	// outputs are compared (--output-filter; "" none).
	OutputFilter string
	// Client is the shell command of the client that drives a server target (--client; "" the
	// target reads its workload from standard input): every run is then a session of the server
	// and the client, with {port} in both replaced by a free port (exec.Client; docs/servers.md).
	Client string
	// Env are NAME=VALUE variables added to the environment of every run (--env; `scry check`
	// adds the recording's own first).
	Env []string
	// MaxInFlight caps the operations in flight at an explored crash point (--max-in-flight; 0:
	// DefaultMaxInFlight); crash points with more are skipped (Stats.SkippedConcurrent). M
	// operations in flight have P(M,0)+...+P(M,M) legal outcomes (oracles.go).
	MaxInFlight int
	// ClusterFailures is the number of failing states after which a finding's cluster is
	// sampled (--cluster-failures; 0: DefaultClusterFailures; -1: never): see sampledOut.
	ClusterFailures int
	// WindowStates is the number of states of one operation in one window and kind after which
	// further ones are sampled (0: DefaultWindowStates); ClusterFailures -1 turns it off too.
	WindowStates int
	// BatchStates bounds the images materialised at once (0: DefaultBatchStates); a batch always
	// holds whole operations, so one operation's states may exceed it.
	BatchStates int
	// TimeBudget, when positive, bounds the exploration's time (--time-budget, counted from
	// Start): when the estimated crash states of the points a walk has left do not fit in the
	// time left, an even share of them is explored, a point with many states in part
	// (pacer.pace; Stats.SkippedBudget, Stats.PartialBudget), and the runs still going at the
	// schedule's end (budget.ScheduleEnd) are stopped.
	TimeBudget time.Duration
	// Reserve, under a TimeBudget, is the time the caller keeps for its own work after the
	// exploration (package pipeline's traced re-runs of the recovery loads): the exploration's
	// schedule ends that much earlier (budget.ScheduleEnd of TimeBudget less Reserve). 0: none;
	// it must be less than TimeBudget.
	Reserve time.Duration
	// NoPriority explores the operations in trace order in one walk (--no-priority), instead of
	// in rounds of operation paths, every path before any path a second time (priority.go).
	NoPriority bool
	// NoForkServer runs the target by exec every time (--no-fork-server), instead of through
	// fork servers when its program is built with scry cc (exec.ForkServers).
	NoForkServer bool
	// NoStopEarly runs every crash image's run to its end (--no-stop-early), instead of
	// stopping it at the first output line that matches no legal outcome (early.go).
	NoStopEarly bool
	// NoConverge runs every crash image's run past its first read of an operation even when its
	// pool then equals a legal outcome's (--no-converge; converge.go).
	NoConverge bool
	// NoHugePages leaves glibc's malloc as it is in the runs of a program that links
	// libpmemobj (--no-huge-pages), instead of putting its heap on transparent huge pages
	// (exec.WithHugePages).
	NoHugePages bool
	// NoAssumeFixed explores the literal model (--no-assume-fixed): without it, the caller
	// assumes the stores the unpersisted-store oracle reports as never durable durable in later
	// operations' crash states (crash.Options.AssumeDurable, AssumeLate).
	NoAssumeFixed bool
	// Shard, when its Count is set, explores one shard of the trace's busy periods (--shard)
	// and fills Result.Shard for the merge (shard.go).
	Shard shard.Shard

	// Set by programs, not flags.

	// Start is when the time budget began (zero: when Run begins): a command that records and
	// analyses the trace first counts that time too (the budget is the command's).
	Start time.Time
	// Now is the clock (nil: time.Now), for tests.
	Now func() time.Time
	// Progress, if non-nil, reports the exploration: the planning walk, then the crash points
	// explored or left out against their total, the runs and the figures of the states judged,
	// then the findings' clustering. The caller makes it (exec.NewProgress) and finishes it.
	Progress *exec.Progress
	// Runner runs the target and the checker on images (nil: ProcessRunner, real processes).
	// Tests give a fake to explore without compiling anything.
	Runner Runner
	// Report is the path the JSON report will be written to ("" unknown), for the replay
	// command printed with each finding.
	Report string
	// Scope, when set (resolved against the trace: report.Scope.Resolve), scopes the
	// exploration to a change: a crash point is explored only when one of its frames is in a
	// touched function (the changed code or what it calls) or a store pending at it was issued
	// there (inScope); the others are left out (Stats.SkippedScope) and not planned.
	Scope *report.Scope
	// Focus, when set, is the crash id (report.ClusterID: "c" and 12 hex digits) of the one
	// finding sought, as a minimiser re-checks a smaller workload (package pipeline, Minimize):
	// only the crash states whose failure would count in that finding are run (the kind and
	// cluster key of a state are known before its run: itemKey; a lazy run, which judges
	// states it forks, is run whatever they are), one operation's states at a time, the
	// workload's last operation first (a minimiser's candidate ends with the operation that
	// failed), and the walk stops once one of them failed.
	// The other findings of the states run are kept; twins confirm nothing then, and a check
	// (package pipeline) looks for no recovery load.
	Focus string
	// Judged, if non-nil, is called (on the walk's goroutine) with every crash state judged and
	// the run it is judged by: a differential test of strategies compares them (test/lazy).
	Judged func(JudgedState)
}

// Check validates the options of a program (where a zero count is its default) and normalises
// Strategies into one name per entry. The errors name the flags: an unknown strategy, a checker
// without {image}, an output filter that does not compile, --max-states below -1, --samples,
// --jobs, --timeout, --time-budget or --max-in-flight below 0, --cluster-failures below -1, an
// --env entry that is not NAME=VALUE.
func (o *Options) Check() error { return o.check(false) }

// scheduled is the part of the time budget the exploration paces itself by (its schedule is
// budget.ScheduleEnd of it): TimeBudget less Reserve; 0 without a budget.
func (o *Options) scheduled() time.Duration {
	if o.TimeBudget <= 0 {
		return 0
	}
	return o.TimeBudget - o.Reserve
}

// CheckFlags is Check for options bound to the command line's flags, whose defaults are never
// 0: a 0 in --max-states, --samples, --cluster-failures or --max-in-flight was typed, means
// nothing, and is refused too.
func (o *Options) CheckFlags() error { return o.check(true) }

func (o *Options) check(typed bool) error {
	strats, err := o.strategies()
	if err != nil {
		return err
	}
	if o.Strategies != nil {
		o.Strategies = o.Strategies[:0]
		for _, s := range strats {
			o.Strategies = append(o.Strategies, s.Name)
		}
	}
	if _, err := o.checker(); err != nil {
		return err
	}
	if _, err := o.outputFilter(); err != nil {
		return err
	}
	if o.Client != "" {
		if _, err := exec.ParseClient(o.Client); err != nil {
			return err
		}
	}
	if err := optcheck.MaxStates(o.Crash.MaxStates, typed); err != nil {
		return err
	}
	if err := optcheck.Jobs(o.Jobs); err != nil {
		return err
	}
	if o.Reserve < 0 || o.Reserve > 0 && o.Reserve >= o.TimeBudget {
		return fmt.Errorf("a reserve of %v for a time budget of %v: want at least 0 and less than the budget", o.Reserve, o.TimeBudget)
	}
	if err := optcheck.Duration("--time-budget", o.TimeBudget, "no budget"); err != nil {
		return err
	}
	if err := optcheck.Duration("--timeout", o.Timeout, "the adaptive default"); err != nil {
		return err
	}
	if o.Crash.Samples < 0 || o.Crash.Samples == 0 && typed {
		return fmt.Errorf("--samples %d: give a positive number of states", o.Crash.Samples)
	}
	if o.ClusterFailures < -1 || o.ClusterFailures == 0 && typed {
		return fmt.Errorf("--cluster-failures %d: give a positive number of failing states, or -1 to run every state", o.ClusterFailures)
	}
	if o.MaxInFlight < 0 || o.MaxInFlight == 0 && typed {
		return errors.New("--max-in-flight must be at least 1")
	}
	return exec.CheckEnv(o.Env)
}

// strategies resolves Strategies (nil: DefaultStrategies).
func (o *Options) strategies() ([]*crash.Strategy, error) {
	names := o.Strategies
	if names == nil {
		names = DefaultStrategies
	}
	out, err := ResolveStrategies(names)
	if err != nil {
		return nil, err
	}
	if slices.Contains(o.Profiles, px86.EADR) {
		if s := crash.StrategyByName("eadr"); !slices.Contains(out, s) {
			out = append(out, s)
		}
		if !slices.Contains(o.Profiles, px86.ADR) && slices.ContainsFunc(out, func(s *crash.Strategy) bool { return s.Lazy }) {
			return nil, errors.New("the lazy strategy covers every crash state ADR allows, not eADR's alone: with --persistency eadr use eager strategies (the eadr strategy runs every state eADR allows), or add adr")
		}
	}
	return out, nil
}

// profileMask returns the profiles of Profiles that allow state st of sp, one bit per profile
// (1<<p); with no Profiles, ADR's bit.
func (o *Options) profileMask(sp *crash.Space, st crash.State) uint8 {
	if len(o.Profiles) == 0 {
		return 1 << px86.ADR
	}
	var m uint8
	for _, p := range o.Profiles {
		if sp.Allows(p, st) {
			m |= 1 << p
		}
	}
	return m
}

// unionProfiles returns the profile names of names and of mask m (profileMask), in Profiles
// order; nil with no Profiles.
func (o *Options) unionProfiles(names []string, m uint8) []string {
	for _, p := range o.Profiles {
		if slices.Contains(names, p.String()) {
			m |= 1 << p
		}
	}
	return o.profileNames(m)
}

// profileNames returns the names of the profiles in mask m (profileMask), in Profiles order;
// nil with no Profiles (findings unlabelled).
func (o *Options) profileNames(m uint8) []string {
	if len(o.Profiles) == 0 {
		return nil
	}
	var out []string
	for _, p := range o.Profiles {
		if m&(1<<p) != 0 {
			out = append(out, p.String())
		}
	}
	return out
}

// ResolveStrategies returns the strategies names name (crash.StrategyByName), each entry a
// comma-separated list, each strategy once, in order; nil for none. Errors: an unknown name,
// with the list of those known.
func ResolveStrategies(names []string) ([]*crash.Strategy, error) {
	var out []*crash.Strategy
	for _, n := range names {
		for _, n := range strings.Split(n, ",") {
			s := crash.StrategyByName(strings.TrimSpace(n))
			if s == nil {
				return nil, fmt.Errorf("unknown strategy %q (known: %s)", n, strings.Join(StrategyNames(), ", "))
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// StrategyNames lists the names of crash.Strategies, in their order.
func StrategyNames() []string {
	var list []string
	for _, s := range crash.Strategies() {
		list = append(list, s.Name)
	}
	return list
}

// checker parses Checker with Timeout as its bound (nil when there is none). Errors:
// exec.ParseChecker's.
func (o *Options) checker() (*exec.Checker, error) {
	if o.Checker == "" {
		return nil, nil
	}
	c, err := exec.ParseChecker(o.Checker)
	if err != nil {
		return nil, err
	}
	c.Timeout = o.Timeout
	return &c, nil
}

// outputFilter compiles OutputFilter (nil when there is none). Errors: it does not compile.
func (o *Options) outputFilter() (*regexp.Regexp, error) {
	if o.OutputFilter == "" {
		return nil, nil
	}
	re, err := regexp.Compile(o.OutputFilter)
	if err != nil {
		return nil, fmt.Errorf("--output-filter: %w", err)
	}
	return re, nil
}

// NeedsInvariants reports whether one of the strategies chooses states from inferred invariants
// (false when a name is unknown: Check reports it).
func (o *Options) NeedsInvariants() bool {
	s, err := o.strategies()
	return err == nil && NeedInvariants(s)
}

// Target is the program under test as the runs on images run it: args (with {pool}) resolved
// by exec.ParseTarget, with Timeout, the output filter and Env. Errors: those of
// exec.ParseTarget and of the output filter.
func (o *Options) Target(args []string) (exec.Target, error) {
	t, err := exec.ParseTarget(args)
	if err != nil {
		return t, err
	}
	re, err := o.outputFilter()
	if err != nil {
		return t, err
	}
	t.Timeout, t.OutputFilter, t.Env = o.Timeout, re, o.Env
	if o.Client != "" {
		if t.Client, err = exec.ParseClient(o.Client); err != nil {
			return t, err
		}
		if !exec.HasPort(args) {
			return t, fmt.Errorf("--client: no argument of %s contains %s: write %s where the server takes its port (e.g. -p %s)", args[0], exec.PortPlaceholder, exec.PortPlaceholder, exec.PortPlaceholder)
		}
	}
	return t, nil
}

// runner returns Runner, or the ProcessRunner of target and Checker.
func (o *Options) runner(target exec.Target) (Runner, error) {
	if o.Runner != nil {
		return o.Runner, nil
	}
	c, err := o.checker()
	if err != nil {
		return nil, err
	}
	return ProcessRunner{Prog: target, Check: c}, nil
}

// now is the clock (Now, else time.Now).
func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// maxInFlight is MaxInFlight with its default.
func (o *Options) maxInFlight() int {
	if o.MaxInFlight <= 0 {
		return DefaultMaxInFlight
	}
	return o.MaxInFlight
}

// clusterFailures is ClusterFailures with its default.
func (o *Options) clusterFailures() int {
	if k := o.ClusterFailures; k != 0 {
		return k
	}
	return DefaultClusterFailures
}

// windowStates is WindowStates with its default.
func (o *Options) windowStates() int {
	if n := o.WindowStates; n > 0 {
		return n
	}
	return DefaultWindowStates
}
