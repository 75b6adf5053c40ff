package explore

import (
	"fmt"
	"testing"

	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/report"
)

// space builds a state space from lines of (store id, site) units, numbering the units in
// program order by store id.
func space(lines ...[][2]int) *crash.Space {
	sp := &crash.Space{}
	for _, l := range lines {
		line := &crash.Line{}
		for _, u := range l {
			line.Units = append(line.Units, crash.Unit{Store: uint64(u[0]), First: uint64(u[0]), Seq: uint64(u[0]), Site: uint32(u[1])})
		}
		sp.Lines = append(sp.Lines, line)
	}
	return sp
}

func siteLoc(site uint32) report.Location {
	return report.Location{File: "t.c", Line: int(site), Function: "f"}
}

// TestBrokenPairs: a state breaks an ordering pair when a store of After persisted while an
// earlier store of Before did not; its twin persists those Before stores (with what precedes them
// on their lines); an atomic pair is broken either way; pairs of absent sites are not broken.
func TestBrokenPairs(t *testing.T) {
	sp := space([][2]int{{1, 10}, {2, 11}}, [][2]int{{3, 12}}, [][2]int{{4, 13}})
	valueToken := Pair{Before: siteLoc(11), After: siteLoc(12)}
	keyToken := Pair{Before: siteLoc(10), After: siteLoc(12)}
	tokenValue := Pair{Before: siteLoc(12), After: siteLoc(11)} // the token is later: never broken
	atomic := Pair{Before: siteLoc(13), After: siteLoc(12), Atomic: true}
	absent := Pair{Before: siteLoc(99), After: siteLoc(12)}
	confirm := []Pair{valueToken, keyToken, tokenValue, atomic, absent}
	for _, tc := range []struct {
		k     []int
		pairs []Pair
		twins [][]int
	}{
		{[]int{0, 1, 0}, []Pair{valueToken, keyToken, atomic}, [][]int{{2, 1, 0}, {1, 1, 0}, {0, 1, 1}}},
		{[]int{1, 1, 1}, []Pair{valueToken}, [][]int{{2, 1, 1}}},
		{[]int{2, 0, 1}, []Pair{atomic}, [][]int{{2, 1, 1}}},
		{[]int{2, 1, 1}, nil, nil},
	} {
		pairs, twins := brokenPairs(sp, crash.State{K: tc.k}, confirm, siteLoc)
		if fmt.Sprint(pairs) != fmt.Sprint(tc.pairs) {
			t.Errorf("state %v: pairs %v, want %v", tc.k, pairs, tc.pairs)
			continue
		}
		for i, tw := range twins {
			if fmt.Sprint(tw.K) != fmt.Sprint(tc.twins[i]) {
				t.Errorf("state %v, pair %v: twin %v, want %v", tc.k, pairs[i], tw.K, tc.twins[i])
			}
		}
	}
}
