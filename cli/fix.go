package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/repair"
)

// newFixCommand is `scry fix [--build CMD] [--finding ID]... [-o FILE] [--apply] REPORT`
// (docs/repair.md).
func newFixCommand() *cobra.Command {
	var o repair.Options
	var output string
	var force, apply bool
	var smtLog string
	c := &cobra.Command{
		Use:   "fix [--build CMD] [--finding ID]... [-o FILE] [--apply] REPORT",
		Short: "compute repairs for the correctness findings of a JSON report, as a patch",
		Long: `REPORT is a JSON report of ` + "`scry check --format json -o REPORT`" + `. scry fix computes, for each
correctness finding (or those --finding selects: a number as the text report gives it, or a
crash id), the fewest flushes, fences, library persists (pmem_persist, pmemobj_persist) or
TX_ADDs to insert, and statements to move or delete, that make the recorded trace meet what the
finding demands without making any flush or fence redundant or any store durable later, in
the program's own style (docs/repair.md). It writes a unified diff that ` + "`git apply`" + ` accepts in
the directory it runs in (--dir: the source tree), each hunk headed by the findings it repairs,
then lists the findings it could not repair and why.

With --build CMD, each repair is validated: the source tree is copied, the patch applied to the
copy, CMD run there (a shell command, e.g. 'make' or 'scry cc -g -o prog prog.c -lpmem'), and the
report's own check run again on the rebuilt program; a repair is kept only when its findings
are gone and no new finding (performance ones included) appears. Without --build the patch is
marked unvalidated. --apply writes a validated patch to the source files.

Exit status: 0 every selected finding got a repair (validated, with --build); 1 some could not
be repaired (the patch holds the others); 2 error (a report, trace or build that cannot be
used; z3 missing); 130/143 interrupted.`,
		Args: exactArgs(1, "a JSON report"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Report = args[0]
			if apply && o.Build == "" {
				return errors.New("--apply writes only a validated patch: give --build CMD too")
			}
			policy := safefile.Policy{What: "the patch", Ours: repair.PatchHead, Force: force}
			if output != "" {
				if err := safefile.Check(output, policy); err != nil {
					return err
				}
			}
			if smtLog != "" {
				f, err := safefile.Create(smtLog, safefile.Policy{What: "the SMT log", Ours: func(h []byte) bool { return len(h) == 0 || h[0] == '(' }, Force: force})
				if err != nil {
					return err
				}
				defer f.Close()
				o.SMTLog = f
			}
			o.Notes = cmd.ErrOrStderr()
			ctx, stop := exec.SignalContext(context.Background())
			defer stop()
			res, err := repair.Fix(ctx, o)
			if res != nil && res.Patch != "" {
				w := cmd.OutOrStdout()
				if output != "" {
					f, ferr := safefile.Create(output, policy)
					if ferr != nil {
						return ferr
					}
					defer f.Close()
					w = f
				}
				if _, werr := fmt.Fprint(w, res.Patch); werr != nil {
					return werr
				}
			}
			if res != nil && (len(res.Outcomes) > 0 || len(res.Warnings) > 0) {
				printOutcomes(cmd, res)
			}
			if err != nil {
				return err
			}
			if apply {
				if err := res.Apply(); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "scry fix: the patch is applied to the source files")
			}
			if len(res.Unrepaired()) > 0 {
				return errFindings
			}
			return nil
		},
	}
	c.Flags().StringVar(&o.Build, "build", "", "validate each repair: rebuild a copy of the source tree with the shell command `CMD` and run the report's check again")
	c.Flags().StringArrayVar(&o.Findings, "finding", nil, "repair only finding `ID` (its number or crash id; repeatable; default: every correctness finding)")
	c.Flags().StringVarP(&output, "output", "o", "", "write the patch to `FILE` instead of standard output")
	c.Flags().BoolVar(&force, "force", false, "let -o replace an existing file that is not a patch of scry fix")
	c.Flags().BoolVar(&apply, "apply", false, "apply the validated patch to the source files (needs --build)")
	c.Flags().StringVar(&o.Dir, "dir", "", "the source tree `DIR`: diff paths are relative to it, --build copies it and runs in the copy (default: the current directory)")
	c.Flags().DurationVar(&o.BuildTimeout, "build-timeout", repair.DefaultBuildTimeout, "a build that takes longer than `D` fails")
	c.Flags().IntVar(&o.Alternatives, "alternatives", repair.DefaultAlternatives, "with --build, try at most `N` repairs per finding before giving up")
	c.Flags().StringVar(&smtLog, "smt-log", "", "write every SMT-LIB query to `FILE` (z3 can replay it)")
	return c
}

// printOutcomes lists on standard error what became of each selected finding.
func printOutcomes(cmd *cobra.Command, res *repair.Result) {
	w := cmd.ErrOrStderr()
	for _, wmsg := range res.Warnings {
		fmt.Fprintln(w, "scry fix: warning:", wmsg)
	}
	repaired := 0
	for _, o := range res.Outcomes {
		if o.Repair != nil {
			repaired++
			state := "unvalidated"
			if o.Repair.Validated {
				state = "validated"
			}
			// A finding repaired at each of its callers has one repair per caller.
			var sums []string
			for _, r := range res.Repairs {
				if slices.Contains(r.Findings, o.Finding) {
					sums = append(sums, r.Summary)
				}
			}
			fmt.Fprintf(w, "scry fix: finding %d (%s at %s) repaired (%s): %s\n", o.Finding, o.Kind, o.Location, state, strings.Join(sums, "; "))
			continue
		}
		fmt.Fprintf(w, "scry fix: finding %d (%s at %s) not repaired: %s\n", o.Finding, o.Kind, o.Location, o.Reason)
	}
	fmt.Fprintf(w, "scry fix: %d of %d finding(s) repaired in %.1fs (computing %.2fs, validating %.1fs)\n",
		repaired, len(res.Outcomes), res.ComputeSeconds+res.ValidateSeconds, res.ComputeSeconds, res.ValidateSeconds)
}
