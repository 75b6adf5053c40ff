package explore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
)

// Sharding. One exploration of a recorded trace is split into Count shards, each run on its own
// (another process, another machine: a Slurm array task, a Kubernetes Indexed Job's pod, a CI
// matrix job; docs/distributed.md), and MergeShards combines their findings into those of the
// unsharded run. A shard explores the crash points of whole busy periods (an operation, or the
// operations that overlap it): a period's legal outcomes run once, in its shard, and every state
// of one crash point is judged in one shard. Each shard walks the whole trace (the walk that
// places crash points, assumes stores durable and names operations' paths is cheap next to the
// runs), builds crash images only in its own periods, and logs every failing state's cluster,
// variant and place in the unsharded order of judgement (ShardOrder), so that the merge rebuilds
// the clusters' counts, variants, operations and first states exactly and then folds ordering
// violations into atomicity violations (foldOrdering) over all shards, as an unsharded run does.
//
// The partition is deterministic: a walk without images estimates each period's cost (the states
// the strategies choose at its crash points, their closed-form counts as in `scry explore
// --dry-run`, plus the runs of its legal outcomes and its durability states), and the periods,
// costliest first (ties: trace order), go each to the shard with the least cost so far (ties:
// the lowest index): Graham's LPT rule (Graham, "Bounds on multiprocessing timing anomalies",
// SIAM J. Appl. Math. 1969), within 4/3 of the best balance. The trace carries no timestamps,
// so an operation's run time is not weighed, only its states.
//
// What a shard cannot know is what the others found. Cluster sampling (Options.ClusterFailures,
// WindowStates, durability stores) counts failures over the states judged so far; everything
// else in its rule is a function of the state (judge.go: the one in ClusterSampleEvery kept is a
// hash of the state), so a shard, having seen fewer failures, judges a superset of the unsharded
// run's states, logs those the unsharded run may have left out (candidates, logState) with every
// failing state, and MergeShards applies the rule again in the unsharded order: the merge is
// exact with sampling on (the cluster sampling of the unsharded run is itself applied again at
// judgement, with every state judged before, so that it does not depend on the batches). The
// twins spent per pair (MaxTwins), the time budget and the adaptive hang bound still count over
// the shard's own states: with a budget or pairs to confirm, the merge is not exact.

// durabilityCost bounds the durability states counted for one OP_BEGIN in the cost estimate:
// they are one per source position of the stores assumed durable there, and sampled.
const durabilityCost = 8

// partition assigns the busy periods (in trace order, makePlan's) to c.Shard.Count shards (see
// above) and returns this shard's operations (of n) and its report data, without the trace's
// digest. strats are the strategies the costs were counted with.
func (c *Config) partition(periods []*shardPeriod, n int, strats []*crash.Strategy) ([]bool, report.Shard) {
	s := c.Shard
	costs := make([]uint64, len(periods))
	for i, p := range periods {
		costs[i] = p.cost
	}
	shardOf := shard.Assign(costs, s.Count)
	ops := make([]bool, n)
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", s.Count)
	c.hashOptions(h, strats)
	info := report.Shard{Index: s.Index, Count: s.Count}
	for i, p := range periods {
		for _, k := range p.ops {
			binary.Write(h, binary.LittleEndian, [2]uint64{uint64(k), uint64(shardOf[i])})
		}
		info.TotalCost += p.cost
		if shardOf[i] == s.Index {
			for _, k := range p.ops {
				ops[k] = true
			}
			info.Operations += len(p.ops)
			info.Cost += p.cost
		}
	}
	info.Partition = hex.EncodeToString(h.Sum(nil)[:12])
	return ops, info
}

// hashOptions writes to h what must be the same in every shard of one exploration for the
// merge to be the unsharded run's: the workload's operations and the options that choose or
// sample the states (not the program's path, which may differ between machines).
func (c *Config) hashOptions(h io.Writer, strats []*crash.Strategy) {
	var names []string
	for _, st := range strats {
		names = append(names, st.Name)
	}
	o := c.Crash
	fmt.Fprintf(h, "%q %d %d %d %v %v %d %v %d %d %d %v %d %v\n", names, o.MaxStates, o.Seed, o.Samples, o.AfterStores,
		o.AssumeLate, len(o.AssumeDurable), o.NoH3, o.H1, o.H2, c.ClusterFailures, c.WindowStates, c.MaxInFlight, c.NoPriority)
	for _, op := range c.Workload.Ops {
		fmt.Fprintf(h, "%q\n", op)
	}
}

