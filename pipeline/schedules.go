package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// Schedules. The operating system runs a multi-threaded program under one schedule of its
// threads, nearly the same every time; a bug that needs another interleaving (a thread that
// reads and persists a value another has stored and not yet made durable, PMRace ASPLOS'22 and
// Durinn OSDI'22) stays out of its trace. So `scry check` in crash mode records a program whose
// threads store to PM under Recording.Schedules schedules: the operating system's first, then
// controlled ones of the runtime's scheduler (SCRY_SCHED, native/runtime), each analysed and
// crash-explored on its own trace; the findings are merged by root cause (mergeSchedules), each
// naming the schedule that showed it first (report.Finding.Schedule). A program with one thread
// storing to PM is recorded once, as before.

// ScheduleEnv is the environment variable that runs an instrumented program under the runtime's
// controlled scheduler (its value is a spec: ScheduleSpec); record.ScheduleEnv.
const ScheduleEnv = record.ScheduleEnv

// DefaultSchedules is the number of schedules a multi-threaded program is recorded and explored
// under by default (the CLI's --schedules): the operating system's and three controlled ones (PCT
// of depth 1, the PM-aware policy, and a window schedule: nextSchedule), which multiplies the
// time of a check of such a program by about four.
const DefaultSchedules = 4

// ScheduleDepth is the depth of the PCT schedules ScheduleSpec makes after the first: the number
// of priority changes plus one (PCT, Burckhardt et al., ASPLOS'10 §3: a bug that needs d ordering
// constraints is found with probability at least 1/(n·k^(d-1)) per run, n threads, k scheduling
// points).
const ScheduleDepth = 3

// ScheduleSpec is the SCRY_SCHED value of controlled schedule i (from 1) of a run of about steps
// scheduling points, when it is not a window schedule (nextSchedule). The first is PCT of depth 1 with seed 1: random thread priorities and no
// priority change, which finds a bug of depth 1 (one ordering constraint: a thread that reads
// or persists another's value before that value is durable) with probability at least 1/n, n
// threads. The others are of depth ScheduleDepth, their priority changes drawn among the first
// steps points (at least ScheduleDepth): PCT with seed i for odd i, the PM-aware policy (PCT
// that also gives the turn away right after a store not yet durable) with seed i for even i.
// PCT's bound holds when steps is the run's number of points, which the runtime counts under
// its scheduler only: runSchedules passes the count of the previous controlled run.
func ScheduleSpec(i, steps int) string {
	if i <= 1 {
		return "pct:1:1"
	}
	policy := "pct"
	if i%2 == 0 {
		policy = "pm"
	}
	return fmt.Sprintf("%s:%d:%d:%d", policy, i, ScheduleDepth, max(steps, ScheduleDepth))
}

// scheduleRun is what one schedule of a check gave: its spec ("" the operating system's), its
// trace, how the recorded program ended, the report of its analysis and exploration with their
// errors, and the number of threads that stored to PM.
type scheduleRun struct {
	spec       string
	trace      string
	res        *record.Result
	rep        *report.Report
	aerr, xerr error
	storers    int
	points     int // an estimate of the scheduling points: checkFacts.points, or schedPoints
	// windows are the window candidates of the trace (the first controlled schedule's only).
	windows []windowCandidate
	// witnesses are the schedule witnesses of the trace (the first controlled schedule's
	// only: witness.go); witness is the one this run is, when it is one.
	witnesses []witness
	witness   *witness
}

// runSchedules runs the check under the operating system's schedule, then, when the program has
// two threads or more that store to PM, under Recording.Schedules-1 controlled ones (not for a
// black-box recording, whose Valgrind tool has no scheduler), each with a pool of its own in dir
// and a trace of its own next to tracePath (TRACE.sched-I). With a time budget, schedule i of n
// explores until (i+1)/n of it has passed. It stops after a schedule that was interrupted.
// Errors: those that stop the check (runSchedule's).
func (c *Check) runSchedules(ctx context.Context, dir, pool, tracePath string) ([]*scheduleRun, error) {
	schedules := func(storers int) int {
		// A server session (--client) runs as the operating system schedules it: the
		// controlled scheduler would also serialise the threads that wait for requests.
		if storers > 1 && c.Recording.Schedules > 1 && !c.Recording.BlackBox && c.Explore.Client == "" {
			return c.Recording.Schedules
		}
		return 1
	}
	budget := c.Explore.TimeBudget
	first, err := c.runSchedule(ctx, "", 0, dir, pool, tracePath, func(storers int) time.Duration {
		return budget / time.Duration(schedules(storers))
	})
	if err != nil {
		return nil, err
	}
	runs := []*scheduleRun{first}
	n := schedules(first.storers)
	var windows []windowCandidate
	witnesses := map[string]witness{} // window spec: the witness it runs
	for i := 1; i < n && !interrupted(runs[len(runs)-1]); i++ {
		share := budget * time.Duration(i+1) / time.Duration(n)
		want := 0
		if i == 1 {
			want = windowSchedules(n)
		}
		spec := nextSchedule(i, runs[len(runs)-1].points, &windows)
		run, err := c.runSchedule(ctx, spec, want, dir, filepath.Join(dir, fmt.Sprintf("pool-%d", i)),
			ScheduleTrace(tracePath, i), func(int) time.Duration { return share })
		if err != nil {
			return nil, err
		}
		if w, ok := witnesses[spec]; ok {
			run.witness = &w
		}
		runs = append(runs, run)
		if i == 1 {
			windows = witnessFirst(run.witnesses, run.windows, witnesses)
		}
	}
	return runs, nil
}

