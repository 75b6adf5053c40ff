package fuzz

import (
	"hash/maphash"
	"maps"
	"testing"

	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
)

// TestStoreEdges: one operation's stores in two orders of the same sites and hit counts (same
// path, same buckets) differ only by their store-site edges.
func TestStoreEdges(t *testing.T) {
	seed := maphash.MakeSeed()
	features := func(sites ...uint32) map[Feature]struct{} {
		c := &collector{m: &replay.Machine[struct{}]{}, seed: seed,
			cov:  &Coverage{Features: map[Feature]struct{}{}, StoreSites: map[uint32]struct{}{}},
			hits: map[uint32]int{}, edges: map[[2]uint32]struct{}{}}
		for _, s := range sites {
			c.Wrote(&replay.Write{Kind: replay.Store, Origin: px86.Origin{Site: s}})
		}
		c.endOp("")
		return c.cov.Features
	}
	for _, tc := range []struct {
		name string
		a, b []uint32
		same bool
	}{
		{"same order", []uint32{7, 8, 7}, []uint32{7, 8, 7}, true},
		{"a store back to an earlier site", []uint32{7, 8, 7}, []uint32{7, 7, 8}, false},
		{"repeated store, one edge", []uint32{7, 7, 8}, []uint32{7, 8, 8}, false}, // hit buckets differ too
		{"other first store", []uint32{7, 8}, []uint32{8, 7}, false},
	} {
		fa, fb := features(tc.a...), features(tc.b...)
		if got := maps.Equal(fa, fb); got != tc.same {
			t.Errorf("%s: features of %v and %v equal: %v, want %v", tc.name, tc.a, tc.b, got, tc.same)
		}
	}
	// 7,8,7 and 7,7,8: the same sites and hits; the edges (0,7), (7,8), (8,7) against (0,7),
	// (7,8) make one more feature.
	if a, b := len(features(7, 8, 7)), len(features(7, 7, 8)); a != b+1 {
		t.Errorf("features: %d and %d, want the first one more (the edge 8→7)", a, b)
	}
}

// TestFirstWord: an operation's command is its first word up to a blank or a semicolon, so that
// one command on other keys has one word.
func TestFirstWord(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"i 1", "i 2", true},
		{"i;5156463119707;927349761265249;0;", "i;42;7;0;", true},
		{"i;42;7;0;", "i 42", true},
		{"  g\t42", "g;1;", true},
		{"i 1", "r 1", false},
		{"i;42;7;0;", "d;42;", false},
		{"set k v", "setx k v", false},
	} {
		if got := firstWord(tc.a) == firstWord(tc.b); got != tc.same {
			t.Errorf("firstWord(%q) == firstWord(%q): %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