// shardLog is what a shard logs of the states it judged (logFailure, logState): one
// ShardCluster per finding, in the order of Result.Findings, with its variants, operations and
// alternates, and the states the merge needs (report.Shard.States).
type shardLog struct {
	seq      int
	clusters []report.ShardCluster
	index    map[string]int   // cluster key -> index in clusters
	variants []map[string]int // per cluster: variant key -> index in its Variants
	ops      []map[uint64]bool
	// sure says, per cluster, that a failing state the merge cannot leave out was logged (no
	// alternate is needed after it); sureVariant the same per variant (no image is).
	sure        []bool
	sureVariant []map[int]bool
	alts        []alternate
	keys        map[string]int
	sampleKeys  []string
	states      []report.ShardState
}

// alternate is a logged alternate finding to place (explorer.place): its cluster and index in
// its Alternates, its crash point and message.
type alternate struct {
	cluster, index int
	at             report.Context
	msg            func(string) string
}

func (e *explorer) shardLog() *shardLog {
	if e.found.shard == nil {
		e.found.shard = &shardLog{index: map[string]int{}, keys: map[string]int{}}
	}
	return e.found.shard
}

// judgeOrder returns its place in the order of judgement (set once: in its walk, its trace event,
// then its place among the shard's logged states).
func (e *explorer) judgeOrder(it *item) report.ShardOrder {
	if it.order == nil {
		l := e.shardLog()
		l.seq++
		it.order = &report.ShardOrder{Walk: e.walk, Event: it.event, Seq: l.seq}
	}
	return *it.order
}

// candidate reports whether the merge may leave it out: it is subject to sampling and not one
// of those kept once sampling applies (it ran because this shard had not seen enough failures).
func candidate(it *item) bool { return it.smp.key != "" && !it.smp.selected }

// keyIndex returns the index of sampling key k in the shard's SampleKeys.
func (l *shardLog) keyIndex(k string) int {
	i, ok := l.keys[k]
	if !ok {
		i = len(l.sampleKeys)
		l.keys[k] = i
		l.sampleKeys = append(l.sampleKeys, k)
	}
	return i
}

// image is it's crash state as a replayable variant (nil: a durability state has no crash
// point of its own).
func image(it *item) *report.CrashVariant {
	if it.point < 0 {
		return nil
	}
	return &report.CrashVariant{CrashPoint: it.point, Event: it.event, State: slices.Clone(it.state.K), Operation: uint64(it.op), Input: it.next + 1, Tear: crashTear(it.state)}
}

// logFailure logs a failing state of a shard: it falls in the cluster key (a new one when the
// shard has not logged it yet) as variant; kind is the finding's kind; build makes the finding
// it would be the first state of (an alternate, kept until the cluster has a state the merge
// cannot leave out). Called by record once the state is counted.
func (e *explorer) logFailure(kind report.Kind, key, variant string, it *item, build func() (report.Finding, func(string) string)) {
	l := e.shardLog()
	o := e.judgeOrder(it)
	it.cluster, it.variant = key, variant
	i, ok := l.index[key]
	if !ok {
		i = len(l.clusters)
		l.index[key] = i
		l.clusters = append(l.clusters, report.ShardCluster{ID: report.ClusterID(key), First: o, Window: it.pointKey + "|" + e.pathKey(it.op, it.pointKey)})
		l.variants = append(l.variants, map[string]int{})
		l.ops = append(l.ops, map[uint64]bool{})
		l.sure = append(l.sure, false)
		l.sureVariant = append(l.sureVariant, map[int]bool{})
	}
	c := &l.clusters[i]
	if _, seen := l.variants[i][variant]; !seen {
		l.variants[i][variant] = len(c.Variants)
		c.Variants = append(c.Variants, report.ShardVariant{Key: variant, Order: o, Image: image(it)})
	}
	if op := uint64(it.op); !l.ops[i][op] {
		l.ops[i][op] = true
		c.Operations = append(c.Operations, report.ShardOperation{Index: op, Order: o})
	}
	if w := it.pointKey + "|" + e.pathKey(it.op, it.pointKey); kind == report.AtomicityViolation && !slices.Contains(c.PrefixWindows, w) {
		c.PrefixWindows = append(c.PrefixWindows, w)
	}
	if ok && !l.sure[i] {
		f, msg := build()
		l.alts = append(l.alts, alternate{cluster: i, index: len(c.Alternates), at: report.Context{Site: it.site, Stack: it.stack}, msg: msg})
		c.Alternates = append(c.Alternates, report.ShardAlternate{Order: o, Finding: f})
	}
	if !candidate(it) {
		l.sure[i] = true
	}
}

