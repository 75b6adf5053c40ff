package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/report"
)

// Sharding (Options.Shard, `scry fs explore --shard I/N`, docs/distributed.md). Every decision
// the later strategies make depends on the prefix states' verdicts: a failing prefix run's
// operations persist as one unit in omit-one and split, and omit-one never tests a crash point
// whose prefix state failed. So every shard judges every prefix state (one per crash point: the
// linear part of the exploration, next to omit-one's quadratic one) and derives the same failing
// runs; the states of omit-one, split and exhaustive are then partitioned by logical operation:
// omit-one's by the operation it loses (the first of a failing run's unit), so that the walk over
// later crash points that stops at the first illegal state, and the rule "the first failing state
// of each lost operation is its finding", stay in one shard; split's by the operation it cuts
// (its states are deduplicated per operation); exhaustive's by its crash point. The operations,
// weighted by their states, go to the shards by shard.Assign (LPT). Each shard runs its
// states in the unsharded order, and logs for each finding every distinct dynamic vulnerability
// with its place in that order (the strategy's index, the state's index among the strategy's
// states), so that MergeShards rebuilds each finding from its first failing state of all shards,
// its count and its first report.MaxFSDynamic vulnerabilities exactly. The prefix states are
// counted and clustered by shard 0 only; the partition's hash covers the prefix verdicts, so
// shards whose checker judged them differently (a checker that is not deterministic) are refused
// by the merge.
//
// Exact but for: a time budget (each shard has all of it), --max-states (refused with a
// shard: it bounds the whole run), the exhaustive strategy's deduplication (a state another
// shard's omit-one or split built is taken as judged there, which it is unless it was
// inconclusive) and the runs of the legal outcomes made again in a shard (Stats.OracleRuns,
// RepeatRuns: the runs made).

// groupOf returns the logical operation that places item it (of strategy s) in a shard.
func groupOf(s string, it item) int {
	if s == strategyExhaustive {
		return it.point
	}
	return it.a
}

// plan computes the partition once the prefix verdicts (r) are known: the states of each later
// strategy (lists, by strategy), and which logical operations are this shard's (owner).
func (e *explorer) planShards(order []string, r failingRuns) {
	sh := e.o.Shard
	e.lists = map[string][]item{}
	costs := make([]uint64, len(e.p.m.Ops))
	for _, s := range order {
		var items []item
		switch s {
		case strategyOmitOne:
			if e.o.TimeBudget > 0 {
				// Built round by round (runOmitOneRounds): weighed by its upper bound.
				for _, l := range e.p.omitLost(r) {
					costs[l.lo] += uint64(e.omitLeft(r, []omitted{l}, []int{0}, nil))
				}
				continue
			}
			items = e.p.omitOne(r)
		case strategySplit:
			items = e.p.split(r)
		case strategyExhaustive:
			items, _ = e.p.exhaustive(e.o.MaxFree)
		default:
			continue
		}
		e.lists[s] = items
		for _, it := range items {
			costs[groupOf(s, it)]++
		}
	}
	owner := shard.Assign(costs, sh.Count)
	e.owner = owner
	info := &report.Shard{Index: sh.Index, Count: sh.Count, Mode: "fs"}
	h := sha256.New()
	e.hashOptions(h, order)
	fmt.Fprintf(h, "failed %v units %v\n", sortedKeys(r.failed), r.units)
	for g, c := range costs {
		fmt.Fprintf(h, "%d %d\n", g, owner[g])
		info.TotalCost += c
		if owner[g] == sh.Index {
			info.Cost += c
			if c > 0 {
				info.Operations++
			}
		}
	}
	info.Partition = hex.EncodeToString(h.Sum(nil)[:12])
	e.res.Shard = info
}

// hashOptions writes what must be the same in every shard for the merge to be exact: the
// number of shards, the strategies, the persistence model and the bounds.
func (e *explorer) hashOptions(h io.Writer, order []string) {
	fmt.Fprintf(h, "fs %d %s %s %d %d %d\n", e.o.Shard.Count, strings.Join(order, ","), e.s.APM.Name, e.o.MaxFree, e.o.MaxStates, len(e.p.m.Ops))
}

func sortedKeys(m map[int]bool) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// mine reports whether the states of logical operation g are this shard's (always, unsharded).
func (e *explorer) mine(g int) bool {
	return e.owner == nil || g >= len(e.owner) || e.owner[g] == e.o.Shard.Index
}

// share returns the states of strategy s (all, built by build, unsharded; the shard's of the
// planned list, sharded) with their indexes among all of s's states.
func (e *explorer) share(s string, build func() []item) ([]item, []int) {
	all, ok := e.lists[s]
	if !ok {
		all = build()
	}
	var items []item
	var idx []int
	for i, it := range all {
		if e.mine(groupOf(s, it)) {
			items = append(items, it)
			idx = append(idx, i)
		}
	}
	return items, idx
}

