package explore

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// shardConfig is the exploration of trace tr of bin on testdata/ops as shard sh (the zero
// Shard: all of it), with cluster sampling after cf failures (-1: none).
func shardConfig(t *testing.T, dir, bin, ops, tr string, sh shard.Shard, cf int) Config {
	t.Helper()
	w, err := workload.Read(filepath.Join("testdata", ops))
	if err != nil {
		t.Fatal(err)
	}
	return Config{Trace: tr, Args: []string{bin, "{pool}"}, Workload: w, Options: Options{
		Timeout: 5 * time.Second, Pool: filepath.Join(dir, "pool"), Jobs: 2,
		ClusterFailures: cf, BatchStates: 1, Shard: sh,
	}}
}

// planOf is the plan of the exploration cfg (makePlan, after Config.setup).
func planOf(t *testing.T, cfg Config) *plan {
	t.Helper()
	_, strats, _, err := cfg.setup()
	if err != nil {
		t.Fatal(err)
	}
	tf, err := trace.OpenFile(cfg.Trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	p, err := makePlan(&cfg, strats, tf)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// exploreShard runs shardConfig's exploration.
func exploreShard(t *testing.T, dir, bin, ops, tr string, sh shard.Shard, cf int) *Result {
	t.Helper()
	r, err := Run(context.Background(), shardConfig(t, dir, bin, ops, tr, sh, cf))
	if err != nil {
		t.Fatalf("explore shard %d/%d: %v", sh.Index, sh.Count, err)
	}
	return r
}

// TestShardsMerge: the shards of an exploration, merged, give the unsharded run's findings
// (counts, variants, operations, folding) and statistics, with cluster sampling off and on
// (after 1 failure of a window: the shards judge states the unsharded run leaves out, and the
// merge leaves them out again); every operation is in one shard, and the partition is the same
// every time.
func TestShardsMerge(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		src, ops string
		n, cf    int
	}{
		{"ordering.c", "ordering-long.ops", 3, -1},
		{"atomicity.c", "atomicity.ops", 2, -1},
		{"ordering.c", "ordering.ops", 4, -1},
		{"ordering.c", "ordering-long.ops", 3, 1},
		{"atomicity.c", "atomicity.ops", 2, 1},
	} {
		t.Run(fmt.Sprintf("%s/%d-shards/cluster-failures=%d", tc.ops, tc.n, tc.cf), func(t *testing.T) {
			bin := compile(t, dir, tc.src)
			tr := recordRun(t, dir, bin, tc.ops)
			all := exploreShard(t, dir, bin, tc.ops, tr, shard.Shard{}, tc.cf)
			if len(all.Findings) == 0 {
				t.Fatalf("no finding unsharded: the test needs some")
			}
			var parts []report.ShardFindings
			var sum report.Stats
			owner := map[int]int{}
			paths, explored := map[int]bool{}, map[int]bool{} // the union of the shards' paths
			for i := 0; i < tc.n; i++ {
				r := exploreShard(t, dir, bin, tc.ops, tr, shard.Shard{Index: i, Count: tc.n}, tc.cf)
				cfg := planOf(t, shardConfig(t, dir, bin, tc.ops, tr, shard.Shard{Index: i, Count: tc.n}, tc.cf))
				if r.Shard == nil || r.Shard.Partition != cfg.shardInfo.Partition || r.Shard.TraceDigest == "" {
					t.Fatalf("shard %d: report data %+v, partition planned again %q", i, r.Shard, cfg.shardInfo.Partition)
				}
				for k, mine := range cfg.shardOps {
					if mine {
						if j, ok := owner[k]; ok {
							t.Errorf("operation %d in shards %d and %d", k, j, i)
						}
						owner[k] = i
					}
				}
				oc := shardConfig(t, dir, bin, tc.ops, tr, shard.Shard{Index: i, Count: tc.n}, tc.cf)
				oc.Crash.Seed = 2
				other := planOf(t, oc)
				if other.shardInfo.Partition == cfg.shardInfo.Partition {
					t.Errorf("shard %d: the partition does not change with the random strategy's seed", i)
				}
				parts = append(parts, report.ShardFindings{Findings: r.Findings, Shard: r.Shard})
				sum.CrashPoints += r.Stats.CrashPoints
				sum.StatesTested += r.Stats.StatesTested
				sum.Failures += r.Stats.Failures
				sum.OracleRuns += r.Stats.OracleRuns
				sum.Skipped += r.Stats.Skipped
				sum.Sampled += r.Stats.Sampled
				for _, p := range r.Shard.Paths {
					paths[p] = true
				}
				for _, p := range r.Shard.PathsExplored {
					explored[p] = true
				}
			}
			if len(paths) != all.Stats.OperationPaths || len(explored) != all.Stats.PathsExplored || len(paths) == 0 {
				t.Errorf("shards' operation paths: %d, %d explored; unsharded %d, %d", len(paths), len(explored), all.Stats.OperationPaths, all.Stats.PathsExplored)
			}
			w, err := workload.Read(filepath.Join("testdata", tc.ops))
			if err != nil {
				t.Fatal(err)
			}
			if len(owner) != len(w.Ops) {
				t.Errorf("operations in shards: %v, of %d", owner, len(w.Ops))
			}
			merged, out, err := MergeShards(parts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(merged, all.Findings) {
				t.Errorf("merged findings differ from the unsharded run's:\nmerged %+v\nall    %+v", merged, all.Findings)
			}
			sum.StatesTested -= out.States
			sum.Failures -= out.Failures
			sum.Sampled += out.States
			st := all.Stats
			// Off (-1): nothing to leave out; after 1 failure the shards judge more (these
			// traces' windows span operations of several shards).
			if (tc.cf < 0) != (out.States == 0) {
				t.Errorf("the merge left out %d states with --cluster-failures %d", out.States, tc.cf)
			}
			if sum.CrashPoints != st.CrashPoints || sum.StatesTested != st.StatesTested || sum.Failures != st.Failures || sum.Skipped != st.Skipped || sum.Sampled != st.Sampled {
				t.Errorf("shards' stats add up to %+v, unsharded %+v", sum, st)
			}
			// The legal outcomes run in each shard that judges a state of the operation.
			if tc.cf < 0 && sum.OracleRuns != st.OracleRuns {
				t.Errorf("shards' oracle runs add up to %d, unsharded %d", sum.OracleRuns, st.OracleRuns)
			}
		})
	}
}
