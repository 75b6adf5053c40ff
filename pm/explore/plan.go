package explore

import (
	"errors"
	"fmt"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/pmdk"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// plan is what an exploration knows before its first run, from one read of the trace: the
// size of the first pool it maps (where the images go: exec.ScratchParent), the order of
// exploration (the operations' persistent paths, grouped into rounds: priority.go), the crash
// points of each operation and their estimated cost in crash states (the total the progress is
// reported against and what the time budget paces by), and, for a shard, its operations and
// report data (shard.go).
type plan struct {
	regionBytes uint64
	// outputs is what each operation printed on its standard output in the recorded run
	// (responses.go), nil when none printed anything.
	outputs   map[int][]byte
	order     schedule
	opPoints  []int
	opCost    []float64
	shardOps  []bool
	shardInfo report.Shard
	// scope answers which crash points a run scoped to a change explores (nil: all);
	// scopedOut counts those it leaves out.
	scope     *scoped
	scopedOut int
}

// shardPeriod is a busy period as the partition into shards sees it: its operations and its
// estimated cost (the runs of its legal outcomes, its durability states and the states the
// strategies choose at its crash points, their closed-form counts).
type shardPeriod struct {
	ops  []int
	cost uint64
}

// makePlan plans the exploration of c's trace with strategies strats, reading it once through
// tf (crash.WalkWith: the crash points with their spaces, and, observed on the same replay, the
// operations' paths and the first pool mapped). Only the operations of c's shard count points
// and cost (the others 0: each shard is paced by its own). A truncated trace is planned up to
// its end. Errors: the trace cannot be read, the shard's partition cannot be made.
func makePlan(c *Config, strats []*crash.Strategy, tf *trace.File) (*plan, error) {
	r, err := tf.Reader()
	if err != nil {
		return nil, err
	}
	n := len(c.Workload.Ops)
	p := &plan{opPoints: make([]int, n), opCost: make([]float64, n), scope: newScoped(c.Scope)}
	var paths *pathCollector
	var outs *outputCollector
	observe := func(ops *replay.Ops) replay.Handler {
		paths = newPathCollector(ops, n, func(rg pmdk.Region) {
			if p.regionBytes == 0 {
				p.regionBytes = rg.Len
			}
		})
		outs = &outputCollector{ops: ops}
		return replay.Tee(paths, outs)
	}
	scopedOut := map[int]int{} // crash points left out of the scope, by operation
	// The busy periods, for the partition into shards.
	var periods []*shardPeriod
	var cur *shardPeriod
	inFlight := 0
	opPeriod := map[int]*shardPeriod{}
	_, err = crash.WalkWith(r, c.Crash, func(cp *crash.CrashPoint) error {
		k := int(cp.Op)
		switch cp.Kind {
		case crash.OpBegin:
			if inFlight == 0 || cur == nil {
				cur = &shardPeriod{cost: 2} // the two legal outcomes' runs
				periods = append(periods, cur)
			}
			inFlight++
			cur.ops = append(cur.ops, k)
			opPeriod[k] = cur
			cur.cost += uint64(min(len(cp.Assumed), durabilityCost))
			return nil
		case crash.OpEnd:
			inFlight = max(inFlight-1, 0)
			return nil
		case crash.TxEnd:
			if cur != nil {
				cur.cost++ // the legal outcome of the operation cut there
			}
			return nil
		}
		if cp.Op < 0 {
			return nil
		}
		if !p.scope.point(r, cp) {
			scopedOut[k]++
			return nil
		}
		if k < n {
			p.opPoints[k]++
			p.opCost[k] += pointCost(cp.Space, strats, c.Crash)
		}
		if sp := opPeriod[k]; sp != nil && c.Shard.Active() {
			for _, st := range strats {
				_, m := st.Count(cp.Space, c.Crash)
				if m.IsUint64() {
					sp.cost += m.Uint64()
				} else {
					sp.cost += 1 << 32
				}
			}
		}
		return nil
	}, observe)
	if err != nil && !errors.Is(err, trace.ErrTruncated) {
		return nil, err
	}
	p.order = orderOf(paths.keys(), paths.period, MaxWalks)
	if t, err := c.Target(c.Args); err == nil {
		p.outputs = filtered(outs.outs, t.OutputFilter)
	}
	if c.Shard.Active() {
		for k := range opPeriod {
			n = max(n, k+1)
		}
		p.shardOps, p.shardInfo = c.partition(periods, n, strats)
		if p.shardInfo.TraceDigest, err = tf.Digest(); err != nil {
			return nil, fmt.Errorf("shard %v: %w", c.Shard, err)
		}
		for k := range p.opPoints {
			if !p.inShard(c, k) {
				p.opPoints[k], p.opCost[k] = 0, 0
			}
		}
	}
	for k, m := range scopedOut {
		if p.inShard(c, k) {
			p.scopedOut += m // each shard its own operations', as the merge adds them up
		}
	}
	return p, nil
}

// inShard reports whether operation k is c's shard's (always, unsharded). An operation the plan
// did not see would be the first shard's.
func (p *plan) inShard(c *Config, k int) bool {
	if !c.Shard.Active() {
		return true
	}
	if k >= len(p.shardOps) {
		return c.Shard.Index == 0
	}
	return p.shardOps[k]
}
