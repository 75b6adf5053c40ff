package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
)

// newMergeCommand is `scry merge REPORT...`: the JSON reports of the shards of one sharded
// exploration combined into the report the unsharded exploration gives (docs/distributed.md).
func newMergeCommand() *cobra.Command {
	af := analyzeFlags{format: "text"}
	c := &cobra.Command{
		Use:   "merge [-o FILE] [--format F] REPORT...",
		Short: "combine the reports of the shards of a sharded exploration into one",
		Long: `Each REPORT is the JSON report of one shard of a sharded exploration
(` + "`scry explore --shard I/N --format json -o REPORT ...`" + `, docs/distributed.md); together they are
combined into the report the unsharded exploration gives: the same findings, counts and variants,
the statistics added up, and replay commands naming the merged report (write it with
--format json -o FILE to replay its findings). Reports of different traces, of shards split with
different options, a shard given twice or missing are refused.
Exit status: 0 no finding, 1 crash findings, 2 error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(af.format); err != nil {
				return err
			}
			out := ""
			if af.output != "" {
				if err := safefile.Check(af.output, report.Policy(af.force)); err != nil {
					return err
				}
				if af.format == "json" {
					out, _ = filepath.Abs(af.output)
				}
			}
			rep, err := pipeline.MergeReports(args, out)
			if err != nil {
				return err
			}
			return af.finish(cmd, rep, nil)
		},
	}
	f := c.Flags()
	f.StringVar(&af.format, "format", "text", "output `format`: "+strings.Join(report.Formats, ", "))
	f.StringVarP(&af.output, "output", "o", "", "write the merged report to `FILE` instead of standard output")
	f.BoolVar(&af.force, "force", false, "let -o replace an existing file that is not a report of scry")
	f.BoolVar(&af.strict, "strict", false, "exit with status 2 when the merged report has a warning")
	return c
}

// Environment variables of --shard auto (docs/distributed.md).
const (
	// EnvShardIndex and EnvShardCount give the shard's 0-based index and the number of shards
	// anywhere (a CI matrix); EnvShardCount also gives the count of a Kubernetes Indexed Job.
	EnvShardIndex = "SCRY_SHARD_INDEX"
	EnvShardCount = "SCRY_SHARD_COUNT"
)

// resolveShard turns --shard's value into a shard: "I/N"; "auto" or "auto/N", the index (and
// the count, unless N is given) from the environment, read by getenv: a Slurm job array
// (SLURM_ARRAY_TASK_ID, less SLURM_ARRAY_TASK_MIN, divided by SLURM_ARRAY_TASK_STEP;
// SLURM_ARRAY_TASK_COUNT tasks), a Kubernetes Indexed Job (JOB_COMPLETION_INDEX; the count from
// N or SCRY_SHARD_COUNT), or SCRY_SHARD_INDEX and SCRY_SHARD_COUNT (a CI matrix). "" is no
// shard. Errors: a malformed value, no engine's variables set, a variable that is not a number,
// an index out of range.
func resolveShard(spec string, getenv func(string) string) (shard.Shard, error) {
	if spec == "" {
		return shard.Shard{}, nil
	}
	if spec != "auto" && !strings.HasPrefix(spec, "auto/") {
		return shard.Parse(spec)
	}
	count := 0
	if n, ok := strings.CutPrefix(spec, "auto/"); ok {
		c, err := strconv.Atoi(n)
		if err != nil || c < 1 {
			return shard.Shard{}, fmt.Errorf("--shard %s: want auto/N with N, the number of shards, at least 1", spec)
		}
		count = c
	}
	num := func(name string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(getenv(name)))
		if err != nil {
			return 0, fmt.Errorf("--shard %s: %s=%q is not a number", spec, name, getenv(name))
		}
		return v, nil
	}
	var index int
	var err error
	var from string
	switch {
	case getenv("SLURM_ARRAY_TASK_ID") != "":
		from = "the Slurm job array (SLURM_ARRAY_TASK_ID)"
		id, err := num("SLURM_ARRAY_TASK_ID")
		if err != nil {
			return shard.Shard{}, err
		}
		lo, step := 0, 1
		if getenv("SLURM_ARRAY_TASK_MIN") != "" {
			if lo, err = num("SLURM_ARRAY_TASK_MIN"); err != nil {
				return shard.Shard{}, err
			}
		}
		if getenv("SLURM_ARRAY_TASK_STEP") != "" {
			if step, err = num("SLURM_ARRAY_TASK_STEP"); err != nil || step < 1 {
				return shard.Shard{}, fmt.Errorf("--shard %s: SLURM_ARRAY_TASK_STEP=%q is not a positive number", spec, getenv("SLURM_ARRAY_TASK_STEP"))
			}
		}
		index = (id - lo) / step
		if count == 0 && getenv("SLURM_ARRAY_TASK_COUNT") != "" {
			if count, err = num("SLURM_ARRAY_TASK_COUNT"); err != nil {
				return shard.Shard{}, err
			}
		}
	case getenv("JOB_COMPLETION_INDEX") != "":
		from = "the Kubernetes Indexed Job (JOB_COMPLETION_INDEX)"
		index, err = num("JOB_COMPLETION_INDEX")
	case getenv(EnvShardIndex) != "":
		from = EnvShardIndex
		index, err = num(EnvShardIndex)
	default:
		return shard.Shard{}, fmt.Errorf("--shard %s: no shard index in the environment: run it as a Slurm array task (SLURM_ARRAY_TASK_ID), a Kubernetes Indexed Job's pod (JOB_COMPLETION_INDEX) or with %s and %s set (docs/distributed.md)", spec, EnvShardIndex, EnvShardCount)
	}
	if err != nil {
		return shard.Shard{}, err
	}
	if count == 0 && getenv(EnvShardCount) != "" {
		if count, err = num(EnvShardCount); err != nil {
			return shard.Shard{}, err
		}
	}
	if count == 0 {
		return shard.Shard{}, fmt.Errorf("--shard %s: the number of shards is not known from %s: give it as --shard auto/N or in %s", spec, from, EnvShardCount)
	}
	sh, err := shard.Parse(fmt.Sprintf("%d/%d", index, count))
	if err != nil {
		return sh, fmt.Errorf("--shard %s (from %s): %w", spec, from, err)
	}
	return sh, nil
}

// shardFromEnv is resolveShard with the process's environment.
func shardFromEnv(spec string) (shard.Shard, error) { return resolveShard(spec, os.Getenv) }
