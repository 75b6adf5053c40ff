package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/analysis/framework"
	"github.com/scry-pm/scry/exec"
	"github.com/scry-pm/scry/infer"
	"github.com/scry-pm/scry/oracle"
	"github.com/scry-pm/scry/record"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// recordFlags are the flags shared by `record` and `check`.
type recordFlags struct {
	trace    string
	pm       []string
	noLoads  bool
	noForce  bool
	workload string
	// programStdoutToStderr sends the recorded program's standard output to scry's standard
	// error, so that it cannot mix with a report on standard output (check with {pool}).
	programStdoutToStderr bool
}

func (f *recordFlags) add(c *cobra.Command, traceDefault, traceHelp string) {
	c.Flags().StringVar(&f.trace, "trace", traceDefault, traceHelp)
	c.Flags().StringArrayVar(&f.pm, "pm", nil, "treat MAP_SHARED mappings of files matching `GLOB` as PM (repeatable)")
	c.Flags().BoolVar(&f.noLoads, "no-loads", false, "leave loads out of the trace")
	c.Flags().BoolVar(&f.noForce, "no-pmem-force", false, "do not set PMEM_IS_PMEM_FORCE=1 for the program")
	c.Flags().StringVar(&f.workload, "workload", "", "feed `FILE` to the program's standard input (default: scry's own standard input)")
}

// run records one execution of args. A program that could not start is an error (exit 2).
func (f *recordFlags) run(cmd *cobra.Command, args []string, trace string) (*record.Result, error) {
	if len(args) == 0 {
		return nil, &exitError{code: 2, err: errors.New("no program given: put it after `--`, e.g. `scry check -- ./prog pool`")}
	}
	var stdin io.Reader = os.Stdin
	if f.workload != "" {
		w, err := os.Open(f.workload)
		if err != nil {
			return nil, &exitError{code: 2, err: fmt.Errorf("workload: %w", err)}
		}
		defer w.Close()
		stdin = w
	}
	// The program gets Ctrl-C itself; scry waits for it and keeps the trace.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	signal.Ignore(os.Interrupt)
	defer signal.Reset(os.Interrupt)
	stdout := cmd.OutOrStdout()
	if f.programStdoutToStderr {
		stdout = cmd.ErrOrStderr()
	}
	res, err := record.Run(ctx, record.Options{
		Trace: trace, PMGlobs: f.pm, NoLoads: f.noLoads, NoForcePMEM: f.noForce,
		Args: args, Stdin: stdin, Stdout: stdout, Stderr: cmd.ErrOrStderr(),
	})
	if err != nil {
		return res, &exitError{code: 2, err: err}
	}
	return res, nil
}

// programFailed is the error for a recorded program that did not exit with status 0: scry's
// results cover its run up to that point. kept names the trace when it outlives the command.
func programFailed(prog string, res *record.Result, kept string) error {
	msg := fmt.Sprintf("%s %s; the results cover its run up to that point", prog, res)
	if kept != "" {
		msg += "; its trace is in " + kept
	}
	return &exitError{code: 2, err: errors.New(msg)}
}

func newRecordCommand() *cobra.Command {
	var f recordFlags
	c := &cobra.Command{
		Use:   "record [flags] -- PROG [ARGS...]",
		Short: "run an instrumented program and write its trace",
		Long:  "Runs PROG (built with `scry cc`) with standard input passed through and writes its trace (docs/trace-format.md). Exit status: 0 when the program exited 0, 2 otherwise.",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := f.run(cmd, args, f.trace)
			if err != nil {
				return err
			}
			if res.Failed() {
				return programFailed(args[0], res, f.trace)
			}
			return nil
		},
	}
	f.add(c, "scry.trace", "write the trace to `FILE`")
	return c
}

// analyzeFlags are the flags shared by `analyze` and `check`.
type analyzeFlags struct {
	format       string
	oracles      []string
	suppressions string
	output       string
	noInfer      bool

	supp   *report.Suppressions // loaded by check
	names  []string             // the oracles selected (check); nil: all
	checks []string             // the checks of inferred properties selected (check)
}

