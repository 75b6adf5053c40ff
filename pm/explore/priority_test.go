package explore

import (
	"fmt"
	"testing"
	"time"
)

func sites(ids ...uint32) map[uint32]bool {
	m := map[uint32]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// TestGreedyCover: the first walk takes the operations that add the most store sites not yet
// covered, the earliest on a tie, until none adds one.
func TestGreedyCover(t *testing.T) {
	tests := []struct {
		name  string
		sites []map[uint32]bool
		want  string
	}{
		{"none", nil, "[]"},
		{"no writes", []map[uint32]bool{nil, nil}, "[false false]"},
		{"repeats", []map[uint32]bool{sites(1), sites(1), sites(1, 2), sites(1)}, "[false false true false]"},
		{"a split after inserts", []map[uint32]bool{sites(1, 2), sites(1, 2), sites(1, 2, 3, 4), sites(5), sites(1, 2)}, "[false false true true false]"},
		{"tie: the earliest", []map[uint32]bool{sites(1), sites(2), sites(1)}, "[true true false]"},
		{"overlapping covers", []map[uint32]bool{sites(1, 2), sites(2, 3), sites(1, 2, 3)}, "[false false true]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(greedyCover(tc.sites)); got != tc.want {
				t.Errorf("greedyCover = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestExploreRanks: operations are ranked walk after walk, each walk in trace order.
func TestExploreRanks(t *testing.T) {
	first := []bool{false, true, false, true}
	rest := []bool{true, false, true, false}
	if got := fmt.Sprint(exploreRanks([][]bool{first, rest}, 4)); got != "[2 0 3 1]" {
		t.Errorf("ranks %s", got)
	}
	if got := fmt.Sprint(exploreRanks([][]bool{nil}, 3)); got != "[0 1 2]" {
		t.Errorf("one walk: ranks %s", got)
	}
}

// TestPriorityWalks: exploring the operations that write new store sites first finds the same
// findings, states and points as one walk in trace order.
func TestPriorityWalks(t *testing.T) {
	dir := t.TempDir()
	bin := compile(t, dir, "ordering.c")
	defer func() { testNoPriority = false }()
	testNoPriority = true
	one := explore(t, dir, bin, "ordering-long.ops", 2, 5*time.Second)
	testNoPriority = false
	two := explore(t, dir, bin, "ordering-long.ops", 2, 5*time.Second)
	if fmt.Sprint(kinds(one)) != fmt.Sprint(kinds(two)) || len(one.Findings) != len(two.Findings) {
		t.Errorf("findings %v in priority order, %v in trace order", kinds(two), kinds(one))
	}
	if one.Stats.CrashPoints != two.Stats.CrashPoints || one.Stats.StatesTested != two.Stats.StatesTested ||
		one.Stats.Skipped != two.Stats.Skipped || one.Stats.OracleRuns != two.Stats.OracleRuns {
		t.Errorf("stats in priority order %+v, in trace order %+v", two.Stats, one.Stats)
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
	a.StoppedEarlySeconds, b.StoppedEarlySeconds = 0, 0
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(kinds(byExec)) != fmt.Sprint(kinds(served)) {
		t.Errorf("by exec %v %+v, through fork servers %v %+v", kinds(byExec), a, kinds(served), b)
	}
}
