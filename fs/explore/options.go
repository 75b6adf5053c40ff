package explore

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/optcheck"
	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/report"
)

// Options are the choices a user makes for one exploration, in the form the user gives them,
// spelled once: the command line binds its flags to these fields (package cli: `scry fs check`,
// `scry fs explore`), package pipeline embeds them in FSCheck and FSExplore and hands them on
// whole, and Explore reads them. A new option is one field here (with its doc) and one flag
// line there. What is derived from them and from the recorded run (the persistence model, the
// checker as a command line, the oracle of output equivalence, the sites, the scratch
// directory) is Setup's, not theirs. Check validates them as the command line does; the zero
// Options holds Explore's defaults.
type Options struct {
	// Checker is the shell command that judges a crash directory, run inside it by /bin/sh -c
	// (--checker; "": none, a workload judges instead). CheckerTimeout bounds one run of the
	// checker, and one re-execution of the program for output equivalence (--timeout; 0:
	// exec.DefaultTimeout); a state whose run hangs is inconclusive.
	Checker        string
	CheckerTimeout time.Duration
	// APM names the persistence model whose crash states are explored (--apm; model.APMs; "":
	// default).
	APM string
	// Strategies name the strategies run (--strategy; Strategies; nil: DefaultStrategies).
	Strategies []string
	// MaxStates bounds the crash states tested in all (--max-states; -1: no bound; 0, which
	// only Options built in code hold, is no bound too, and Check refuses it, as a user who
	// types it made a mistake). It cannot be given with a Shard. The exhaustive strategy
	// enumerates the states of a crash point only when at most MaxFree micro-operations may be
	// lost there (no flag; 0: 10, at most 2^10 states per crash point).
	MaxStates int
	MaxFree   int
	// Jobs is the number of crash states judged at once (--jobs; 0: one per CPU).
	Jobs int
	// TimeBudget, when positive, bounds the exploration's wall clock (--time-budget, with PM
	// mode's semantics: see budget.go), counted from Start (zero: when Explore begins): a
	// command that records and models the run first gives its own start, so that this time
	// counts too (the budget is the command's).
	TimeBudget time.Duration
	Start      time.Time
	// Shard, when its Count is set, explores one shard of the crash states (--shard, shard.go)
	// and returns what `scry merge` needs in Explored.Shard (its TraceDigest left to the
	// caller).
	Shard shard.Shard
	// Progress, if non-nil, gets a phase per strategy against the strategy's states (the crash
	// points for prefix), each state counted when judged or left out, the runs of the program
	// and the figures after each round; the caller finishes it.
	Progress *exec.Progress
	// Now is the clock (nil: time.Now), for tests (with a clock of its own, the time budget
	// stops runs from starting but kills none).
	Now func() time.Time
}

// Check validates the options as a user gave them and returns the first error, naming the flag
// that sets the option: MaxStates 0 or below -1, Jobs below 0, a negative TimeBudget or
// CheckerTimeout, an unknown persistence model or strategy (Resolve), MaxStates with a Shard.
// It does not check for an oracle, which may be a workload that is not an option of the
// exploration.
func (o Options) Check() error {
	for _, err := range []error{
		optcheck.MaxStates(o.MaxStates, true), optcheck.Jobs(o.Jobs),
		optcheck.Duration("--time-budget", o.TimeBudget, "no budget"),
		optcheck.Duration("--timeout", o.CheckerTimeout, fmt.Sprintf("the default of %v", exec.DefaultTimeout)),
	} {
		if err != nil {
			return err
		}
	}
	if _, err := o.Resolve(); err != nil {
		return err
	}
	return o.checkShard()
}

// Resolve checks the names among the options and returns the persistence model APM names.
// Errors: an unknown persistence model or strategy.
func (o Options) Resolve() (*model.APM, error) {
	apm, err := model.APMByName(cmp.Or(o.APM, "default"))
	if err != nil {
		return nil, err
	}
	if err := checkStrategies(o.Strategies); err != nil {
		return nil, err
	}
	return apm, nil
}

// checkStrategies returns an error naming the first of names that is not a strategy.
func checkStrategies(names []string) error {
	for _, s := range names {
		if !slices.Contains(Strategies, s) {
			return fmt.Errorf("unknown strategy %q (known: %v)", s, Strategies)
		}
	}
	return nil
}

// checkShard refuses a bound on the states with a shard.
func (o Options) checkShard() error {
	if o.Shard.Active() && o.MaxStates > 0 {
		return errors.New("--max-states bounds the crash states of the whole run: it cannot be split into shards (leave it out with --shard)")
	}
	return nil
}

// Setup is what one Explore call works with besides the Options: what the caller derives from
// them and from the recorded run (package pipeline builds it).
type Setup struct {
	// APM is the persistence model Options.APM names (Options.Resolve).
	APM *model.APM
	// Checker, if it has a command, judges each crash directory (run inside it): Options.Checker
	// as a command line, with Options.CheckerTimeout. Oracle, if set, judges it by output
	// equivalence, the recorded program re-executed on the rest of its workload. At least one
	// is needed.
	Checker exec.Checker
	Oracle  *Equivalence
	// Sites resolves the operations' sites and stacks (the trace reader after model.BuildModel).
	Sites report.SiteTable
	// Dir is the parent of the workers' directories, which hold the crash directories ("":
	// os.TempDir()).
	Dir string
}
