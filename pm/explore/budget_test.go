package explore

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/budget"
	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
)

// TestPace: a crash point is explored whole while the time needed by the estimated states of
// the points the walk has left (at the wall time per estimated state of the batches judged) fits
// in the time left (the schedule's end less the time spent and the estimated time of the states
// queued); when it does not, each point earns a share left/needed of its cost as credit and is
// explored whole when the credit covers it, in part (the states the credit covers) when its share
// is at least MinPointShare, else left out unless forced. The cost per state is this walk's once
// one of its batches is judged.
func TestPace(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name               string
		spent              time.Duration
		ranTime            time.Duration // the batches judged: their wall time, estimated cost and states
		ranCost            float64
		ranStates          int
		walkRanTime        time.Duration // the same, of this walk's batches
		walkRanCost        float64
		building           int     // states in the batch being built
		walkLeft           float64 // estimated states of the points the walk has not reached (this one included)
		cost               float64 // the point's
		force              bool
		credit, wantCredit float64
		want               float64
	}{
		// budget.ScheduleEnd(60s) = 58.2s; 0.1s per estimated state
		{name: "nothing measured yet", spent: 10 * time.Second, walkLeft: 100000, cost: 5, want: 5},
		{name: "the walk fits", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 482, cost: 5, want: 5},
		{name: "half fits: no credit yet", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 964, cost: 5, wantCredit: 2.5},
		{name: "half fits: credit earned (less the time it holds)", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 964, cost: 5, credit: 2.6, want: 5, wantCredit: 0.087},
		{name: "half fits: a big point in part", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 964, cost: 100, want: 50},
		{name: "a big point takes the credit", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 964, cost: 100, credit: 10.7, want: 59, wantCredit: 0.59},
		{name: "a share under the minimum", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 964, cost: 30, wantCredit: 15},
		{name: "forced on credit", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 964, cost: 30, force: true, want: MinPointShare, wantCredit: 15 - MinPointShare},
		{name: "forced: at most its cost", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 964, cost: 5, force: true, want: 5, wantCredit: -2.5},
		{name: "the point counts whole in the need", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, walkLeft: 0, cost: 1000, want: 482},
		{name: "the queued states count", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, ranStates: 1000, building: 1000, walkLeft: 400, cost: 1, wantCredit: 0.955},
		{name: "fewer queued", spent: 10 * time.Second, ranTime: 10 * time.Second, ranCost: 100, ranStates: 1000, building: 500, walkLeft: 400, cost: 1, want: 1},
		{name: "this walk's cost per state", spent: 10 * time.Second, ranTime: 100 * time.Second, ranCost: 100, walkRanTime: time.Second, walkRanCost: 10, walkLeft: 400, cost: 1, want: 1},
		{name: "every walk's before this one's", spent: 10 * time.Second, ranTime: 100 * time.Second, ranCost: 100, walkLeft: 400, cost: 1, wantCredit: 0.1205},
		{name: "past the schedule's end", spent: 59 * time.Second, walkLeft: 1, cost: 1, force: true, credit: 5, wantCredit: 5},
	} {
		now := t0.Add(c.spent)
		p := &pacer{
			budget: time.Minute, now: func() time.Time { return now }, testClock: true,
			budgetStart: t0, ranTime: c.ranTime, ranStates: c.ranStates, ranCost: c.ranCost,
			walkCost: c.walkLeft, credit: c.credit, walkRanTime: c.walkRanTime, walkRanCost: c.walkRanCost,
		}
		q := &runs{batch: make([]*item, c.building)}
		if got := p.pace(c.cost, c.force, q); got != c.want || math.Abs(p.credit-c.wantCredit) > 1e-3 {
			t.Errorf("%s: pace(%v, %v) = %v, credit %.3f; want %v, %.3f", c.name, c.cost, c.force, got, p.credit, c.want, c.wantCredit)
		}
	}
	p := &pacer{now: time.Now}
	if got := p.pace(1e9, false, &runs{}); got != 1e9 {
		t.Errorf("no budget: pace(1e9) = %v, want all of it", got)
	}
}

