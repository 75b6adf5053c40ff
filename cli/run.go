package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
)

// recordFlags are the flags shared by `record` and `check`.
type recordFlags struct {
	trace    string
	pm       []string
	noLoads  bool
	noForce  bool
	workload string
	opBegin  string
	opEnd    string
	env      []string
	timeout  time.Duration
	blackBox bool
}

// recordTimeoutHelp is --record-timeout's help, in `record`, `check` and `fs check`.
const recordTimeoutHelp = "stop the recorded run of PROG after `D` (e.g. 2m): its process group gets SIGTERM, then SIGKILL 5s later; the trace so far is kept and analysed, and scry says the run was stopped (exit 2 unless there are findings; 0, the default: no limit)"

// envHelp is --env's help.
const envHelp = "add `NAME=VALUE` to the program's environment (repeatable); in crash mode its re-executions and the printed reproduce commands get it too"

func (f *recordFlags) add(c *cobra.Command, traceDefault, traceHelp string) {
	c.Flags().StringVar(&f.trace, "trace", traceDefault, traceHelp)
	c.Flags().StringArrayVar(&f.pm, "pm", nil, "treat MAP_SHARED mappings of files matching `GLOB` as PM (repeatable)")
	c.Flags().BoolVar(&f.noLoads, "no-loads", false, "leave loads out of the trace")
	c.Flags().BoolVar(&f.noForce, "no-pmem-force", false, "do not set PMEM_IS_PMEM_FORCE=1 for the program")
	c.Flags().StringVar(&f.workload, "workload", "", "feed `FILE` to the program's standard input (default: scry's own standard input)")
	c.Flags().StringVar(&f.opBegin, "op-begin", "", "a call of `FUNC` begins a workload operation (instead of each line read from standard input; its text is the last line read, else FUNC)")
	c.Flags().StringVar(&f.opEnd, "op-end", "", "a call of `FUNC` ends the thread's operation (with --op-begin)")
	c.Flags().StringArrayVar(&f.env, "env", nil, envHelp)
	c.Flags().DurationVar(&f.timeout, "record-timeout", 0, recordTimeoutHelp)
	c.Flags().BoolVar(&f.blackBox, "black-box", false, "record PROG, not built with scry cc, under scry's Valgrind tool (build it with -g -gdwarf-4 for source lines; docs/black-box.md); crash re-executions run it natively")
}

// check rejects a --pm pattern that is not a valid glob.
func (f *recordFlags) check() error {
	for _, g := range f.pm {
		if _, err := filepath.Match(g, ""); err != nil {
			return fmt.Errorf("--pm %q: %w", g, err)
		}
	}
	if f.opEnd != "" && f.opBegin == "" {
		return fmt.Errorf("--op-end %q needs --op-begin: operations are begun by a call of a function", f.opEnd)
	}
	for _, fn := range []struct{ flag, name string }{{"--op-begin", f.opBegin}, {"--op-end", f.opEnd}} {
		if strings.ContainsAny(fn.name, " \t\n=") {
			return fmt.Errorf("%s %q: not a function name", fn.flag, fn.name)
		}
	}
	if f.opBegin != "" && f.opBegin == f.opEnd {
		return fmt.Errorf("--op-begin and --op-end name the same function %q", f.opBegin)
	}
	if err := checkDuration("--record-timeout", f.timeout, "no limit"); err != nil {
		return err
	}
	if fi, err := os.Stat(f.workload); f.workload != "" && err == nil && fi.IsDir() {
		return fmt.Errorf("--workload %s is a directory, not a file of operations (one a line)", f.workload)
	}
	return exec.CheckEnv(f.env)
}

// recording is the pipeline's view of the flags.
func (f *recordFlags) recording(cmd *cobra.Command, args []string) pipeline.Recording {
	return pipeline.Recording{
		Args: args, Trace: f.trace, PM: f.pm, NoLoads: f.noLoads, NoForcePMEM: f.noForce,
		OpBegin: f.opBegin, OpEnd: f.opEnd, Env: f.env, Workload: f.workload, Stdin: os.Stdin, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(),
		Timeout: f.timeout, BlackBox: f.blackBox,
	}
}

