package pipeline

import (
	"io"

	"github.com/scry-pm/scry/report"
)

// ConvertReport is `scry report`: it reads the JSON report at reportPath (written by --format
// json; docs/findings-json.md) and writes it again in format ("text", "json", "sarif", "html")
// to the file out, or to w when out is "" (WriteReport). An HTML page rebuilds its crash
// timelines from the traces the findings name, as when the check wrote it. Errors: the report
// cannot be read or is not a JSON report of scry; the format is unknown; out may not be written.
func ConvertReport(reportPath, format, out string, force bool, w, warn io.Writer) error {
	if err := report.CheckFormat(format); err != nil {
		return err
	}
	b, err := report.ReadFile(reportPath, "a JSON report")
	if err != nil {
		return err
	}
	rep, err := report.ReadJSON(b, reportPath)
	if err != nil {
		return err
	}
	return WriteReport(rep, format, out, force, w, warn)
}
