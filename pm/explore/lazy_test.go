package explore

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/pm/crash"
)

// lazySpace is a space of three lines: line 0 with 2 units, line 1 with 3, line 2 with 1, units
// in program order a0 b0 a1 b1 c1 a2 (Seq 0..5, interleaved by line as below).
func lazySpace() *crash.Space {
	unit := func(seq uint64) crash.Unit { return crash.Unit{Seq: seq, Store: seq, Site: uint32(seq + 1)} }
	return &crash.Space{Lines: []*crash.Line{
		{Addr: 0x1000, Units: []crash.Unit{unit(0), unit(3)}},
		{Addr: 0x1040, Units: []crash.Unit{unit(1), unit(2), unit(5)}},
		{Addr: 0x1080, Units: []crash.Unit{unit(4)}},
	}}
}

func TestLeafState(t *testing.T) {
	// Table lines: space line 1 (contents: k=0 -> 0, k=1 -> 1, k=2 -> 0, k=3 -> 2: its second
	// unit wrote back what the first overwrote) and space line 0 (three contents); space line 2
	// is not listed (one content).
	lp := &lazyPoint{space: lazySpace(), lineOf: []int{1, 0}, contents: []crash.Contents{
		{MinK: []int{0, 1, 3}, Of: []int{0, 1, 0, 2}},
		{MinK: []int{0, 1, 2}, Of: []int{0, 1, 2}},
	}}
	tests := []struct {
		name    string
		choices []exec.LazyChoice
		k       []int
		prefix  bool
		covers  int64
		pers    []uint32 // sites named persisted
		unpers  []uint32 // and unpersisted
	}{
		{"never branched: every unit persisted, every state", nil, []int{2, 3, 1}, true, 3 * 4 * 2, nil, nil},
		{"line 1 rolled back to its first content: k 0 (and 2)", []exec.LazyChoice{ch(0, 0)}, []int{2, 0, 1}, false, 3 * 2 * 2, []uint32{4, 5}, []uint32{2, 3}},
		{"both lines chosen", []exec.LazyChoice{ch(1, 1), ch(0, 1)}, []int{1, 1, 1}, false, 1 * 1 * 2, []uint32{5}, []uint32{3, 4}},
		{"everything rolled back on the listed lines", []exec.LazyChoice{ch(0, 0), ch(1, 0)}, []int{0, 0, 1}, false, 1 * 2 * 2, []uint32{5}, []uint32{1, 2, 3, 4}},
		{"a prefix", []exec.LazyChoice{ch(1, 1), ch(0, 0)}, []int{1, 0, 1}, false, 1 * 2 * 2, []uint32{5}, []uint32{2, 3, 4}},
	}
	total := new(big.Int)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := lp.leafState(tt.choices)
			if !slices.Equal(st.K, tt.k) || st.Prefix != tt.prefix {
				t.Errorf("state %v prefix %v, want %v %v", st.K, st.Prefix, tt.k, tt.prefix)
			}
			if got := lp.leafCovers(tt.choices); got.Cmp(big.NewInt(tt.covers)) != 0 {
				t.Errorf("covers %v states, want %d", got, tt.covers)
			}
			total.Add(total, lp.leafCovers(tt.choices))
			p, u := stateRefs(lp.space, st)
			sites := func(rs []unitRef) (s []uint32) {
				for _, r := range rs {
					s = append(s, r.Site)
				}
				slices.Sort(s)
				return s
			}
			if !slices.Equal(sites(p), tt.pers) || !slices.Equal(sites(u), tt.unpers) {
				t.Errorf("persisted %v unpersisted %v, want %v %v", sites(p), sites(u), tt.pers, tt.unpers)
			}
		})
	}
	// The leaves of one complete tree cover the space exactly once: branch on table line 0,
	// then, under its content 1, on table line 1.
	tree := [][]exec.LazyChoice{{ch(0, 0)}, {ch(0, 1), ch(1, 0)}, {ch(0, 1), ch(1, 1)}, {ch(0, 1), ch(1, 2)}, {ch(0, 2)}}
	sum := new(big.Int)
	for _, c := range tree {
		sum.Add(sum, lp.leafCovers(c))
	}
	if sum.Cmp(lp.space.Size()) != 0 {
		t.Errorf("a complete tree covers %v states, the space has %v", sum, lp.space.Size())
	}
}