func newRecordCommand() *cobra.Command {
	var f recordFlags
	var schedules int
	c := &cobra.Command{
		Use:   "record [flags] -- PROG [ARGS...]",
		Short: "run an instrumented program and write its trace",
		Long: "Runs PROG (built with `scry cc`) with standard input passed through and writes its trace (docs/trace-format.md). " +
			"With --schedules N (N > 1) it runs PROG N times, each on a fresh pool in place of {pool} in ARGS: under the operating system's thread schedule to FILE, then under N-1 schedules of the runtime's controlled scheduler to FILE.sched-1 ... (the schedules of `scry check --schedules N`), for `scry explore` to explore apart or in shards and `scry merge` to merge (docs/concurrency.md). " +
			"Exit status: 0 when the program exited 0 (every run), 2 otherwise.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			if schedules < 1 {
				return fmt.Errorf("--schedules %d: give the number of thread schedules to record, at least 1", schedules)
			}
			ctx := context.Background() // the program gets Ctrl-C and SIGTERM, and its trace ends there
			var runs []pipeline.RecordedSchedule
			if schedules == 1 {
				res, err := pipeline.Record(ctx, f.recording(cmd, args), f.trace)
				if err != nil {
					return err
				}
				runs = []pipeline.RecordedSchedule{{Trace: f.trace, Result: res}}
			} else {
				var err error
				if runs, err = pipeline.RecordSchedules(ctx, f.recording(cmd, args), f.trace, schedules); err != nil {
					return err
				}
			}
			for _, r := range runs {
				if r.Spec != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "scry: recorded %s under SCRY_SCHED=%s\n", r.Trace, r.Spec)
				}
				res := r.Result
				if res.Interrupted != 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "scry: %s %s; the trace %s covers its run up to that point\n", args[0], res, r.Trace)
					return &exec.Interrupted{Signal: res.Interrupted}
				}
				if res.Failed() {
					return &pipeline.ProgramFailed{Prog: args[0], Result: res, Trace: r.Trace}
				}
			}
			return nil
		},
	}
	f.add(c, "scry.trace", "write the trace to `FILE`")
	c.Flags().IntVar(&schedules, "schedules", 1, "record under `N` thread schedules, the operating system's to FILE and N-1 of the runtime's controlled scheduler to FILE.sched-I (needs {pool} in ARGS)")
	return c
}

// analyzeFlags are the flags shared by `analyze` and `check`.
type analyzeFlags struct {
	cat          *pipeline.Catalogue // the kinds --oracles names
	format       string
	oracles      []string
	suppressions string
	output       string
	noInfer      bool
	strict       bool
	force        bool
	persistency  string
}

