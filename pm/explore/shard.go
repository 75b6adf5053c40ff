package explore

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
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
// What a shard cannot know is what the others found: cluster sampling (Config.ClusterFailures,
// WindowStates), durability sampling, the twins spent per pair (MaxTwins), the time budget and
// the adaptive hang bound count over the states a run has judged so far, which are the shard's
// own. With sampling off (ClusterFailures < 0), no budget and no pairs to confirm, the merged
// findings are those of the unsharded run; with sampling on, each shard samples only after its
// own failures, so shards judge at least as many states and counts and variants may be higher.

// Shard selects one shard of a sharded exploration (Config.Shard): Index of Count, 0-based.
// The zero Shard (Count 0) explores everything.
type Shard struct {
	Index, Count int

	// Set by plan: the operations of this shard, its report data.
	ops  []bool
	info report.Shard
}

// ParseShard parses "I/N" (0 <= I < N): shard I of N. Errors: not of that form, N < 1, I out of
// range.
func ParseShard(s string) (Shard, error) {
	var sh Shard
	var rest string
	if n, _ := fmt.Sscanf(s, "%d/%d%s", &sh.Index, &sh.Count, &rest); n != 2 {
		return Shard{}, fmt.Errorf("shard %q: want I/N, shard I (from 0) of N, e.g. 0/4", s)
	}
	return sh, sh.check()
}

func (s Shard) check() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want I/N with N >= 1 and 0 <= I < N", s.Index, s.Count)
	}
	return nil
}

// active reports whether the exploration is one shard of several (or of one: a 1/1 shard still
// writes what the merge needs).
func (s *Shard) active() bool { return s.Count > 0 }

// has reports whether operation k is this shard's (always, unsharded). An operation the plan
// did not see (none: it walks the whole trace) would be the first shard's.
func (s *Shard) has(k int) bool {
	if !s.active() {
		return true
	}
	if k >= len(s.ops) {
		return s.Index == 0
	}
	return s.ops[k]
}

// durabilityCost bounds the durability states counted for one OP_BEGIN in the cost estimate:
// they are one per source position of the stores assumed durable there, and sampled.
const durabilityCost = 8

// plan computes the partition of c's trace into c.Shard.Count shards and this shard's
// operations (see above). It walks the trace with c.Options and c.Strategies, set as Run uses
// them. Errors: those of trace.Open and crash.Walk, the trace file cannot be read.
func (c *Config) plan() error {
	s := &c.Shard
	if !s.active() {
		return nil
	}
	if err := s.check(); err != nil {
		return err
	}
	r, err := trace.Open(c.Trace)
	if err != nil {
		return err
	}
	defer r.Close()
	// Periods in trace order: their operations and cost.
	type period struct {
		ops  []int
		cost uint64
	}
	var periods []*period
	var cur *period
	inFlight := 0
	opPeriod := map[int]*period{}
	_, err = crash.Walk(r, c.Options, func(cp *crash.CrashPoint) error {
		switch cp.Kind {
		case crash.OpBegin:
			if inFlight == 0 || cur == nil {
				cur = &period{cost: 2} // the two legal outcomes' runs
				periods = append(periods, cur)
			}
			inFlight++
			cur.ops = append(cur.ops, int(cp.Op))
			opPeriod[int(cp.Op)] = cur
			cur.cost += uint64(min(len(cp.Assumed), durabilityCost))
			return nil
		case crash.OpEnd:
			inFlight = max(inFlight-1, 0)
			return nil
		}
		p := opPeriod[int(cp.Op)]
		if cp.Op < 0 || p == nil {
			return nil
		}
		for _, st := range c.Strategies {
			_, n := st.Count(cp.Space, c.Options)
			if n.IsUint64() {
				p.cost += n.Uint64()
			} else {
				p.cost += 1 << 32
			}
		}
		return nil
	})
	if err != nil && !isTruncated(err) {
		return fmt.Errorf("shard %d/%d: estimating the cost of the operations: %w", s.Index, s.Count, err)
	}
	costs := make([]uint64, len(periods))
	for i, p := range periods {
		costs[i] = p.cost
	}
	shardOf := Assign(costs, s.Count)
	n := len(c.Workload.Ops)
	for k := range opPeriod {
		n = max(n, k+1)
	}
	s.ops = make([]bool, n)
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", s.Count)
	c.hashOptions(h)
	s.info = report.Shard{Index: s.Index, Count: s.Count}
	for i, p := range periods {
		for _, k := range p.ops {
			binary.Write(h, binary.LittleEndian, [2]uint64{uint64(k), uint64(shardOf[i])})
		}
		s.info.TotalCost += p.cost
		if shardOf[i] == s.Index {
			for _, k := range p.ops {
				s.ops[k] = true
			}
			s.info.Operations += len(p.ops)
			s.info.Cost += p.cost
		}
	}
	s.info.Partition = hex.EncodeToString(h.Sum(nil)[:12])
	s.info.TraceDigest, err = FileDigest(c.Trace)
	return err
}

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

