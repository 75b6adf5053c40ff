package explore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/fs/internal/fstest"
	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
)

// TestSpread: every prefix of the order is spread over the range, and the order is a
// permutation.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []int
	}{
		{0, nil},
		{1, []int{0}},
		{2, []int{0, 1}},
		{5, []int{0, 4, 2, 1, 3}},
		{8, []int{0, 4, 2, 6, 1, 5, 3, 7}},
	} {
		if got := spread(c.n); !slices.Equal(got, c.want) {
			t.Errorf("spread(%d) = %v, want %v", c.n, got, c.want)
		}
	}
	for n := range 100 {
		got := slices.Sorted(slices.Values(spread(n)))
		for i, x := range got {
			if x != i {
				t.Fatalf("spread(%d) is no permutation: %v", n, spread(n))
			}
		}
	}
}

// TestBudgetOrder: one item of each tested operation per round, operations spread.
func TestBudgetOrder(t *testing.T) {
	var items []item
	for _, a := range []int{0, 0, 0, 1, 2, 2, 3} {
		items = append(items, item{a: a})
	}
	// Round 1: operations 0, 2, 1, 3 (spread of 4), round 2: 0, 2; round 3: 0.
	if got, want := budgetOrder(items), []int{0, 4, 3, 6, 1, 5, 2}; !slices.Equal(got, want) {
		t.Errorf("budgetOrder = %v, want %v", got, want)
	}
}

// TestTimeBudget: with a budget, the states run are spread over the program's run (the first
// crash states tested come from all over it), the exploration stops starting runs when the
// budget is spent, the report counts what was left out and warns; a budget that leaves no time
// for any crash state is an error, never a clean result. The clock is the checker's count of
// runs (one second each), so the test depends on no wall-clock time.
func TestTimeBudget(t *testing.T) {
	var ops []string
	for i := range 16 {
		ops = append(ops, fmt.Sprintf("creat f%02d", i), fmt.Sprintf("append f%02d x", i))
	}
	base, tr := fstest.RecordRun(t, map[string]string{}, ops)
	m := buildModelFrom(t, base, tr)
	apm, _ := model.APMByName("default")
	all := func() int {
		x, err := Explore(context.Background(), m, Options{Jobs: 1}, Setup{APM: apm, Checker: exec.Checker{Args: []string{"true"}}, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return x.Stats.StatesTested
	}()
	for _, c := range []struct {
		name   string
		budget time.Duration
		err    string
	}{
		{"partial", 20 * time.Second, ""},
		{"nothing tested", 1500 * time.Millisecond, "nothing was tested"},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "runs")
			// The checker logs the number of files of each state it judges.
			chk := exec.Checker{Args: []string{"/bin/sh", "-c", "ls | wc -l >> '" + log + "'"}}
			t0 := time.Unix(0, 0)
			now := func() time.Time {
				b, _ := os.ReadFile(log)
				return t0.Add(time.Duration(bytes.Count(b, []byte("\n"))) * time.Second)
			}
			x, err := Explore(context.Background(), m, Options{Jobs: 1, TimeBudget: c.budget, Now: now},
				Setup{APM: apm, Checker: chk, Dir: t.TempDir()})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Explore: %v, want an error saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := x.Stats
			if st.SkippedBudget == 0 || st.StatesTested == 0 || st.StatesTested+st.SkippedBudget != all {
				t.Errorf("%d states tested, %d left out, want some of each making the %d without budget", st.StatesTested, st.SkippedBudget, all)
			}
			want := fmt.Sprintf("partial: %d crash states were left out to keep to the time budget of %v", st.SkippedBudget, c.budget)
			if !slices.ContainsFunc(x.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
				t.Errorf("warnings %q do not say %q", x.Warnings, want)
			}
			// The consistent states (0 and 32 files), then the prefix states at crash points
			// 0, 16, 8, 24 (the creations of f00, f08, f04, f12): spread over the run.
			b, _ := os.ReadFile(log)
			got := strings.Fields(string(b))
			if want := []string{"0", "16", "1", "9", "5", "13"}; len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Errorf("files of the states judged first %v, want %v first", got, want)
			}
			if n := len(got); n > int(c.budget/time.Second)+1 {
				t.Errorf("%d runs for a budget of %v runs", n, c.budget)
			}
		})
	}
}

