package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/record"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/workload"
)

// compile builds testdata/src with `scry cc` and the given defines.
func compile(t *testing.T, dir, src string, defs ...string) string {
	t.Helper()
	bin := filepath.Join(dir, strings.TrimSuffix(src, ".c")+strings.Join(defs, ""))
	args := append([]string{"cc", "-O1", "-mclwb", "-o", bin, filepath.Join("testdata", src)}, defs...)
	if out, err := exec.Command(testenv.Scry(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("scry cc %s: %v\n%s", src, err, out)
	}
	return bin
}

// explore records bin on workload (testdata/ops) with a fresh pool and explores its crash
// states with jobs workers.
func explore(t *testing.T, dir, bin, ops string, jobs int, timeout time.Duration) *Result {
	t.Helper()
	return exploreTrace(t, dir, bin, ops, recordRun(t, dir, bin, ops), jobs, timeout)
}

// recordRun records bin on testdata/ops with a fresh pool dir/pool into dir/run.trace.
func recordRun(t *testing.T, dir, bin, ops string) string {
	t.Helper()
	work := filepath.Join("testdata", ops)
	in, err := os.ReadFile(work)
	if err != nil {
		t.Fatal(err)
	}
	pool := filepath.Join(dir, "pool")
	tr := filepath.Join(dir, "run.trace")
	os.Remove(pool)
	res, err := record.Run(context.Background(), record.Options{
		Trace: tr, PMGlobs: []string{pool}, NoLoads: true, Args: []string{bin, pool},
		Stdin: bytes.NewReader(in),
	})
	if err != nil || res.Failed() {
		t.Fatalf("record %s: %v %v", bin, res, err)
	}
	return tr
}

// exploreTrace explores the trace tr of bin recorded by recordRun.
func exploreTrace(t *testing.T, dir, bin, ops, tr string, jobs int, timeout time.Duration) *Result {
	t.Helper()
	work := filepath.Join("testdata", ops)
	pool := filepath.Join(dir, "pool")
	target, err := scryexec.ParseTarget([]string{bin, "{pool}"})
	if err != nil {
		t.Fatal(err)
	}
	target.Timeout = timeout
	w, err := workload.Read(work)
	if err != nil {
		t.Fatal(err)
	}
	var runner Runner
	if testRunner != nil {
		runner = testRunner(ProcessRunner{Prog: target})
	}
	r, err := Run(context.Background(), Config{Trace: tr, Args: target.Args, Workload: w, Options: Options{
		Timeout: timeout, Runner: runner, Pool: pool, Jobs: jobs, Progress: testProgress,
		ClusterFailures: testClusterFailures, WindowStates: testWindowStates, BatchStates: testBatchStates, TimeBudget: testTimeBudget, NoPriority: testNoPriority, NoForkServer: testNoForkServer, NoConverge: testNoConverge,
		Start: testStart, Now: testNow, Strategies: testStrategies, Profiles: testProfiles,
	}})
	if err != nil {
		t.Fatalf("explore: %v", err)
	}
	return r
}

// checkLeftOut explores testdata/<name>.c on <name>.ops twice, as it is and with set's knobs
// (set returns their reset), and checks that the second run left out some crash points and
// explored the others (left counts those left out), and that a warning contains warning.
func checkLeftOut(t *testing.T, name string, set func() func(), left func(report.Stats) int, warning string) {
	t.Helper()
	dir := t.TempDir()
	bin := compile(t, dir, name+".c")
	all := explore(t, dir, bin, name+".ops", 2, 5*time.Second)
	defer set()()
	r := explore(t, dir, bin, name+".ops", 2, 5*time.Second)
	st := r.Stats
	if n := left(st); n == 0 || st.CrashPoints == 0 || st.CrashPoints+n != all.Stats.CrashPoints {
		t.Errorf("%d points explored, %d left out; %d in all", st.CrashPoints, n, all.Stats.CrashPoints)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, warning) }) {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// testClusterFailures and testBatchStates are exploreTrace's Options.ClusterFailures and
// BatchStates (0: the defaults).
var testClusterFailures, testBatchStates int

// testWindowStates is exploreTrace's Options.WindowStates.
var testWindowStates int

// testRunner, if set, makes exploreTrace's Options.Runner from the target's ProcessRunner.
var testRunner func(Runner) Runner

// testNoPriority is exploreTrace's Options.NoPriority.
var testNoPriority bool

// testNoForkServer is exploreTrace's Config.NoForkServer.
var testNoForkServer bool

// testNoConverge is exploreTrace's Config.NoConverge.
var testNoConverge bool

// testStrategies is exploreTrace's Options.Strategies (nil: the default).
var testStrategies []string

// testProfiles is exploreTrace's Options.Profiles (nil: ADR alone, unlabelled).
var testProfiles []px86.Profile

// testTimeBudget, testStart and testNow are exploreTrace's Options.TimeBudget, Start and Now (a
// fake clock: time stands still); testProgress its Exec.Progress.
var (
	testTimeBudget time.Duration
	testStart      time.Time
	testNow        func() time.Time
	testProgress   *scryexec.Progress
)

// TestProfiles explores the ordering and atomicity examples under persistency profiles: the
// ordering bug (a flag persisted before its data, both cached stores in program order) is ADR's
// alone and eADR, which persists cached stores in store order, runs fewer states and finds
// nothing; the atomicity bug (a program-order prefix fails) is every profile's.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	defer func() { testProfiles = nil }()
	all := []px86.Profile{px86.ADR, px86.EADR}
	for _, tc := range []struct {
		src      string
		profiles []px86.Profile
		want     string // kind and profiles of every finding, "" for none
	}{
		{"ordering.c", all, "ordering-violation [adr]"},
		{"ordering.c", []px86.Profile{px86.EADR}, ""},
		{"atomicity.c", all, "atomicity-violation [adr eadr]"},
		{"atomicity.c", []px86.Profile{px86.EADR}, "atomicity-violation [eadr]"},
	} {
		t.Run(fmt.Sprint(tc.src, tc.profiles), func(t *testing.T) {
			bin := compile(t, dir, tc.src)
			ops := strings.TrimSuffix(tc.src, ".c") + ".ops"
			testProfiles = nil
			adr := explore(t, dir, bin, ops, 2, 5*time.Second)
			testProfiles = tc.profiles
			r := explore(t, dir, bin, ops, 2, 5*time.Second)
			got := map[string]bool{}
			for _, f := range r.Findings {
				got[fmt.Sprint(f.Kind, " ", f.Profiles)] = true
			}
			if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || !got[tc.want]) {
				t.Errorf("findings %v, want only %q", got, tc.want)
			}
			for _, f := range adr.Findings {
				if f.Profiles != nil {
					t.Errorf("without profiles, finding %s is labelled %v", f.Kind, f.Profiles)
				}
			}
			// eADR's states are ADR's, fewer where ADR reorders (ordering.c).
			if n, m := r.Stats.StatesTested, adr.Stats.StatesTested; !slices.Contains(tc.profiles, px86.ADR) && (n > m || tc.src == "ordering.c" && n >= m) {
				t.Errorf("eADR alone tested %d states, ADR %d: want fewer", n, m)
			}
		})
	}
}