// logState logs a judged state of a shard that the merge needs: a failing one (its cluster,
// variant, operation and, while its variant may be left out, its crash state), one sampled by a
// durability store (its passes count too), and a candidate (candidate). Nothing unsharded.
func (e *explorer) logState(it *item) {
	if !e.cfg.Shard.Active() {
		return
	}
	failed, cand := it.cluster != "", candidate(it)
	if !failed && !cand && it.smp.store == nil {
		return
	}
	l := e.shardLog()
	st := report.ShardState{Order: e.judgeOrder(it), Key: -1, Window: -1, Prefix: -1, Candidate: cand, Failed: failed, Inconclusive: !it.judged}
	if it.smp.key != "" {
		st.Key = l.keyIndex(it.smp.key)
	}
	if failed {
		if !it.durability {
			kind := report.OrderingViolation
			if it.state.Prefix {
				kind = report.AtomicityViolation
			}
			st.Window = l.keyIndex(string(kind) + "|" + it.pointKey)
			if kind == report.AtomicityViolation {
				st.Prefix = l.keyIndex(it.pointKey + "|" + e.pathKey(it.op, it.pointKey))
			}
		}
		ci := l.index[it.cluster]
		vi := l.variants[ci][it.variant]
		st.Cluster, st.Variant, st.Operation = ci, vi, uint64(it.op)
		if !l.sureVariant[ci][vi] {
			st.Image = image(it)
		}
		if !cand {
			l.sureVariant[ci][vi] = true
		}
	}
	l.states = append(l.states, st)
}

// shardReport is the report data of this shard (Result.Shard), its clusters those of the
// findings, unfolded.
func (e *explorer) shardReport() *report.Shard {
	info := e.plan.shardInfo
	info.Clusters = []report.ShardCluster{}
	info.ClusterFailures = e.found.sampleAfter
	if l := e.found.shard; l != nil {
		info.Clusters, info.SampleKeys, info.States = l.clusters, l.sampleKeys, l.states
	}
	return &info
}

// Resampled counts the states the merge left out by applying cluster sampling again in the
// unsharded order (MergeShards): judged by a shard, left out by the unsharded run. Of them,
// Failures failed and Inconclusive were inconclusive.
type Resampled struct{ States, Failures, Inconclusive int }

