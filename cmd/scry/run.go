package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/analysis"
	"github.com/scry-pm/scry/oracle"
	"github.com/scry-pm/scry/record"
	"github.com/scry-pm/scry/report"
)

// recordFlags are the flags shared by `record` and `check`.
type recordFlags struct {
	trace    string
	pm       []string
	noLoads  bool
	noForce  bool
	workload string
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
	res, err := record.Run(ctx, record.Options{
		Trace: trace, PMGlobs: f.pm, NoLoads: f.noLoads, NoForcePMEM: f.noForce,
		Args: args, Stdin: stdin, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(),
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

	supp *report.Suppressions // loaded by check
}

func (f *analyzeFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.format, "format", "text", "output format: text, json or sarif")
	c.Flags().StringSliceVar(&f.oracles, "oracles", nil, "run only these oracles (comma-separated kinds; default all)")
	c.Flags().StringVar(&f.suppressions, "suppressions", "", "drop findings accepted in `FILE` (docs/oracles.md)")
	c.Flags().StringVarP(&f.output, "output", "o", "", "write the report to `FILE` instead of standard output")
}

// check validates the flags and loads the suppressions, before any program runs.
func (f *analyzeFlags) check() error {
	switch f.format {
	case "text", "json", "sarif":
	default:
		return &exitError{code: 2, err: fmt.Errorf("unknown --format %q: want text, json or sarif", f.format)}
	}
	if len(f.oracles) > 0 {
		if _, err := oracle.ByName(f.oracles); err != nil {
			return &exitError{code: 2, err: err}
		}
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
	opts := analysis.Options{Oracles: f.oracles, Suppressions: f.supp}
	rep, aerr := analysis.AnalyzeFile(tracePath, opts)
	if rep == nil {
		return &exitError{code: 2, err: aerr}
	}
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
		return &exitError{code: 2, err: aerr}
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
	c := &cobra.Command{
		Use:   "check [flags] -- PROG [ARGS...]",
		Short: "record a run of an instrumented program and report PM misuse",
		Long:  "Records PROG (built with `scry cc`) like `scry record`, then analyses the trace like `scry analyze`. Exit status: 0 no correctness finding, 1 correctness findings, 2 error (including a program that exits non-zero or is killed, after its findings so far are printed).",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := af.check(); err != nil {
				return err
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
	rf.add(c, "", "keep the trace in `FILE` (default: a temporary file, removed)")
	af.add(c)
	return c
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
