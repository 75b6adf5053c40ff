package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/report"
)

// TestMergeSchedules: findings of several schedules merge by root cause (a crash finding by its
// cluster, a trace finding by kind and location), each naming the schedule that showed it first,
// counts summed; a performance finding stands only when every schedule has it; statistics add
// up with the number of schedules; the first errors are kept.
func TestMergeSchedules(t *testing.T) {
	loc := func(line int) report.Location { return report.Location{File: "p.c", Line: line, Function: "f"} }
	crash := func(id string, line int) report.Finding {
		return report.Finding{Kind: report.OrderingViolation, Class: report.Correctness, Location: loc(line), Count: 1,
			Crash: &report.Crash{FailingState: report.FailingState{ID: id}}}
	}
	trace := func(k report.Kind, c report.Class, line int) report.Finding {
		return report.Finding{Kind: k, Class: c, Location: loc(line), Count: 2, Message: string(k)}
	}
	run := func(spec string, stats report.Stats, fs ...report.Finding) *scheduleRun {
		return &scheduleRun{spec: spec, res: &record.Result{}, rep: &report.Report{Findings: fs, Stats: &stats, Warnings: []string{"w " + spec}}}
	}
	runs := []*scheduleRun{
		run("", report.Stats{StatesTested: 10, Failures: 1, ElapsedSeconds: 2},
			crash("c1", 5), trace(report.RedundantFlush, report.Performance, 7), trace(report.RedundantFence, report.Performance, 8), trace(report.UnpersistedStore, report.Correctness, 9)),
		run("pct:1:3", report.Stats{StatesTested: 20, Failures: 3, ElapsedSeconds: 3},
			crash("c1", 5), crash("c2", 6), trace(report.RedundantFlush, report.Performance, 7)),
		run("pm:2:3", report.Stats{StatesTested: 5, ElapsedSeconds: 1},
			trace(report.RedundantFlush, report.Performance, 7), trace(report.UnpersistedStore, report.Correctness, 9)),
	}
	runs[1].xerr = errors.New("second")
	rep, aerr, xerr := mergeSchedules(runs)
	var got []string
	for _, f := range rep.Findings {
		got = append(got, fmt.Sprintf("%s@%s#%d", f.Kind, f.Schedule, f.Location.Line))
	}
	want := []string{"ordering-violation@#5", "redundant-flush@#7", "unpersisted-store@#9", "ordering-violation@pct:1:3#6"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("findings %q, want %q", got, want)
	}
	if rep.Findings[0].Count != 2 || rep.Findings[2].Count != 4 || !strings.Contains(rep.Findings[1].Message, "in each of the 3 thread schedules") {
		t.Errorf("counts %d, %d; message %q", rep.Findings[0].Count, rep.Findings[2].Count, rep.Findings[1].Message)
	}
	st := rep.Stats
	if st.StatesTested != 35 || st.Failures != 4 || st.ElapsedSeconds != 6 || st.Schedules != 3 || st.Findings != 2 {
		t.Errorf("stats %+v", st)
	}
	if len(rep.Warnings) != 3 || aerr != nil || xerr == nil || xerr.Error() != "second" {
		t.Errorf("warnings %q, errors %v %v", rep.Warnings, aerr, xerr)
	}
	// One schedule: its report as it is.
	one := run("", report.Stats{StatesTested: 1}, trace(report.RedundantFence, report.Performance, 8))
	rep, _, _ = mergeSchedules([]*scheduleRun{one})
	if rep != one.rep || rep.Stats.Schedules != 0 || rep.Findings[0].Schedule != "" {
		t.Errorf("one schedule: %+v", rep)
	}
}

func TestScheduleSpec(t *testing.T) {
	for i, want := range map[int]string{1: "pct:1:1", 2: "pm:2:3:120", 3: "pct:3:3:120"} {
		if got := ScheduleSpec(i, 120); got != want {
			t.Errorf("ScheduleSpec(%d) = %q, want %q", i, got, want)
		}
	}
}

func TestScheduleSpecFewSteps(t *testing.T) {
	if got := ScheduleSpec(2, 0); got != "pm:2:3:3" {
		t.Errorf("ScheduleSpec(2, 0) = %q: steps must be at least the depth", got)
	}
}

func TestScheduledEnv(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"PMEM_IS_PMEM_FORCE=1", "SCRY_TRACE=/dev/null", "SCRY_NO_LOADS=1", "SCRY_INERT=1"}, "PMEM_IS_PMEM_FORCE=1 SCRY_TRACE=/dev/null SCRY_SCHED=pm:2:3:9"},
		{[]string{"A=1", "SCRY_SCHED=pct:1:1"}, "A=1 SCRY_SCHED=pm:2:3:9"},
		{nil, "SCRY_SCHED=pm:2:3:9"},
	} {
		env := slices.Clone(tc.env)
		if got := strings.Join(scheduledEnv(env, "pm:2:3:9"), " "); got != tc.want {
			t.Errorf("scheduledEnv(%q) = %q, want %q", tc.env, got, tc.want)
		}
		if !slices.Equal(env, tc.env) {
			t.Errorf("scheduledEnv modified its argument: %q", env)
		}
	}
}