// kindsText is the catalogue of finding kinds for --help: each kind, its class and its doc text.
func kindsText(cat *pipeline.Catalogue) string {
	var b strings.Builder
	b.WriteString("\n\nKinds of findings (docs/oracles.md):\n")
	for _, k := range cat.Kinds() {
		fmt.Fprintf(&b, "  %-24s %-11s %s\n", k.Kind, k.Class, k.Doc)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (f *analyzeFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.format, "format", "text", "output format: text, json, sarif or html (one self-contained page, docs/html-report.md)")
	c.Flags().StringSliceVar(&f.oracles, "oracles", nil, "report only these kinds (comma-separated; default all): "+strings.Join(f.cat.Names(), ", "))
	c.Flags().StringVar(&f.suppressions, "suppressions", "", "drop findings accepted in `FILE` (docs/oracles.md)")
	c.Flags().StringVarP(&f.output, "output", "o", "", "write the report to `FILE` instead of standard output")
	c.Flags().BoolVar(&f.strict, "strict", false, "exit with status 2 when the report has a warning (the results are incomplete, or nothing could be tested): for CI")
	c.Flags().BoolVar(&f.force, "force", false, "let -o replace an existing file that is not a report of scry")
	c.Flags().StringVar(&f.persistency, "persistency", "", "check under the persistency profiles `P` (comma-separated: adr, eadr, gpf (an alias of eadr), arm for an aarch64 program, or all); every finding then says under which it occurs (default: adr, arm for an aarch64 program, findings unlabelled; docs/persistency-profiles.md)")
	c.Flags().BoolVar(&f.noInfer, "no-infer", false, "do not infer persistence properties from the trace nor check them ("+string(report.MPBViolation)+", "+string(report.MPAViolation)+"; docs/inference.md)")
}

// analysis validates the flags and loads the suppressions, before any program runs.
func (f *analyzeFlags) analysis() (pipeline.Analysis, error) {
	a := pipeline.Analysis{Kinds: f.oracles, NoInfer: f.noInfer, Catalogue: f.cat}
	if err := report.CheckFormat(f.format); err != nil {
		return a, err
	}
	if f.persistency != "" {
		ps, err := px86.ParseProfiles(f.persistency)
		if err != nil {
			return a, fmt.Errorf("--persistency: %w", err)
		}
		a.Profiles = ps
	}
	if err := a.Check(); err != nil {
		return a, err
	}
	if f.output != "" {
		// Before any program runs: a report that could not be written would waste the run.
		if err := safefile.Check(f.output, report.Policy(f.force)); err != nil {
			return a, err
		}
	}
	if f.suppressions != "" {
		s, err := report.LoadSuppressions(f.suppressions)
		if err != nil {
			return a, err
		}
		a.Suppressions = s
	}
	return a, nil
}

// finish writes the report (when there is one) and returns the command's result: err first
// (an error that came with partial results), then, with --strict, an error for a report with
// warnings, then errFindings for correctness findings.
func (f *analyzeFlags) finish(cmd *cobra.Command, rep *report.Report, err error) error {
	if rep != nil {
		if werr := pipeline.WriteReport(rep, f.format, f.output, f.force, cmd.OutOrStdout(), cmd.ErrOrStderr()); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	return strictFindings(rep, f.strict)
}

// strictFindings is findings, with --strict (strict) an error first when rep has warnings.
func strictFindings(rep *report.Report, strict bool) error {
	if strict && rep != nil && len(rep.Warnings) > 0 {
		return fmt.Errorf("--strict: the report has %d warning(s), so its results are incomplete: %s", len(rep.Warnings), rep.Warnings[0])
	}
	return findings(rep)
}

func newAnalyzeCommand(cat *pipeline.Catalogue) *cobra.Command {
	f := analyzeFlags{cat: cat}
	c := &cobra.Command{
		Use:   "analyze [flags] TRACE",
		Short: "report PM misuse found in a trace",
		Long:  "Runs every trace oracle and, unless --no-infer, the checks of the properties inferred from the trace (docs/oracles.md) over TRACE. Exit status: 0 no correctness finding, 1 correctness findings, 2 error." + kindsText(cat),
		Args:  exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := f.analysis()
			if err != nil {
				return err
			}
			rep, err := pipeline.Analyze(args[0], a, nil)
			return f.finish(cmd, rep, err)
		},
	}
	f.add(c)
	return c
}

func newCheckCommand(cat *pipeline.Catalogue) *cobra.Command {
	var rf recordFlags
	af := analyzeFlags{cat: cat}
	var x pipeline.Exploration
	var schedules int
	var minimize bool
	var minimizeTime time.Duration
	var changedSince, verdictCache string
	c := &cobra.Command{
		Use:   "check [flags] -- PROG [ARGS...]",
		Short: "record a run of an instrumented program and report PM misuse (and crash-consistency bugs with {pool})",
		Long: `Records PROG (built with ` + "`scry cc`" + `) like ` + "`scry record`" + `, then analyses the trace like ` + "`scry analyze`" + `.

With {pool} in ARGS (e.g. ` + "`scry check --workload ops.txt -- ./mapcli btree {pool}`" + `), scry creates the
pool itself (--pool PATH names it, which must not exist; default: a file in a fresh temporary
directory), records the run with the workload on standard input, runs the trace oracles, then
explores crash states inside every operation and re-executes the program on the crash images
(docs/crash-exploration.md). The trace is kept for ` + "`scry replay`" + `: in --trace FILE, else next to
the report (-o REPORT: REPORT.trace), else in the temporary directory when a crash finding
can be replayed from it.

The recorded program's standard output goes to standard error, standard output being the
report's. Ctrl-C (SIGINT) and SIGTERM reach the program, which writes its trace so far; scry
reports what it found and exits 130 (143); a second one stops scry at once.

Exit status: 130/143 interrupted; else 2 error (scry could not do its work); else 1 correctness
findings (a program that also failed is a warning); else 2 the program exited non-zero or was
killed; else 0. With --strict, a report with a warning exits 2.` + kindsText(cat),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.check(); err != nil {
				return err
			}
			a, err := af.analysis()
			if err != nil {
				return err
			}
			x.Profiles = a.Profiles
			if err := x.CheckFlags(); err != nil {
				return err
			}
			x.Start = time.Now()
			if schedules < 1 {
				return fmt.Errorf("--schedules %d: give the number of thread schedules to record, at least 1 (the operating system's alone)", schedules)
			}
			rc := rf.recording(cmd, args)
			rc.Schedules = schedules
			rc.Stdout = programOutput(cmd, af.output) // standard output is the report's
			rc.Stderr = programOutput(cmd, af.output)
			if minimizeTime < 0 || minimizeTime > 0 && !minimize {
				return fmt.Errorf("--minimize-time %s: give a positive duration, with --minimize", minimizeTime)
			}
			chk := &pipeline.Check{
				Recording: rc, Analysis: a, Explore: x, Output: af.output, JSON: af.format == "json",
				Notes: cmd.ErrOrStderr(), Minimize: minimize, MinimizeTime: minimizeTime,
			}
			if changedSince != "" {
				// Before the program runs: a revision git does not know wastes no run.
				if chk.Scope, err = report.ChangedSince(".", changedSince); err != nil {
					return err
				}
			}
			var vc *verdict
			if verdictCache != "" {
				if len(args) == 0 {
					return errors.New("--verdict-cache: no program to check (scry check [flags] -- PROG [ARGS...])")
				}
				if changedSince != "" {
					return errors.New("--verdict-cache keys whole runs: a run scoped with --changed-since depends on the repository's state, which the key does not cover")
				}
				files := slices.DeleteFunc([]string{af.suppressions}, func(s string) bool { return s == "" })
				if vc, err = lookupVerdict(cmd, verdictCache, args, rf.workload, files, nil); err != nil {
					return err
				}
				if vc.hit != nil {
					return af.finish(cmd, vc.hit, nil)
				}
			}
			ctx, stop := exec.SignalContext(context.Background())
			defer stop()
			chk.Explore.Progress = exec.NewProgress(os.Stderr)
			rep, err := chk.Run(ctx)
			chk.Explore.Progress.Finish()
			vc.store(cmd, rep, err)
			return af.finish(cmd, rep, err)
		},
	}
	rf.add(c, "", "keep the trace in `FILE` (default: a temporary file, removed; with {pool}: see above)")
	af.add(c)
	addCrashFlags(c, &x.Options, "with {pool}: create the pool at `PATH` (must not exist; default: in a temporary directory)")
	c.Flags().StringVar(&changedSince, "changed-since", "", "scope the check to the change since the git revision `REV` (git diff REV, in the repository of the current directory): only the trace findings and crash points in the functions it touches and what they call, or with a store of theirs pending; the report says what was left out (docs/ci.md; default: everything)")
	c.Flags().StringVar(&verdictCache, "verdict-cache", "", verdictHelp)
	c.Flags().BoolVar(&minimize, "minimize", false, "with {pool}: shrink the workload of each crash finding, by delta debugging, to a minimal one on which it still fails, and report it with its replay command (docs/crash-exploration.md, \"Minimal reproducers\")")
	c.Flags().DurationVar(&minimizeTime, "minimize-time", 0, "the time --minimize may take, `D` (default: a third of the time the check took before, a quarter of the whole run, at least 10s; with --time-budget, at most a quarter of it, taken from the exploration's)")
	c.Flags().IntVar(&schedules, "schedules", pipeline.DefaultSchedules, "with {pool}: record and explore a program whose threads store to PM under `N` thread schedules, the operating system's and N-1 of the runtime's controlled scheduler (SCRY_SCHED: PCT and a PM-aware policy), findings merged, each naming its schedule (1: the operating system's alone)")
	return c
}

