package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

func newFSCommand() *cobra.Command {
	return groupCommand("fs", "file-system mode: crash consistency of programs that persist through files (ALICE-style)", newFSCheckCommand(), newFSRecordCommand(), newFSExploreCommand())
}

func apmHelp() string {
	var b strings.Builder
	for _, a := range model.APMs() {
		fmt.Fprintf(&b, "  %-14s %s\n", a.Name, a.Doc)
	}
	return strings.TrimRight(b.String(), "\n")
}

func newFSCheckCommand() *cobra.Command {
	var f pipeline.FSCheck
	var format, output string
	var strict, force bool
	c := &cobra.Command{
		Use:   "check --dir DIR [--checker CMD] [--workload FILE] [flags] -- PROG [ARGS...]",
		Short: "record PROG's file-system calls in DIR and test the crash states a persistence model allows",
		Long: `Records PROG, run in the workload directory DIR (children followed), with strace: every call
that changes files or directories under DIR, the bytes written, and PROG's own output. Then builds
the crash states the persistence model (--apm) allows after each call, as directories under a
temporary directory of scry's ($TMPDIR/scry-fs-*, removed at the end and on Ctrl-C), and runs the
checker inside each: exit status 0 means the state is consistent. The checker finds in
$SCRY_STDOUT a file holding what PROG had printed on its standard output before the crash
($SCRY_STDERR: standard error), so "it said saved, then lost it" is checkable. The checker must
pass on DIR's state before the run and after it: failing there is an error. DIR's contents are
the initial state; scry copies them before the run and never changes DIR beyond what PROG does.
PROG and a checker program named by a relative path (./check.sh) are files relative to the
current directory.

With --workload FILE, PROG reads FILE on its standard input one line (operation) at a time
(each line once it has read the one before), and crash states are also judged by output
equivalence (WITCHER, SOSP'21, §4.5): after a crash during operation k, PROG re-run in the crash
directory on lines k+1..n must print what it prints, and exit as it exits, from the directory
as operation k left it (committed) or found it (rolled back). --checker, --workload or both.

Findings (docs/fs-mode.md): fs-ordering-violation (A must persist before B), fs-atomicity-violation
(an operation, or a run of them, must persist whole), fs-durability-violation (output promised
before the data was durable), with the system calls (dynamic vulnerabilities) and their source
lines and call stacks (static: DWARF of -g binaries, symbol+offset otherwise), clustered by static
pair.

Persistence models (--apm):
` + apmHelp() + `

When there are findings, the snapshot of DIR and the trace are kept in a directory of scry's
($TMPDIR/scry-fs-replay-*, named on standard error and in the report; remove it when done):
` + "`scry replay REPORT ID --out CRASHDIR`" + ` rebuilds a finding's crash directory from them and prints
the command that reproduces the failure (with --format json -o REPORT).

Exit status: 130/143 interrupted; else 2 error; else 1 correctness findings; else 2 the program
exited non-zero or was killed; else 0. With --strict, a report with a warning exits 2.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(format); err != nil {
				return err
			}
			if err := f.Options.Check(); err != nil {
				return err
			}
			if err := checkDuration("--record-timeout", f.RecordTimeout, "no limit"); err != nil {
				return err
			}
			if f.Stack && f.NoStack {
				return errors.New("--stack and --no-stack: give one of them")
			}
			if output != "" {
				if err := safefile.Check(output, report.Policy(force)); err != nil {
					return err
				}
			}
			if f.Trace != "" {
				if err := safefile.Check(f.Trace, trace.FilePolicy("the trace")); err != nil {
					return err
				}
			}
			if output != "" && format == "json" {
				abs, err := filepath.Abs(output)
				if err != nil {
					return err
				}
				f.Report = abs
			}
			f.Args = args
			f.Stdout, f.Stderr, f.Notes = programOutput(cmd, output), programOutput(cmd, output), cmd.ErrOrStderr()
			f.Start = time.Now()
			f.Progress = exec.NewProgress(cmd.ErrOrStderr())
			return runFS(cmd, f.Run, f.Progress, format, output, force, strict)
		},
	}
	fsRecordFlags(c, &f.Dir, &f.Workload, &f.RecordTimeout, &f.NoStack, &f.Stack, &f.Env)
	fsExploreFlags(c, &f.Options)
	c.Flags().StringVar(&f.Trace, "trace", "", "keep the recorded trace in `FILE` (scry trace dump FILE)")
	reportFlags(c, &format, &output, &strict, &force)
	return c
}

// fsRecordFlags registers the flags of a recording in file-system mode.
func fsRecordFlags(c *cobra.Command, dir, wl *string, timeout *time.Duration, noStack, stack *bool, env *[]string) {
	fl := c.Flags()
	fl.StringVar(dir, "dir", "", "the workload `DIR`ectory: PROG's working directory and initial state (required)")
	fl.StringVar(wl, "workload", "", "feed `FILE` to PROG's standard input, a line (operation) at a time, and judge by output equivalence")
	fl.DurationVar(timeout, "record-timeout", 0, recordTimeoutHelp)
	fl.BoolVar(noStack, "no-stack", false, "do not record call stacks (strace -k): faster, but findings have no source lines")
	fl.BoolVar(stack, "stack", false, "record call stacks even when PROG is a script a language interpreter runs (Python, Perl, ...: not recorded by default)")
	fl.StringSliceVar(env, "env", nil, "add `NAME=VALUE` to PROG's environment (repeatable)")
}

// fsExploreFlags registers the flags of an exploration in file-system mode, bound to o's fields
// (--shard is `fs explore`'s alone).
func fsExploreFlags(c *cobra.Command, o *explore.Options) {
	fl := c.Flags()
	fl.StringVar(&o.Checker, "checker", "", "shell `CMD` run inside each crash directory; exit 0 = consistent")
	fl.StringVar(&o.APM, "apm", "default", "abstract persistence `MODEL`: default, ext4-ordered, ext4-journal")
	fl.StringSliceVar(&o.Strategies, "strategy", nil, "crash-state strategies (comma-separated; default prefix,omit-one,split): "+strings.Join(explore.Strategies, ", "))
	fl.IntVar(&o.MaxStates, "max-states", -1, "test at most `N` crash states in all (-1: no cap; 0 is an error)")
	fl.IntVarP(&o.Jobs, "jobs", "j", 0, "run `N` checkers at once (default: the number of CPUs)")
	fl.DurationVar(&o.CheckerTimeout, "timeout", 0, fmt.Sprintf("time limit `D` of one checker run or re-execution (0, the default: %v); a state whose run hangs is inconclusive, not a finding", exec.DefaultTimeout))
	fl.DurationVar(&o.TimeBudget, "time-budget", 0, "explore for about `D` (e.g. 5m): crash states are left out while the exploration is behind that schedule, so every part of the run is covered; the report says how many (0: no budget)")
}

// reportFlags registers the flags of a command's report.
func reportFlags(c *cobra.Command, format, output *string, strict, force *bool) {
	fl := c.Flags()
	fl.StringVar(format, "format", "text", "output format: text, json, sarif or html (one self-contained page, docs/html-report.md)")
	fl.StringVarP(output, "output", "o", "", "write the report to `FILE` instead of standard output")
	fl.BoolVar(strict, "strict", false, "exit with status 2 when the report has a warning: for CI")
	fl.BoolVar(force, "force", false, "let -o replace an existing file that is not a report of scry")
}

func newFSRecordCommand() *cobra.Command {
	var f pipeline.FSRecord
	c := &cobra.Command{
		Use:   "record --dir DIR --out REC [--workload FILE] [flags] -- PROG [ARGS...]",
		Short: "record PROG's file-system calls in DIR once, for scry fs explore (in shards) to explore",
		Long: `Records PROG, run in the workload directory DIR, as scry fs check does, into the new recording
directory REC: the trace (run.trace), the snapshot of DIR before the run (initial/), a copy of the
workload (workload.txt) and recording.json. Nothing is explored: scry fs explore REC explores it,
whole or one shard per machine (--shard I/N), and scry merge combines the shards' reports into the
report of the whole exploration (docs/distributed.md). Copy REC to every machine at the same path
(or share it): the findings' replay commands name its snapshot and trace.

The run must end normally (exit status 0): a recording of a failed run is refused (scry fs check
explores it in one command).
Exit status: 0 recorded; 130/143 interrupted; 2 error.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDuration("--record-timeout", f.RecordTimeout, "no limit"); err != nil {
				return err
			}
			if f.Stack && f.NoStack {
				return errors.New("--stack and --no-stack: give one of them")
			}
			f.Args = args
			f.Stdout, f.Stderr, f.Notes = cmd.OutOrStdout(), cmd.ErrOrStderr(), cmd.ErrOrStderr()
			ctx, stop := exec.SignalContext(context.Background())
			defer stop()
			defer exec.KillRuns()
			rep, err := f.Run(ctx)
			if err != nil {
				return err
			}
			for _, w := range rep.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "scry: warning: %s\n", w)
			}
			return nil
		},
	}
	fsRecordFlags(c, &f.Dir, &f.Workload, &f.RecordTimeout, &f.NoStack, &f.Stack, &f.Env)
	c.Flags().StringVar(&f.Out, "out", "", "create the recording directory `REC` (it must not exist; required)")
	return c
}

