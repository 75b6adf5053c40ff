package pipeline

import (
	"fmt"
	"io"

	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/report"
)

// writeFormat writes rep in format: the HTML report with the timelines of its PM crash findings
// (HTMLOptions), any other format by report.Write.
func writeFormat(w io.Writer, rep *report.Report, format string) error {
	if format != "html" {
		return report.Write(w, rep, format)
	}
	return report.WriteHTML(w, rep, HTMLOptions(rep))
}

// HTMLOptions returns what the HTML report of rep shows besides the report's data: the timeline
// of each PM crash finding, rebuilt from the trace it names (explore.Timeline; with the stores
// the exploration assumed durable found again, as Replay does). A finding whose trace is gone or
// changed gets the reason instead, and the HTML report draws its crash state alone.
func HTMLOptions(rep *report.Report) report.HTMLOptions {
	opts := report.HTMLOptions{Timelines: map[int]*report.CrashTimeline{}, TimelineErrors: map[int]string{}}
	assumed := map[string][]px86.StoreState{} // by trace
	for i := range rep.Findings {
		c := rep.Findings[i].Crash
		if c == nil {
			continue
		}
		if c.Trace == "" {
			opts.TimelineErrors[i] = "the finding names no trace: the timeline shows the crash state alone"
			continue
		}
		var assume []px86.StoreState
		if c.AssumeFixed {
			a, ok := assumed[c.Trace]
			if !ok {
				a, _ = NeverDurable(c.Trace) // an unreadable trace is reported by Timeline
				assumed[c.Trace] = a
			}
			assume = a
		}
		tl, err := explore.Timeline(c, assume)
		if err != nil {
			opts.TimelineErrors[i] = fmt.Sprintf("no timeline from the trace (%v): it shows the crash state alone", err)
			continue
		}
		opts.Timelines[i] = tl
	}
	return opts
}