// TestPacing: a whole walk paced against a fake clock (each estimated state explored costs per,
// judged at once): the states explored end by the schedule's end; a walk that fits leaves
// nothing out; one that does not explores a share of its states spread evenly over it (every
// tenth of the walk gets its share), its expensive points (every hundredth point, of expensive
// states against the others' cheap) explored in part rather than whole or not at all.
func TestPacing(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	const points = 1000
	for _, c := range []struct {
		name             string
		per              time.Duration // per estimated state
		cheap, expensive float64       // estimated states per point
		budget           time.Duration
		min, max         float64 // states explored
		minPerTenth      float64
		partial          bool // the expensive points explored in part
	}{
		{"fits", 10 * time.Millisecond, 1, 1, 120 * time.Second, points, points, points / 10, false},                        // 10s of 116.4s
		{"uniform, twice too long", 100 * time.Millisecond, 1, 1, 50 * time.Second, 450, 485, 40, false},                    // 100s of 48.5s
		{"uniform, ten times", time.Second, 1, 1, 100 * time.Second, 90, 97, 7, false},                                      // 1000s of 97s
		{"mixed, fits", time.Millisecond, 17, 4000, 120 * time.Second, 56830, 56830, 5683, false},                           // 56.8s of 116.4s
		{"mixed, ten times", 10 * time.Millisecond, 17, 4000, 60 * time.Second, 5100, 5820, 510, true},                      // 568s of 58.2s
		{"mixed, a hundred times", 100 * time.Millisecond, 17, 4000, 60 * time.Second, 500, 582, 40, true},                  // 5683s of 58.2s
		{"mixed, the expensive points dominate", 10 * time.Millisecond, 17, 40000, 60 * time.Second, 5100, 5820, 510, true}, // 4168s of 58.2s
	} {
		now := t0
		e := &pacer{budget: c.budget, now: func() time.Time { return now }, testClock: true, budgetStart: t0}
		cost := func(i int) float64 {
			if i%100 == 50 {
				return c.expensive
			}
			return c.cheap
		}
		for i := range points {
			e.walkCost += cost(i)
		}
		n, partial, whole := 0.0, 0, 0
		var tenth [10]float64
		for i := range points {
			take := e.pace(cost(i), false, &runs{})
			if take > 0 {
				now = now.Add(time.Duration(take) * c.per)
				e.ranTime += time.Duration(take) * c.per
				e.ranCost += take
				e.ranStates += int(take)
				n += take
				tenth[i*10/points] += take
				if cost(i) == c.expensive && take < c.expensive {
					partial++
				}
				if cost(i) == c.expensive && take == c.expensive {
					whole++
				}
			}
			e.walkVisitedCost += cost(i)
		}
		if n < c.min || n > c.max || now.Sub(t0) > budget.ScheduleEnd(c.budget) {
			t.Errorf("%s: %.0f states explored in %v, want %.0f-%.0f by %v", c.name, n, now.Sub(t0), c.min, c.max, budget.ScheduleEnd(c.budget))
		}
		if slices.Min(tenth[:]) < c.minPerTenth {
			t.Errorf("%s: states explored per tenth of the walk %v, want at least %.0f each", c.name, tenth, c.minPerTenth)
		}
		if c.partial && (partial < points/100-1 || whole > 1) {
			t.Errorf("%s: %d expensive points explored in part, %d whole; want them all in part", c.name, partial, whole)
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

// TestPartialPoint: with a budget far too short for wide.ops (every run costs a second of a fake
// clock), the fill's wide crash point (57 states) is explored with a share of its states rather
// than left out, every operation path is explored, and the points explored and left out add up
// to all; a budget that fits explores every point whole.
func TestPartialPoint(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "wide.c")
	tr := recordRun(t, dir, bin, "wide.ops")
	all := exploreTrace(t, dir, bin, "wide.ops", tr, 1, 5*time.Second)
	clock := fakeClock(t, func(r Runner, clock *atomic.Int64) Runner { return clockRunner{r, clock, time.Second} })
	for _, c := range []struct {
		budget time.Duration
		all    bool
	}{
		{10 * time.Second, false},
		{20 * time.Second, false},
		{time.Hour, true},
	} {
		clock.Store(0)
		testTimeBudget = c.budget
		r := exploreTrace(t, dir, bin, "wide.ops", tr, 1, 5*time.Second)
		st := r.Stats
		if c.all {
			if st.SkippedBudget != 0 || st.PartialBudget != 0 || st.CrashPoints != all.Stats.CrashPoints || st.StatesTested != all.Stats.StatesTested {
				t.Errorf("budget %v: %d points explored (%d in part), %d left out, %d states; want all %d points, %d states", c.budget, st.CrashPoints, st.PartialBudget, st.SkippedBudget, st.StatesTested, all.Stats.CrashPoints, all.Stats.StatesTested)
			}
			continue
		}
		if st.PartialBudget == 0 || st.CrashPoints+st.SkippedBudget != all.Stats.CrashPoints {
			t.Errorf("budget %v: %d points explored (%d in part), %d left out; %d in all", c.budget, st.CrashPoints, st.PartialBudget, st.SkippedBudget, all.Stats.CrashPoints)
		}
		if st.PathsExplored != st.OperationPaths || st.OperationPaths != 2 {
			t.Errorf("budget %v: %d of %d operation paths explored, want 2 of 2", c.budget, st.PathsExplored, st.OperationPaths)
		}
		if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "explored with a share of their crash states") }) {
			t.Errorf("budget %v: warnings %q", c.budget, r.Warnings)
		}
	}
}

