package crash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/trace"
)

// unitSpec is one unit of a hand-built space: its line, the thread that stored it (which the
// eADR states do not depend on: the trace's order is the visibility order) and its flags, in
// program order.
type unitSpec struct {
	line   int
	thread uint32
	flags  uint8
}

func handSpace(lines int, us []unitSpec) *Space {
	sp := &Space{}
	for i := 0; i < lines; i++ {
		sp.Lines = append(sp.Lines, &Line{Addr: uint64(i) * 64})
	}
	for seq, u := range us {
		l := sp.Lines[u.line]
		l.Units = append(l.Units, Unit{Store: uint64(seq), First: uint64(seq), Seq: uint64(seq), Size: 8, Flags: u.flags})
	}
	sp.units = len(us)
	return sp
}

func keys(sts []State) []string {
	var out []string
	for _, st := range sts {
		out = append(out, fmt.Sprint(st.K))
	}
	slices.Sort(out)
	return out
}

func TestAllowsEADR(t *testing.T) {
	const T1, T2 = 1, 2
	tests := []struct {
		name  string
		lines int
		units []unitSpec
		// want lists the states eADR allows (each line's persisted units).
		want []string
	}{
		{name: "one thread, two lines: prefixes in store order", lines: 2,
			units: []unitSpec{{0, T1, 0}, {1, T1, 0}, {0, T1, 0}},
			want:  []string{"[0 0]", "[1 0]", "[1 1]", "[2 1]"}},
		{name: "a visible unit always persists", lines: 2,
			units: []unitSpec{{0, T1, UnitVisible}, {1, T1, 0}},
			want:  []string{"[1 0]", "[1 1]"}},
		{name: "non-temporal units are free", lines: 2,
			units: []unitSpec{{0, T1, 0}, {1, T1, UnitNT}},
			want:  []string{"[0 0]", "[0 1]", "[1 0]", "[1 1]"}},
		{name: "two threads: the trace's order is the visibility order", lines: 2,
			units: []unitSpec{{0, T1, 0}, {1, T2, 0}},
			want:  []string{"[0 0]", "[1 0]", "[1 1]"}},
		{name: "a visible unit persists every earlier one", lines: 2,
			units: []unitSpec{{0, T2, 0}, {1, T1, UnitVisible}},
			want:  []string{"[1 1]"}},
		{name: "a line orders two threads", lines: 1,
			units: []unitSpec{{0, T1, 0}, {0, T2, 0}},
			want:  []string{"[0]", "[1]", "[2]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := handSpace(tt.lines, tt.units)
			var allowed []State
			for st := range StrategyByName("exhaustive").States(sp, Options{MaxStates: -1}) {
				if !sp.Allows(px86.ADR, st) {
					t.Fatalf("ADR refuses %v", st.K)
				}
				if sp.Allows(px86.EADR, st) {
					allowed = append(allowed, st)
				}
			}
			if got := keys(allowed); !slices.Equal(got, tt.want) {
				t.Errorf("eADR allows %v, want %v", got, tt.want)
			}
			s := StrategyByName("eadr")
			gen := collect(s, sp, Options{MaxStates: -1})
			if got := keys(gen); !slices.Equal(got, tt.want) {
				t.Errorf("eadr strategy yields %v, want %v", got, tt.want)
			}
			if full, _ := s.Count(sp, Options{MaxStates: -1}); full.Int64() != int64(len(tt.want)) {
				t.Errorf("eadr count %v, want %d", full, len(tt.want))
			}
		})
	}
}

// TestEADRStrategyIsAllows checks on random spaces that the eadr strategy yields exactly the
// states of the space that Allows(EADR) accepts, each once, and counts them.
func TestEADRStrategyIsAllows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		lines := 1 + rng.IntN(3)
		var us []unitSpec
		for i := rng.IntN(7); i >= 0; i-- {
			var flags uint8
			switch rng.IntN(5) {
			case 0:
				flags = UnitNT
			case 1:
				flags = UnitVisible
			}
			us = append(us, unitSpec{rng.IntN(lines), uint32(1 + rng.IntN(2)), flags})
		}
		sp := handSpace(lines, us)
		var want []State
		for st := range StrategyByName("exhaustive").States(sp, Options{MaxStates: -1}) {
			if sp.Allows(px86.EADR, st) {
				want = append(want, st)
			}
		}
		s := StrategyByName("eadr")
		got := collect(s, sp, Options{MaxStates: -1})
		if !slices.Equal(keys(got), keys(want)) {
			t.Fatalf("space %v: eadr yields %v, Allows accepts %v", us, keys(got), keys(want))
		}
		if full, _ := s.Count(sp, Options{MaxStates: -1}); full.Int64() != int64(len(want)) {
			t.Fatalf("space %v: count %v, want %d", us, full, len(want))
		}
	}
}

// TestAllowsTorn: a torn unit is the end of its thread's prefix under eADR.
func TestAllowsTorn(t *testing.T) {
	sp := handSpace(2, []unitSpec{{0, 1, 0}, {1, 1, 0}})
	for _, tt := range []struct {
		k    []int
		tear *Tear
		want bool
	}{
		{[]int{0, 0}, &Tear{Line: 0, Keep: 1}, true},
		{[]int{1, 0}, &Tear{Line: 1, Keep: 1}, true},
		{[]int{0, 1}, &Tear{Line: 0, Keep: 1}, false}, // the unit after the torn one persisted
	} {
		if got := sp.Allows(px86.EADR, State{K: tt.k, Tear: tt.tear}); got != tt.want {
			t.Errorf("K %v tear %v: Allows %v, want %v", tt.k, tt.tear, got, tt.want)
		}
	}
}

// TestWalkMarksVisible: a store its thread fenced after is UnitVisible at later crash points;
// one issued after the fence is not, nor is a non-temporal store.
func TestWalkMarksVisible(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).
		Store(1, base, 8).Fence(2, trace.FenceSFENCE).
		Store(3, base+64, 8).Fence(4, trace.FenceSFENCE).Exit(0)
	pts, _ := walk(t, b, Options{})
	last := pts[len(pts)-2].cp.Space // before the second fence
	var got []string
	for _, l := range last.Lines {
		for _, u := range l.Units {
			got = append(got, fmt.Sprintf("%d:%v", u.Site, u.Flags&UnitVisible != 0))
		}
	}
	if !slices.Equal(got, []string{"1:true", "3:false"}) {
		t.Errorf("units before the second fence: %v, want [1:true 3:false]", got)
	}
}
