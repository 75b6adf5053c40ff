package explore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/workload"
)

// verdict is how one crash state was judged.
type verdict struct {
	judged       bool // the state ran (not left out by --max-states or the time budget, not interrupted)
	inconclusive bool // no legal outcome of its operation ran to its end: not judged
	// stopped, when not "", says how the checker or the re-execution was stopped from outside
	// (exec.Outcome.Stopped: it timed out, or was killed by a signal not its own): the state
	// ran but is inconclusive, never a finding.
	stopped string
	failed  bool
	// symptom is exec's: SymptomChecker, or how the re-execution differs (Mismatch).
	symptom string
	detail  string
	stdout  string // what the program had printed at the crash
	// diffCommitted and diffRolledBack compare the re-execution's output with the legal
	// outcomes' (exec.Diff).
	diffCommitted, diffRolledBack string
	err                           error
}

// Equivalence is the output-equivalence oracle of a run driven by a workload (WITCHER, SOSP'21,
// §4.5): a crash during workload operation k must leave a directory from which the program,
// given operations k+1..n on its standard input, ends like one of the two crash-free runs: from
// the directory as it was when operation k committed (every call up to its end persisted), or
// when it rolled back (every call before it persisted). The crash points before the first
// operation belong to "operation -1", whose rolled-back directory is the initial one.
type Equivalence struct {
	// Target is the program with its arguments and environment (no {pool}: it runs in the
	// crash directory, whose path its output shows as {pool}); Timeout bounds a run.
	Target exec.Target
	// Workload is what the recorded run read, one operation per line.
	Workload workload.Workload
}

// legalPair holds the two legal outcomes of a workload operation, and the same with what
// varies between two runs of each (vary.go: varied, once).
type legalPair struct {
	rolledBack, committed exec.Outcome
	vary                  sync.Once
	varied                [2]exec.Outcome
}

// span returns the last logical operations issued before workload operation k began and by its
// end (-1: none).
func (p *plan) span(k int) (before, through int) {
	before, through = -1, -1
	for i := range p.m.Ops {
		if op := p.m.Ops[i].Operation; op < k {
			before = i
		} else if op == k {
			through = i
		}
	}
	return before, max(through, before)
}

// oracleJob is one legal outcome to compute: operation k's directory committed or rolled back.
type oracleJob struct {
	k         int
	committed bool
}

// oracles computes the legal outcomes of the workload operations of items that have none yet.
func (e *explorer) oracles(items []item) error {
	if e.s.Oracle == nil {
		return nil
	}
	var jobs []oracleJob
	for _, it := range items {
		if it.consistent() {
			continue
		}
		k := e.p.m.Ops[it.point].Operation
		if _, ok := e.legal[k]; ok {
			continue
		}
		e.legal[k] = nil
		jobs = append(jobs, oracleJob{k, false}, oracleJob{k, true})
	}
	if len(jobs) == 0 {
		return nil
	}
	outs, err := exec.Map(e.bctx, e.pool, jobs, func(ctx context.Context, w *exec.Worker, j oracleJob) exec.Outcome {
		return e.reexec(ctx, e.legalState(j.k, j.committed), j.k, filepath.Join(w.Dir, "oracle"))
	})
	if err != nil {
		return err
	}
	for i := 0; i < len(jobs); i += 2 {
		e.res.Stats.OracleRuns += 2
		lp := &legalPair{rolledBack: outs[i], committed: outs[i+1]}
		e.legal[jobs[i].k] = lp
		for _, o := range []exec.Outcome{lp.rolledBack, lp.committed} {
			switch {
			case o.Err != nil:
				return fmt.Errorf("running the program for a legal outcome: %s", o.Describe())
			case !o.Completed():
				e.warn(fmt.Sprintf("a legal outcome (the program run without a crash on the workload from operation %d) %s: it is no legal outcome", jobs[i].k+1, o.Describe()))
			}
		}
	}
	return nil
}

// reexec builds state st in dir and runs the program there on the workload after operation k.
func (e *explorer) reexec(ctx context.Context, st model.State, k int, dir string) exec.Outcome {
	if _, _, err := model.Materialize(e.p.m, e.p.micro[0], st, dir); err != nil {
		return exec.Outcome{ExitCode: -1, Err: fmt.Errorf("building a crash directory: %w", err)}
	}
	return e.s.Oracle.Target.Run(ctx, dir, e.s.Oracle.Workload.Suffix(k), dir)
}