func (f *analyzeFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.format, "format", "text", "output format: text, json or sarif")
	c.Flags().StringSliceVar(&f.oracles, "oracles", nil, "run only these oracles (comma-separated kinds, "+infer.KindMPBViolation+" and "+infer.KindMPAViolation+" included; default all)")
	c.Flags().StringVar(&f.suppressions, "suppressions", "", "drop findings accepted in `FILE` (docs/oracles.md)")
	c.Flags().StringVarP(&f.output, "output", "o", "", "write the report to `FILE` instead of standard output")
	c.Flags().BoolVar(&f.noInfer, "no-infer", false, "do not infer persistence properties from the trace nor check them ("+infer.KindMPBViolation+", "+infer.KindMPAViolation+"; docs/inference.md)")
}

// selectKinds splits the --oracles names into oracle kinds and kinds of the checks of inferred
// properties (package infer). With no names, every oracle runs and, unless --no-infer, every
// check.
func (f *analyzeFlags) selectKinds() error {
	f.names, f.checks = nil, nil
	if len(f.oracles) == 0 {
		if !f.noInfer {
			f.checks = []string{infer.KindMPBViolation, infer.KindMPAViolation}
		}
		return nil
	}
	known := map[string]bool{}
	for _, n := range oracle.Names() {
		known[n] = true
	}
	var unknown []string
	for _, n := range f.oracles {
		n = strings.TrimSpace(n)
		switch {
		case n == infer.KindMPBViolation || n == infer.KindMPAViolation:
			if !slices.Contains(f.checks, n) {
				f.checks = append(f.checks, n)
			}
		case known[n]:
			f.names = append(f.names, n)
		default:
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		all := append(oracle.Names(), infer.KindMPBViolation, infer.KindMPAViolation)
		return fmt.Errorf("unknown oracle %s (known: %s)", strings.Join(unknown, ", "), strings.Join(all, ", "))
	}
	if f.noInfer && len(f.checks) > 0 {
		return fmt.Errorf("--oracles %s needs inference, which --no-infer turns off", strings.Join(f.checks, ","))
	}
	if len(f.names) == 0 {
		f.names = []string{} // only checks: no oracle
	}
	return nil
}

// check validates the flags and loads the suppressions, before any program runs.
func (f *analyzeFlags) check() error {
	switch f.format {
	case "text", "json", "sarif":
	default:
		return &exitError{code: 2, err: fmt.Errorf("unknown --format %q: want text, json or sarif", f.format)}
	}
	if err := f.selectKinds(); err != nil {
		return &exitError{code: 2, err: err}
	}
	if f.suppressions != "" {
		s, err := report.LoadSuppressions(f.suppressions)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		f.supp = s
	}
	return nil
}

// analyze runs the oracles over a trace and prints the report; it returns findingsExit when
// there is a correctness finding. A truncated trace is analysed up to its last complete record.
func (f *analyzeFlags) analyze(cmd *cobra.Command, tracePath string) error {
	rep, aerr := f.analyzeReport(tracePath)
	if rep == nil {
		return aerr
	}
	return f.write(cmd, rep, aerr)
}

// analyzeReport runs the oracles over a trace and, unless --no-infer, the checks of the
// properties inferred from it (package infer: a first pass infers them, the oracles' pass
// checks them). A nil report comes with an exit error; a non-nil error with a report means
// partial results (a bad trace). check must have run.
func (f *analyzeFlags) analyzeReport(tracePath string) (*report.Report, error) {
	var as []*framework.Analyzer
	if f.names == nil || len(f.names) > 0 {
		var err error
		if as, err = oracle.ByName(f.names); err != nil {
			return nil, &exitError{code: 2, err: err}
		}
	}
	if len(f.checks) > 0 {
		// A trace the inference cannot read is reported by the oracles' pass below.
		if res := inferChecks(tracePath); res != nil {
			for _, a := range infer.Analyzers(res) {
				if slices.Contains(f.checks, a.Name) {
					as = append(as, a)
				}
			}
		}
	}
	r, err := trace.Open(tracePath)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	defer r.Close()
	rep, aerr := framework.Run(r, as, framework.Config{Suppressions: f.supp, Trace: tracePath})
	if rep == nil {
		return nil, &exitError{code: 2, err: aerr}
	}
	if aerr != nil {
		if !errors.Is(aerr, trace.ErrNotTrace) {
			aerr = fmt.Errorf("%s: %w", tracePath, aerr)
		}
		aerr = &exitError{code: 2, err: aerr}
	}
	return rep, aerr
}

// inferChecks infers the properties the checks need (DURA, MPB, MPA) from the trace at path;
// nil when it cannot be read. A truncated trace gives the properties of its complete records.
func inferChecks(path string) *infer.Result {
	r, err := trace.Open(path)
	if err != nil {
		return nil
	}
	defer r.Close()
	res, err := infer.Infer(r, infer.Options{Rules: infer.MPBSet})
	if err != nil && !errors.Is(err, trace.ErrTruncated) {
		return nil
	}
	return res
}

// write prints the report; aerr (an error that came with partial results) is returned after
// it, else findingsExit when there is a correctness finding.
func (f *analyzeFlags) write(cmd *cobra.Command, rep *report.Report, aerr error) error {
	w := cmd.OutOrStdout()
	if f.output != "" {
		out, err := os.Create(f.output)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		defer out.Close()
		w = out
	}
	var err error
	switch f.format {
	case "json":
		err = report.WriteJSON(w, rep)
	case "sarif":
		err = report.WriteSARIF(w, rep)
	default:
		err = report.WriteText(w, rep)
	}
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("writing the report: %w", err)}
	}
	if f.format != "text" {
		for _, warn := range rep.Warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "scry: warning:", warn)
		}
	}
	if aerr != nil {
		// Partial results were printed above; the trace itself is bad.
		return aerr
	}
	if rep.HasCorrectness() {
		return findingsExit
	}
	return nil
}