// verdict is a command's use of the verdict cache (--verdict-cache): its directory, the key of
// this run and the lines it hashed, and the cached report when there is one.
type verdict struct {
	dir, key string
	lines    []string
	hit      *report.Report
}

// lookupVerdict computes the key of the run of args (program and arguments) with workload, the
// command's options and extra (options set otherwise: a shard from the environment) and files
// (contents the verdict depends on: --suppressions, a trace) and
// looks it up in dir; on a hit it says so on standard error. Errors: VerdictKey's and
// LoadVerdict's.
func lookupVerdict(cmd *cobra.Command, dir string, args []string, workload string, files, extra []string) (*verdict, error) {
	wd, _ := os.Getwd()
	key, lines, err := pipeline.VerdictKey(pipeline.VerdictInputs{
		Program: args[0], Args: args[1:], Workload: workload, Options: append(verdictOptions(cmd), extra...), Dir: wd, Files: files,
	})
	if err != nil {
		return nil, err
	}
	rep, when, err := pipeline.LoadVerdict(dir, key)
	if err != nil {
		return nil, err
	}
	if rep != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "scry: verdict cache hit: the program, its workload and the options are those of the run of %s (key %.12s in %s); its report follows, nothing was run\n",
			when.Local().Format(time.RFC3339), key, dir)
	}
	return &verdict{dir: dir, key: key, lines: lines, hit: rep}, nil
}