// witnessFirst returns the window candidates a check runs: the schedule witnesses first (each
// proves, over the trace, a schedule that breaks a must-persist-before relation; witness.go),
// then the window candidates that are not witnesses. It notes each witness's spec in byspec.
func witnessFirst(ws []witness, windows []windowCandidate, byspec map[string]witness) []windowCandidate {
	var out []windowCandidate
	base := ScheduleSpec(1, 0)
	for _, w := range ws {
		out = append(out, w.windowCandidate)
		byspec[w.Spec(base)] = w
	}
	for _, c := range windows {
		if !slices.ContainsFunc(out, func(o windowCandidate) bool { return o.Thread == c.Thread && o.Store == c.Store }) {
			out = append(out, c)
		}
	}
	return out
}

// windowSchedules is the number of window schedules among n (the operating system's included):
// the odd controlled schedules from the third on (nextSchedule).
func windowSchedules(n int) int {
	return max(0, (n-2)/2)
}

// nextSchedule is the spec of controlled schedule i (from 1) of a recording: the next of windows
// (the window candidates of schedule 1's trace, its schedule witnesses first, then the others
// best first: witnessFirst; it is taken off the list) for odd i from 3 on, else, or when none is
// left, ScheduleSpec(i, steps). With the default of 4 schedules that is the operating system's,
// PCT of depth 1, the PM-aware policy, and the first witness or best window of the PCT schedule
// (PCT of depth 3 when it has neither).
func nextSchedule(i, steps int, windows *[]windowCandidate) string {
	if i >= 3 && i%2 == 1 && len(*windows) > 0 {
		w := (*windows)[0]
		*windows = (*windows)[1:]
		return w.Spec(ScheduleSpec(1, 0))
	}
	return ScheduleSpec(i, steps)
}

// traceWindows returns up to n window candidates of the trace at path, its schedule witnesses
// first (witnessFirst; nil when it cannot be read: a recording then goes on with ScheduleSpec's
// schedules).
func traceWindows(ctx context.Context, path string, n int) []windowCandidate {
	if n <= 0 {
		return nil
	}
	tf, err := trace.OpenFile(path)
	if err != nil {
		return nil
	}
	defer tf.Close()
	keep := map[*analysis.Analyzer]any{}
	if _, err := analysis.Run(tf.Reader, []*analysis.Analyzer{schedWindowsAnalyzer}, analysis.Config{Keep: keep}); err != nil {
		return nil
	}
	w, _ := keep[schedWindowsAnalyzer].(*schedWindows)
	if w == nil {
		return nil
	}
	ws, _, _ := findWitnesses(ctx, tf, n)
	return witnessFirst(ws, w.best(n), map[string]witness{})
}

// interrupted reports whether a schedule's recording or exploration was stopped by a signal.
func interrupted(r *scheduleRun) bool {
	var ie *exec.Interrupted
	return r.res.Interrupted != 0 || errors.As(r.xerr, &ie)
}

// mergeSchedules combines the reports of the schedules of one check (the operating system's
// first) into one, and returns it with the first analysis and exploration errors. A finding of
// several schedules is the first schedule's (its counts summed over them), keyed by its root
// cause: a crash finding by its cluster (Crash.ID), a trace finding by its kind and location.
// Each finding names the schedule that showed it first (report.Finding.Schedule). A performance
// finding stands only when every schedule has it: a flush or fence redundant in one schedule may
// be needed in another, and its message says so. The statistics add up, with Stats.Schedules
// the number of schedules; the warnings are those of any schedule, each once.
func mergeSchedules(runs []*scheduleRun) (*report.Report, error, error) {
	first := runs[0]
	if len(runs) == 1 {
		return first.rep, first.aerr, first.xerr
	}
	rep := first.rep
	byKey := map[string]int{}
	var merged []report.Finding
	perf := map[string]int{} // performance findings' keys: the schedules that have them
	var aerr, xerr error
	for _, r := range runs {
		aerr, xerr = firstErr(aerr, r.aerr), firstErr(xerr, r.xerr)
		seen := map[string]bool{}
		for _, f := range r.rep.Findings {
			k := findingKey(&f)
			if f.Class == report.Performance && !seen[k] {
				seen[k] = true
				perf[k]++
			}
			if i, ok := byKey[k]; ok {
				merged[i].Count += f.Count
				merged[i].Profiles = report.UnionProfiles(merged[i].Profiles, f.Profiles)
				continue
			}
			f.Schedule = r.spec
			byKey[k] = len(merged)
			merged = append(merged, f)
		}
		if r != first {
			for _, w := range r.rep.Warnings {
				if !slices.Contains(rep.Warnings, w) {
					rep.Warnings = append(rep.Warnings, w)
				}
			}
			rep.Events += r.rep.Events
			if r.rep.Stats != nil {
				if rep.Stats == nil {
					rep.Stats = &report.Stats{}
				}
				elapsed := rep.Stats.ElapsedSeconds + r.rep.Stats.ElapsedSeconds // one after the other
				addStats(rep.Stats, r.rep.Stats, false)
				rep.Stats.ElapsedSeconds = elapsed
			}
		}
	}
	kept := merged[:0]
	for _, f := range merged {
		if f.Class == report.Performance {
			if perf[findingKey(&f)] < len(runs) {
				continue // needed in some schedule
			}
			f.Message += fmt.Sprintf(" (in each of the %d thread schedules explored)", len(runs))
		}
		kept = append(kept, f)
	}
	rep.Findings = kept
	var witnessed []report.Witness
	for _, r := range runs {
		if r.witness == nil {
			continue
		}
		w := report.Witness{Schedule: r.spec, Store: r.witness.store, Load: r.witness.load, Dependent: r.witness.dependent}
		for _, f := range rep.Findings {
			if f.Schedule == r.spec {
				w.Findings++
			}
		}
		witnessed = append(witnessed, w)
	}
	rep.Witnesses = witnessed
	if rep.Stats != nil {
		rep.Stats.Schedules = len(runs)
		rep.Stats.Findings = 0
		for _, f := range kept {
			if f.Crash != nil {
				rep.Stats.Findings++
			}
		}
	}
	return rep, aerr, xerr
}

