package explore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// TestOrderOf: operations are grouped by the path of their busy period; every path's first
// period goes in the first walk, the next in the second, then two, four, ... per walk, in spread
// order (the first, the middle, the quartiles); overlapping operations stay in one walk; the
// last walk takes the rest.
func TestOrderOf(t *testing.T) {
	seq := func(n int) []int { // one operation per period
		p := make([]int, n)
		for k := range p {
			p[k] = k
		}
		return p
	}
	tests := []struct {
		name     string
		paths    []string
		period   []int
		maxWalks int
		walk     string
		walks    int
		distinct int
	}{
		{"none", nil, nil, 8, "[]", 0, 0},
		{"one path", []string{"a", "a", "a", "a"}, seq(4), 8, "[0 2 1 2]", 3, 1},
		// a's periods 0 1 2 3 5 6 in spread order: 0, 5, 2, 1, 6, 3 (ranks 0..5: walks 0 1 2 2 3 3)
		{"rare paths first", []string{"a", "a", "a", "a", "b", "a", "a", "c"}, seq(8), 8, "[0 2 2 3 0 1 3 0]", 4, 3},
		{"the last walk takes the rest", []string{"a", "a", "a", "a", "a"}, seq(5), 2, "[0 1 1 1 1]", 2, 1},
		{"no PM operations are a path", []string{"", "a", "", "a"}, seq(4), 8, "[0 0 1 1]", 2, 2},
		// operations 0-1 and 2-3 overlap: both periods are the path a·b, and stay whole
		{"busy periods kept", []string{"a", "b", "a", "b", "a"}, []int{0, 0, 2, 2, 4}, 8, "[0 0 1 1 0]", 2, 2},
		// a period a·b is not the period b·a nor two periods a and b
		{"a period's path is its sequence", []string{"a", "b", "b", "a", "a", "b"}, []int{0, 0, 2, 2, 4, 5}, 8, "[0 0 0 0 0 0]", 1, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := orderOf(tc.paths, tc.period, tc.maxWalks)
			if got := fmt.Sprint(s.walk); got != tc.walk || s.walks != tc.walks || s.paths != tc.distinct {
				t.Errorf("walks %s (%d), %d paths; want %s (%d), %d", got, s.walks, s.paths, tc.walk, tc.walks, tc.distinct)
			}
			for w, pass := range s.passes() {
				for k, in := range pass {
					if in != (s.walk[k] == w) {
						t.Errorf("pass %d has operation %d: %v, its walk is %d", w, k, in, s.walk[k])
					}
				}
			}
			if again := orderOf(tc.paths, tc.period, tc.maxWalks); fmt.Sprint(again) != fmt.Sprint(s) {
				t.Errorf("not deterministic: %v then %v", s, again)
			}
		})
	}
}