// TestOverrun: under a time budget a batch's runs are bounded by the schedule's time left when
// it begins less the estimated time of the crash points not yet reached, at least BatchOverrun
// times its own estimated time and a BudgetBatches-th of the schedule, a deadline on the wall clock (none on
// a test's clock); no bound without a budget or before a measure.
func TestOverrun(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name             string
		budget           time.Duration
		now              func() time.Time
		spent            time.Duration // when the batch began
		ranTime          time.Duration
		ranCost, cost    float64 // measured; the batch's
		allCost, visited float64
		want             time.Duration // 0: no bound
	}{
		{"no budget", 0, nil, 0, time.Second, 100, 100, 1000, 0, 0},
		{"nothing measured", 15 * time.Minute, nil, 0, 0, 0, 100, 1000, 0, 0},
		// ScheduleEnd 873s, 800s left; 10ms per state
		{"the time the rest leaves", 15 * time.Minute, nil, 73 * time.Second, time.Second, 100, 2000, 20000, 2000, 620 * time.Second},          // 800 - 180
		{"at least 4 times its own estimate", 15 * time.Minute, nil, 73 * time.Second, time.Second, 100, 2000, 100000, 2000, 80 * time.Second}, // 800 - 980 < 0; 4 x 10ms x 2000
		{"at least a twentieth", 15 * time.Minute, nil, 73 * time.Second, time.Second, 100, 20, 100000, 2000, 43650 * time.Millisecond},
	} {
		p := &pacer{budget: c.budget, now: c.now, testClock: c.now != nil, budgetStart: t0, ranTime: c.ranTime, ranStates: int(c.ranCost), ranCost: c.ranCost,
			allCost: c.allCost, visitedCost: c.visited}
		b := &runningBatch{began: t0.Add(c.spent), cost: c.cost}
		p.overrun(b, context.Background())
		var got time.Duration
		if b.ctx != nil {
			d, _ := b.ctx.Deadline()
			got = d.Sub(b.began)
			b.cancel()
		}
		if got != c.want {
			t.Errorf("%s: bound %v, want %v", c.name, got, c.want)
		}
	}
}

// slowStartRunner runs the target and advances a fake clock by a second per run, ten for the
// runs whose standard input begins with slow while the clock is under a hundred seconds (one
// kind of operation slow while a machine is loaded: its first batch's cost is not the one
// measured before it).
type slowStartRunner struct {
	Runner
	now  *atomic.Int64
	slow string
}

func (r slowStartRunner) Target(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) scryexec.Outcome {
	cost := time.Second
	if strings.HasPrefix(string(stdin), r.slow) && r.now.Load() < int64(100*time.Second) {
		cost = 10 * time.Second
	}
	defer r.now.Add(int64(cost))
	return r.Runner.Target(ctx, image, stdin, dir, timeout)
}

// TestSlowKind: wide.ops's fill re-executions cost ten times the others' at first (the whole
// unbudgeted run takes 162 s of the fake clock): a budget the run fits in (200 s, 300 s) leaves
// nothing out and judges every state; one it does not fit in (150 s) ends within 5 % of its end
// (the fill's states stopped by the overrun bound are retried in the time the other walks leave),
// every operation path explored.
func TestSlowKind(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "wide.c")
	tr := recordRun(t, dir, bin, "wide.ops")
	all := exploreTrace(t, dir, bin, "wide.ops", tr, 1, 5*time.Second)
	clock := fakeClock(t, func(r Runner, clock *atomic.Int64) Runner { return slowStartRunner{r, clock, "get\nset 4"} }) // after the fill
	for _, c := range []struct {
		budget time.Duration
		fits   bool
	}{
		{150 * time.Second, false},
		{200 * time.Second, true},
		{300 * time.Second, true},
	} {
		clock.Store(0)
		testTimeBudget = c.budget
		r := exploreTrace(t, dir, bin, "wide.ops", tr, 1, 5*time.Second)
		st, took := r.Stats, time.Duration(clock.Load())
		if c.fits && (st.SkippedBudget != 0 || st.PartialBudget != 0 || st.StatesTested != all.Stats.StatesTested || len(r.Warnings) != 0) {
			t.Errorf("budget %v: %d points left out, %d in part, %d states judged of %d; warnings %q", c.budget, st.SkippedBudget, st.PartialBudget, st.StatesTested, all.Stats.StatesTested, r.Warnings)
		}
		if !c.fits && took < c.budget*95/100 {
			t.Errorf("budget %v: ended at %v, more than 5 %% early (the states stopped at the fill's overrun bound not retried)", c.budget, took)
		}
		if took > c.budget || st.PathsExplored != st.OperationPaths || st.CrashPoints+st.SkippedBudget != all.Stats.CrashPoints {
			t.Errorf("budget %v: ended at %v, %d of %d paths, %d points explored and %d left out of %d", c.budget, took, st.PathsExplored, st.OperationPaths, st.CrashPoints, st.SkippedBudget, all.Stats.CrashPoints)
		}
	}
}

