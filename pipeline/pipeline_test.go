package pipeline_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// The slots program, simulated in Go by fakeRunner: a 4 KiB pool of 32 slots, slot i's data at
// 64*i and its valid flag at 2048+64*i (two cache lines). "put I V" writes the data, then the
// flag; "get" reads every flag and, only for a set flag, the slot's data, and prints I:V.
const (
	slotBase = 0x7f0000000000
	validOff = 2048
	poolSize = 4096
)

// Sites of the trace.
const (
	sData, sFlag           = 10, 12 // the stores
	sPersist               = 11     // flushes and fences of a correct put
	sFlush, sFence         = 14, 15 // the buggy put: both lines written back, ONE fence
	sLoadFlag, sBranch     = 21, 22 // get: the guard load and its branch
	sLoadData, sUnmapClose = 23, 30
)

// slotsTrace builds the trace of the slots program on ops, with the ordering bug (data and flag
// persisted by one fence) or without it.
func slotsTrace(t *testing.T, dir string, ops []string, buggy bool) (tracePath, workload string) {
	t.Helper()
	b := analysistest.New().Map(1, slotBase, poolSize).
		Branch(sBranch).Dep(sBranch, trace.DepValue, sLoadFlag).Dep(sLoadData, trace.DepControl, sBranch)
	store := func(site uint32, addr, v uint64) {
		b.Store(site, addr, 8)
		binary.LittleEndian.PutUint64(b.Events[len(b.Events)-1].Data, v)
	}
	valid := map[uint64]bool{}
	for k, op := range ops {
		b.OpBegin(uint64(k), op)
		var i, v uint64
		switch {
		case strings.HasPrefix(op, "put"):
			fmt.Sscanf(op, "put %d %d", &i, &v)
			data, flag := slotBase+64*i, slotBase+validOff+64*i
			if buggy {
				store(sData, data, v)
				store(sFlag, flag, 1)
				b.Flush(sFlush, trace.FlushCLWB, data).Flush(sFlush, trace.FlushCLWB, flag).Fence(sFence, trace.FenceSFENCE)
			} else {
				store(sData, data, v)
				b.Persist(sPersist, data, 8)
				store(sFlag, flag, 1)
				b.Persist(sPersist, flag, 8)
			}
			valid[i] = true
		case op == "get":
			for i := uint64(0); i < 32; i++ {
				b.Load(sLoadFlag, slotBase+validOff+64*i, 8)
				if valid[i] {
					b.Load(sLoadData, slotBase+64*i, 8)
				}
			}
		}
		b.OpEnd(uint64(k))
	}
	b.Unmap(1, sUnmapClose).Exit(0)
	return b.WriteFiles(t, dir, "slots", ops)
}

// fakeRunner runs the slots program in-process on an image; with check, its checker rejects an
// image with a valid slot whose data is zero.
type fakeRunner struct {
	check bool
	runs  atomic.Int64
}

func (f *fakeRunner) Target(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) exec.Outcome {
	f.runs.Add(1)
	img, err := os.ReadFile(image)
	if err != nil || len(img) < poolSize {
		return exec.Outcome{ExitCode: 1, Stderr: []byte(fmt.Sprint("bad image: ", err))}
	}
	word := func(off uint64) uint64 { return binary.LittleEndian.Uint64(img[off:]) }
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(stdin))
	for sc.Scan() {
		var i, v uint64
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "put"):
			fmt.Sscanf(line, "put %d %d", &i, &v)
			binary.LittleEndian.PutUint64(img[64*i:], v)
			binary.LittleEndian.PutUint64(img[validOff+64*i:], 1)
		case line == "get":
			for i := uint64(0); i < 32; i++ {
				if word(validOff+64*i) != 0 {
					fmt.Fprintf(&out, "%d:%d\n", i, word(64*i))
				}
			}
		}
	}
	return exec.Outcome{Stdout: out.Bytes()}
}

func (f *fakeRunner) HasChecker() bool { return f.check }

func (f *fakeRunner) Checker(ctx context.Context, image, dir string) (exec.Outcome, bool) {
	if !f.check {
		return exec.Outcome{}, false
	}
	img, err := os.ReadFile(image)
	if err != nil {
		return exec.Outcome{ExitCode: -1, Err: err}, true
	}
	for i := uint64(0); i < 32; i++ {
		if binary.LittleEndian.Uint64(img[validOff+64*i:]) != 0 && binary.LittleEndian.Uint64(img[64*i:]) == 0 {
			return exec.Outcome{ExitCode: 1, Stdout: []byte(fmt.Sprintf("slot %d valid without data\n", i))}, true
		}
	}
	return exec.Outcome{}, true
}