// MergeShards combines the crash findings of the shards of one exploration (validated by the
// caller: one trace, one partition, every shard once) into those of the unsharded run. It first
// applies cluster sampling again to the states the shards judged, in the unsharded order of
// judgement (report.ShardOrder): a shard saw only its own failures, so it judged every state the
// unsharded run judged and more (a candidate, report.ShardState); a candidate whose sampling key
// had reached the threshold with the states kept before it is left out, as the unsharded run
// left it out (the choice of the states kept once sampling applies is a hash of the state, the
// same in every run: judge.go). Then each finding (Crash.ID) is rebuilt from its states kept:
// its first (its message, location and crash state: the shard's finding, or an alternate), its
// count, its distinct variants and operations in the order they were first found (the first
// report.MaxVariantImages further variants replayable); and the ordering violations are folded
// into the atomicity violations of their windows (foldOrdering). The findings are in the order
// of their first failing state. It returns the states left out with the findings. Errors: a
// crash finding with no entry in its shard's clusters, a state naming a cluster, variant or key
// its shard does not have, a first state with no finding.
func MergeShards(shards []report.ShardFindings) ([]report.Finding, Resampled, error) {
	var out Resampled
	var others []report.Finding
	type ref struct {
		shard int
		st    report.ShardState
	}
	var states []ref
	for si, s := range shards {
		ids := map[string]bool{}
		for _, c := range s.Shard.Clusters {
			ids[c.ID] = true
		}
		for _, f := range s.Findings {
			if f.Crash == nil {
				others = append(others, f)
			} else if !ids[f.Crash.ID] {
				return nil, out, fmt.Errorf("shard %d/%d: crash finding %s has no entry in the shard's clusters", s.Shard.Index, s.Shard.Count, f.Crash.ID)
			} else if !slices.ContainsFunc(s.Shard.States, func(st report.ShardState) bool { return st.Failed }) {
				return nil, out, fmt.Errorf("shard %d/%d: crash finding %s but no failing state logged: a report of an older scry? explore the shards again", s.Shard.Index, s.Shard.Count, f.Crash.ID)
			}
		}
		for _, st := range s.Shard.States {
			bad := st.Key >= len(s.Shard.SampleKeys) || st.Window >= len(s.Shard.SampleKeys) || st.Prefix >= len(s.Shard.SampleKeys)
			if st.Failed {
				bad = bad || st.Cluster < 0 || st.Cluster >= len(s.Shard.Clusters) || st.Variant < 0 || st.Variant >= len(s.Shard.Clusters[st.Cluster].Variants)
			}
			if bad {
				return nil, out, fmt.Errorf("shard %d/%d: a logged state names a cluster, variant or sampling key the shard does not have: the report is damaged", s.Shard.Index, s.Shard.Count)
			}
			states = append(states, ref{si, st})
		}
	}
	slices.SortStableFunc(states, func(a, b ref) int { return a.st.Order.Compare(b.st.Order) })
	key := func(r ref, i int) string {
		if i < 0 {
			return ""
		}
		return shards[r.shard].Shard.SampleKeys[i]
	}
	k := shards[0].Shard.ClusterFailures
	failed, passed := map[string]int{}, map[string]int{}
	kept := map[string][]ref{} // cluster id -> its failing states kept, in order
	var ids []string
	var all []ref // the failing states kept, in order
	for _, r := range states {
		kk := key(r, r.st.Key)
		store := strings.HasPrefix(kk, "store=")
		if r.st.Candidate && k >= 0 && (failed[kk] >= k || store && passed[kk] >= k) {
			out.States++
			if r.st.Failed {
				out.Failures++
			}
			if r.st.Inconclusive {
				out.Inconclusive++
			}
			continue
		}
		if store && !r.st.Inconclusive {
			if r.st.Failed {
				failed[kk]++
			} else {
				passed[kk]++
			}
		}
		if !r.st.Failed {
			continue
		}
		if w := key(r, r.st.Window); w != "" {
			failed[w]++
		}
		id := shards[r.shard].Shard.Clusters[r.st.Cluster].ID
		if _, ok := kept[id]; !ok {
			ids = append(ids, id)
		}
		kept[id] = append(kept[id], r)
		all = append(all, r)
	}
	var findings []report.Finding
	cl := newClusters(&Options{})
	for _, id := range ids {
		rs := kept[id]
		s := shards[rs[0].shard]
		sc := &s.Shard.Clusters[rs[0].st.Cluster]
		var first *report.Finding
		if rs[0].st.Order == sc.First {
			if i := slices.IndexFunc(s.Findings, func(f report.Finding) bool { return f.Crash != nil && f.Crash.ID == id }); i >= 0 {
				first = &s.Findings[i]
			}
		} else if i := slices.IndexFunc(sc.Alternates, func(a report.ShardAlternate) bool { return a.Order == rs[0].st.Order }); i >= 0 {
			first = &sc.Alternates[i].Finding
		}
		if first == nil || first.Crash == nil {
			return nil, out, fmt.Errorf("shard %d/%d: finding %s: its first state kept has no finding in the report: the report is damaged", s.Shard.Index, s.Shard.Count, id)
		}
		f := *first
		c := *first.Crash
		f.Crash, f.Count = &c, len(rs)
		c.Variants, c.VariantImages, c.Operations = 0, nil, nil
		seen := map[string]bool{}
		for _, r := range rs {
			v := shards[r.shard].Shard.Clusters[r.st.Cluster].Variants[r.st.Variant]
			if !seen[v.Key] {
				seen[v.Key] = true
				c.Variants++
				if c.Variants > 1 && len(c.VariantImages) < report.MaxVariantImages && r.st.Image != nil {
					img := *r.st.Image
					img.ID = fmt.Sprintf("%s-%d", c.ID, c.Variants)
					c.VariantImages = append(c.VariantImages, img)
				}
			}
			if len(c.Operations) < report.MaxCrashOperations && !slices.Contains(c.Operations, r.st.Operation) {
				c.Operations = append(c.Operations, r.st.Operation)
			}
		}
		findings = append(findings, f)
		cl.windows = append(cl.windows, sc.Window)
	}
	// A window's atomicity violation is that of its last failing program-order state (record).
	for _, r := range all {
		if w := key(r, r.st.Prefix); w != "" {
			cl.prefixWindows[w] = slices.Index(ids, shards[r.shard].Shard.Clusters[r.st.Cluster].ID)
		}
	}
	return append(cl.foldOrdering(findings, nil), others...), out, nil
}