// findingKey is a finding's root cause across schedules (mergeSchedules).
func findingKey(f *report.Finding) string {
	if f.Crash != nil {
		return "crash " + f.Crash.ID
	}
	return string(f.Kind) + " " + f.Location.Key()
}

// firstErr is the first non-nil error of a and b.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// ScheduleTrace is the path of the trace of schedule i (from 0, the operating system's) of a
// recording whose first trace is at tracePath: tracePath itself for 0, TRACE.sched-I after.
func ScheduleTrace(tracePath string, i int) string {
	if i == 0 {
		return tracePath
	}
	return fmt.Sprintf("%s.sched-%d", tracePath, i)
}

// RecordedSchedule is one trace RecordSchedules wrote: its path, its schedule's SCRY_SCHED spec
// ("" the operating system's) and how the program ended.
type RecordedSchedule struct {
	Trace  string
	Spec   string
	Result *record.Result
}

// RecordSchedules is `scry record --schedules N`: it records rc's program n times, under the
// operating system's schedule to tracePath and under controlled schedules 1..n-1
// (ScheduleSpec, the steps of each from the previous controlled trace's count) to
// ScheduleTrace(tracePath, i), each with a fresh pool in a temporary directory in place of
// {pool} in rc.Args (removed at the end), so that the traces can be explored apart, in shards,
// and their reports merged (`scry merge`, MergeReports). It stops after a run that failed or
// was interrupted, and returns what was recorded so far. Errors: n < 2, no {pool} in the
// arguments, a run that could not start (Record's), the temporary directory.
func RecordSchedules(ctx context.Context, rc Recording, tracePath string, n int) ([]RecordedSchedule, error) {
	if n < 2 {
		return nil, fmt.Errorf("RecordSchedules: %d schedules, want 2 or more", n)
	}
	if !HasPool(rc.Args) {
		return nil, fmt.Errorf("--schedules %d records the program %d times, each on a fresh pool: put %s in its arguments where the pool's path goes", n, n, exec.PoolPlaceholder)
	}
	dir, err := os.MkdirTemp("", "scry-record-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var out []RecordedSchedule
	steps := 0
	var windows []windowCandidate
	for i := range n {
		spec := ""
		if i > 0 {
			spec = nextSchedule(i, steps, &windows)
		}
		r := rc
		pool := filepath.Join(dir, fmt.Sprintf("pool-%d", i))
		r.Args = make([]string, len(rc.Args))
		for j, a := range rc.Args {
			r.Args[j] = strings.ReplaceAll(a, exec.PoolPlaceholder, pool)
		}
		if spec != "" {
			r.Env = append(slices.Clone(rc.Env), ScheduleEnv+"="+spec)
		}
		path := ScheduleTrace(tracePath, i)
		res, err := Record(ctx, r, path)
		if err != nil {
			return out, err
		}
		out = append(out, RecordedSchedule{Trace: path, Spec: spec, Result: res})
		if res.Failed() || res.Interrupted != 0 {
			return out, nil
		}
		if spec != "" {
			if s, ok := readSchedule(path); ok && s.End {
				steps = int(min(s.Points, 1<<40))
			}
		}
		if i == 1 {
			windows = traceWindows(ctx, path, windowSchedules(n))
		}
	}
	return out, nil
}

// readSchedule reads the trace at path to its end and returns its last SCHEDULE record (the one
// with the run's counts); ok false when it has none or cannot be read.
func readSchedule(path string) (trace.Schedule, bool) {
	r, err := trace.Open(path)
	if err != nil {
		return trace.Schedule{}, false
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	return r.Schedule()
}