// TestClusterSampling: once a finding has failed on ClusterFailures states, the states of later
// batches that would fall in it are sampled; the findings stay the same.
func TestClusterSampling(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	defer func() { testClusterFailures, testBatchStates = 0, 0 }()
	// A batch per operation: the failures of one are known to the batch after the next (the
	// walk builds a batch while the one before runs).
	testBatchStates = 1
	testClusterFailures = -1
	all := explore(t, dir, bin, "ordering-long.ops", 2, 5*time.Second)
	testClusterFailures = 1
	sampled := explore(t, dir, bin, "ordering-long.ops", 2, 5*time.Second)
	if fmt.Sprint(kinds(all)) != fmt.Sprint(kinds(sampled)) || len(all.Findings) != len(sampled.Findings) {
		t.Errorf("findings %v with sampling, %v without", kinds(sampled), kinds(all))
	}
	if all.Stats.Sampled != 0 || sampled.Stats.Sampled == 0 || sampled.Stats.StatesTested+sampled.Stats.Sampled != all.Stats.StatesTested {
		t.Errorf("stats with sampling %+v, without %+v", sampled.Stats, all.Stats)
	}
}

// TestWindowStates: the states of one operation in one window are sampled once WindowStates of
// them were built, before any failed; the count says how many were left out.
func TestWindowStates(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	defer func() { testClusterFailures, testWindowStates = 0, 0 }()
	testClusterFailures = 1 << 20 // no sampling by failures
	all := explore(t, dir, bin, "ordering.ops", 2, 5*time.Second)
	testWindowStates = 1
	capped := explore(t, dir, bin, "ordering.ops", 2, 5*time.Second)
	if all.Stats.Sampled != 0 || capped.Stats.Sampled == 0 || capped.Stats.StatesTested+capped.Stats.Sampled != all.Stats.StatesTested {
		t.Errorf("stats capped %+v, uncapped %+v", capped.Stats, all.Stats)
	}
	if len(capped.Findings) == 0 {
		t.Errorf("no finding left with one state per window: %v (uncapped %v)", kinds(capped), kinds(all))
	}
}

