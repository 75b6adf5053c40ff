package explore

import (
	"context"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/scry-pm/scry/internal/exec"
)

// Stopping runs on crash images early (exec.WithLegal).
//
// The runs on the crash images of a one-operation period start after its legal outcomes' runs
// (exec.Pool.First), and most start after those ended: such a run is then compared with them
// line by line as its output streams and stopped at the first line that neither the committed
// nor the rolled-back outcome prints there, since it can match neither whatever follows. Failing
// states, which dominate exploration on buggy programs, then cost the run up to their first
// wrong line instead of the rest of the workload. A run that keeps matching is never stopped:
// it may still crash, hang or diverge later. A stopped run's symptom is its output (it may have
// crashed or hung later: the first symptom decides, --no-stop-early shows the last).
//
// The variance of a legal outcome (vary.go) is learned after the runs: a run stopped on a line
// that varies between identical runs is judged again under it (exec.DecidedDivergence) and,
// when the stop is no longer decided, run again in full (rerunUndecided).

// legalSlot collects the legal outcomes of a one-operation period as their runs end (its
// oracle jobs publish to it) and gives the runs on its crash images the exec.Legal to compare
// with once all have ended. A run on a crash image waits for them: its legal outcomes' runs
// were handed out before it (exec.Pool.First), so it waits at most for one run, and whether a
// run is stopped early does not depend on timing (results are the same whatever the number of
// jobs). Safe for concurrent use by the workers.
type legalSlot struct {
	mu    sync.Mutex
	outs  []exec.Outcome // rolled back, then committed when the period has it
	put   int            // how many have ended
	done  chan struct{}  // closed when all have
	legal *exec.Legal
	conv  *convergence // nil: the period's runs are not compared by state (converge.go)
}

func newLegalSlot(n int, conv *convergence) *legalSlot {
	return &legalSlot{outs: make([]exec.Outcome, n), done: make(chan struct{}), conv: conv}
}

// publish records the outcome of legal outcome i's run.
func (s *legalSlot) publish(i int, o exec.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outs[i] = o
	if s.put++; s.put == len(s.outs) {
		s.legal = exec.NewLegal(s.outs...)
		close(s.done)
	}
}

// wait returns the legal outcomes to compare a run with once their runs have all ended (nil
// when none can be compared as output streams: exec.NewLegal), or nil when ctx ends first.
func (s *legalSlot) wait(ctx context.Context) *exec.Legal {
	select {
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.legal
	case <-ctx.Done():
		return nil
	}
}

// outcomes returns the legal outcomes once their runs have all ended (a copy, in publishing
// order), or nil when ctx ends first.
func (s *legalSlot) outcomes(ctx context.Context) []exec.Outcome {
	select {
	case <-s.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.Clone(s.outs)
	case <-ctx.Done():
		return nil
	}
}

// withLegal returns ctx with the legal outcomes of job j when it is a run on a crash image of
// a one-operation period (Config.NoStopEarly: never), waiting for their runs to end.
func (e *explorer) withLegal(ctx context.Context, j job) context.Context {
	if j.legal == nil || e.cfg.NoStopEarly {
		return ctx
	}
	return exec.WithLegal(ctx, j.legal.wait(ctx))
}

// rerunUndecided runs again in full the crash images whose runs were stopped at a diverging
// line that, under the legal outcomes' variances learned since, no longer decides a mismatch
// (exec.DecidedDivergence), and puts their outcomes in outs; it counts the runs stopped early
// whose verdict stands (Stats.StoppedEarly, with the lines and time they saved). Returns the
// items whose second run was interrupted (not judged) and the error of exec.Map.
func (b *runningBatch) rerunUndecided(e *explorer, outs []outcome) (unjudged map[int]bool, err error) {
	var again []int // job indices
	seen := map[int]bool{}
	for i := range b.items {
		k := b.jobOf[i]
		got := outs[k]
		if !got.done || got.target.Diverged == 0 || seen[k] {
			continue
		}
		seen[k] = true
		var legal []exec.Outcome
		for _, l := range b.legalJobs(i) {
			legal = append(legal, outs[l].target)
		}
		if exec.DecidedDivergence(got.target, legal...) {
			st := &e.res.Stats
			st.StoppedEarly++
			st.StoppedEarlyLines += got.target.LinesLeft
			longest := time.Duration(0)
			for _, l := range legal {
				longest = max(longest, l.Duration)
			}
			st.StoppedEarlySeconds += max(longest-got.target.Duration, 0).Seconds()
			continue
		}
		again = append(again, k)
	}
	if len(again) == 0 {
		return nil, nil
	}
	jobs := make([]job, len(again))
	for n, k := range again {
		j := b.jobs[k]
		j.image, j.legal = e.newImage("again"), nil
		jobs[n] = j
	}
	rs, err := exec.Map(e.runs.runCtx, e.runs.pool, jobs, e.runJob)
	e.res.Stats.StoppedAgain += len(again)
	for n, k := range again {
		os.Remove(jobs[n].image)
		if n < len(rs) && rs[n].done {
			outs[k] = rs[n]
			continue
		}
		for i := range b.items {
			if b.jobOf[i] == k {
				if unjudged == nil {
					unjudged = map[int]bool{}
				}
				unjudged[i] = true
			}
		}
	}
	return unjudged, err
}
