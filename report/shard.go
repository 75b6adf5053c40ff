package report

import "cmp"

// Shard is what the report of one shard of a sharded crash exploration (`scry explore --shard
// I/N`, docs/distributed.md) carries beyond its findings so that `scry merge` can combine the
// shards into the report an unsharded run gives: which shard it is, of which trace and
// partition, and each finding's failing states as the clustering saw them (the JSON report's
// "shard" object; nil in other reports). A shard's findings are not folded (an ordering violation
// is folded into the atomicity violation of its window only when the shards are merged: that
// violation may be another shard's).
type Shard struct {
	// Index is the shard's 0-based index, of Count shards.
	Index int `json:"index"`
	Count int `json:"count"`
	// Mode is "fs" for a shard of file-system mode (`scry fs explore --shard`), "" for PM mode.
	// In file-system mode a cluster's variants are its dynamic vulnerabilities (key "A B", the
	// pair of logical operations) and an order's Walk is the strategy's index, Event the
	// state's index among the strategy's states of the unsharded run.
	Mode string `json:"mode,omitempty"`
	// TraceDigest is the SHA-256 of the trace file (hex); Partition a hash of the assignment of
	// the trace's operations to shards, of the workload and of the options that choose or sample
	// the states: shards of different traces, workloads or options are refused.
	TraceDigest string `json:"trace_digest"`
	Partition   string `json:"partition"`
	// Schedule is the thread schedule the trace was recorded under (its SCRY_SCHED spec; "" the
	// operating system's): the shards of the traces of several schedules of one program merge
	// into one report (docs/concurrency.md).
	Schedule string `json:"schedule,omitempty"`
	// Operations is the number of operations this shard explored; Cost their estimated cost
	// (crash states, plus the runs of the legal outcomes), of TotalCost for the whole trace.
	Operations int    `json:"operations"`
	Cost       uint64 `json:"cost"`
	TotalCost  uint64 `json:"total_cost"`
	// Clusters is one entry per finding, in the order of Findings.
	Clusters []ShardCluster `json:"clusters"`
	// PM mode's cluster sampling, re-applied by the merge in the unsharded order: ClusterFailures
	// is the threshold (Options.ClusterFailures with its default; < 0 off), SampleKeys the
	// sampling keys and windows States name, States the judged crash states the merge needs (every failing
	// one, every one a sampling key of a durability store decides, every one the merge may leave
	// out), in the order they were judged.
	ClusterFailures int          `json:"cluster_failures,omitempty"`
	SampleKeys      []string     `json:"sample_keys,omitempty"`
	States          []ShardState `json:"states,omitempty"`
	// Paths are the operation paths with crash points in this shard, PathsExplored those of
	// them with a crash point explored, each named by the first operation of the trace on it
	// (0-based): the merge counts the union of every shard's into Stats.OperationPaths and
	// Stats.PathsExplored, since shards share paths.
	Paths         []int `json:"paths,omitempty"`
	PathsExplored []int `json:"paths_explored,omitempty"`
}

// ShardState is a judged crash state of a PM shard (Shard.States). A state whose sampling key
// (Key, an index into Shard.SampleKeys; -1 none) had not reached the sampling threshold in its
// shard, and that is not one of those kept when sampled, is a candidate: the unsharded run,
// having seen the failures of every shard, may have left it out. Window is the index of the
// sampling key a failure counts for (-1 none), Prefix that of the window and path a failing
// program-order state folds ordering violations into (-1 none: PM mode's foldOrdering); a
// failing state names its cluster (an index into
// Shard.Clusters), its variant (an index into that cluster's Variants), its operation and, while
// its variant may still be left out by the merge, its crash state (Image).
type ShardState struct {
	Order        ShardOrder    `json:"order"`
	Key          int           `json:"key"`
	Window       int           `json:"window"`
	Prefix       int           `json:"prefix"`
	Candidate    bool          `json:"candidate,omitempty"`
	Failed       bool          `json:"failed,omitempty"`
	Inconclusive bool          `json:"inconclusive,omitempty"`
	Cluster      int           `json:"cluster,omitempty"`
	Variant      int           `json:"variant,omitempty"`
	Operation    uint64        `json:"operation,omitempty"`
	Image        *CrashVariant `json:"image,omitempty"`
}

// ShardOrder places a failing crash state in the order an unsharded exploration judges states:
// its walk (the priority walk first), the trace event of its crash point, then its place among
// the shard's failing states (states of one crash point are always in one shard).
type ShardOrder struct {
	Walk  int    `json:"walk"`
	Event uint64 `json:"event"`
	Seq   int    `json:"seq"`
}

// Compare orders a before b (-1), after (+1), or equal (0).
func (a ShardOrder) Compare(b ShardOrder) int {
	return cmp.Or(cmp.Compare(a.Walk, b.Walk), cmp.Compare(a.Event, b.Event), cmp.Compare(a.Seq, b.Seq))
}

// ShardCluster is what a shard saw of one finding (cluster): its id, the order of its first failing
// state, that state's window (its crash point's window and path), the windows whose
// program-order states fell in it (an atomicity violation), and every distinct variant and
// operation with the order of its first failing state.
type ShardCluster struct {
	// ID is the finding's Crash.ID.
	ID            string           `json:"id"`
	First         ShardOrder       `json:"first"`
	Window        string           `json:"window"`
	PrefixWindows []string         `json:"prefix_windows,omitempty"`
	Variants      []ShardVariant   `json:"variants"`
	Operations    []ShardOperation `json:"operations"`
	// Alternates are the cluster's further failing states as findings of their own, up to its
	// first one the merge cannot leave out (PM mode): the merged finding shows the first state
	// the unsharded run kept.
	Alternates []ShardAlternate `json:"alternates,omitempty"`
}

// ShardAlternate is a failing state of a cluster with the finding it would make if it were the
// cluster's first.
type ShardAlternate struct {
	Order   ShardOrder `json:"order"`
	Finding Finding    `json:"finding"`
}

// ShardVariant is one distinct variant of a cluster (Crash.Variants counts them): its key, the
// order of its first failing state and that state (nil when it has no crash point of its own:
// a durability state).
type ShardVariant struct {
	Key   string        `json:"key"`
	Order ShardOrder    `json:"order"`
	Image *CrashVariant `json:"image,omitempty"`
}

// ShardOperation is an operation whose states fell in a cluster, with the order of the first.
type ShardOperation struct {
	Index uint64     `json:"index"`
	Order ShardOrder `json:"order"`
}

// ShardFindings are the findings of one shard's report with its report data (Report.Shard): what
// the modes' merges (pm/explore.MergeShards, fs/explore.MergeShards) combine.
type ShardFindings struct {
	Findings []Finding
	Shard    *Shard
}
