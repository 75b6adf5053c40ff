package explore

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
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

// TestOverBudget: a crash point is left out when the time needed by the points the walk has
// left (at the wall time per point of the batches judged) does not fit in the time left (the
// schedule's end less the time spent and the estimated time of the states queued); then a share
// left/needed of the points is explored, by credit. The cost per point is this walk's once one of
// its batches is judged.
func TestOverBudget(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name               string
		spent              time.Duration
		ranTime            time.Duration // the batches judged: their wall time, points and states
		ranPoints          int
		ranStates          int
		walkRanTime        time.Duration // the same, of this walk's batches
		walkRanPoints      int
		building           int // states in the batch being built
		walkLeft           int // points the walk has not reached (this one included)
		credit, wantCredit float64
		want               bool
	}{
		// ScheduleEnd(60s) = 58.2s; 0.1s per point
		{name: "nothing measured yet", spent: 10 * time.Second, walkLeft: 100000},
		{name: "the walk fits", spent: 10 * time.Second, ranTime: 10 * time.Second, ranPoints: 100, walkLeft: 482},
		{name: "half fits: no credit yet", spent: 10 * time.Second, ranTime: 10 * time.Second, ranPoints: 100, walkLeft: 964, want: true, wantCredit: 0.5},
		{name: "half fits: credit earned", spent: 10 * time.Second, ranTime: 10 * time.Second, ranPoints: 100, walkLeft: 964, credit: 0.5},
		{name: "the queued states count", spent: 10 * time.Second, ranTime: 10 * time.Second, ranPoints: 100, ranStates: 1000, building: 1000, walkLeft: 400, want: true, wantCredit: 0.955},
		{name: "fewer queued", spent: 10 * time.Second, ranTime: 10 * time.Second, ranPoints: 100, ranStates: 1000, building: 500, walkLeft: 400},
		{name: "this walk's cost per point", spent: 10 * time.Second, ranTime: 100 * time.Second, ranPoints: 100, walkRanTime: time.Second, walkRanPoints: 10, walkLeft: 400},
		{name: "every walk's before this one's", spent: 10 * time.Second, ranTime: 100 * time.Second, ranPoints: 100, walkLeft: 400, want: true, wantCredit: 0.1205},
		{name: "past the schedule's end", spent: 59 * time.Second, walkLeft: 1, credit: 5, wantCredit: 5, want: true},
	} {
		now := t0.Add(c.spent)
		e := &explorer{
			cfg:         &Config{TimeBudget: time.Minute, Now: func() time.Time { return now }},
			budgetStart: t0, ranTime: c.ranTime, ranStates: c.ranStates, ranPoints: c.ranPoints, batch: make([]*item, c.building),
			walkPoints: c.walkLeft, credit: c.credit, walkRanTime: c.walkRanTime, walkRanPoints: c.walkRanPoints,
		}
		if got := e.overBudget(); got != c.want || math.Abs(e.credit-c.wantCredit) > 1e-3 {
			t.Errorf("%s: overBudget() = %v, credit %.3f; want %v, %.3f", c.name, got, e.credit, c.want, c.wantCredit)
		}
	}
	e := &explorer{cfg: &Config{}}
	if e.overBudget() {
		t.Error("no budget: a point was left out")
	}
}

// TestPacing: a whole walk paced against a fake clock (each point explored costs cost, judged
// at once): the points explored end by the schedule's end; a walk that fits leaves nothing out;
// one twice too long explores about half its points, spread evenly over it (every tenth of the
// walk gets its share).
func TestPacing(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	const points = 1000
	for _, c := range []struct {
		cost        time.Duration
		budget      time.Duration
		min, max    int // points explored
		minPerTenth int
	}{
		{100 * time.Millisecond, 120 * time.Second, points, points, points / 10}, // 100s of 116.4s
		{100 * time.Millisecond, 50 * time.Second, 450, 485, 40},                 // 100s of 48.5s
		{time.Second, 100 * time.Second, 90, 97, 7},                              // 1000s of 97s
	} {
		now := t0
		e := &explorer{cfg: &Config{TimeBudget: c.budget, Now: func() time.Time { return now }}, budgetStart: t0, walkPoints: points}
		n := 0
		var tenth [10]int
		for i := 0; i < points; i++ {
			if !e.overBudget() {
				now = now.Add(c.cost)
				e.ranTime += c.cost
				e.ranPoints++
				e.ranStates++
				n++
				tenth[i*10/points]++
			}
			e.walkVisited++
		}
		if n < c.min || n > c.max || now.Sub(t0) > ScheduleEnd(c.budget) {
			t.Errorf("cost %v, budget %v: %d points explored in %v, want %d-%d by %v", c.cost, c.budget, n, now.Sub(t0), c.min, c.max, ScheduleEnd(c.budget))
		}
		if slices.Min(tenth[:]) < c.minPerTenth {
			t.Errorf("cost %v, budget %v: points explored per tenth of the walk %v, want at least %d each", c.cost, c.budget, tenth, c.minPerTenth)
		}
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
