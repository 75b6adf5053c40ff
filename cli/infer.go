package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/internal/safefile"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/trace"
)

func newInferCommand() *cobra.Command {
	var format, rules, output string
	var maxEvidence int
	var force bool
	c := &cobra.Command{
		Use:   "infer [flags] TRACE",
		Short: "infer the persistence properties a trace implies (ordering, atomicity, durability)",
		Long: `Reads TRACE once and prints the persistence properties its loads imply (docs/inference.md):
the dissertation's DURA, MPB (a guarded load reads data that must persist before the guard's
data) and MPB-cycle MPA, and WITCHER's likely invariants RO1, RO2, RO3 and RA1. Needs a trace
recorded by a scry whose compiler pass writes dependence facts (format version 2).

` + "`scry analyze` and `scry check`" + ` check the MPB and MPA properties themselves (kinds mpb-violation and
mpa-violation); this command only lists them. Exit status: 0, or 2 on error.`,
		Args: exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "text", "json":
			default:
				return fmt.Errorf("unknown --format %q: want text or json", format)
			}
			set := infer.RuleSet(rules)
			if _, err := set.Rules(); err != nil || rules == "" {
				return fmt.Errorf("unknown --rules %q: want witcher, mpb or both", rules)
			}
			if maxEvidence < 0 {
				return fmt.Errorf("--max-evidence %d: want 0 or more", maxEvidence)
			}
			opts := infer.Options{Rules: set, MaxEvidence: maxEvidence}
			if maxEvidence == 0 {
				opts.MaxEvidence = -1
			}
			w := cmd.OutOrStdout()
			if output != "" {
				f, err := safefile.Create(output, safefile.Policy{What: "-o", Force: force})
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			err := pipeline.InferTrace(args[0], opts, format, w)
			if errors.Is(err, trace.ErrTruncated) && !errors.Is(err, trace.ErrNotTrace) {
				// The properties of the complete records were printed: the cut is a warning.
				fmt.Fprintf(cmd.ErrOrStderr(), "scry: warning: %v\n", err)
				return nil
			}
			return err
		},
	}
	c.Flags().StringVar(&format, "format", "text", "output format: text or json")
	c.Flags().StringVar(&rules, "rules", "both", "rules to apply: witcher (RO1-RO3, RA1), mpb (DURA, MPB, MPA) or both")
	c.Flags().IntVar(&maxEvidence, "max-evidence", infer.DefaultMaxEvidence, "keep at most `N` evidence examples per property")
	c.Flags().StringVarP(&output, "output", "o", "", "write the properties to `FILE` instead of standard output")
	c.Flags().BoolVar(&force, "force", false, "let -o replace an existing file")
	return c
}