func newAnalyzeCommand() *cobra.Command {
	var f analyzeFlags
	c := &cobra.Command{
		Use:   "analyze [flags] TRACE",
		Short: "report PM misuse found in a trace",
		Long:  "Runs every trace oracle (docs/oracles.md) over TRACE in one pass. Exit status: 0 no correctness finding, 1 correctness findings, 2 error.",
		Args:  exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			return f.analyze(cmd, args[0])
		},
	}
	f.add(c)
	return c
}

func newCheckCommand() *cobra.Command {
	var rf recordFlags
	var af analyzeFlags
	var cf crashFlags
	c := &cobra.Command{
		Use:   "check [flags] -- PROG [ARGS...]",
		Short: "record a run of an instrumented program and report PM misuse (and crash-consistency bugs with {pool})",
		Long: `Records PROG (built with ` + "`scry cc`" + `) like ` + "`scry record`" + `, then analyses the trace like ` + "`scry analyze`" + `.

With {pool} in ARGS (e.g. ` + "`scry check --workload ops.txt -- ./mapcli btree {pool}`" + `), scry creates the
pool itself (--pool PATH names it, which must not exist; default: a file in a fresh temporary
directory), records the run with the workload on standard input, runs the trace oracles, then
explores crash states inside every operation and re-executes the program on the crash images
(docs/crash-exploration.md). The recorded program's standard output goes to standard error,
standard output being the report's. The trace is kept for ` + "`scry replay`" + `: in --trace FILE, else next to
the report (-o REPORT: REPORT.trace), else in the temporary directory when there are findings.

Exit status: 0 no correctness finding, 1 correctness findings, 2 error (including a program that
exits non-zero or is killed, after its findings so far are printed).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := af.check(); err != nil {
				return err
			}
			if hasPool(args) {
				return checkCrash(cmd, &rf, &af, &cf, args)
			}
			if cmd.Flags().Changed("pool") {
				return &exitError{code: 2, err: errors.New("--pool needs {pool} in the program's arguments")}
			}
			trace := rf.trace
			if trace == "" {
				dir, err := os.MkdirTemp("", "scry-check-")
				if err != nil {
					return &exitError{code: 2, err: err}
				}
				defer os.RemoveAll(dir)
				trace = filepath.Join(dir, "run.trace")
			}
			res, err := rf.run(cmd, args, trace)
			if err != nil {
				return err
			}
			aerr := af.analyze(cmd, trace)
			if res.Failed() && aerr == nil {
				// No correctness finding, but the run is not a complete one: an error.
				return programFailed(args[0], res, rf.trace)
			}
			if res.Failed() {
				fmt.Fprintf(cmd.ErrOrStderr(), "scry: warning: %s %s\n", args[0], res)
			}
			return aerr
		},
	}
	rf.add(c, "", "keep the trace in `FILE` (default: a temporary file, removed; with {pool}: see above)")
	af.add(c)
	cf.add(c, "with {pool}: create the pool at `PATH` (must not exist; default: in a temporary directory)")
	return c
}

// checkCrash is `scry check` with {pool} in the target: record on a fresh pool, trace oracles,
// crash exploration, one report.
func checkCrash(cmd *cobra.Command, rf *recordFlags, af *analyzeFlags, cf *crashFlags, args []string) error {
	if err := cf.parse(); err != nil {
		return err
	}
	if rf.workload == "" {
		return &exitError{code: 2, err: errors.New("crash exploration needs --workload FILE: its lines are the operations fed to the program's standard input")}
	}
	if _, err := exec.ParseTarget(args); err != nil {
		return &exitError{code: 2, err: err}
	}
	dir, err := os.MkdirTemp("", "scry-check-")
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	keepDir := false
	defer func() {
		if !keepDir {
			os.RemoveAll(dir)
		}
	}()
	pool := filepath.Join(dir, "pool")
	if cf.pool != "" {
		if pool, err = filepath.Abs(cf.pool); err != nil {
			return &exitError{code: 2, err: err}
		}
		if _, err := os.Lstat(pool); err == nil {
			return &exitError{code: 2, err: fmt.Errorf("--pool %s exists: scry creates the pool itself and never touches an existing file; remove it or name another", pool)}
		}
	}
	tracePath, tempTrace := rf.trace, false
	switch {
	case tracePath != "":
	case af.output != "":
		tracePath = af.output + ".trace"
	default:
		tracePath, tempTrace = filepath.Join(dir, "run.trace"), true
	}
	if tracePath, err = filepath.Abs(tracePath); err != nil {
		return &exitError{code: 2, err: err}
	}
	recArgs := make([]string, len(args))
	for i, a := range args {
		recArgs[i] = strings.ReplaceAll(a, exec.PoolPlaceholder, pool)
	}
	rf2 := *rf
	rf2.pm = append(slices.Clone(rf.pm), pool)
	rf2.programStdoutToStderr = true // standard output is the report's
	res, err := rf2.run(cmd, recArgs, tracePath)
	if err != nil {
		return err
	}
	if cf.pool == "" {
		os.Remove(pool) // the images come from the trace
	}
	rep, aerr := af.analyzeReport(tracePath)
	if rep == nil {
		return aerr
	}
	var xerr error
	if aerr == nil && !res.Failed() {
		reportPath := ""
		if af.output != "" && af.format == "json" {
			reportPath, _ = filepath.Abs(af.output)
		}
		xerr = cf.explore(cmd, rep, tracePath, rf.workload, args, pool, reportPath)
	} else if res.Failed() {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s %s: crash states not explored", args[0], res))
	}
	werr := af.write(cmd, rep, aerr)
	if tempTrace && len(rep.Findings) > 0 && rep.Stats != nil {
		keepDir = true
		fmt.Fprintf(cmd.ErrOrStderr(), "scry: the trace is kept in %s (scry replay needs it; remove the directory when done)\n", tracePath)
	}
	if xerr != nil {
		return xerr
	}
	if res.Failed() && (werr == nil || werr == findingsExit) {
		return programFailed(args[0], res, tracePath)
	}
	return werr
}

// exactArgs is cobra.ExactArgs with a message naming what is expected, and exit status 2.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &exitError{code: 2, err: fmt.Errorf("%s takes %s (got %d arguments)", cmd.CommandPath(), what, len(args))}
		}
		return nil
	}
}