var ops = []string{"put 1 10", "put 2 20", "get"}

// target is the command line the reports name: an existing program (the test binary), which the
// fake runner never starts.
func target(t *testing.T) []string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{self, "{pool}"}
}

// TestExploreWithFakeRunner explores the slots traces through the pipeline with an in-process
// runner: no compiler, no process. The buggy trace's ordering violation is found at its fence,
// judged by output equivalence and by the checker, with the default strategies and with the
// invariants strategy (whose invariants the pipeline infers from the trace's loads); the fixed
// trace gives no finding.
func TestExploreWithFakeRunner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		buggy    bool
		check    bool
		strategy string
		symptom  string
	}{
		{"buggy, output", true, false, "", exec.SymptomOutput},
		{"buggy, checker", true, true, "", exec.SymptomChecker},
		{"buggy, invariants", true, false, "invariants", exec.SymptomOutput},
		{"fixed, output", false, false, "", ""},
		{"fixed, checker", false, true, "", ""},
		{"fixed, invariants", false, false, "invariants", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tr, wl := slotsTrace(t, dir, ops, tc.buggy)
			fr := &fakeRunner{check: tc.check}
			x := pipeline.Exploration{Options: explore.Options{Runner: fr, Jobs: 2}}
			if tc.strategy != "" {
				x.Strategies = []string{tc.strategy}
			}
			rep, err := pipeline.ExploreTrace(context.Background(), tr, wl, target(t), x)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case rep.Stats == nil:
				t.Fatal("no exploration statistics")
			case tc.strategy == "invariants" && rep.Stats.Invariants == 0:
				t.Fatalf("no invariant inferred: %+v", rep.Stats)
			case tc.strategy == "" && (fr.runs.Load() == 0 || rep.Stats.StatesTested == 0):
				t.Fatalf("nothing was run: %d runs, stats %+v", fr.runs.Load(), rep.Stats)
			}
			// The report counts the trace's events, as scry analyze's does.
			if a, err := pipeline.Analyze(tr, pipeline.Analysis{}, nil); err != nil {
				t.Error(err)
			} else if rep.Events == 0 || rep.Events != a.Events {
				t.Errorf("explore counted %d events, analyze %d", rep.Events, a.Events)
			}
			if tc.symptom == "" {
				if len(rep.Findings) != 0 {
					t.Fatalf("fixed trace: %d findings: %+v", len(rep.Findings), rep.Findings[0])
				}
				return
			}
			if len(rep.Findings) == 0 {
				t.Fatalf("no finding; stats %+v warnings %q", rep.Stats, rep.Warnings)
			}
			f := rep.Findings[0]
			if f.Kind != report.OrderingViolation || f.Crash.Symptom != tc.symptom || f.Location.Line != sFence {
				t.Errorf("finding %s (%s) at line %d, want %s (%s) at the fence (line %d): %s",
					f.Kind, f.Crash.Symptom, f.Location.Line, report.OrderingViolation, tc.symptom, sFence, f.Message)
			}
			var roles []string
			for _, r := range f.Related {
				roles = append(roles, fmt.Sprintf("%s@%d", r.Role, r.Line))
			}
			if !slices.Contains(roles, fmt.Sprintf("%s@%d", report.RolePersisted, sFlag)) || !slices.Contains(roles, fmt.Sprintf("%s@%d", report.RoleUnpersisted, sData)) {
				t.Errorf("related %q: want the flag persisted and the data not", roles)
			}
			if tc.strategy == "invariants" && (rep.Stats.Invariants == 0 || len(f.Crash.Invariants) == 0) {
				t.Errorf("invariants strategy: %d invariants, finding violates %q", rep.Stats.Invariants, f.Crash.Invariants)
			}
		})
	}
}

// TestExploreRejectsBadInput: a target without {pool} and a missing workload are errors, not
// empty reports.
func TestExploreRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	tr, wl := slotsTrace(t, dir, ops, true)
	x := pipeline.Exploration{Options: explore.Options{Runner: &fakeRunner{}}}
	if _, err := pipeline.ExploreTrace(context.Background(), tr, wl, target(t)[:1], x); err == nil || !strings.Contains(err.Error(), "{pool}") {
		t.Errorf("target without {pool}: %v", err)
	}
	if _, err := pipeline.ExploreTrace(context.Background(), tr, filepath.Join(dir, "none"), target(t), x); err == nil {
		t.Error("missing workload accepted")
	}
}

