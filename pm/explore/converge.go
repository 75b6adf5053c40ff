package explore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/pmdk"
)

// Stopping runs on crash images whose state converged with a legal outcome's (exec.Converge).
//
// A run on a crash image of a one-operation period, once its program has opened (recovered) the
// pool and is about to read its first operation, is compared with the legal outcomes' runs at the
// same point by a hash of the pool: when it equals one of theirs, the run is stopped there and
// its outcome is that legal outcome's, since from there it would repeat that run. A passing state
// then costs its recovery instead of the whole rest of the workload: on mapcli's btree with 2 000
// operations, where every state passes, most of an exploration's time (docs/performance.md). A
// failing state never converges (its recovered pool differs from both legal outcomes'), so
// convergence never decides a failure and never hides one a full run would show, under the
// assumptions exec.Converge states. Config.NoConverge turns it off.
//
// The hashes ignore the run-time state and the lanes of a libpmemobj pool (pmdk.ScratchRanges), read from the consistent
// image before the operation by its legal outcome's run; the runs on the period's crash images
// use the same ranges. A run whose output before it stopped is not the beginning of the legal
// outcome's is run again in full (Outcome.ConvergedOutcome).

// convergeFile is the name of the runtime's report in a worker's directory.
const convergeFile = "converge"

// convergence is what a period's legal slot keeps for convergence: the ranges its hashes
// ignore, read once from the image of its first legal outcome's run, and the input every run of
// the period must have for its hash to be compared with theirs.
type convergence struct {
	once     sync.Once
	exclude  [][2]int64
	needOpen bool
	stdin    []byte
}

// scratch reads the scratch ranges of the pool image at path once (pmdk.ScratchRanges): a pool that is not
// a libpmemobj pool, or whose header cannot be read, has none, and its hashes cover everything.
func (c *convergence) scratch(path string) ([][2]int64, bool) {
	c.once.Do(func() {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return
		}
		if rs, err := pmdk.ScratchRanges(f, fi.Size()); err == nil && len(rs) > 0 {
			c.exclude, c.needOpen = rs, true
		}
	})
	return c.exclude, c.needOpen
}

// converge returns what run j asks its runtime to do about convergence (nil: nothing): a legal
// outcome's run records its hash; a run on a crash image of a one-operation period waits for its
// legal outcomes and stops at a state equal to one of theirs (legal[i] is the outcome whose hash
// is c.Legal[i]).
func (e *explorer) converge(ctx context.Context, w *exec.Worker, j job) (c *exec.Converge, legal []exec.Outcome) {
	if e.cfg.NoConverge || j.lazy != nil {
		return nil, nil
	}
	out := filepath.Join(w.Dir, convergeFile)
	if s := j.publish; s != nil && s.conv != nil {
		excl, open := s.conv.scratch(j.image)
		return &exec.Converge{Out: out, Exclude: excl, NeedOpen: open}, nil
	}
	s := j.legal
	if s == nil || s.conv == nil || j.copyFrom == "" || !bytes.Equal(j.stdin, s.conv.stdin) {
		// (An image of its own, not made from copyFrom, could not be made again for a second
		// run: converged.)
		return nil, nil
	}
	c = &exec.Converge{Out: out, Exclude: s.conv.exclude, NeedOpen: s.conv.needOpen}
	for _, o := range s.outcomes(ctx) {
		if o.Completed() && o.StateHash != "" {
			c.Legal = append(c.Legal, o.StateHash)
			legal = append(legal, o)
		}
	}
	if len(c.Legal) == 0 {
		return nil, nil
	}
	return c, legal
}

// converged resolves the outcome of a run stopped at a legal outcome's state (o.ConvergedTo
// indexes legal, as converge returned it): that legal outcome's, or nil when the run's output so
// far disagrees with it (the caller runs the image again without convergence). saved is how much
// longer the legal outcome's run took.
func converged(o exec.Outcome, legal []exec.Outcome) (got *exec.Outcome, saved time.Duration) {
	k := o.ConvergedTo - 1
	if k < 0 || k >= len(legal) {
		return nil, 0
	}
	c, ok := o.ConvergedOutcome(legal[k])
	if !ok {
		return nil, 0
	}
	return &c, max(legal[k].Duration-o.Duration, 0)
}