// othersJudged marks judged the build-0 states of omit-one and split that other shards test:
// the exhaustive strategy leaves out states an earlier strategy judged, wherever it ran.
func (e *explorer) othersJudged() {
	for _, s := range []string{strategyOmitOne, strategySplit} {
		for _, it := range e.lists[s] {
			if it.build == 0 && !e.mine(groupOf(s, it)) {
				e.judged[stateKey(it.st)] = true
			}
		}
	}
}

// shardClusters returns the shard's report data: per finding, in the order of Findings, the
// order of its first failing state and each distinct dynamic vulnerability with its order.
func (c *clusters) shardClusters() []report.ShardCluster {
	out := []report.ShardCluster{}
	for _, k := range c.order {
		vs := c.orders[k]
		out = append(out, report.ShardCluster{ID: c.by[k].FS.ID, First: vs[0].Order, Variants: vs})
	}
	return out
}

// pairKey is a dynamic vulnerability's key in a shard's report.
func pairKey(a, b int) string { return fmt.Sprintf("%d %d", a, b) }

// MergeShards combines the findings of the shards of one sharded exploration (validated by the
// caller: one trace, one partition, every shard once; their reports' "shard" objects) into
// those of the unsharded run: the findings of one cluster (FS.ID) become one, with the first
// failing state of all shards (its message, location and state), the count of distinct dynamic
// vulnerabilities over all shards and the first report.MaxFSDynamic of them in the unsharded
// order, numbered as the unsharded run numbers them. Findings without an FS part are kept as
// they are. Errors: a finding with no entry in its shard's clusters, or a dynamic vulnerability
// its shard did not keep.
func MergeShards(shards []report.ShardFindings) ([]report.Finding, error) {
	type part struct {
		f *report.Finding
		c *report.ShardCluster
	}
	byID := map[string][]part{}
	var ids []string
	var others []report.Finding
	for _, s := range shards {
		cl := map[string]*report.ShardCluster{}
		for i := range s.Shard.Clusters {
			cl[s.Shard.Clusters[i].ID] = &s.Shard.Clusters[i]
		}
		for i := range s.Findings {
			f := &s.Findings[i]
			if f.FS == nil {
				others = append(others, *f)
				continue
			}
			c := cl[f.FS.ID]
			if c == nil || len(c.Variants) == 0 {
				return nil, fmt.Errorf("shard %d/%d: finding %s has no entry in the shard's clusters", s.Shard.Index, s.Shard.Count, f.FS.ID)
			}
			if _, ok := byID[f.FS.ID]; !ok {
				ids = append(ids, f.FS.ID)
			}
			byID[f.FS.ID] = append(byID[f.FS.ID], part{f, c})
		}
	}
	type merged struct {
		f     report.Finding
		first report.ShardOrder
	}
	var ms []merged
	for _, id := range ids {
		ps := byID[id]
		slices.SortFunc(ps, func(a, b part) int { return a.c.First.Compare(b.c.First) })
		type dyn struct {
			v report.ShardVariant
			p part
		}
		var ds []dyn
		for _, p := range ps {
			for _, v := range p.c.Variants {
				ds = append(ds, dyn{v, p})
			}
		}
		slices.SortStableFunc(ds, func(a, b dyn) int { return a.v.Order.Compare(b.v.Order) })
		m := merged{f: *ps[0].f, first: ps[0].c.First}
		fc := *ps[0].f.FS
		fc.Dynamic, fc.Count = nil, 0
		seen := map[string]bool{}
		for _, d := range ds {
			if seen[d.v.Key] {
				continue
			}
			seen[d.v.Key] = true
			fc.Count++
			if len(fc.Dynamic) >= report.MaxFSDynamic {
				continue
			}
			src := d.p.f.FS
			i := slices.IndexFunc(src.Dynamic, func(x report.FSVulnerability) bool { return pairKey(x.A, x.B) == d.v.Key })
			if i < 0 {
				return nil, fmt.Errorf("finding %s: the shard's dynamic vulnerability %s is not in its report", id, d.v.Key)
			}
			v := src.Dynamic[i]
			if i == 0 {
				v.State = src.State // a shard's first one's state is its finding's
			}
			v.ID = ""
			if n := len(fc.Dynamic); n > 0 {
				v.ID = fmt.Sprintf("%s-%d", fc.ID, n+1)
			} else {
				v.State = nil
			}
			fc.Dynamic = append(fc.Dynamic, v)
		}
		m.f.FS, m.f.Count = &fc, fc.Count
		ms = append(ms, m)
	}
	slices.SortStableFunc(ms, func(a, b merged) int { return a.first.Compare(b.first) })
	out := make([]report.Finding, 0, len(ms)+len(others))
	for _, m := range ms {
		out = append(out, m.f)
	}
	return append(out, others...), nil
}