func kinds(r *Result) map[report.Kind]int {
	m := map[report.Kind]int{}
	for _, f := range r.Findings {
		m[f.Kind]++
	}
	return m
}

func TestBuggyAndFixed(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		src, ops, defs string
		want           report.Kind // kind every finding has; "" for none
	}{
		{"ordering.c", "ordering.ops", "", report.OrderingViolation},
		{"ordering.c", "ordering.ops", "-DFIXED", ""},
		{"atomicity.c", "atomicity.ops", "", report.AtomicityViolation},
		{"atomicity.c", "atomicity.ops", "-DFIXED", ""},
	} {
		t.Run(tc.src+tc.defs, func(t *testing.T) {
			var defs []string
			if tc.defs != "" {
				defs = append(defs, tc.defs)
			}
			bin := compile(t, dir, tc.src, defs...)
			r := explore(t, dir, bin, tc.ops, 2, 5*time.Second)
			k := kinds(r)
			// Crash images from a base file per crash point, not the period's image and a
			// delta: the same results.
			maxPointDelta = -1
			r2 := explore(t, dir, bin, tc.ops, 2, 5*time.Second)
			maxPointDelta = MaxPointDelta
			if fmt.Sprint(kinds(r2)) != fmt.Sprint(k) || r2.Stats.StatesTested != r.Stats.StatesTested || r2.Stats.Failures != r.Stats.Failures {
				t.Errorf("with a file per crash point: findings %v, stats %+v; with deltas %v, %+v", kinds(r2), r2.Stats, k, r.Stats)
			}
			if tc.want == "" && len(r.Findings) != 0 || tc.want != "" && (len(k) != 1 || k[tc.want] == 0) {
				t.Fatalf("findings %v, want only %q", k, tc.want)
			}
			if r.Stats.StatesTested == 0 || r.Stats.CrashPoints == 0 {
				t.Errorf("stats %+v: nothing tested", r.Stats)
			}
			for _, f := range r.Findings {
				c := f.Crash
				if c == nil || c.Symptom != scryexec.SymptomOutput || f.Operation == nil || c.DiffCommitted == "" || c.DiffRolledBack == "" {
					t.Errorf("finding %+v: want an output symptom with both diffs", f)
				}
				roles := map[report.Role]int{}
				for _, rel := range f.Related {
					roles[rel.Role]++
				}
				if roles[report.RoleCrashPoint] != 1 || f.Kind == report.OrderingViolation && (roles[report.RolePersisted] == 0 || roles[report.RoleUnpersisted] == 0) {
					t.Errorf("related %+v", f.Related)
				}
				if f.Kind == report.OrderingViolation && c.Prefix || f.Kind == report.AtomicityViolation && !c.Prefix {
					t.Errorf("%s with prefix=%v", f.Kind, c.Prefix)
				}
			}
			// The ordering bug: the valid flag (line 37) persisted, the data (line 32) not.
			if tc.want == report.OrderingViolation {
				f := r.Findings[0]
				var p, u []int
				for _, rel := range f.Related {
					switch rel.Role {
					case report.RolePersisted:
						p = append(p, rel.Line)
					case report.RoleUnpersisted:
						u = append(u, rel.Line)
					}
				}
				if len(p) != 1 || p[0] != 37 || len(u) != 1 || u[0] != 32 {
					t.Errorf("persisted lines %v, unpersisted %v; want [37] and [32]", p, u)
				}
			}
		})
	}
}

func TestSymptoms(t *testing.T) {
	dir := t.TempDir()
	// A run longer than timeout is a hang: long enough that no run that ends is taken for one
	// on a loaded machine, short enough that the hanging runs do not make the test slow.
	for _, tc := range []struct {
		def, want string
		timeout   time.Duration
	}{{"-DHANG", scryexec.SymptomHang, 2 * time.Second}, {"-DCRASH", scryexec.SymptomSignal, time.Minute},
		// No timeout: after the first batch, hangs are runs longer than HangFactor times the
		// consistent runs (at least MinHangTimeout).
		{"-DHANG", scryexec.SymptomHang, 0}} {
		t.Run(fmt.Sprint(tc.def, tc.timeout), func(t *testing.T) {
			bin := compile(t, dir, "ordering.c", tc.def)
			ops := "ordering.ops"
			if tc.timeout == 0 {
				// Batches of one state, more operations: the runs after the first batch are
				// bounded by the consistent runs' times.
				ops = "ordering-long.ops"
				testBatchStates = 1
				defer func() { testBatchStates = 0 }()
			}
			r := explore(t, dir, bin, ops, 2, tc.timeout)
			for _, f := range r.Findings {
				t.Logf("%s: %s (%d failing states)", f.Crash.Symptom, f.Crash.Detail, f.Count)
			}
			if len(r.Findings) == 0 {
				t.Fatal("no finding")
			}
			for _, f := range r.Findings {
				if f.Kind != report.OrderingViolation || f.Crash.Symptom != tc.want {
					t.Errorf("%s with symptom %q, want %s with %q", f.Kind, f.Crash.Symptom, report.OrderingViolation, tc.want)
				}
			}
		})
	}
}

