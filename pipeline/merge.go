package pipeline

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strings"

	fsexplore "github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/report"
)

// MergeReports is `scry merge`: it reads the JSON reports of the shards of one sharded
// exploration (`scry explore --shard I/N --format json` in PM mode, `scry fs explore --shard
// I/N --format json` in file-system mode, docs/distributed.md) and returns the report the
// unsharded exploration gives (explore.MergeShards, fs/explore's MergeShards: the same findings,
// counts and variants; the statistics added up), its replay commands naming out (the merged
// report's path; "" keeps REPORT.json). In PM mode the reports may be those of the traces of
// several thread schedules of one program (`scry record --schedules N`, docs/concurrency.md),
// all the shards of each: each trace's shards are merged, then the schedules' reports as `scry
// check` merges them (mergeSchedules). Errors: a report cannot be read or is no shard's report;
// the reports of one trace are of different modes or partitions (shard counts or exploration
// options differ), a shard is given twice or missing; reports of different traces are of
// file-system mode or of the same schedule.
func MergeReports(paths []string, out string) (*report.Report, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("merge: no report given")
	}
	var reps []*report.Report
	for _, p := range paths {
		b, err := report.ReadFile(p, "a JSON report")
		if err != nil {
			return nil, err
		}
		r, err := report.ReadJSON(b, p)
		if err != nil {
			return nil, err
		}
		if r.Shard == nil {
			return nil, fmt.Errorf("%s is not the report of a shard (it has no \"shard\" object): write shards with scry explore --shard I/N --format json (scry fs explore in file-system mode)", p)
		}
		reps = append(reps, r)
	}
	// The shards by trace, in the order given, the operating system's schedule first.
	var groups [][]int
	byTrace := map[string]int{}
	for i, r := range reps {
		g, ok := byTrace[r.Shard.TraceDigest]
		if !ok {
			g = len(groups)
			byTrace[r.Shard.TraceDigest] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	if len(groups) == 1 {
		return mergeShards(paths, reps, out)
	}
	controlled := func(g []int) bool { return reps[g[0]].Shard.Schedule != "" }
	slices.SortStableFunc(groups, func(a, b []int) int {
		if controlled(a) == controlled(b) {
			return 0
		}
		if controlled(b) {
			return -1
		}
		return 1
	})
	specs := map[string]string{}
	for _, g := range groups {
		s := reps[g[0]].Shard
		if s.Mode == "fs" || reps[groups[0][0]].Shard.Mode == "fs" {
			return nil, fmt.Errorf("%s and %s are shards of different traces (SHA-256 %.12s… and %.12s…): merge the shards of one trace", paths[groups[0][0]], paths[g[0]], reps[groups[0][0]].Shard.TraceDigest, s.TraceDigest)
		}
		if p, ok := specs[s.Schedule]; ok {
			return nil, fmt.Errorf("%s and %s are shards of different traces of the same thread schedule (%s): merge the shards of one trace, or of the traces of different schedules of one program", p, paths[g[0]], scheduleName(s.Schedule))
		}
		specs[s.Schedule] = paths[g[0]]
	}
	var runs []*scheduleRun
	var elapsed float64
	for _, g := range groups {
		s := reps[g[0]].Shard
		gp, gr := make([]string, len(g)), make([]*report.Report, len(g))
		for j, i := range g {
			gp[j], gr[j] = paths[i], reps[i]
		}
		rep, err := mergeShards(gp, gr, out)
		if err != nil {
			return nil, err
		}
		if rep.Stats != nil {
			elapsed = max(elapsed, rep.Stats.ElapsedSeconds)
		}
		runs = append(runs, &scheduleRun{spec: s.Schedule, rep: rep})
	}
	rep, _, _ := mergeSchedules(runs)
	if rep.Stats != nil {
		rep.Stats.ElapsedSeconds = elapsed // the shards ran in parallel
	}
	rep.Sort()
	return rep, nil
}

// scheduleName names a thread schedule in messages.
func scheduleName(spec string) string {
	if spec == "" {
		return "the operating system's"
	}
	return ScheduleEnv + "=" + spec
}

// mergeShards merges the reports of the shards of one trace (MergeReports).
func mergeShards(paths []string, reps []*report.Report, out string) (*report.Report, error) {
	if err := checkShards(paths, reps); err != nil {
		return nil, err
	}
	fsMode := reps[0].Shard.Mode == "fs"
	merged := &report.Report{Trace: reps[0].Trace, Events: reps[0].Events, Stats: &report.Stats{}, Profiles: reps[0].Profiles}
	var parts []report.ShardFindings
	for _, r := range reps {
		parts = append(parts, report.ShardFindings{Findings: r.Findings, Shard: r.Shard})
		for _, w := range r.Warnings {
			// A shard without crash points says so; the merged report only if no shard had one.
			if (fsMode || w != NoCrashPointWarning) && !slices.Contains(merged.Warnings, w) {
				merged.Warnings = append(merged.Warnings, w)
			}
		}
		if r.Stats != nil {
			addStats(merged.Stats, r.Stats, r.Shard.Index == 0)
		}
	}
	if !fsMode {
		paths, explored := map[int]bool{}, map[int]bool{}
		for _, r := range reps {
			for _, p := range r.Shard.Paths {
				paths[p] = true
			}
			for _, p := range r.Shard.PathsExplored {
				explored[p] = true
			}
		}
		merged.Stats.OperationPaths, merged.Stats.PathsExplored = len(paths), len(explored)
	}
	var fs []report.Finding
	var err error
	kinds := explore.Kinds
	if fsMode {
		kinds = fsexplore.Kinds
		fs, err = fsexplore.MergeShards(parts)
	} else {
		// The states the unsharded run's cluster sampling left out are no states judged.
		var out explore.Resampled
		fs, out, err = explore.MergeShards(parts)
		st := merged.Stats
		st.StatesTested -= out.States
		st.Failures -= out.Failures
		st.Inconclusive -= out.Inconclusive
		st.Sampled += out.States
	}
	if err != nil {
		return nil, err
	}
	rep := exec.ShellQuote(cmpOr(out, "REPORT.json"))
	for i := range fs {
		if c := fs[i].Crash; c != nil {
			c.ImageCommand = explore.ImageCommand(out, c.ID)
		}
		if c := fs[i].FS; c != nil && c.ImageCommand != "" {
			c.ImageCommand = fmt.Sprintf("scry replay %s %s --out crash", rep, c.ID)
		}
	}
	merged.Findings = fs
	if st := merged.Stats; !fsMode && st.StatesTested == 0 && st.CrashPoints == 0 {
		merged.Warnings = append(merged.Warnings, NoCrashPointWarning)
	}
	merged.Stats.Findings = len(fs)
	merged.Rules = kinds()
	merged.Sort()
	return merged, nil
}

// checkShards checks that reps (read from paths) are the shards of one exploration, each once.
func checkShards(paths []string, reps []*report.Report) error {
	s0 := reps[0].Shard
	seen := make([]string, s0.Count)
	for i, r := range reps {
		s := r.Shard
		switch {
		case s.Mode != s0.Mode:
			return fmt.Errorf("%s and %s are shards of different modes (%s and %s): merge the shards of one exploration", paths[0], paths[i], modeName(s0.Mode), modeName(s.Mode))
		case s.TraceDigest != s0.TraceDigest:
			return fmt.Errorf("%s and %s are shards of different traces (SHA-256 %.12s… and %.12s…): merge the shards of one trace", paths[0], paths[i], s0.TraceDigest, s.TraceDigest)
		case s.Count != s0.Count:
			return fmt.Errorf("%s is shard %d/%d but %s is shard %d/%d: merge the shards of one split", paths[0], s0.Index, s0.Count, paths[i], s.Index, s.Count)
		case s.Partition != s0.Partition && s0.Mode == "fs":
			return fmt.Errorf("%s and %s split the crash states differently (partition %s and %s): the shards were explored with different options (--strategy, --apm, --max-states) or their checker judged the prefix states differently (is it deterministic?); explore every shard with the same", paths[0], paths[i], s0.Partition, s.Partition)
		case s.Partition != s0.Partition:
			return fmt.Errorf("%s and %s split the trace differently (partition %s and %s): the shards were explored with different workloads or options (--strategy, --max-states, --samples, --seed, --after-stores, --no-assume-fixed, --cluster-failures, --max-in-flight, --no-priority, the heuristic's); explore every shard with the same", paths[0], paths[i], s0.Partition, s.Partition)
		case !slices.Equal(r.Profiles, reps[0].Profiles):
			return fmt.Errorf("%s and %s were explored under different persistency profiles (%s and %s): explore every shard with the same --persistency", paths[0], paths[i], profilesName(reps[0].Profiles), profilesName(r.Profiles))
		case s.Index < 0 || s.Index >= s0.Count:
			return fmt.Errorf("%s: shard %d/%d is out of range", paths[i], s.Index, s.Count)
		case seen[s.Index] != "":
			return fmt.Errorf("shard %d/%d is given twice (%s and %s): each shard once", s.Index, s.Count, seen[s.Index], paths[i])
		}
		seen[s.Index] = paths[i]
	}
	var missing []string
	for i, p := range seen {
		if p == "" {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shard(s) %s of %d missing: merge the reports of all %d shards", strings.Join(missing, ", "), s0.Count, s0.Count)
	}
	return nil
}

// profilesName names a report's persistency profiles in messages ("adr" when none were named).
func profilesName(ps []string) string {
	if len(ps) == 0 {
		return "adr"
	}
	return strings.Join(ps, ",")
}

// modeName names a shard's mode in messages.
func modeName(mode string) string {
	if mode == "fs" {
		return "file-system mode"
	}
	return "PM mode"
}

// addStats adds a shard's statistics to sum: the counts of states and runs add up; those of the
// whole trace (AssumedDurable: every shard walks it all) are the first shard's; elapsed time is
// the longest shard's (the shards run in parallel), the first failure the earliest, the most
// varying lines of one legal outcome the largest.
func addStats(sum, s *report.Stats, first bool) {
	sum.CrashPoints += s.CrashPoints
	sum.Skipped += s.Skipped
	sum.StatesTested += s.StatesTested
	sum.OracleRuns += s.OracleRuns
	sum.Failures += s.Failures
	sum.Inconclusive += s.Inconclusive
	sum.PrepRuns += s.PrepRuns
	sum.SkippedConcurrent += s.SkippedConcurrent
	sum.SkippedScope += s.SkippedScope
	sum.Sampled += s.Sampled
	sum.SkippedBudget += s.SkippedBudget
	sum.PartialBudget += s.PartialBudget
	sum.SkippedMemory += s.SkippedMemory
	sum.Reused += s.Reused
	sum.Twins += s.Twins
	sum.RepeatRuns += s.RepeatRuns
	sum.StoppedEarly += s.StoppedEarly
	sum.StoppedEarlyLines += s.StoppedEarlyLines
	sum.StoppedEarlySeconds += s.StoppedEarlySeconds
	sum.StoppedAgain += s.StoppedAgain
	sum.Converged += s.Converged
	sum.ConvergedSeconds += s.ConvergedSeconds
	sum.ConvergedAgain += s.ConvergedAgain
	sum.VaryingOutcomes += s.VaryingOutcomes
	sum.VaryingLines = max(sum.VaryingLines, s.VaryingLines)
	sum.LazyRuns += s.LazyRuns
	sum.LazyLeaves += s.LazyLeaves
	var a, b big.Int
	if _, ok := b.SetString(s.LazyStates, 10); ok {
		if _, ok := a.SetString(cmp.Or(sum.LazyStates, "0"), 10); ok {
			sum.LazyStates = a.Add(&a, &b).String()
		}
	}
	for r, n := range s.LazyFallbacks {
		if sum.LazyFallbacks == nil {
			sum.LazyFallbacks = map[string]int{}
		}
		sum.LazyFallbacks[r] += n
	}
	sum.ElapsedSeconds = max(sum.ElapsedSeconds, s.ElapsedSeconds)
	sum.Schedules = max(sum.Schedules, s.Schedules) // the shards of one exploration share it
	// A shard's operation paths are those with crash points in it; shards share paths, so
	// MergeReports replaces these by the size of the union of the shards' lists (report.Shard).
	sum.OperationPaths = max(sum.OperationPaths, s.OperationPaths)
	sum.PathsExplored = max(sum.PathsExplored, s.PathsExplored)
	if s.FirstFailureSeconds > 0 && (sum.FirstFailureSeconds == 0 || s.FirstFailureSeconds < sum.FirstFailureSeconds) {
		sum.FirstFailureSeconds = s.FirstFailureSeconds
	}
	if first {
		sum.AssumedDurable, sum.Invariants, sum.Jobs, sum.Images, sum.Runs = s.AssumedDurable, s.Invariants, s.Jobs, s.Images, s.Runs
	}
}
