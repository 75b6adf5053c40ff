package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/pipeline"
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
("c" and 12 hex digits), a variant's id (the crash id, "-", a number) or a kind (the first crash
finding of that kind, e.g. ordering-violation).

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
			r, err := pipeline.Replay(args[0], args[1], out, force)
			if err != nil {
				return err
			}
			for _, n := range r.Notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "scry:", n)
			}
			if r.Command != "" {
				fmt.Fprintln(cmd.OutOrStdout(), r.Command)
			}
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "write the crash image to `FILE`, or the crash directory to DIR (which must not exist)")
	c.Flags().BoolVar(&force, "force", false, "let --out replace an existing regular file (never a link or a directory)")
	return c
}