func newFSExploreCommand() *cobra.Command {
	var f pipeline.FSExplore
	var format, output, shard string
	var strict, force bool
	c := &cobra.Command{
		Use:   "explore REC [--checker CMD] [--shard I/N] [flags]",
		Short: "explore the crash states of a recording of scry fs record, whole or one shard of them",
		Long: `Explores the crash states of the recording directory REC (scry fs record) as scry fs check
explores its own recording: the same strategies, oracles (--checker; output equivalence when the
recording has a workload), findings and exit status.

--shard I/N explores shard I (from 0) of N: every shard judges the prefix states (one per crash
point), then the states of omit-one, split and exhaustive are split by logical operation, balanced
by their number; the report (--format json -o FILE) carries what scry merge needs to combine the N
shards' reports into the report of the unsharded exploration: the same findings, counts and
dynamic vulnerabilities, the statistics added up (docs/distributed.md says when it is exact).
"auto" or "auto/N" takes I (and N) from a Slurm array, a Kubernetes Indexed Job or
SCRY_SHARD_INDEX/SCRY_SHARD_COUNT.

Exit status: 130/143 interrupted; else 2 error; else 1 correctness findings; else 0. With
--strict, a report with a warning exits 2.`,
		Args: exactArgs(1, "the recording directory (scry fs record --out REC)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(format); err != nil {
				return err
			}
			var err error
			if f.Shard, err = shardFromEnv(shard); err != nil {
				return err
			}
			if err := f.Options.Check(); err != nil {
				return err
			}
			if f.Shard.Count > 0 && format != "json" {
				return errors.New("--shard writes what scry merge needs in the JSON report: add --format json -o FILE")
			}
			if output != "" {
				if err := safefile.Check(output, report.Policy(force)); err != nil {
					return err
				}
				if format == "json" {
					if f.Report, err = filepath.Abs(output); err != nil {
						return err
					}
				}
			}
			f.Recording = args[0]
			f.Start = time.Now()
			f.Progress = exec.NewProgress(cmd.ErrOrStderr())
			return runFS(cmd, f.Run, f.Progress, format, output, force, strict)
		},
	}
	fl := c.Flags()
	fsExploreFlags(c, &f.Options)
	fl.StringVar(&shard, "shard", "", "explore shard `I/N` (from 0) of the crash states, balanced by their number; \"auto\" or \"auto/N\" takes I (and N) from a Slurm array, a Kubernetes Indexed Job or SCRY_SHARD_INDEX/SCRY_SHARD_COUNT; combine the shards' JSON reports with scry merge (docs/distributed.md)")
	reportFlags(c, &format, &output, &strict, &force)
	return c
}

// runFS runs a file-system exploration (fs check, fs explore) until it ends or a signal stops it,
// then writes its report, partial or not, and returns the command's error: run's, the report's,
// or --strict's.
func runFS(cmd *cobra.Command, run func(context.Context) (*report.Report, error), prog *exec.Progress, format, output string, force, strict bool) error {
	ctx, stop := exec.SignalContext(context.Background())
	defer stop()
	// The last sweep, on every way out: no checker or re-execution, nor a child of one,
	// outlives scry (each run kills its own when it ends).
	defer exec.KillRuns()
	rep, err := run(ctx)
	prog.Finish()
	if rep != nil {
		if werr := pipeline.WriteReport(rep, format, output, force, cmd.OutOrStdout(), cmd.ErrOrStderr()); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	return strictFindings(rep, strict)
}