// TestMaxOperationBytes: once the crash states built since the batch began hold
// maxOperationBytes, the operation's further crash points are left out and the report says so.
func TestMaxOperationBytes(t *testing.T) {
	checkLeftOut(t, "atomicity", func() func() {
		maxOperationBytes, testBatchStates = 1, 1
		return func() { maxOperationBytes, testBatchStates = MaxOperationBytes, 0 }
	}, func(st report.Stats) int { return st.SkippedMemory }, "before it ended")
}

// TestHangTimeout: a run on a crash image is bounded by the target's timeout when it has one,
// else by HangFactor times the longest consistent run so far, between MinHangTimeout and
// exec.DefaultTimeout (0, the target's own bound, before any consistent run was timed).
func TestHangTimeout(t *testing.T) {
	for _, tc := range []struct {
		target, longest, want time.Duration
	}{
		{target: 2 * time.Second, longest: 50 * time.Millisecond, want: 0},
		{longest: 0, want: 0},
		{longest: 5 * time.Millisecond, want: MinHangTimeout},
		{longest: 300 * time.Millisecond, want: 3 * time.Second},
		{longest: 5 * time.Second, want: scryexec.DefaultTimeout},
	} {
		e := &explorer{target: scryexec.Target{Timeout: tc.target}, runs: &runs{longestConsistent: tc.longest}}
		if got := e.hangTimeout(); got != tc.want {
			t.Errorf("target timeout %v, longest consistent run %v: %v, want %v", tc.target, tc.longest, got, tc.want)
		}
	}
}

// TestJobsDeterministic checks that the findings do not depend on the number of workers.
func TestJobsDeterministic(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "atomicity.c")
	var outs [][]byte
	tr := recordRun(t, dir, bin, "atomicity.ops")
	for _, jobs := range []int{1, 2} {
		r := exploreTrace(t, dir, bin, "atomicity.ops", tr, jobs, 5*time.Second)
		st := r.Stats
		st.ElapsedSeconds, st.FirstFailureSeconds, st.StoppedEarlySeconds, st.ConvergedSeconds, st.Jobs = 0, 0, 0, 0, 0
		// Where the images went and the room left there, which other programs change.
		st.Images = ""
		b, err := json.Marshal(struct {
			F []report.Finding
			S report.Stats
		}{r.Findings, st})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("--jobs 1 and 2 differ:\n%s\n%s", outs[0], outs[1])
	}
}

// TestRebuild checks that the image Rebuild writes makes the target print what the finding
// says.
func TestRebuild(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	r := explore(t, dir, bin, "ordering.ops", 2, 5*time.Second)
	if len(r.Findings) == 0 {
		t.Fatal("no finding")
	}
	c := r.Findings[0].Crash
	img := filepath.Join(dir, "crash.img")
	if err := Rebuild(c, img, false, nil); err != nil {
		t.Fatal(err)
	}
	cmd := ReproduceCommand(c.Target, c.Env, c.Workload, c.Input-2, 4, img)
	out, err := exec.Command("/bin/sh", "-c", cmd).Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	if !strings.HasPrefix(string(out), "0 ") {
		t.Errorf("%s printed %q, want the unpersisted data (0) first", cmd, out)
	}
}

func TestReproduceCommand(t *testing.T) {
	env := []string{"PMEM_IS_PMEM_FORCE=1", "A=b c", "SCRY_TRACE=/dev/null"}
	if got := ReproduceCommand([]string{"/p", "x", "{pool}"}, env, "/w", 0, 3, "img"); got != "tail -n +2 '/w' | env 'PMEM_IS_PMEM_FORCE=1' 'A=b c' 'SCRY_TRACE=/dev/null' '/p' 'x' 'img'" {
		t.Errorf("ReproduceCommand = %s", got)
	}
}