// run judges items on the pool's workers and returns their verdicts, in order, with the first
// error (a crash directory that could not be built, a checker that could not start) unless the
// context was cancelled. With --max-states, the items past the bound are left out (warned
// about); with a time budget, the items it leaves no time for (budget.go: counted in
// Stats.SkippedBudget, not judged). The first failing state's time is taken when it is judged,
// not when its batch ends.
func (e *explorer) run(items []item) ([]verdict, error) {
	if n := e.o.MaxStates; n > 0 && e.res.Stats.StatesTested+len(items) > n {
		keep := max(0, n-e.res.Stats.StatesTested)
		if keep < len(items) {
			e.warn(fmt.Sprintf("--max-states %d: crash states were left untested", n))
			items = items[:keep]
		}
	}
	if e.overBudget() {
		e.res.Stats.SkippedBudget += len(items)
		return make([]verdict, len(items)), nil
	}
	if err := e.oracles(items); err != nil {
		if e.budgetEnded() {
			e.res.Stats.SkippedBudget += len(items)
			return make([]verdict, len(items)), nil
		}
		return make([]verdict, len(items)), err
	}
	pool, order, orig := e.pool, []int(nil), items
	if e.o.TimeBudget > 0 {
		order = budgetOrder(items)
		ordered := make([]item, len(items))
		for k, i := range order {
			ordered[k] = items[i]
		}
		items, pool.Ordered = ordered, true
	}
	vs, err := exec.Map(e.bctx, pool, items, func(ctx context.Context, w *exec.Worker, it item) verdict {
		defer e.o.Progress.Advance(1) // judged or left out
		if e.overBudget() {
			return verdict{}
		}
		v := e.judge(ctx, it, w.Dir)
		if v.failed {
			t := e.o.Now().Sub(e.start)
			e.mu.Lock()
			if e.first == 0 || t < e.first {
				e.first = t
			}
			e.mu.Unlock()
		}
		return v
	})
	if e.budgetEnded() {
		// The budget's end killed the runs still going: left out, as those not started.
		err = nil
		for i := range vs {
			if vs[i].err != nil {
				vs[i] = verdict{}
			}
		}
	}
	if order != nil {
		back := make([]verdict, len(vs))
		for k, i := range order {
			back[i] = vs[k]
		}
		vs, items = back, orig
	}
	if e.o.TimeBudget > 0 && e.ctx.Err() == nil {
		for i, v := range vs {
			if !v.judged && !v.inconclusive && v.stopped == "" && v.err == nil && !items[i].consistent() {
				e.res.Stats.SkippedBudget++
			}
		}
	}
	for i, v := range vs {
		switch {
		case v.inconclusive:
			e.res.Stats.StatesTested++
			e.res.Stats.Inconclusive++
			e.warn(fmt.Sprintf("operation %d: neither legal outcome ran to its end: its crash states are not judged by output equivalence", e.p.m.Ops[items[i].point].Operation))
		case v.stopped != "":
			e.res.Stats.StatesTested++
			e.res.Stats.Inconclusive++
			e.stopped++
			if e.stoppedHow == "" {
				e.stoppedHow = v.stopped
			}
		}
		if !v.judged {
			continue
		}
		e.res.Stats.StatesTested++
		if v.failed {
			e.res.Stats.Failures++
		}
		if items[i].build == 0 {
			e.judged[stateKey(items[i].st)] = true
		}
	}
	if err == nil {
		for _, v := range vs {
			if v.err != nil && e.ctx.Err() == nil {
				err = v.err
				break
			}
		}
	}
	return vs, err
}

// judge judges a crash state in dir: by the checker, if any, then, with a workload, by output
// equivalence.
func (e *explorer) judge(ctx context.Context, it item, dir string) verdict {
	var v verdict
	if len(e.s.Checker.Args) > 0 {
		if v = e.check(ctx, it, dir); v.err != nil || v.failed {
			return v
		}
	}
	if e.s.Oracle == nil || it.consistent() {
		return v
	}
	return e.equivalent(ctx, it, filepath.Join(dir, "rerun"))
}

