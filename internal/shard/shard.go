// Package shard selects one shard of a sharded exploration and assigns units of work to shards,
// for PM mode (pm/explore, whose units are busy periods) and file-system mode (fs/explore, whose
// units are groups of crash states) alike: one exploration of a recorded trace is split into
// Count shards, each run on its own (a Slurm array task, a Kubernetes Indexed Job's pod, a CI
// matrix job; docs/distributed.md), and the mode's merge combines their findings into those of
// the unsharded run.
package shard

import (
	"cmp"
	"fmt"
	"slices"
)

// Shard selects shard Index of Count, 0-based. The zero Shard (Count 0) explores everything.
type Shard struct {
	Index, Count int
}

// Parse parses "I/N" (0 <= I < N): shard I of N. Errors (with the zero Shard): not of that form,
// N < 1, I out of range.
func Parse(s string) (Shard, error) {
	var sh Shard
	var rest string
	if n, _ := fmt.Sscanf(s, "%d/%d%s", &sh.Index, &sh.Count, &rest); n != 2 {
		return Shard{}, fmt.Errorf("shard %q: want I/N, shard I (from 0) of N, e.g. 0/4", s)
	}
	if err := sh.Check(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

// Check reports an error when s is not shard I of N with N >= 1 and 0 <= I < N.
func (s Shard) Check() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want I/N with N >= 1 and 0 <= I < N", s.Index, s.Count)
	}
	return nil
}

// Active reports whether s selects a shard (Count > 0: a 1/1 shard still writes what the merge
// needs).
func (s Shard) Active() bool { return s.Count > 0 }

// String is "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Assign distributes units of work of the given costs over n shards and returns each unit's
// shard: the units, costliest first (ties: in their order), go each to the shard with the least
// cost so far (ties: the lowest index), Graham's LPT rule (Graham, "Bounds on multiprocessing
// timing anomalies", SIAM J. Appl. Math. 1969), within 4/3 of the best balance. Deterministic:
// the same costs and n give the same assignment on every machine. n must be at least 1.
func Assign(costs []uint64, n int) []int {
	order := make([]int, len(costs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(costs[b], costs[a]) })
	load := make([]uint64, n)
	shardOf := make([]int, len(costs))
	for _, i := range order {
		j := 0
		for k := range load {
			if load[k] < load[j] {
				j = k
			}
		}
		shardOf[i] = j
		load[j] += costs[i]
	}
	return shardOf
}
