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
// earlier store of Before did not; an atomic pair is broken either way; pairs of absent sites are
// not broken; the pairs broken through one store persisted too early share its position (a
// group). The group's twin leaves that store unpersisted; the repair of all but one pair persists
// everything before the store in program order and the atomic pairs' other sides, but keeps the
// pair's earlier stores (and what follows them on their lines) unpersisted.
func TestBrokenPairs(t *testing.T) {
	// Line 0: key (store 1, site 10), value (2, 11); line 1: token (3, 12); line 2: a
	// store of site 13 (4) after the token.
	sp := space([][2]int{{1, 10}, {2, 11}}, [][2]int{{3, 12}}, [][2]int{{4, 13}})
	valueToken := Pair{Before: siteLoc(11), After: siteLoc(12)}
	keyToken := Pair{Before: siteLoc(10), After: siteLoc(12)}
	tokenValue := Pair{Before: siteLoc(12), After: siteLoc(11)} // the token is later: never broken
	atomic := Pair{Before: siteLoc(13), After: siteLoc(12), Atomic: true}
	absent := Pair{Before: siteLoc(99), After: siteLoc(12)}
	confirm := []Pair{valueToken, keyToken, tokenValue, atomic, absent}
	for _, tc := range []struct {
		k      []int
		pairs  []Pair
		early  []int   // the site persisted too early, per pair
		group  []int   // the early store left unpersisted
		allBut [][]int // the group repaired but each pair
	}{
		{[]int{0, 1, 0}, []Pair{valueToken, keyToken, atomic}, []int{12, 12, 12},
			[]int{0, 0, 0}, [][]int{{1, 1, 1}, {0, 1, 1}, {2, 1, 0}}},
		{[]int{1, 1, 1}, []Pair{valueToken}, []int{12}, []int{1, 0, 1}, [][]int{{1, 1, 1}}},
		{[]int{2, 0, 1}, []Pair{atomic}, []int{13}, []int{2, 0, 0}, [][]int{{2, 0, 1}}},
		{[]int{2, 1, 1}, nil, nil, nil, nil},
	} {
		b := brokenPairs(sp, crash.State{K: tc.k}, confirm, siteLoc, nil)
		var pairs []Pair
		var all []int
		bound := uint64(0)
		for i, bp := range b.pairs {
			pairs = append(pairs, bp.pair)
			all = append(all, i)
			bound = max(bound, bp.bound)
			if bp.early != siteLoc(uint32(tc.early[i])) {
				t.Errorf("state %v, pair %v: persisted early at %v, want line %d", tc.k, bp.pair, bp.early, tc.early[i])
			}
		}
		if fmt.Sprint(pairs) != fmt.Sprint(tc.pairs) {
			t.Errorf("state %v: pairs %v, want %v", tc.k, pairs, tc.pairs)
			continue
		}
		if len(all) == 0 {
			continue
		}
		if got, ok := b.without(b.pairs[0].early); !ok || fmt.Sprint(got.K) != fmt.Sprint(tc.group) {
			t.Errorf("state %v: without the early store %v (isolated %v), want %v", tc.k, got.K, ok, tc.group)
		}
		for _, i := range all {
			if got := b.repairedGroup(bound, all, i).K; fmt.Sprint(got) != fmt.Sprint(tc.allBut[i]) {
				t.Errorf("state %v: repaired but %v: %v, want %v", tc.k, pairs[i], got, tc.allBut[i])
			}
		}
	}
}

// TestWithoutIsolated: the twin without the early store exists only when unpersisting it (with
// what follows it on its line) unpersists no persisted store of another position: a lock word
// released before a split's local_depth on the same line cannot be judged alone.
func TestWithoutIsolated(t *testing.T) {
	// Line 0: the lock release (store 2, site 20), then local_depth (store 3, site 21); line 1:
	// the slot's key (store 1, site 22), issued before both.
	sp := space([][2]int{{2, 20}, {3, 21}}, [][2]int{{1, 22}})
	lockAfterKey := Pair{Before: siteLoc(22), After: siteLoc(20)}
	for _, tc := range []struct {
		k        []int
		isolated bool
		want     []int
	}{
		{[]int{1, 0}, true, []int{0, 0}}, // the release persisted, local_depth not
		{[]int{2, 0}, false, nil},        // local_depth persisted after it on its line
	} {
		b := brokenPairs(sp, crash.State{K: tc.k}, []Pair{lockAfterKey}, siteLoc, nil)
		if len(b.pairs) != 1 {
			t.Fatalf("state %v: pairs %v", tc.k, b.pairs)
		}
		got, ok := b.without(b.pairs[0].early)
		if ok != tc.isolated || ok && fmt.Sprint(got.K) != fmt.Sprint(tc.want) {
			t.Errorf("state %v: without %v, isolated %v; want %v, %v", tc.k, got.K, ok, tc.want, tc.isolated)
		}
	}
}