// equivalent builds the state in dir and runs the program there on the rest of the workload
// (Equivalence), comparing its outcome with the two legal ones of the crash point's operation.
func (e *explorer) equivalent(ctx context.Context, it item, dir string) verdict {
	k := e.p.m.Ops[it.point].Operation
	stdout, _, err := model.Materialize(e.p.m, e.p.micro[it.build], it.st, dir)
	if err != nil {
		return verdict{err: fmt.Errorf("building a crash directory: %w", err)}
	}
	got := e.s.Oracle.Target.Run(ctx, dir, e.s.Oracle.Workload.Suffix(k), dir)
	switch {
	case got.Err != nil && ctx.Err() != nil:
		return verdict{err: ctx.Err()}
	case got.Err != nil:
		return verdict{err: fmt.Errorf("running the program on a crash directory: %s", got.Describe())}
	case got.Stopped():
		return verdict{stopped: "the re-execution " + got.Describe()}
	}
	lp := e.legal[k]
	if lp == nil { // its legal outcomes did not run (the time budget ended)
		return verdict{}
	}
	if !lp.rolledBack.Completed() && !lp.committed.Completed() {
		return verdict{inconclusive: true}
	}
	v := verdict{judged: true, stdout: string(stdout)}
	rb, c := lp.rolledBack, lp.committed
	if v.symptom = exec.Mismatch(got, rb, c); v.symptom == exec.SymptomOutput {
		// Not a failure if the legal outcomes' output varies there too (vary.go).
		rb, c = e.varied(ctx, k, lp, filepath.Dir(dir))
		v.symptom = exec.Mismatch(got, rb, c)
	}
	if v.symptom == "" {
		return v
	}
	v.failed = true
	v.detail = "the program re-run on the rest of the workload " + got.Describe() + exec.FirstLine(got.Stderr, nil)
	if c.Completed() {
		v.diffCommitted = exec.DiffOutcomes(got, c)
	}
	if rb.Completed() {
		v.diffRolledBack = exec.DiffOutcomes(got, rb)
	}
	return v
}

// check materializes a state in dir and runs the checker inside it, with SCRY_STDOUT and
// SCRY_STDERR naming files that hold what the program had printed before the crash and
// SCRY_CRASH_DIR the crash directory.
func (e *explorer) check(ctx context.Context, it item, dir string) verdict {
	crash := filepath.Join(dir, "crash")
	stdout, stderr, err := model.Materialize(e.p.m, e.p.micro[it.build], it.st, crash)
	if err != nil {
		return verdict{err: fmt.Errorf("building a crash directory: %w", err)}
	}
	outPath := filepath.Join(dir, "stdout")
	errPath := filepath.Join(dir, "stderr")
	if err := os.WriteFile(outPath, stdout, 0o644); err != nil {
		return verdict{err: err}
	}
	if err := os.WriteFile(errPath, stderr, 0o644); err != nil {
		return verdict{err: err}
	}
	c := e.s.Checker
	c.Env = append(slices.Clone(c.Env), "SCRY_STDOUT="+outPath, "SCRY_STDERR="+errPath, "SCRY_CRASH_DIR="+crash)
	out := c.Run(ctx, crash, crash)
	if out.Err != nil && ctx.Err() != nil {
		return verdict{err: ctx.Err()}
	}
	if out.Err != nil && !out.TimedOut && out.ExitCode == -1 && out.Signal == 0 {
		return verdict{err: fmt.Errorf("checker: %s", out.Describe())}
	}
	if out.Stopped() {
		return verdict{stopped: "the checker " + out.Describe(), stdout: string(stdout)}
	}
	v := verdict{judged: true, failed: out.Failed(), stdout: string(stdout), detail: "the checker " + out.Describe() + exec.FirstLine(out.Stdout, out.Stderr)}
	if v.failed {
		v.symptom = exec.SymptomChecker
	}
	return v
}

func runtimeCPUs() int { return runtime.NumCPU() }

// budgetEnded reports whether the time budget is over while the exploration itself was not
// cancelled.
func (e *explorer) budgetEnded() bool { return e.bctx.Err() != nil && e.ctx.Err() == nil }
