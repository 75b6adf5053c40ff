package explore

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/workload"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in      string
		i, n    int
		wantErr bool
	}{
		{"0/4", 0, 4, false},
		{"3/4", 3, 4, false},
		{"0/1", 0, 1, false},
		{"4/4", 0, 0, true},
		{"-1/4", 0, 0, true},
		{"1/0", 0, 0, true},
		{"1", 0, 0, true},
		{"1/4x", 0, 0, true},
		{"a/b", 0, 0, true},
	} {
		s, err := ParseShard(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && (s.Index != tc.i || s.Count != tc.n)) {
			t.Errorf("ParseShard(%q) = %d/%d, %v", tc.in, s.Index, s.Count, err)
		}
	}
}

// shardConfig is the exploration of trace tr of bin on testdata/ops as shard sh (the zero
// Shard: all of it), without cluster sampling (the setting in which sharded and unsharded runs
// agree).
func shardConfig(t *testing.T, dir, bin, ops, tr string, sh Shard) Config {
	t.Helper()
	target, err := scryexec.ParseTarget([]string{bin, "{pool}"})
	if err != nil {
		t.Fatal(err)
	}
	target.Timeout = 5 * time.Second
	w, err := workload.Read(filepath.Join("testdata", ops))
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Trace: tr, Target: target, Workload: w, Pool: filepath.Join(dir, "pool"), Exec: scryexec.Pool{Jobs: 2, Dir: dir},
		ClusterFailures: -1, BatchStates: 1, Shard: sh,
	}
}

// exploreShard runs shardConfig's exploration.
func exploreShard(t *testing.T, dir, bin, ops, tr string, sh Shard) *Result {
	t.Helper()
	r, err := Run(context.Background(), shardConfig(t, dir, bin, ops, tr, sh))
	if err != nil {
		t.Fatalf("explore shard %d/%d: %v", sh.Index, sh.Count, err)
	}
	return r
}

// TestShardsMerge: the shards of an exploration, merged, give the unsharded run's findings
// (counts, variants, operations, folding) and statistics; every operation is in one shard, and
// the partition is the same every time.
func TestShardsMerge(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		src, ops string
		n        int
	}{
		{"ordering.c", "ordering-long.ops", 3},
		{"atomicity.c", "atomicity.ops", 2},
		{"ordering.c", "ordering.ops", 4},
	} {
		t.Run(tc.ops, func(t *testing.T) {
			bin := compile(t, dir, tc.src)
			tr := recordRun(t, dir, bin, tc.ops)
			all := exploreShard(t, dir, bin, tc.ops, tr, Shard{})
			if len(all.Findings) == 0 {
				t.Fatalf("no finding unsharded: the test needs some")
			}
			var parts []ShardFindings
			var sum report.Stats
			owner := map[int]int{}
			for i := 0; i < tc.n; i++ {
				r := exploreShard(t, dir, bin, tc.ops, tr, Shard{Index: i, Count: tc.n})
				cfg := shardConfig(t, dir, bin, tc.ops, tr, Shard{Index: i, Count: tc.n})
				if err := cfg.check(); err != nil {
					t.Fatal(err)
				}
				if r.Shard == nil || r.Shard.Partition != cfg.Shard.info.Partition || r.Shard.TraceDigest == "" {
					t.Fatalf("shard %d: report data %+v, partition planned again %q", i, r.Shard, cfg.Shard.info.Partition)
				}
				for k, mine := range cfg.Shard.ops {
					if mine {
						if j, ok := owner[k]; ok {
							t.Errorf("operation %d in shards %d and %d", k, j, i)
						}
						owner[k] = i
					}
				}
				other := shardConfig(t, dir, bin, tc.ops, tr, Shard{Index: i, Count: tc.n})
				other.Options.Seed = 2
				if err := other.check(); err != nil {
					t.Fatal(err)
				}
				if other.Shard.info.Partition == cfg.Shard.info.Partition {
					t.Errorf("shard %d: the partition does not change with the random strategy's seed", i)
				}
				parts = append(parts, ShardFindings{Findings: r.Findings, Shard: r.Shard})
				sum.CrashPoints += r.Stats.CrashPoints
				sum.StatesTested += r.Stats.StatesTested
				sum.Failures += r.Stats.Failures
				sum.OracleRuns += r.Stats.OracleRuns
				sum.Skipped += r.Stats.Skipped
			}
			w, err := workload.Read(filepath.Join("testdata", tc.ops))
			if err != nil {
				t.Fatal(err)
			}
			if len(owner) != len(w.Ops) {
				t.Errorf("operations in shards: %v, of %d", owner, len(w.Ops))
			}
			merged, err := MergeShards(parts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(merged, all.Findings) {
				t.Errorf("merged findings differ from the unsharded run's:\nmerged %+v\nall    %+v", merged, all.Findings)
			}
			st := all.Stats
			if sum.CrashPoints != st.CrashPoints || sum.StatesTested != st.StatesTested || sum.Failures != st.Failures || sum.OracleRuns != st.OracleRuns || sum.Skipped != st.Skipped {
				t.Errorf("shards' stats add up to %+v, unsharded %+v", sum, st)
			}
		})
	}
}