// store caches rep when the run completed (err nil: an interrupted or failed run is no verdict);
// a cache that cannot be written is a warning. A nil v (no --verdict-cache) does nothing.
func (v *verdict) store(cmd *cobra.Command, rep *report.Report, err error) {
	if v == nil || err != nil || rep == nil {
		return
	}
	if serr := pipeline.StoreVerdict(v.dir, v.key, v.lines, rep); serr != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "scry: warning: %v\n", serr)
	}
}

// verdictHelp is --verdict-cache's help.
const verdictHelp = "reuse the report of an earlier run in the cache directory `DIR` when the program (its ELF build id), its arguments, the workload, the options, the working directory, scry and the PMDK/scry/loader variables of the environment are all the same, else run and cache the report (docs/ci.md: what the key does not cover)"

// verdictOptions returns the check's flags that were set, as NAME=VALUE, for the verdict
// cache's key: every flag but those that only say where the report, the trace and the cache go
// and how the report is written (--strict only changes the exit status, which the cached report
// gives again).
func verdictOptions(cmd *cobra.Command) []string {
	skip := map[string]bool{"output": true, "format": true, "force": true, "trace": true, "verdict-cache": true, "strict": true}
	var out []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if skip[f.Name] {
			return
		}
		v := f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), "\x00")
		}
		out = append(out, f.Name+"="+v)
	})
	return out
}

// exactArgs is cobra.ExactArgs with a message naming what is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}
