package explore

import (
	"slices"

	"github.com/scry-pm/scry/internal/budget"
	"github.com/scry-pm/scry/pm/crash"
)

// The remainder walk. Under a time budget a batch's runs are bounded by the time the rest of the
// exploration leaves (explorer.overrun), and the pacing leaves points out when the rest does not
// fit; the rest's time is estimated from the crash states the strategies choose, and cluster and
// window sampling run far fewer, so the walks can end well before the budget with states of a
// stopped batch never judged (CCEH: 2 273 of its splits' states, 700 s left) and points left out.
// The pacing also explores points in part (thinStates) on an estimate that can turn out too
// high. When the walks end with time left, one more walk explores the points left out and
// rebuilds the stopped states and the states left out of the points explored in part, and only
// those, paced by the same budget (a point's cost is its own, or its states to retry). A point with states to retry is not counted again (Stats.CrashPoints, progress), nor
// are its durability states or repaired twins made again.

// keepRetry records the state of item it, whose run an overrun bound stopped, for the remainder
// walk (not a durability state or a twin: they are made with their crash point's states).
func (e *explorer) keepRetry(it *item) {
	if e.remainder || it.durability || it.twin != nil {
		return
	}
	e.retryAt(it.event, it.op)[stateKey(it.state.K)] = true // a stopped run (explorer.budgetStopped)
}

// retryAt returns the states to retry at the crash point of trace event event (by stateKey: true
// for a stopped run, false for a state left out), made empty if there were none, and marks its
// operation op for the remainder walk.
func (e *explorer) retryAt(event uint64, op int) map[string]bool {
	if e.retry == nil {
		e.retry = map[uint64]map[string]bool{}
	}
	if e.retry[event] == nil {
		e.retry[event] = map[string]bool{}
	}
	if e.retryOp == nil {
		e.retryOp = map[int]bool{}
	}
	e.retryOp[op] = true
	return e.retry[event]
}

// keepThinned records the states (keys) of crash point cp of operation k that the pacing left
// out of the point's share (thinStates), for the remainder walk: a budget the exploration turns
// out to fit in then leaves none of them out.
func (e *explorer) keepThinned(cp *crash.CrashPoint, k int, keys []string) {
	if e.lastWalk || len(keys) == 0 {
		return
	}
	retry := e.retryAt(cp.Event, k)
	for _, key := range keys {
		if _, ok := retry[key]; !ok {
			retry[key] = false // left out by the pacing, never run
		}
	}
}

// remainderPass returns the operations of the remainder walk (those with states to retry), or nil
// when there is none or no time for it: it is made once, after the last walk, when the time
// budget's schedule has not ended.
func (e *explorer) remainderPass() []bool {
	if e.remainder || len(e.retry)+len(e.skipped) == 0 || e.budgetStop || e.cfg.TimeBudget <= 0 || e.spent() >= budget.ScheduleEnd(e.cfg.TimeBudget) {
		return nil
	}
	e.remainder, e.lastWalk = true, true
	e.fallbackWalk = false // the remainder walk follows the fallback walk (lazy.go), if any
	pass := make([]bool, len(e.cfg.Workload.Ops))
	for k := range e.retryOp {
		if k < len(pass) {
			pass[k] = true
		}
	}
	return pass
}

// keepSkipped records crash point cp of operation k, of estimated cost cost, which the pacing
// left out, for the remainder walk.
func (e *explorer) keepSkipped(cp *crash.CrashPoint, k int, cost float64) {
	if e.cfg.TimeBudget <= 0 {
		return
	}
	if e.skipped == nil {
		e.skipped = map[uint64]float64{}
	}
	if e.retryOp == nil {
		e.retryOp = map[int]bool{}
	}
	e.skipped[cp.Event], e.retryOp[k] = cost, true
}

// visitRetry is visit in the remainder walk: a crash point the pacing left out is explored as in
// a walk (counted explored instead of left out), one with states to retry is explored with those
// states (as many as the pacing lets in); the others are passed by.
func (e *explorer) visitRetry(cp *crash.CrashPoint, k int) error {
	if cost, ok := e.skipped[cp.Event]; ok {
		delete(e.skipped, cp.Event)
		explored := e.res.Stats.CrashPoints
		e.remainder = false
		err := e.visitPoint(cp, k, cost)
		e.remainder = true
		e.res.Stats.SkippedBudget-- // counted once, when its walk left it out
		if e.res.Stats.CrashPoints > explored {
			e.batchPoints++
			e.explored[k] = true
		}
		e.walkVisitedCost += cost
		return err
	}
	n := len(e.retry[cp.Event])
	if n == 0 {
		return nil
	}
	err := e.visitPoint(cp, k, float64(n))
	e.walkVisitedCost += float64(n)
	return err
}

// retryStates returns m of the states to retry at crash point cp (the runs an overrun bound
// stopped and the states the pacing left out of the point's share), spread evenly over them (in
// key order), and forgets them: their runs are no longer counted as stopped (they are counted
// again if stopped again), and a point explored in part whose states are now all taken is no
// longer counted as such.
func (e *explorer) retryStates(cp *crash.CrashPoint, m int) map[string]bool {
	keys := slices.Sorted(func(yield func(string) bool) {
		for key := range e.retry[cp.Event] {
			if !yield(key) {
				return
			}
		}
	})
	keep := make(map[string]bool, m)
	thinned := false
	for _, stopped := range e.retry[cp.Event] {
		thinned = thinned || !stopped
	}
	for _, key := range evenly(keys, m) {
		keep[key] = true
		if e.retry[cp.Event][key] {
			e.budgetStopped--
		}
	}
	if thinned && len(keep) == len(keys) {
		e.res.Stats.PartialBudget-- // the point's states are all explored now
	}
	delete(e.retry, cp.Event)
	return keep
}
