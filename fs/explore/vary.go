package explore

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
)

// Output that varies between identical runs (pm/explore's vary.go is the same rule in PM
// mode). A program that prints times, process ids or random ids prints something else in
// every run; so before a crash state whose re-execution matches neither legal outcome by its
// output is judged a failure, each legal outcome of its operation is run a second time in the
// same directory with the same input (once per operation, by the first worker that needs it;
// the others wait for it), and what differs between the two runs (exec.LearnVariance) is left
// out of every comparison with that outcome. The legal outcomes' first runs are made before
// the crash states' runs (explorer.oracles) and the second after one of them, so a program
// seeded with the time differs between the two wherever a crash state's run could.

// legalState returns the directory state of operation k's legal outcome: every call before it
// persisted (rolled back) or every call up to its end (committed).
func (e *explorer) legalState(k int, committed bool) model.State {
	before, through := e.p.span(k)
	if committed {
		return e.p.upTo(0, through)
	}
	return e.p.upTo(0, before)
}

// varied returns operation k's legal outcomes (rolled back, committed) with what varies
// between two runs of each, running each a second time first (once: varied waits for the first
// caller's runs); dir is a scratch directory of the calling worker.
func (e *explorer) varied(ctx context.Context, k int, lp *legalPair, dir string) (rolledBack, committed exec.Outcome) {
	lp.vary.Do(func() {
		lp.varied = [2]exec.Outcome{lp.rolledBack, lp.committed}
		for i := range lp.varied {
			o := lp.varied[i]
			if !o.Completed() {
				continue
			}
			r := e.reexec(ctx, e.legalState(k, i == 1), k, filepath.Join(dir, fmt.Sprint("repeat-", i)))
			if r.Err != nil {
				continue
			}
			v := exec.LearnVariance(o, r)
			e.mu.Lock()
			e.res.Stats.RepeatRuns++
			if v != nil && r.Completed() {
				lp.varied[i] = o.WithVariance(v)
				e.res.Stats.VaryingOutcomes++
				e.res.Stats.VaryingLines = max(e.res.Stats.VaryingLines, v.Lines())
			}
			e.mu.Unlock()
		}
	})
	return lp.varied[0], lp.varied[1]
}