// Active reports whether s selects a shard (Count > 0: a 1/1 shard still writes what the merge
// needs).
func (s Shard) Active() bool { return s.Count > 0 }

// hashOptions writes to h what must be the same in every shard of one exploration for the
// merge to be the unsharded run's: the workload's operations and the options that choose or
// sample the states (not the program's path, which may differ between machines).
func (c *Config) hashOptions(h io.Writer) {
	var names []string
	for _, st := range c.Strategies {
		names = append(names, st.Name)
	}
	o := c.Options
	fmt.Fprintf(h, "%q %d %d %d %v %v %d %v %d %d %d %v %d %v\n", names, o.MaxStates, o.Seed, o.Samples, o.AfterStores,
		o.AssumeLate, len(o.AssumeDurable), o.NoH3, o.H1, o.H2, c.ClusterFailures, c.WindowStates, c.MaxInFlight, c.NoPriority)
	for _, op := range c.Workload.Ops {
		fmt.Fprintf(h, "%q\n", op)
	}
}

func isTruncated(err error) bool { return errors.Is(err, trace.ErrTruncated) }

// FileDigest returns the hex SHA-256 of the file at path. Errors: it cannot be read.
func FileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// shardLog is what a shard logs of its failing states (logFailure): one ShardCluster per finding,
// in the order of Result.Findings, with the variants and operations seen.
type shardLog struct {
	seq      int
	clusters []report.ShardCluster
	variants []map[string]bool
	ops      []map[uint64]bool
}

// logFailure logs a failing state of a shard: it falls in the cluster key (a new one when key
// is not in e.clusters yet) as variant; kind is the finding's kind. Nothing unsharded.
func (e *explorer) logFailure(kind report.Kind, key, variant string, it *item) {
	if !e.cfg.Shard.active() {
		return
	}
	if e.shard == nil {
		e.shard = &shardLog{}
	}
	l := e.shard
	l.seq++
	o := report.ShardOrder{Walk: e.walk, Event: it.event, Seq: l.seq}
	i, ok := e.clusters[key]
	if !ok {
		i = len(l.clusters)
		l.clusters = append(l.clusters, report.ShardCluster{ID: report.ClusterID(key), First: o, Window: it.pointKey + "|" + e.pathKey(it.op, it.pointKey)})
		l.variants = append(l.variants, map[string]bool{})
		l.ops = append(l.ops, map[uint64]bool{})
	}
	c := &l.clusters[i]
	if !l.variants[i][variant] {
		l.variants[i][variant] = true
		v := report.ShardVariant{Key: variant, Order: o}
		if it.point >= 0 {
			v.Image = &report.CrashVariant{CrashPoint: it.point, Event: it.event, State: slices.Clone(it.state.K), Operation: uint64(it.op), Input: it.next + 1}
		}
		c.Variants = append(c.Variants, v)
	}
	if op := uint64(it.op); !l.ops[i][op] {
		l.ops[i][op] = true
		c.Operations = append(c.Operations, report.ShardOperation{Index: op, Order: o})
	}
	if w := it.pointKey + "|" + e.pathKey(it.op, it.pointKey); kind == report.AtomicityViolation && !slices.Contains(c.PrefixWindows, w) {
		c.PrefixWindows = append(c.PrefixWindows, w)
	}
}

