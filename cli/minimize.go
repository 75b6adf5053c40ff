package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
)

// newMinimizeCommand is `scry minimize REPORT [ID...] -o OUT [--time D]`: minimal reproducers
// for the crash findings of a JSON report (docs/crash-exploration.md, "Minimal reproducers").
func newMinimizeCommand() *cobra.Command {
	af := analyzeFlags{format: "json"}
	d := time.Minute
	c := &cobra.Command{
		Use:   "minimize REPORT [ID...] -o OUT [--time D]",
		Short: "shrink the workload of crash findings to a minimal one that still fails (delta debugging)",
		Long: `REPORT is a JSON report of ` + "`scry check --format json -o REPORT`" + ` with {pool}. For each PM crash
finding (or each ID given: a finding's number, as the text report gives it, or its crash id),
scry runs the report's check again on smaller workloads, shrunk by delta debugging (ddmin, over
the operations, then over the values in them), each explored for that finding alone, and keeps
the shortest on which a crash state of the same root cause (the same crash id) still fails.
The report written to OUT is REPORT with each finding's reproducer: its workload (inline when
short), its crash state, and ` + "`scry replay OUT ID-min --out crash.img`" + ` to rebuild it. The
reproducers' workloads and traces are kept in OUT.min (a new directory beside it when that
exists). REPORT is not changed.

--time D is the search's time for all the findings, shared out in order (default 1m).

Exit status: 0 no crash finding is left without a reproducer; 1 some are; 2 error; 130/143
interrupted (the reproducers found before are written).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if af.output == "" {
				return errors.New("-o OUT is required: the report with the reproducers is written there (REPORT is not changed)")
			}
			if err := report.CheckFormat(af.format); err != nil {
				return err
			}
			if d <= 0 {
				return fmt.Errorf("--time %s: give a positive duration", d)
			}
			if err := safefile.Check(af.output, report.Policy(af.force)); err != nil {
				return err
			}
			ctx, stop := exec.SignalContext(context.Background())
			defer stop()
			rep, err := pipeline.MinimizeReport(ctx, args[0], args[1:], af.output, af.format == "json", d, cmd.ErrOrStderr())
			if rep == nil {
				return err
			}
			if werr := pipeline.WriteReport(rep, af.format, af.output, af.force, cmd.OutOrStdout(), cmd.ErrOrStderr()); werr != nil {
				return werr
			}
			if err != nil {
				return err
			}
			for _, f := range rep.Findings {
				if f.Crash != nil && f.Crash.Minimal == nil && (len(args) == 1 || wanted(args[1:], f.Crash.ID)) {
					return errFindings
				}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&af.format, "format", "json", "output `format`: "+"json (replayable), text, sarif or html")
	f.StringVarP(&af.output, "output", "o", "", "write the report with the reproducers to `OUT`")
	f.BoolVar(&af.force, "force", false, "let -o replace an existing file that is not a report of scry")
	f.DurationVar(&d, "time", d, "the search's time for all the findings, `D`")
	return c
}

// wanted reports whether id is among ids.
func wanted(ids []string, id string) bool {
	for _, w := range ids {
		if w == id {
			return true
		}
	}
	return false
}
