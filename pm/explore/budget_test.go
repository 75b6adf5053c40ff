package explore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/workload"
)

// TestSchedule: the schedule ends a reserve before the budget (3 %, at least a second, at most a
// quarter), grants a quarter of what is left as a head start and shares the rest equally.
func TestSchedule(t *testing.T) {
	for _, c := range []struct {
		d      time.Duration
		pos, n int
		want   time.Duration
	}{
		{60 * time.Second, 99, 100, 58200 * time.Millisecond},      // the last operation: 60s less 3 %
		{60 * time.Second, 0, 1, 58200 * time.Millisecond},         // one operation
		{60 * time.Second, 1, 4, 58200 * time.Millisecond * 5 / 8}, // h + (1-h)·2/4 = 5/8
		{10 * time.Second, 9, 10, 9 * time.Second},                 // the reserve is at least a second
		{2 * time.Second, 0, 1, 1500 * time.Millisecond},           // and at most a quarter
		{time.Hour, 0, 2, 3492 * time.Second * 5 / 8},              // 3 % of an hour
	} {
		if got := Schedule(c.d, c.pos, c.n); got != c.want {
			t.Errorf("Schedule(%v, %d, %d) = %v, want %v", c.d, c.pos, c.n, got, c.want)
		}
	}
}

// TestOverBudget: a crash point is left out when the time spent since the budget began plus the
// estimated time of the states queued (the batch being built, what is left of the running one,
// at the wall time per state of the batches judged) is past the schedule of its operation.
func TestOverBudget(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ops := make([]string, 4)
	for _, c := range []struct {
		name      string
		spent     time.Duration
		ranTime   time.Duration // the batches judged: their wall time and states
		ranStates int
		building  int           // states in the batch being built
		running   int           // states in the running batch (0: none)
		runFor    time.Duration // how long it has run
		k         int
		want      bool
	}{
		// Schedule(60s, k, 4) = 58.2s·(1/4 + 3/4·(k+1)/4): 25.47s, 36.38s, 47.29s, 58.2s.
		{name: "on schedule", spent: 25 * time.Second, k: 0},
		{name: "behind for the first operation", spent: 26 * time.Second, k: 0, want: true},
		{name: "but not for the second", spent: 26 * time.Second, k: 1},
		{name: "nothing measured yet: the queue costs nothing", spent: 58 * time.Second, building: 1000, k: 3},
		{name: "the batch being built", spent: 50 * time.Second, ranTime: 10 * time.Second, ranStates: 1000, building: 900, k: 3, want: true},
		{name: "a smaller batch fits", spent: 50 * time.Second, ranTime: 10 * time.Second, ranStates: 1000, building: 800, k: 3},
		{name: "the running batch's rest", spent: 50 * time.Second, ranTime: 10 * time.Second, ranStates: 1000, building: 500, running: 500, runFor: time.Second, k: 3, want: true},
		{name: "the running batch almost done", spent: 50 * time.Second, ranTime: 10 * time.Second, ranStates: 1000, building: 500, running: 500, runFor: 4 * time.Second, k: 3},
		{name: "past the schedule's end", spent: 59 * time.Second, k: 3, want: true},
	} {
		now := t0.Add(c.spent)
		e := &explorer{
			cfg:         &Config{TimeBudget: time.Minute, Workload: workload.Workload{Ops: ops}, Now: func() time.Time { return now }},
			budgetStart: t0, ranTime: c.ranTime, ranStates: c.ranStates, batch: make([]*item, c.building),
		}
		if c.running > 0 {
			e.running = &runningBatch{items: make([]*item, c.running), began: now.Add(-c.runFor)}
		}
		if got := e.overBudget(c.k); got != c.want {
			t.Errorf("%s: overBudget(%d) = %v, want %v (queued %v)", c.name, c.k, got, c.want, e.queued())
		}
	}
	e := &explorer{cfg: &Config{Workload: workload.Workload{Ops: ops}}}
	if e.overBudget(0) {
		t.Error("no budget: a point was left out")
	}
}

// TestProgress: the exploration reports its crash points against the total counted before any
// run (all done at the end), then the findings' clustering, with the figures of the exploration
// (a fake clock: the times are 0).
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	var out strings.Builder
	testProgress = scryexec.NewProgressClock(&out, func() time.Time { return time.Unix(0, 0) })
	defer func() { testProgress = nil }()
	r := explore(t, dir, bin, "ordering.ops", 2, 5*time.Second)
	testProgress.Tick()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	st := r.Stats
	figures := fmt.Sprintf("%d states judged, %d failed, %d findings", st.StatesTested, st.Failures, len(r.Findings))
	if len(lines) != 2 {
		t.Fatalf("lines:\n%s\nwant the exploration's and the clustering's", out.String())
	}
	var done, total int
	rest, ok := strings.CutPrefix(lines[0], "scry: exploring: ")
	if _, err := fmt.Sscanf(rest, "%d of %d crash points", &done, &total); !ok || err != nil || done != total || total != st.CrashPoints || !strings.Contains(lines[0], figures) {
		t.Errorf("line %q: want all of the %d crash points done and %q", lines[0], st.CrashPoints, figures)
	}
	if want := "scry: clustering and placing the findings; " + figures; !strings.HasPrefix(lines[1], want) {
		t.Errorf("line %q, want %q", lines[1], want)
	}
}