func TestEagerStrategies(t *testing.T) {
	names := func(ss []*crash.Strategy) (n []string) {
		for _, s := range ss {
			n = append(n, s.Name)
		}
		return n
	}
	by := func(ns ...string) (ss []*crash.Strategy) {
		for _, n := range ns {
			ss = append(ss, crash.StrategyByName(n))
		}
		return ss
	}
	tests := []struct {
		strategies []string
		lazy       bool
		want       []string
	}{
		{[]string{"prefix", "random"}, false, []string{"prefix", "random"}},
		{[]string{"lazy"}, true, nil},
		{[]string{"lazy", "invariants"}, true, []string{"invariants"}},
		{[]string{"lazy", "exhaustive"}, true, nil},
		{[]string{"lazy"}, false, []string{"prefix", "random"}},
		{[]string{"lazy", "invariants", "prefix"}, false, []string{"prefix", "random", "invariants"}},
	}
	for _, tt := range tests {
		e := &explorer{cfg: &Config{}, strats: by(tt.strategies...)}
		if got := names(e.eagerStrategies(tt.lazy)); !slices.Equal(got, tt.want) {
			t.Errorf("%v (lazy run %v): %v, want %v", tt.strategies, tt.lazy, got, tt.want)
		}
	}
}

// ch is the choice of content v for table line l.
func ch(l, v int) exec.LazyChoice { return exec.LazyChoice{Line: l, Value: v} }

// plainRunner is a Runner that cannot make lazy runs.
type plainRunner struct{ Runner }

// abortRunner makes lazy runs that abort, as the runtime does when it cannot branch.
type abortRunner struct{ Runner }

func (abortRunner) LazyUnavailable() string { return "" }

func (abortRunner) Lazy(context.Context, string, []byte, string, string, *exec.LazyTable, time.Duration, time.Duration) exec.LazyOutcome {
	return exec.LazyOutcome{Root: exec.Outcome{ExitCode: exec.LazyAbortStatus}, Fallback: "a test's abort", Abort: true}
}

// TestLazyExplore explores testdata/ordering.c (an ordering violation) with the lazy strategy,
// through fork servers and by exec, and with a runner that cannot make lazy runs: the same
// findings as eager exploration, one lazy run per crash point, or every point explored eagerly
// and counted as a fallback, with a warning.
func TestLazyExplore(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	tr := recordRun(t, dir, bin, "ordering.ops")
	key := func(r *Result) (keys []string) {
		for _, f := range r.Findings {
			keys = append(keys, fmt.Sprintf("%s %s", f.Kind, f.Location))
		}
		slices.Sort(keys)
		return keys
	}
	eager := exploreTrace(t, dir, bin, "ordering.ops", tr, 2, 5*time.Second)
	if len(eager.Findings) == 0 {
		t.Fatal("eager exploration found nothing")
	}
	defer func() { testStrategies, testNoForkServer, testRunner = nil, false, nil }()
	testStrategies = []string{"lazy"}
	tests := []struct {
		name            string
		set             func()
		fallback, abort bool
	}{
		{"fork servers", func() {}, false, false},
		{"by exec", func() { testNoForkServer = true }, false, false},
		{"a runner without lazy runs", func() { testRunner = func(r Runner) Runner { return plainRunner{r} } }, true, false},
		{"lazy runs that abort", func() { testRunner = func(r Runner) Runner { return abortRunner{r} } }, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testNoForkServer, testRunner = false, nil
			tt.set()
			r := exploreTrace(t, dir, bin, "ordering.ops", tr, 2, 5*time.Second)
			if !slices.Equal(key(r), key(eager)) {
				t.Errorf("findings %v, eager %v", key(r), key(eager))
			}
			st := r.Stats
			fell := 0
			for _, n := range st.LazyFallbacks {
				fell += n
			}
			warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "lazy exploration is not possible") })
			if tt.abort {
				if st.LazyRuns != st.CrashPoints || st.LazyFallbacks["a test's abort"] != st.CrashPoints || st.LazyLeaves != 0 || warned {
					t.Errorf("lazy runs %d, fallbacks %v of %d points, warnings %q", st.LazyRuns, st.LazyFallbacks, st.CrashPoints, r.Warnings)
				}
				return
			}
			if tt.fallback {
				if st.LazyRuns != 0 || fell != st.CrashPoints || !warned {
					t.Errorf("lazy runs %d, fallbacks %v of %d points, warnings %q", st.LazyRuns, st.LazyFallbacks, st.CrashPoints, r.Warnings)
				}
				return
			}
			if st.LazyRuns != st.CrashPoints || fell != 0 || st.LazyLeaves == 0 || st.LazyStates == "" || warned {
				t.Errorf("lazy runs %d of %d points, %d leaves, %q states, fallbacks %v, warnings %q", st.LazyRuns, st.CrashPoints, st.LazyLeaves, st.LazyStates, st.LazyFallbacks, r.Warnings)
			}
			for _, f := range r.Findings {
				if f.Crash == nil || f.Crash.Strategy != "lazy" || f.Crash.CrashPoint < 0 || len(f.Crash.State) == 0 {
					t.Errorf("finding %s: crash %+v", f.Kind, f.Crash)
				}
			}
		})
	}
}