// brokenRunner fails every run of the target (exit 127, as a target that cannot be found in
// the runs' working directory), or only the checker.
type brokenRunner struct {
	fakeRunner
	checkerOnly bool
}

func (b *brokenRunner) Target(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) exec.Outcome {
	if b.checkerOnly {
		return b.fakeRunner.Target(ctx, image, stdin, dir, timeout)
	}
	return exec.Outcome{ExitCode: 127, Stderr: []byte("./prog: not found\n")}
}

func (b *brokenRunner) HasChecker() bool { return b.checkerOnly }

func (b *brokenRunner) Checker(ctx context.Context, image, dir string) (exec.Outcome, bool) {
	return exec.Outcome{ExitCode: 127, Stderr: []byte("sh: no-such-checker: not found\n")}, b.checkerOnly
}

// TestExploreConsistentImagesFirst: a target, or a checker, that fails on the consistent images
// is an error quoting it, not "0 failed".
func TestExploreConsistentImagesFirst(t *testing.T) {
	for _, tc := range []struct {
		name        string
		checkerOnly bool
		msg, quote  string
	}{
		{"target", false, "the program fails on a consistent image", "./prog: not found"},
		{"checker", true, "the checker fails on a consistent image", "no-such-checker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, wl := slotsTrace(t, t.TempDir(), ops, false)
			x := pipeline.Exploration{Options: explore.Options{Runner: &brokenRunner{checkerOnly: tc.checkerOnly}, Jobs: 2}}
			rep, err := pipeline.ExploreTrace(context.Background(), tr, wl, target(t), x)
			if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), tc.quote) {
				t.Fatalf("error %v, want %q quoting %q", err, tc.msg, tc.quote)
			}
			if rep == nil || len(rep.Findings) != 0 {
				t.Errorf("report %+v", rep)
			}
		})
	}
}

// TestExploreCancelled: an exploration whose context is cancelled by SIGTERM (exec.SignalContext)
// returns *exec.Interrupted and a report whose warnings say so.
func TestExploreCancelled(t *testing.T) {
	tr, wl := slotsTrace(t, t.TempDir(), ops, true)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&exec.Interrupted{Signal: syscall.SIGTERM})
	rep, err := pipeline.ExploreTrace(ctx, tr, wl, target(t), pipeline.Exploration{Options: explore.Options{Runner: &fakeRunner{}}})
	var ie *exec.Interrupted
	if !errors.As(err, &ie) || ie.Signal != syscall.SIGTERM {
		t.Fatalf("error %v, want *exec.Interrupted with SIGTERM", err)
	}
	if rep == nil || !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "interrupted by SIGTERM during crash exploration") }) {
		t.Errorf("report warnings do not say the exploration was interrupted: %+v", rep)
	}
}

// stuckRunner is the slots program whose runs, after the first few, never end by themselves:
// each waits for its context (a hang bound longer than the budget, a machine under load).
type stuckRunner struct {
	fakeRunner
	free int64 // runs that end normally
}

func (s *stuckRunner) Target(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) exec.Outcome {
	if s.runs.Load() < s.free {
		return s.fakeRunner.Target(ctx, image, stdin, dir, timeout)
	}
	<-ctx.Done()
	return exec.Outcome{ExitCode: -1, Err: ctx.Err()}
}

// TestExploreBudgetStopsRuns: the runs still going at the end of the time budget's schedule are
// stopped, their crash states are not judged and the report says so, and the exploration is no
// error: the final phase has its reserve whatever the runs cost. (The budget is real time; the
// test waits for its end, an event, and asserts no duration.)
func TestExploreBudgetStopsRuns(t *testing.T) {
	tr, wl := slotsTrace(t, t.TempDir(), ops, true)
	rep, err := pipeline.ExploreTrace(context.Background(), tr, wl, target(t),
		pipeline.Exploration{Options: explore.Options{Runner: &stuckRunner{free: 4}, Jobs: 2, TimeBudget: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool {
		return strings.Contains(w, "crash states were stopped at the end of the time budget of 2s")
	}) {
		t.Errorf("warnings %q do not say runs were stopped at the budget's end", rep.Warnings)
	}
}
