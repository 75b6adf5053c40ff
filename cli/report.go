package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
)

// newReportCommand is `scry report REPORT --format FORMAT [-o FILE]`: a saved JSON report
// written again in another format, e.g. the HTML page of a check run in CI
// (docs/html-report.md).
func newReportCommand() *cobra.Command {
	var format, out string
	var force bool
	c := &cobra.Command{
		Use:   "report REPORT --format FORMAT [-o FILE]",
		Short: "write a saved JSON report again as text, SARIF or an HTML page",
		Long: `REPORT is a JSON report of ` + "`scry check --format json -o REPORT`" + ` (or ` + "`scry explore`" + `,
` + "`scry analyze`" + `, ` + "`scry fs check`" + `). It is written again in FORMAT to FILE, or to standard output. An
HTML page rebuilds the timeline of each crash finding from the trace the report names (when the
trace is gone, the page says so and draws the crash state alone). The exit status does not
depend on the findings: 0 when the report was written.`,
		Args: exactArgs(1, "a JSON report"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.ConvertReport(args[0], format, out, force, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&format, "format", "text", fmt.Sprintf("output format: %s", strings.Join(report.Formats, ", ")))
	c.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of standard output")
	c.Flags().BoolVar(&force, "force", false, "let -o replace an existing file that is not a report of scry")
	return c
}
