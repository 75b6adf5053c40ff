package explore

import (
	"maps"
	"slices"

	"github.com/scry-pm/scry/pm/crash"
)

// The remainder walk. Under a time budget a batch's runs are bounded by the time the rest of the
// exploration leaves (pacer.overrun), and the pacing leaves points out when the rest does not
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
func (p *pacer) keepRetry(it *item) {
	if p.remainder || it.durability || it.twin != nil {
		return
	}
	p.retryAt(it.event, it.op)[stateKey(it.state)] = true // a stopped run (budgetStopped)
}

// retryAt returns the states to retry at the crash point of trace event event (by stateKey: true
// for a stopped run, false for a state left out), made empty if there were none, and marks its
// operation op for the remainder walk.
func (p *pacer) retryAt(event uint64, op int) map[string]bool {
	if p.retry == nil {
		p.retry = map[uint64]map[string]bool{}
	}
	if p.retry[event] == nil {
		p.retry[event] = map[string]bool{}
	}
	if p.retryOp == nil {
		p.retryOp = map[int]bool{}
	}
	p.retryOp[op] = true
	return p.retry[event]
}

// keepThinned records the states (keys) of the crash point at trace event event, of operation
// k, that the pacing left out of the point's share (thinStates), for the remainder walk: a budget
// the exploration turns out to fit in then leaves none of them out.
func (p *pacer) keepThinned(event uint64, k int, keys []string) {
	if p.lastWalk || len(keys) == 0 {
		return
	}
	retry := p.retryAt(event, k)
	for _, key := range keys {
		if _, ok := retry[key]; !ok {
			retry[key] = false // left out by the pacing, never run
		}
	}
}

// remainderPass returns the operations (of n) of the remainder walk (those with states to retry
// or points left out), or nil when there is none or no time for it: it is made once, after the
// last walk, when the time budget's schedule has not ended.
func (p *pacer) remainderPass(n int) []bool {
	if p.remainder || len(p.retry)+len(p.skipped) == 0 || p.budgetStop || p.budget <= 0 || p.ended() {
		return nil
	}
	p.remainder, p.lastWalk = true, true
	pass := make([]bool, n)
	for k := range p.retryOp {
		if k < len(pass) {
			pass[k] = true
		}
	}
	return pass
}

// keepSkipped records the crash point at trace event event, of operation k and estimated cost
// cost, which the pacing left out, for the remainder walk.
func (p *pacer) keepSkipped(event uint64, k int, cost float64) {
	if p.budget <= 0 {
		return
	}
	if p.skipped == nil {
		p.skipped = map[uint64]float64{}
	}
	if p.retryOp == nil {
		p.retryOp = map[int]bool{}
	}
	p.skipped[event], p.retryOp[k] = cost, true
}

// remainderPass is pacer.remainderPass for the workload; the remainder walk follows the fallback
// walk (lazy.go), if any.
func (e *explorer) remainderPass() []bool {
	pass := e.pacer.remainderPass(len(e.cfg.Workload.Ops))
	if pass != nil {
		e.lazy.walk = false
	}
	return pass
}

// visitRetry is visit in the remainder walk: a crash point the pacing left out is explored as in
// a walk (counted explored instead of left out), one with states to retry is explored with those
// states (as many as the pacing lets in); the others are passed by.
func (e *explorer) visitRetry(cp *crash.CrashPoint, k int) error {
	p := e.pacer
	if cost, ok := p.skipped[cp.Event]; ok {
		delete(p.skipped, cp.Event)
		explored := e.res.Stats.CrashPoints
		p.remainder = false
		err := e.visitPoint(cp, k, cost)
		p.remainder = true
		e.res.Stats.SkippedBudget-- // counted once, when its walk left it out
		if e.res.Stats.CrashPoints > explored {
			e.runs.batchPoints++
			e.explored[k] = true
		}
		p.walkVisitedCost += cost
		return err
	}
	n := len(p.retry[cp.Event])
	if n == 0 {
		return nil
	}
	err := e.visitPoint(cp, k, float64(n))
	p.walkVisitedCost += float64(n)
	return err
}

// retryStates returns m of the states to retry at the crash point at trace event event (the runs
// an overrun bound stopped and the states the pacing left out of the point's share), spread
// evenly over them (in key order), and forgets them: their runs are no longer counted as stopped
// (they are counted again if stopped again). partDone says that the point was explored in part
// and its states are now all taken (it is no longer counted as explored in part).
func (p *pacer) retryStates(event uint64, m int) (keep map[string]bool, partDone bool) {
	keys := slices.Sorted(maps.Keys(p.retry[event]))
	keep = make(map[string]bool, m)
	thinned := false
	for _, stopped := range p.retry[event] {
		thinned = thinned || !stopped
	}
	for _, key := range evenly(keys, m) {
		keep[key] = true
		if p.retry[event][key] {
			p.budgetStopped--
		}
	}
	delete(p.retry, event)
	return keep, thinned && len(keep) == len(keys)
}