// TestBudgetUnspent: a budget the exploration does not use up changes nothing but the order of
// the runs: the same findings, the same states tested (the exhaustive strategy leaves out the
// same states judged before), nothing left out.
func TestBudgetUnspent(t *testing.T) {
	base, tr := fstest.RecordRun(t, map[string]string{"f": "ba"}, rewriteRun)
	m := buildModelFrom(t, base, tr)
	apm, _ := model.APMByName("default")
	chk := exec.Checker{Args: []string{"/bin/sh", "-c", logCheck}}
	var got [2]*Explored
	for i, budget := range []time.Duration{0, time.Hour} {
		x, err := Explore(context.Background(), m, Options{Jobs: 2, Strategies: Strategies, TimeBudget: budget},
			Setup{APM: apm, Checker: chk, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = x
	}
	a, b := got[0], got[1]
	if pa, pb := findingPairs(a), findingPairs(b); !slices.Equal(pa, pb) {
		t.Errorf("findings %v without budget, %v with", pa, pb)
	}
	if a.Stats.StatesTested != b.Stats.StatesTested || a.Stats.Failures != b.Stats.Failures || b.Stats.SkippedBudget != 0 {
		t.Errorf("stats %+v without budget, %+v with", a.Stats, b.Stats)
	}
}

// TestSchedule: the strategies share the budget as PM mode's operations do, from the budget's
// start (Options.Start: the command's), ending its reserve for the final phase before it.
func TestSchedule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	e := &explorer{o: Options{TimeBudget: time.Minute}, budgetStart: t0}
	// 60s less 3 %: 58.2s; strategy k of 3 ends at 58.2s·(1/4 + 3/4·(k+1)/3).
	for k, want := range []time.Duration{29100 * time.Millisecond, 43650 * time.Millisecond, 58200 * time.Millisecond} {
		if got := e.schedule(k, 3).Sub(t0); got != want {
			t.Errorf("strategy %d of 3 ends at %v, want %v", k, got, want)
		}
	}
	if e.o.TimeBudget = 0; !e.schedule(0, 1).IsZero() {
		t.Error("no budget: a schedule")
	}
}

// TestProgress: the exploration reports a phase per strategy, each against a total fixed when
// it begins (the consistent states, the prefix states' crash points, the omit-one and split
// states), each ending with all its states judged, then the findings' clustering, with the
// figures of the exploration (a fake clock: the times are 0).
func TestProgress(t *testing.T) {
	var ops []string
	for i := range 4 {
		ops = append(ops, fmt.Sprintf("creat f%02d", i), fmt.Sprintf("append f%02d x", i))
	}
	base, tr := fstest.RecordRun(t, map[string]string{}, ops)
	m := buildModelFrom(t, base, tr)
	apm, _ := model.APMByName("default")
	var out strings.Builder
	p := exec.NewProgressClock(&out, func() time.Time { return time.Unix(0, 0) })
	x, err := Explore(context.Background(), m, Options{Jobs: 2, Progress: p},
		Setup{APM: apm, Checker: exec.Checker{Args: []string{"true"}}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p.Tick()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	phases := []string{"checking the consistent states", "exploring: prefix (strategy 1 of 3)", "exploring: omit-one (strategy 2 of 3)", "exploring: split (strategy 3 of 3)"}
	if len(lines) != len(phases)+1 {
		t.Fatalf("lines:\n%s\nwant one per phase and the clustering's", out.String())
	}
	states := 0
	for i, name := range phases {
		var done, total int
		rest, ok := strings.CutPrefix(lines[i], "scry: "+name+": ")
		if _, err := fmt.Sscanf(rest, "%d of %d", &done, &total); !ok || err != nil || done != total || total == 0 {
			t.Errorf("line %q: want %q with all of its states done", lines[i], name)
		}
		if i > 0 {
			states += total
		}
	}
	st := x.Stats
	want := fmt.Sprintf("scry: clustering the findings; %d states judged, %d failed, %d findings; 0s elapsed", st.StatesTested, st.Failures, len(x.Findings))
	if lines[len(phases)] != want || states != st.StatesTested {
		t.Errorf("last line %q, want %q (the phases' totals add up to %d states)", lines[len(phases)], want, states)
	}
}
