package pipeline

import (
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
)

// record returns the report's record of the check c ran (report.Check): its program's command
// line (target, with {pool} in crash mode), options, workload, and the PM files the recorded
// run mapped (facts, from the analysis pass: created by it unless their paths were in existed
// before it ran); x is the exploration in crash mode, nil otherwise. `scry fix --build` re-runs
// the check from it (CheckFromRecord).
func (c *Check) record(target []string, facts *checkFacts, x *Exploration, existed map[string]bool) *report.Check {
	rc := c.Recording
	wd, _ := os.Getwd()
	r := &report.Check{
		Dir: wd, Args: target, PM: rc.PM, NoLoads: rc.NoLoads, NoPMEMForce: rc.NoForcePMEM,
		OpBegin: rc.OpBegin, OpEnd: rc.OpEnd, Env: rc.Env, BlackBox: rc.BlackBox, Schedules: rc.Schedules,
		Oracles: c.Analysis.Kinds, NoInfer: c.Analysis.NoInfer, Suppressions: c.Analysis.Suppressions.Path(),
	}
	if len(c.Analysis.Profiles) > 0 {
		r.Persistency = px86.ProfileNames(c.Analysis.Profiles)
	}
	readInput := facts.readInput
	r.Pools = slices.Clone(facts.pools)
	for i := range r.Pools {
		if existed != nil && !existed[r.Pools[i].Path] {
			r.Pools[i].Created = true // the file was not there before the run
		}
	}
	if len(target) > 0 {
		r.Program = programPath(target[0])
	}
	switch {
	case rc.Workload != "":
		r.Workload, _ = filepath.Abs(rc.Workload)
	case rc.Stdin != nil && readInput && rc.OpBegin == "":
		// The program read lines of scry's standard input (each is an operation), which the
		// report does not keep.
		r.Stdin = true
	}
	if x != nil {
		r.Crash = &report.CheckCrash{
			Strategies: x.Strategies, MaxStates: x.Crash.MaxStates, Seed: x.Crash.Seed, Samples: x.Crash.Samples, AfterStores: x.Crash.AfterStores,
			Jobs: x.Jobs, TimeoutSeconds: x.Timeout.Seconds(), Checker: x.Checker, OutputFilter: x.OutputFilter, Client: x.Client,
			MaxInFlight: x.MaxInFlight, ClusterFailures: x.ClusterFailures,
			TimeBudgetSeconds: x.TimeBudget.Seconds(), NoAssumeFixed: x.NoAssumeFixed, Pool: c.Explore.Pool,
		}
	}
	return r
}

// existingPaths returns the absolute paths of the files args name that exist (before a run,
// so that record can tell the pools the run created).
func existingPaths(args []string) map[string]bool {
	out := map[string]bool{}
	for _, a := range args {
		if p, err := filepath.Abs(a); err == nil {
			if _, err := os.Stat(p); err == nil {
				out[p] = true
			}
		}
	}
	return out
}

// programPath returns the absolute path of the program name runs ("" when it cannot be found).
func programPath(name string) string {
	if !strings.Contains(name, "/") {
		p, err := osexec.LookPath(name)
		if err != nil {
			return ""
		}
		name = p
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return ""
	}
	return abs
}

// CheckFromRecord returns the check a report recorded (report.Check), ready to run again: the
// same program, options, workload and exploration, with its output left to the caller (Output,
// JSON) and the program's output discarded. Pools and paths are as recorded: a caller that runs
// it elsewhere rewrites Recording.Args, Recording.PM and Explore.Pool first. Errors: the record
// cannot be run again (the program read scry's standard input; a bad strategy, checker or
// output filter; unreadable suppressions).
func CheckFromRecord(rc *report.Check) (*Check, error) {
	if rc == nil || len(rc.Args) == 0 {
		return nil, errors.New("the report records no check to run again (it was written by scry analyze or scry explore, or by an older scry): write it with `scry check --format json -o REPORT`")
	}
	if rc.Stdin {
		return nil, errors.New("the recorded check fed scry's own standard input to the program, which the report does not keep: check again with --workload FILE")
	}
	c := &Check{
		Recording: Recording{
			Args: rc.Args, PM: rc.PM, NoLoads: rc.NoLoads, NoForcePMEM: rc.NoPMEMForce, OpBegin: rc.OpBegin, OpEnd: rc.OpEnd,
			Env: rc.Env, Workload: rc.Workload, Stdin: strings.NewReader(""), BlackBox: rc.BlackBox, Schedules: rc.Schedules,
		},
		Analysis: Analysis{Kinds: rc.Oracles, NoInfer: rc.NoInfer},
	}
	if len(rc.Persistency) > 0 {
		ps, err := px86.ParseProfiles(strings.Join(rc.Persistency, ","))
		if err != nil {
			return nil, fmt.Errorf("the recorded check: %w", err)
		}
		c.Analysis.Profiles = ps
	}
	if rc.Suppressions != "" {
		s, err := report.LoadSuppressions(rc.Suppressions)
		if err != nil {
			return nil, fmt.Errorf("the recorded check's suppressions: %w", err)
		}
		c.Analysis.Suppressions = s
	}
	if cc := rc.Crash; cc != nil {
		c.Explore = Exploration{Options: explore.Options{
			Strategies: cc.Strategies, Crash: crash.Options{MaxStates: cc.MaxStates, Seed: cc.Seed, Samples: cc.Samples, AfterStores: cc.AfterStores},
			Jobs: cc.Jobs, Timeout: time.Duration(cc.TimeoutSeconds * float64(time.Second)), Checker: cc.Checker, OutputFilter: cc.OutputFilter, Client: cc.Client,
			MaxInFlight: cc.MaxInFlight, ClusterFailures: cc.ClusterFailures, TimeBudget: time.Duration(cc.TimeBudgetSeconds * float64(time.Second)),
			NoAssumeFixed: cc.NoAssumeFixed, Pool: cc.Pool, Profiles: c.Analysis.Profiles,
		}}
		if err := c.Explore.Check(); err != nil {
			return nil, fmt.Errorf("the recorded check: %w", err)
		}
	}
	return c, nil
}
