package shard

import (
	"fmt"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		i, n    int
		wantErr bool
	}{
		{"0/4", 0, 4, false},
		{"3/4", 3, 4, false},
		{"0/1", 0, 1, false},
		{"4/4", 0, 0, true},
		{"-1/4", 0, 0, true},
		{"1/0", 0, 0, true},
		{"1", 0, 0, true},
		{"1/4x", 0, 0, true},
		{"a/b", 0, 0, true},
	} {
		s, err := Parse(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && (s.Index != tc.i || s.Count != tc.n)) {
			t.Errorf("Parse(%q) = %d/%d, %v", tc.in, s.Index, s.Count, err)
		}
	}
}

// TestAssign: LPT, costliest first, ties to the lowest shard, deterministic.
func TestAssign(t *testing.T) {
	for _, tc := range []struct {
		costs []uint64
		n     int
		want  []int
	}{
		{[]uint64{5, 3, 3, 1}, 2, []int{0, 1, 1, 0}},
		{[]uint64{1, 1, 1}, 3, []int{0, 1, 2}},
		{[]uint64{7}, 4, []int{0}},
		{nil, 2, []int{}},
		{[]uint64{2, 8, 4, 4}, 2, []int{0, 0, 1, 1}},
	} {
		if got := Assign(tc.costs, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Assign(%v, %d) = %v, want %v", tc.costs, tc.n, got, tc.want)
		}
	}
}

// FuzzParse: any --shard value is shard I of N with 0 <= I < N, which prints back as itself, or
// an error, never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "-1/2", "1/0", "a/b", "1/2/3", "1/2x", " 1/2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := Parse(s)
		if err != nil {
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("%q accepted as %d/%d", s, sh.Index, sh.Count)
		}
		again, err := Parse(fmt.Sprint(sh))
		if err != nil || again != sh {
			t.Fatalf("%q: %v does not parse back (%v)", s, sh, err)
		}
	})
}