// TestBrokenPairsDurableAfter: a pair whose After store was made durable before the crash point
// (Config.DurableAfter: not in the space) is broken by every state that leaves a Before store
// issued before it unpersisted, and its repair persists those Before stores (with what precedes
// them on their lines); a Before store issued after it, a persisted one, or an After store still
// in the space (the ordinary rule) break nothing this way.
func TestBrokenPairsDurableAfter(t *testing.T) {
	// Line 0: a store of site 5 (store 1), then the source (store 2, site 10); line 1: another
	// source store (store 9, site 10), issued after the derived store (event 6).
	sp := space([][2]int{{1, 5}, {2, 10}}, [][2]int{{9, 10}})
	p := Pair{Before: siteLoc(10), After: siteLoc(20)}
	durable := func(ev uint64) func(Pair, func(uint64) bool) (uint64, bool) {
		return func(q Pair, inSpace func(uint64) bool) (uint64, bool) {
			if q != p || inSpace(ev) {
				return 0, false
			}
			return ev, true
		}
	}
	for _, tc := range []struct {
		name   string
		k      []int
		ev     uint64
		broken bool
		repair []int
	}{
		{"source lost, derived durable", []int{0, 0}, 6, true, []int{2, 0}},
		{"source persisted", []int{2, 0}, 6, false, nil},
		{"only a later source store lost", []int{2, 0}, 6, false, nil},
		{"derived store still in the space", []int{0, 0}, 9, false, nil},
		{"derived store issued before every source store", []int{0, 0}, 1, false, nil},
	} {
		b := brokenPairs(sp, crash.State{K: tc.k}, []Pair{p}, siteLoc, durable(tc.ev))
		if got := len(b.pairs) == 1 && b.pairs[0].durable; got != tc.broken {
			t.Errorf("%s: broken %v (%+v), want %v", tc.name, got, b.pairs, tc.broken)
			continue
		}
		if tc.broken {
			if got := b.repairedGroup(0, []int{0}, -1).K; fmt.Sprint(got) != fmt.Sprint(tc.repair) {
				t.Errorf("%s: repaired %v, want %v", tc.name, got, tc.repair)
			}
		}
	}
	if b := brokenPairs(sp, crash.State{K: []int{0, 0}}, []Pair{p}, siteLoc, nil); len(b.pairs) != 0 {
		t.Errorf("without DurableAfter: pairs %+v", b.pairs)
	}
}

// TestMergeFinding: an ordering violation folded into the atomicity violation of its window
// adds its count, variants and operations, and its own state stays replayable as a variant.
func TestMergeFinding(t *testing.T) {
	f := report.Finding{Count: 3, Operation: &report.Operation{Index: 0}, Crash: &report.Crash{
		FailingState: report.FailingState{ID: "ca"}, Variants: 2, Operations: []uint64{0, 4},
		VariantImages: []report.CrashVariant{{ID: "ca-2", CrashPoint: 5}},
	}}
	g := report.Finding{Count: 2, Operation: &report.Operation{Index: 2}, Crash: &report.Crash{
		FailingState: report.FailingState{ID: "cb", CrashPoint: 9}, Variants: 1, Operations: []uint64{2, 4}, Event: 90, State: []int{1, 0}, Input: 4,
	}}
	mergeFinding(&f, &g)
	c := f.Crash
	if f.Count != 5 || c.Variants != 3 || fmt.Sprint(c.Operations) != "[0 4 2]" {
		t.Errorf("merged count %d, variants %d, operations %v", f.Count, c.Variants, c.Operations)
	}
	if len(c.VariantImages) != 2 || c.VariantImages[1].ID != "cb" || c.VariantImages[1].CrashPoint != 9 ||
		c.VariantImages[1].Operation != 2 || c.VariantImages[1].Input != 4 {
		t.Errorf("variant images %+v", c.VariantImages)
	}
}
