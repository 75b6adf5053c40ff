package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/explore"
	"github.com/scry-pm/scry/report"
)

// newReplayCommand is `scry replay REPORT ID --out FILE`: rebuild the crash image of a crash
// finding from the trace its JSON report names, and print the command that reproduces the
// failure (docs/crash-exploration.md, "Replay").
func newReplayCommand() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "replay REPORT ID --out FILE",
		Short: "rebuild the crash image of a crash finding and print the command that reproduces it",
		Long: `REPORT is a JSON report of ` + "`scry check --format json -o REPORT`" + ` (or ` + "`scry explore`" + `); ID is a
finding's number (1-based, as the text report numbers them: "finding N") or its crash id
("c" and 12 hex digits). The crash image is rebuilt into FILE from the trace the report names;
the command printed on standard output runs the program on it with the rest of the workload.`,
		Args: exactArgs(2, "a JSON report and a finding id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out FILE is required: where to write the crash image")
			}
			b, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			var doc struct {
				Findings []report.Finding `json:"findings"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				return fmt.Errorf("%s is not a JSON report of scry: %w", args[0], err)
			}
			var f *report.Finding
			if n, err := strconv.Atoi(args[1]); err == nil {
				if n < 1 || n > len(doc.Findings) {
					return fmt.Errorf("%s has %d findings: no finding %d", args[0], len(doc.Findings), n)
				}
				f = &doc.Findings[n-1]
			} else {
				for i := range doc.Findings {
					if c := doc.Findings[i].Crash; c != nil && c.ID == args[1] {
						f = &doc.Findings[i]
					}
				}
				if f == nil {
					return fmt.Errorf("%s has no finding with id %q", args[0], args[1])
				}
			}
			if f.Crash == nil {
				return fmt.Errorf("finding %s (%s) is not a crash finding: it has no crash image", args[1], f.Kind)
			}
			if err := explore.Rebuild(f.Crash, out); err != nil {
				return err
			}
			c := f.Crash
			nops := 0
			if w, err := explore.ReadWorkload(c.Workload); err == nil {
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
			fmt.Fprintln(cmd.OutOrStdout(), explore.ReproduceCommand(c.Target, c.Workload, c.Input-2, nops, out))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "write the crash image to `FILE`")
	return c
}
