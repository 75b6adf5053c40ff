package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	fsexplore "github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/workload"
)

// newReplayCommand is `scry replay REPORT ID --out FILE`: rebuild the crash image of a crash
// finding from the trace its JSON report names, and print the command that reproduces the
// failure (docs/crash-exploration.md, "Replay"); for a finding of `scry fs check`, rebuild its
// crash directory (docs/fs-mode.md, "Replaying a finding").
func newReplayCommand() *cobra.Command {
	var out string
	var force bool
	c := &cobra.Command{
		Use:   "replay REPORT ID --out FILE|DIR",
		Short: "rebuild the crash image (or crash directory) of a crash finding and print the command that reproduces it",
		Long: `REPORT is a JSON report of ` + "`scry check --format json -o REPORT`" + ` (or ` + "`scry explore`" + `, or ` + "`scry fs check`" + `); ID
is a finding's number (1-based, as the text report numbers them: "finding N"), its crash id
("c" and 12 hex digits) or a variant's id (the crash id, "-", a number).

PM findings: the crash image is rebuilt into FILE from the trace the report names; the command
printed on standard output runs the program on it with the rest of the workload.

File-system findings (scry fs check): the crash directory is rebuilt at DIR, a new directory,
from the snapshot of the workload directory and the trace the check kept (checked against the
digest of the directory the exploration judged); beside it DIR.stdout and DIR.stderr hold what
the program had printed before the crash (the checker's $SCRY_STDOUT, $SCRY_STDERR) and, for a
failure by output equivalence, DIR.stdin the workload's lines the re-execution read. The
command printed runs the checker inside DIR, or the program on DIR.stdin, as the exploration
did. DIR and those files must not exist (--force does not apply: scry never writes into or over
an existing path).`,
		Args: exactArgs(2, "a JSON report and a finding id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out is required: where to write the crash image (a file) or the crash directory (scry fs check)")
			}
			b, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			f, err := report.CrashFinding(b, args[0], args[1])
			if err != nil {
				return err
			}
			if f.FS != nil {
				return replayFS(cmd, f, out)
			}
			var assume []px86.StoreState
			if f.Crash.AssumeFixed {
				// The exploration's crash points were placed with these stores assumed durable.
				if assume, err = pipeline.NeverDurable(f.Crash.Trace); err != nil {
					return fmt.Errorf("the stores the exploration assumed durable: %w", err)
				}
			}
			if err := explore.Rebuild(f.Crash, out, force, assume); err != nil {
				return err
			}
			c := f.Crash
			nops := 0
			if w, err := workload.Read(c.Workload); err == nil {
				nops = len(w.Ops)
			} else {
				nops = c.Input // best effort: keep the tail command
			}
			for _, iv := range c.Invariants {
				fmt.Fprintf(cmd.ErrOrStderr(), "scry: the crash state violates %s\n", iv)
			}
			if len(c.InFlight) > 0 {
				var ops []string
				for _, o := range c.InFlight {
					ops = append(ops, fmt.Sprintf("%d %q", o.Index, o.Text))
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "scry: operations in flight at the crash: %s; the rerun applies the operations not begun\n", strings.Join(ops, ", "))
			}
			op := c.Input - 2
			if f.Operation != nil {
				op = int(f.Operation.Index)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "scry: crash image of %s (%s, operation %d) written to %s; reproduce with:\n", c.ID, f.Kind, op, out)
			env := c.Env
			if env == nil { // a report written before reports carried it
				env = exec.Target{}.ReproduceEnv()
			}
			fmt.Fprintln(cmd.OutOrStdout(), explore.ReproduceCommand(c.Target, env, c.Workload, c.Input-2, nops, out))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "write the crash image to `FILE`, or the crash directory to DIR (which must not exist)")
	c.Flags().BoolVar(&force, "force", false, "let --out replace an existing regular file (never a link or a directory)")
	return c
}

// replayFS rebuilds the crash directory of file-system finding f at out (fsexplore.Replay) and
// prints the command that reproduces its failure.
func replayFS(cmd *cobra.Command, f *report.Finding, out string) error {
	fc := f.FS
	files, command, err := fsexplore.Replay(fc, fc.State, out)
	if err != nil {
		return err
	}
	st := fc.State
	w := cmd.ErrOrStderr()
	fmt.Fprintf(w, "scry: crash directory of %s (%s, model %s, %s, crash after logical operation %d", fc.ID, f.Kind, fc.APM, st.Strategy, st.CrashPoint)
	if st.Operation >= 0 && fc.Workload != "" {
		fmt.Fprintf(w, ", during workload operation %d", st.Operation)
	}
	fmt.Fprintf(w, ") written to %s; the output printed before the crash to %s and %s", files.Dir, files.Stdout, files.Stderr)
	if files.Stdin != "" {
		fmt.Fprintf(w, "; the re-execution's standard input to %s", files.Stdin)
	}
	if command == "" {
		fmt.Fprintln(w, "; the finding names no checker or program to reproduce it with")
		return nil
	}
	fmt.Fprintln(w, "; reproduce with:")
	if st.Symptom != "checker" {
		fmt.Fprintf(w, "scry: symptom %s: the re-execution ends as neither legal outcome does (the report's fs.diff_committed and fs.diff_rolled_back compare the finding's first state's output)\n", st.Symptom)
	}
	fmt.Fprintln(cmd.OutOrStdout(), command)
	return nil
}