// shardReport is the report data of this shard (Result.Shard), its clusters those of the
// findings, unfolded.
func (e *explorer) shardReport() *report.Shard {
	info := e.cfg.Shard.info
	info.Clusters = []report.ShardCluster{}
	if e.shard != nil {
		info.Clusters = e.shard.clusters
	}
	return &info
}

// ShardFindings are the findings of one shard with its report data (report.Shard).
type ShardFindings struct {
	Findings []report.Finding
	Shard    *report.Shard
}

// MergeShards combines the crash findings of the shards of one exploration (validated by the
// caller: one trace, one partition, every shard once) into those of the unsharded run: the
// findings of one cluster (Crash.ID) become one, with the first failing state of all (its
// message, location and crash state), the counts added, the distinct variants and operations in
// the order they were first found (the first report.MaxVariantImages further variants
// replayable), and the ordering violations folded into the atomicity violations of their windows
// (foldOrdering). The findings are in the order of their first failing state. Errors: a crash
// finding with no entry in its shard's clusters.
func MergeShards(shards []ShardFindings) ([]report.Finding, error) {
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
			if f.Crash == nil {
				others = append(others, *f)
				continue
			}
			c := cl[f.Crash.ID]
			if c == nil {
				return nil, fmt.Errorf("shard %d/%d: crash finding %s has no entry in the shard's clusters", s.Shard.Index, s.Shard.Count, f.Crash.ID)
			}
			if _, ok := byID[f.Crash.ID]; !ok {
				ids = append(ids, f.Crash.ID)
			}
			byID[f.Crash.ID] = append(byID[f.Crash.ID], part{f, c})
		}
	}
	type merged struct {
		f      report.Finding
		first  report.ShardOrder
		window string
		prefix []string
	}
	var ms []merged
	for _, id := range ids {
		ps := byID[id]
		slices.SortFunc(ps, func(a, b part) int { return a.c.First.Compare(b.c.First) })
		m := merged{f: *ps[0].f, first: ps[0].c.First, window: ps[0].c.Window}
		c := *ps[0].f.Crash
		m.f.Crash = &c
		m.f.Count = 0
		var vs []report.ShardVariant
		var ops []report.ShardOperation
		for _, p := range ps {
			m.f.Count += p.f.Count
			vs = append(vs, p.c.Variants...)
			ops = append(ops, p.c.Operations...)
			for _, w := range p.c.PrefixWindows {
				if !slices.Contains(m.prefix, w) {
					m.prefix = append(m.prefix, w)
				}
			}
		}
		slices.SortFunc(vs, func(a, b report.ShardVariant) int { return a.Order.Compare(b.Order) })
		slices.SortFunc(ops, func(a, b report.ShardOperation) int { return a.Order.Compare(b.Order) })
		seen := map[string]bool{}
		c.Variants, c.VariantImages = 0, nil
		for _, v := range vs {
			if seen[v.Key] {
				continue
			}
			seen[v.Key] = true
			c.Variants++
			if c.Variants > 1 && len(c.VariantImages) < report.MaxVariantImages && v.Image != nil {
				img := *v.Image
				img.ID = fmt.Sprintf("%s-%d", c.ID, c.Variants)
				c.VariantImages = append(c.VariantImages, img)
			}
		}
		c.Operations = nil
		for _, o := range ops {
			if len(c.Operations) < report.MaxCrashOperations && !slices.Contains(c.Operations, o.Index) {
				c.Operations = append(c.Operations, o.Index)
			}
		}
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b merged) int { return a.first.Compare(b.first) })
	e := &explorer{res: &Result{}, prefixWindows: map[string]int{}}
	for i, m := range ms {
		e.res.Findings = append(e.res.Findings, m.f)
		e.windows = append(e.windows, m.window)
		for _, w := range m.prefix {
			e.prefixWindows[w] = i
		}
	}
	e.foldOrdering()
	return append(e.res.Findings, others...), nil
}