// TestRetry: the states whose runs an overrun bound stopped are kept by crash point (not a
// durability state's or a twin's, nor in the remainder walk), and so are the points the pacing
// left out; the remainder walk takes their operations once, after the last walk, while the
// schedule has time; at a point it rebuilds m
// of them spread evenly, no longer counted as stopped.
func TestRetry(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	now := t0.Add(10 * time.Second)
	clock := func() time.Time { return now }
	e := &pacer{budget: time.Minute, now: clock, testClock: true, budgetStart: t0}
	if e.remainderPass(4) != nil {
		t.Error("a remainder walk with nothing to retry")
	}
	for i := range 5 {
		e.keepRetry(&item{opsAt: opsAt{op: 2}, pointAt: pointAt{event: 7}, state: crash.State{K: []int{i}}})
	}
	e.keepRetry(&item{opsAt: opsAt{op: 1}, pointAt: pointAt{event: 3}, state: crash.State{K: []int{0}}, durability: true})
	e.keepRetry(&item{opsAt: opsAt{op: 1}, pointAt: pointAt{event: 3}, state: crash.State{K: []int{1}}, pairCheck: pairCheck{twin: &twin{}}})
	e.budgetStopped = 7
	if fmt.Sprint(len(e.retry), len(e.retry[7]), e.retryOp) != "1 5 map[2:true]" {
		t.Errorf("kept %v of operations %v", e.retry, e.retryOp)
	}
	e.keepSkipped(11, 0, 57) // a point the pacing left out
	pass := e.remainderPass(4)
	if fmt.Sprint(pass) != "[true false true false]" || !e.remainder || e.remainderPass(4) != nil || e.skipped[11] != 57 {
		t.Errorf("remainder pass %v (remainder %v), then another", pass, e.remainder)
	}
	keep, partDone := e.retryStates(7, 2)
	if got := fmt.Sprint(slices.Sorted(maps.Keys(keep))); got != "[[1] [3]]" || e.budgetStopped != 5 || len(e.retry[7]) != 0 || partDone {
		t.Errorf("retried %s, %d still stopped, %d kept at the point, done in part %v", got, e.budgetStopped, len(e.retry[7]), partDone)
	}
	e.keepRetry(&item{opsAt: opsAt{op: 2}, pointAt: pointAt{event: 9}, state: crash.State{K: []int{0}}})
	if len(e.retry[9]) != 0 {
		t.Error("a state stopped in the remainder walk kept for another")
	}
	e.keepThinned(9, 3, []string{"[5]"})
	if len(e.retry[9]) != 0 {
		t.Error("states left out of a point in the remainder walk kept for another")
	}

	// The states left out of a point explored in part (thinStates) are retried as well, without
	// counting as stopped runs; the point is no longer in part once they are all taken.
	thin := &pacer{budget: time.Minute, now: clock, testClock: true, budgetStart: t0}
	thin.keepRetry(&item{opsAt: opsAt{op: 1}, pointAt: pointAt{event: 5}, state: crash.State{K: []int{0}}})
	thin.keepThinned(5, 1, []string{"[1]", "[2]", "[0]"})
	thin.budgetStopped = 1
	if got := fmt.Sprint(thin.retry[5], thin.retryOp); got != "map[[0]:true [1]:false [2]:false] map[1:true]" {
		t.Errorf("kept %s", got)
	}
	if thin.remainderPass(4) == nil {
		t.Fatal("no remainder walk for the states left out of a point")
	}
	keep, partDone = thin.retryStates(5, 3)
	if len(keep) != 3 || thin.budgetStopped != 0 || !partDone {
		t.Errorf("retried %v: %d still stopped, done in part %v", keep, thin.budgetStopped, partDone)
	}
	late := &pacer{budget: time.Minute, now: func() time.Time { return t0.Add(time.Minute) }, testClock: true, budgetStart: t0}
	late.keepRetry(&item{opsAt: opsAt{op: 2}, pointAt: pointAt{event: 7}, state: crash.State{K: []int{0}}})
	if late.remainderPass(4) != nil {
		t.Error("a remainder walk past the schedule's end")
	}
}