// TestSpread: a path's periods are taken by the bit-reversal of their index.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{
		{nil, "[]"},
		{[]int{7}, "[7]"},
		{[]int{1, 2}, "[1 2]"},
		{[]int{0, 1, 2}, "[0 2 1]"},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, "[0 4 2 6 1 5 3 7]"},
		{[]int{10, 11, 12, 13, 14}, "[10 14 12 11 13]"},
	} {
		if got := fmt.Sprint(spread(c.in)); got != c.want {
			t.Errorf("spread(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestPathKey: a path's key is its set of (site, call stack) pairs, whatever the order they
// were seen in.
func TestPathKey(t *testing.T) {
	set := func(ids ...uint64) map[uint64]bool {
		m := map[uint64]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	a, b, c := pathKey(set(1<<32|3, 2<<32|3, 5)), pathKey(set(5, 2<<32|3, 1<<32|3)), pathKey(set(1<<32|3, 2<<32|4, 5))
	if a != b || a == c || pathKey(nil) != "" || pathKey(set(5)) == "" {
		t.Errorf("keys %x %x %x", a, b, c)
	}
}

// TestPriorityWalks: exploring in rounds of operation paths finds the same findings, states and
// points as one walk in trace order.
func TestPriorityWalks(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	defer func() { testNoPriority = false }()
	one := explore(t, dir, bin, "ordering-long.ops", 2, 5*time.Second)
	testNoPriority = false
	two := explore(t, dir, bin, "ordering-long.ops", 2, 5*time.Second)
	if fmt.Sprint(kinds(one)) != fmt.Sprint(kinds(two)) || len(one.Findings) != len(two.Findings) {
		t.Errorf("findings %v in priority order, %v in trace order", kinds(two), kinds(one))
	}
	a, b := one.Stats, two.Stats
	if a.CrashPoints != b.CrashPoints || a.StatesTested != b.StatesTested || a.Skipped != b.Skipped || a.OracleRuns != b.OracleRuns {
		t.Errorf("stats in priority order %+v, in trace order %+v", b, a)
	}
	if b.OperationPaths != 1 || b.PathsExplored != 1 {
		t.Errorf("%d of %d operation paths explored, want 1 of 1 (every set)", b.PathsExplored, b.OperationPaths)
	}
}

// fakeClock makes the exploration's clock a fake one (Options.Now) for the rest of the test:
// it starts at a fixed time and advances only as the runner wrap makes of the exploration's
// runner advances it. It returns the clock (nanoseconds since the start).
func fakeClock(t *testing.T, wrap func(Runner, *atomic.Int64) Runner) *atomic.Int64 {
	clock := new(atomic.Int64)
	testStart = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	testNow = func() time.Time { return testStart.Add(time.Duration(clock.Load())) }
	testRunner = func(r Runner) Runner { return wrap(r, clock) }
	t.Cleanup(func() { testStart, testNow, testTimeBudget, testRunner = time.Time{}, nil, 0, nil })
	return clock
}

// clockRunner runs the target and advances a fake clock by cost per run.
type clockRunner struct {
	Runner
	now  *atomic.Int64 // nanoseconds since the budget began
	cost time.Duration
}

func (r clockRunner) Target(ctx context.Context, image string, stdin []byte, dir string, timeout time.Duration) scryexec.Outcome {
	defer r.now.Add(int64(r.cost))
	return r.Runner.Target(ctx, image, stdin, dir, timeout)
}

// TestRareOperationFirst: with a budget far too short for the workload (every run costs a
// second of a fake clock, the budget is a minute), the one "drop" after thirty "set"s still gets
// its crash points explored and its atomicity violation found, every operation path is
// explored, and the points left out are spread over the sets; a budget that fits leaves nothing
// out.
func TestRareOperationFirst(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "rare.c")
	tr := recordRun(t, dir, bin, "rare.ops")
	all := exploreTrace(t, dir, bin, "rare.ops", tr, 1, 5*time.Second)
	clock := fakeClock(t, func(r Runner, clock *atomic.Int64) Runner { return clockRunner{r, clock, time.Second} })
	for _, c := range []struct {
		budget time.Duration
		all    bool
	}{
		{time.Minute, false},
		{time.Hour, true},
	} {
		clock.Store(0)
		testTimeBudget = c.budget
		r := exploreTrace(t, dir, bin, "rare.ops", tr, 1, 5*time.Second)
		st := r.Stats
		if c.all {
			if st.SkippedBudget != 0 || st.CrashPoints != all.Stats.CrashPoints {
				t.Errorf("budget %v: %d points explored, %d left out; want all %d", c.budget, st.CrashPoints, st.SkippedBudget, all.Stats.CrashPoints)
			}
			continue
		}
		if st.SkippedBudget == 0 || st.CrashPoints+st.SkippedBudget != all.Stats.CrashPoints {
			t.Errorf("budget %v: %d points explored, %d left out; %d in all", c.budget, st.CrashPoints, st.SkippedBudget, all.Stats.CrashPoints)
		}
		if st.OperationPaths != 2 || st.PathsExplored != 2 {
			t.Errorf("budget %v: %d of %d operation paths explored, want 2 of 2", c.budget, st.PathsExplored, st.OperationPaths)
		}
		drop := slices.ContainsFunc(r.Findings, func(f report.Finding) bool {
			return f.Kind == report.AtomicityViolation && f.Operation.Index == 30
		})
		if !drop {
			t.Errorf("budget %v: no atomicity violation in the drop (operation 30): %v", c.budget, kinds(r))
		}
	}
}

// TestForkServer: runs through fork servers (the program built with scry cc stops before main
// and forks per image) judge every state as runs by exec do.
func TestForkServer(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	defer func() { testNoForkServer = false }()
	testNoForkServer = true
	byExec := explore(t, dir, bin, "ordering-long.ops", 2, 5*time.Second)
	testNoForkServer = false
	served := explore(t, dir, bin, "ordering-long.ops", 2, 5*time.Second)
	if served.Stats.Runs != "runs through fork servers" || byExec.Stats.Runs != "runs by exec (--no-fork-server)" {
		t.Errorf("runs: %q with fork servers, %q without", served.Stats.Runs, byExec.Stats.Runs)
	}
	a, b := byExec.Stats, served.Stats
	a.ElapsedSeconds, b.ElapsedSeconds, a.FirstFailureSeconds, b.FirstFailureSeconds, a.Runs, b.Runs = 0, 0, 0, 0, "", ""
	a.StoppedEarlySeconds, b.StoppedEarlySeconds, a.ConvergedSeconds, b.ConvergedSeconds = 0, 0, 0, 0
	// Where the images go is the same; the free space it names changes with what else runs.
	if strings.Split(a.Images, " (")[0] != strings.Split(b.Images, " (")[0] {
		t.Errorf("images %q by exec, %q through fork servers", a.Images, b.Images)
	}
	a.Images, b.Images = "", ""
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(kinds(byExec)) != fmt.Sprint(kinds(served)) {
		t.Errorf("by exec %v %+v, through fork servers %v %+v", kinds(byExec), a, kinds(served), b)
	}
}

// TestThinStates: the crash point before wide.c's fill fence (40 unpersisted cache lines: 41
// program-order prefixes, 16 random states) costs 57 states; a share of m of its states is
// the prefixes evenly spread (the middles of m equal stretches of the prefix lengths) while m
// is at most 41, then every prefix and the other states; all of them past their number.
func TestThinStates(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "wide.c")
	tr := recordRun(t, dir, bin, "wide.ops")
	var strategies []*crash.Strategy
	for _, n := range DefaultStrategies {
		strategies = append(strategies, crash.StrategyByName(n))
	}
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var o crash.Options
	widest := 0
	_, err = crash.Walk(r, o, func(cp *crash.CrashPoint) error {
		sp := cp.Space
		if sp.Units() <= widest {
			return nil
		}
		widest = sp.Units()
		if widest < 40 {
			return nil
		}
		if got := pointCost(sp, strategies, o); got != 57 {
			t.Errorf("pointCost = %v, want 57 (41 prefixes, 16 random)", got)
		}
		for _, c := range []struct {
			m       int
			n       int   // states chosen
			lengths []int // their prefix lengths, when they are all prefixes
		}{
			{1, 1, []int{20}},
			{2, 2, []int{10, 30}},
			{4, 4, []int{5, 15, 25, 35}},
			{41, 41, nil},
			{50, 50, nil},
			{57, 57, nil},
			{1000, 57, nil},
		} {
			keep, left := thinStates(sp, strategies, o, c.m)
			if all, _ := thinStates(sp, strategies, o, 1<<20); len(keep)+len(left) != len(all) {
				t.Errorf("thinStates(%d): %d states kept and %d left, of %d", c.m, len(keep), len(left), len(all))
			}
			for _, key := range left {
				if keep[key] {
					t.Errorf("thinStates(%d): state %s both kept and left", c.m, key)
				}
			}
			if len(keep) != c.n {
				t.Errorf("thinStates(%d): %d states, want %d", c.m, len(keep), c.n)
			}
			var lengths []int
			prefixes := 0
			for st := range strategies[0].States(sp, o) { // the prefix strategy: every prefix
				if !keep[stateKey(st)] {
					continue
				}
				prefixes++
				j := 0
				for _, k := range st.K {
					j += k
				}
				lengths = append(lengths, j)
			}
			if c.lengths != nil && (fmt.Sprint(lengths) != fmt.Sprint(c.lengths) || prefixes != len(keep)) {
				t.Errorf("thinStates(%d): prefix lengths %v of %d states, want %v only", c.m, lengths, len(keep), c.lengths)
			}
			if c.m >= 41 && prefixes != 41 {
				t.Errorf("thinStates(%d): %d prefixes, want all 41", c.m, prefixes)
			}
			if again, _ := thinStates(sp, strategies, o, c.m); fmt.Sprint(slices.Sorted(maps.Keys(again))) != fmt.Sprint(slices.Sorted(maps.Keys(keep))) {
				t.Errorf("thinStates(%d) not deterministic", c.m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if widest != 40 {
		t.Errorf("the widest crash point has %d unpersisted units, want 40", widest)
	}
}

// TestEvenly: m of n spread evenly are the middles of m equal stretches.
func TestEvenly(t *testing.T) {
	xs := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, c := range []struct {
		m    int
		want string
	}{
		{-1, "[]"}, {0, "[]"}, {1, "[5]"}, {2, "[2 7]"}, {3, "[1 5 8]"}, {5, "[1 3 5 7 9]"},
		{10, "[0 1 2 3 4 5 6 7 8 9]"}, {11, "[0 1 2 3 4 5 6 7 8 9]"},
	} {
		if got := fmt.Sprint(evenly(xs, c.m)); got != c.want {
			t.Errorf("evenly(%d) = %s, want %s", c.m, got, c.want)
		}
	}
}
