package crash

import (
	"bytes"
	"fmt"
	"maps"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/trace"
)

const base = 0x10000

// storeBytes appends a STORE of data at addr (the builder's stores write 0xab).
func storeBytes(b *analysistest.Builder, site uint32, addr uint64, data []byte) *analysistest.Builder {
	b.Store(site, addr, uint64(len(data)))
	b.Events[len(b.Events)-1].Data = slices.Clone(data)
	return b
}

// point is a crash point kept past its callback, with the patches of the all-unpersisted state.
type point struct {
	cp      *CrashPoint
	none    []Patch
	lines   []int // units per line
	kinds   string
	persist []Patch
}

func walk(t *testing.T, b *analysistest.Builder, o Options) ([]point, Stats) {
	t.Helper()
	var pts []point
	st, err := Walk(b.Reader(t), o, func(cp *CrashPoint) error {
		p := point{cp: cp.Clone(), kinds: cp.Kind.String()}
		none := State{K: make([]int, len(cp.Space.Lines))}
		all := State{K: make([]int, len(cp.Space.Lines))}
		for i, l := range cp.Space.Lines {
			p.lines = append(p.lines, len(l.Units))
			all.K[i] = len(l.Units)
		}
		var err error
		if p.none, err = cp.Patches(none); err != nil {
			return err
		}
		if p.persist, err = cp.Patches(all); err != nil {
			return err
		}
		pts = append(pts, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pts, st
}

func TestPlacement(t *testing.T) {
	b := analysistest.New().Map(1, base, 1<<16).
		Store(1, base, 8).Fence(2, trace.FenceSFENCE). // point 0 (fence)
		Fence(3, trace.FenceSFENCE).                   // nothing unpersisted? the store is dirty: point 1
		Store(4, base+64, 8).Persist(5, base, 128).    // point 2 (fence of the persist)
		Fence(6, trace.FenceMFENCE).                   // nothing unpersisted, nothing changed: skipped
		External(7, base+256, 8, trace.ExternalPersisted).
		External(7, base+320, 8, trace.ExternalPersisted). // same call: no point
		External(8, base+384, 8, trace.ExternalPersisted). // another call: point 4
		OpBegin(0, "i 1 2").Store(9, base+512, 4).Fence(10, trace.FenceLocked).OpEnd(0).
		Unmap(1, 11).Exit(0)
	pts, st := walk(t, b, Options{})
	var got []string
	for _, p := range pts {
		got = append(got, fmt.Sprintf("%s@%d/site%d/op%d/%v", p.kinds, p.cp.Event, p.cp.Site, p.cp.Op, p.lines))
	}
	// Events: 0 sites, 1 map, 2 store, 3 fence, 4 fence, 5 store, 6-7 clwb, 8 sfence, 9 mfence,
	// 10-12 ext, 13 op, 14 store, 15 locked, 16 op end, 17 unmap, 18 end.
	want := []string{
		"fence@3/site2/op-1/[1]",
		"fence@4/site3/op-1/[1]",
		"fence@8/site5/op-1/[1 1]",
		// 9 mfence and 10 (first call): nothing unpersisted, nothing changed: skipped.
		"library@12/site8/op-1/[]", // 11 joins 10's call; 12 is another call after a change
		"fence@15/site10/op0/[1]",
		"unmap@17/site11/op-1/[1]",
		// 18 END: nothing changed since the unmap, the region is gone: skipped.
	}
	if !slices.Equal(got, want) {
		t.Errorf("crash points:\n got %q\nwant %q", got, want)
	}
	if st.Skipped != 3 || st.Points != len(want) {
		t.Errorf("stats %+v, want 3 skipped", st)
	}
	if pts[4].cp.OpText != "i 1 2" {
		t.Errorf("op text %q", pts[5].cp.OpText)
	}
}

// TestClflushPoints: a clflush that persists a store written since the previous crash point gets
// a crash point before it; one of a clean line, one right after another point, and a clwb do not.
func TestClflushPoints(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).
		Store(1, base, 8).Store(2, base+64, 8). // value (line 0), token (line 1)
		Flush(3, trace.FlushCLFLUSH, base+64).  // event 4: point, both lines unpersisted
		Flush(4, trace.FlushCLFLUSH, base).     // event 5: nothing written since: none
		Flush(5, trace.FlushCLFLUSH, base+128). // clean line: none
		Store(6, base+192, 8).
		Flush(7, trace.FlushCLWB, base+192). // clwb: none (the fence has its point)
		Fence(8, trace.FenceSFENCE).         // event 9: point
		Store(9, base, 8).
		Flush(10, trace.FlushCLFLUSH, base). // event 11: point
		Exit(0)
	pts, _ := walk(t, b, Options{})
	var got []string
	for _, p := range pts {
		got = append(got, fmt.Sprintf("%s@%d%v", p.kinds, p.cp.Event, p.lines))
	}
	want := []string{"flush@4[1 1]", "fence@9[1]", "flush@11[1]"} // END: nothing left, nothing changed
	if !slices.Equal(got, want) {
		t.Errorf("crash points:\n got %q\nwant %q", got, want)
	}
}

func TestAfterStores(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).Store(1, base, 8).Store(2, base+8, 8).Exit(0)
	pts, _ := walk(t, b, Options{AfterStores: true})
	var kinds []string
	for _, p := range pts {
		kinds = append(kinds, fmt.Sprintf("%s%v", p.kinds, p.lines))
	}
	if want := []string{"store[1]", "store[2]", "end[2]"}; !slices.Equal(kinds, want) {
		t.Errorf("got %v want %v", kinds, want)
	}
}

func TestUnits(t *testing.T) {
	type unit struct {
		addr uint64
		size int
	}
	tests := []struct {
		name  string
		build func(b *analysistest.Builder)
		want  [][]unit // per line
		pend  []int
	}{
		{"aligned 8", func(b *analysistest.Builder) { b.Store(1, base+8, 8) }, [][]unit{{{base + 8, 8}}}, []int{0}},
		{"small", func(b *analysistest.Builder) { b.Store(1, base+9, 2) }, [][]unit{{{base + 9, 2}}}, []int{0}},
		{"16 bytes across a word boundary", func(b *analysistest.Builder) { b.Store(1, base+4, 16) },
			[][]unit{{{base + 4, 4}, {base + 8, 8}, {base + 16, 4}}}, []int{0}},
		{"two lines", func(b *analysistest.Builder) { b.Store(1, base+56, 16) },
			[][]unit{{{base + 56, 8}}, {{base + 64, 8}}}, []int{0, 0}},
		{"NT store pends its line", func(b *analysistest.Builder) {
			b.Store(1, base, 8).NTStore(2, base+8, 8).Store(3, base+16, 8)
		}, [][]unit{{{base, 8}, {base + 8, 8}, {base + 16, 8}}}, []int{2}},
		{"clwb pends", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Flush(2, trace.FlushCLWB, base).Store(3, base+64, 8)
		}, [][]unit{{{base, 8}}, {{base + 64, 8}}}, []int{1, 0}},
		{"clflush persists its line", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(1, base+64, 8).Flush(2, trace.FlushCLFLUSH, base)
		}, [][]unit{{{base + 64, 8}}}, []int{0}},
		{"persisted external write persists its lines", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(1, base+64, 8).External(2, base+8, 4, trace.ExternalPersisted)
		}, [][]unit{{{base + 64, 8}}}, []int{0}},
		{"external write not persisted is a unit", func(b *analysistest.Builder) {
			b.External(2, base+4, 8, 0)
		}, [][]unit{{{base + 4, 4}, {base + 8, 4}}}, []int{0}},
		{"tx commit persists added ranges", func(b *analysistest.Builder) {
			b.TxBegin(1).TxAdd(1, base, 8, 0).Store(2, base, 8).Store(2, base+128, 8).TxCommit(3).TxEnd(3)
		}, [][]unit{{{base + 128, 8}}}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := analysistest.New().Map(1, base, 1<<16)
			tt.build(b)
			b.Exit(0)
			pts, _ := walk(t, b, Options{})
			cp := pts[len(pts)-1].cp
			var got [][]unit
			var pend []int
			for _, l := range cp.Space.Lines {
				var us []unit
				for _, u := range l.Units {
					us = append(us, unit{u.Addr, u.Size})
				}
				got = append(got, us)
				pend = append(pend, l.Pending)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || !slices.Equal(pend, tt.pend) {
				t.Errorf("units %v pending %v, want %v %v", got, pend, tt.want, tt.pend)
			}
		})
	}
}

func TestClwbFenceDurable(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).
		Store(1, base, 8).Store(1, base+64, 8).Persist(2, base, 128).
		Store(3, base+128, 8).Fence(4, trace.FenceSFENCE).Exit(0)
	pts, _ := walk(t, b, Options{})
	if len(pts) != 3 || !slices.Equal(pts[0].lines, []int{1, 1}) || !slices.Equal(pts[1].lines, []int{1}) ||
		pts[1].cp.Space.Lines[0].Addr != base+128 {
		for _, p := range pts {
			t.Logf("%s %v", p.kinds, p.lines)
		}
		t.Fatal("want the persisted lines gone after their fence")
	}
}

// space builds a crash point with lines of the given unit counts (one 8-byte store per unit,
// in line order) and returns it (cloned).
func space(t *testing.T, counts ...int) *CrashPoint {
	b := analysistest.New().Map(1, base, 1<<20)
	for i, n := range counts {
		for j := 0; j < n; j++ {
			b.Store(uint32(i+1), base+uint64(i)*64+uint64(j)*8, 8)
		}
	}
	b.Exit(0)
	pts, _ := walk(t, b, Options{})
	return pts[len(pts)-1].cp
}

func collect(s *Strategy, sp *Space, o Options) []State {
	var out []State
	for st := range s.States(sp, o) {
		out = append(out, st)
	}
	return out
}

func TestCounts(t *testing.T) {
	cp := space(t, 2, 3)
	sp := cp.Space
	if sp.Size().Int64() != 12 || sp.Units() != 5 {
		t.Fatalf("size %v units %d, want 12 and 5", sp.Size(), sp.Units())
	}
	ex := collect(StrategyByName("exhaustive"), sp, Options{})
	seen := map[string]bool{}
	nprefix := 0
	for _, st := range ex {
		seen[fmt.Sprint(st.K)] = true
		if st.K[0] > 2 || st.K[1] > 3 {
			t.Errorf("bad state %v", st.K)
		}
		if st.Prefix {
			nprefix++
		}
	}
	if len(ex) != 12 || len(seen) != 12 {
		t.Errorf("exhaustive gave %d states (%d distinct), want 12", len(ex), len(seen))
	}
	pre := collect(StrategyByName("prefix"), sp, Options{})
	// Line 0's stores come first in program order.
	want := [][]int{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {2, 2}, {2, 3}}
	var got [][]int
	for _, st := range pre {
		got = append(got, st.K)
		if !st.Prefix {
			t.Errorf("prefix state %v not marked Prefix", st.K)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("prefix states %v, want %v", got, want)
	}
	if nprefix != 6 {
		t.Errorf("%d exhaustive states marked prefix, want 6", nprefix)
	}
	// Capped exhaustive: the full count stays exact.
	full, tested := StrategyByName("exhaustive").Count(sp, Options{MaxStates: 5})
	if full.Int64() != 12 || tested.Int64() != 5 || len(collect(StrategyByName("exhaustive"), sp, Options{MaxStates: 5})) != 5 {
		t.Errorf("capped: full %v tested %v", full, tested)
	}
	// Every strategy yields exactly its tested count.
	for _, s := range Strategies() {
		_, tested := s.Count(sp, Options{})
		if n := len(collect(s, sp, Options{})); int64(n) != tested.Int64() {
			t.Errorf("%s: yields %d states, counts %v", s.Name, n, tested)
		}
	}
}

func TestBigCount(t *testing.T) {
	counts := make([]int, 70)
	for i := range counts {
		counts[i] = 1
	}
	cp := space(t, counts...)
	want, _ := new(big.Int).SetString("1180591620717411303424", 10) // 2^70
	full, tested := StrategyByName("exhaustive").Count(cp.Space, Options{})
	if full.Cmp(want) != 0 || tested.Int64() != DefaultMaxStates {
		t.Errorf("full %v tested %v, want 2^70 = %v", full, tested, want)
	}
	s := &Summary{Stats: Stats{Points: 1}, Options: Options{}, Strategies: []StrategyCount{{Name: "exhaustive", Tested: tested, Full: full, Max: full}}}
	var buf bytes.Buffer
	s.WriteText(&buf, "t")
	if !bytes.Contains(buf.Bytes(), []byte("1180591620717411303424")) {
		t.Errorf("text output lacks the exact count:\n%s", buf.String())
	}
	// Past 30 digits, leading digits and the power of ten: 2^131072 (a 1 MiB memset's units).
	huge := new(big.Int).Lsh(big.NewInt(1), 131072)
	s.Strategies[0].Full, s.Strategies[0].Max = huge, huge
	buf.Reset()
	s.WriteText(&buf, "t")
	if !bytes.Contains(buf.Bytes(), []byte(" 4.0e+39456 ")) || buf.Len() > 2000 {
		t.Errorf("text output of 2^131072 is not 4.0e+39456 in a narrow table:\n%.2000s", buf.String())
	}
}

func TestPatches(t *testing.T) {
	b := analysistest.New().Map(1, base, 1<<16)
	storeBytes(b, 1, base, []byte{1, 1, 1, 1, 1, 1, 1, 1}).Persist(2, base, 8) // durable: 1s
	storeBytes(b, 3, base, []byte{2, 2, 2, 2})                                 // unit a: old 1111
	storeBytes(b, 4, base+2, []byte{3, 3, 3, 3})                               // unit b: old 2211
	storeBytes(b, 5, base+60, []byte{9, 9, 9, 9, 9, 9, 9, 9})                  // spans: units c (line 0), d (line 1)
	b.Exit(0)
	pts, _ := walk(t, b, Options{})
	cp := pts[len(pts)-1]
	sp := cp.cp.Space
	if !slices.Equal([]int{3, 1}, cp.lines) {
		t.Fatalf("lines %v", cp.lines)
	}
	if len(cp.persist) != 0 {
		t.Errorf("all persisted: patches %v, want none", cp.persist)
	}
	// None persisted: bytes 0-5 back to 1s, 60-67 back to 0.
	want := []Patch{{Region: 1, Path: "pool1", Offset: 0, Addr: base, Data: []byte{1, 1, 1, 1, 1, 1}},
		{Region: 1, Path: "pool1", Offset: 60, Addr: base + 60, Data: []byte{0, 0, 0, 0}},
		{Region: 1, Path: "pool1", Offset: 64, Addr: base + 64, Data: []byte{0, 0, 0, 0}}}
	if fmt.Sprint(cp.none) != fmt.Sprint(want) {
		t.Errorf("none persisted:\n got %v\nwant %v", cp.none, want)
	}
	// Only unit a persisted on line 0: bytes 2-5 back to 2,2,1,1.
	var got []Patch
	_, err := Walk(b.Reader(t), Options{}, func(c *CrashPoint) error {
		if c.Kind == AtEnd {
			var err error
			got, err = c.Patches(State{K: []int{1, 1}})
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[0].Data, []byte{2, 2, 1, 1}) || got[0].Offset != 2 {
		t.Errorf("a persisted: %v", got)
	}
	_ = sp
}

func TestRandomDeterministic(t *testing.T) {
	cp := space(t, 3, 4, 5, 2, 7)
	r := StrategyByName("random")
	o := Options{Seed: 7, Samples: 20}
	a, b := collect(r, cp.Space, o), collect(r, cp.Space, o)
	if len(a) != 20 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("random not deterministic or wrong count: %d %v / %v", len(a), a, b)
	}
	seen := map[string]bool{}
	for _, st := range a {
		seen[fmt.Sprint(st.K)] = true
	}
	if len(seen) != 20 {
		t.Errorf("duplicates: %d distinct", len(seen))
	}
	if c := collect(r, cp.Space, Options{Seed: 8, Samples: 20}); fmt.Sprint(c) == fmt.Sprint(a) {
		t.Errorf("another seed gave the same states")
	}
	small := space(t, 1, 1) // 4 states <= K: all of them
	if n := len(collect(r, small.Space, o)); n != 4 {
		t.Errorf("small space: %d states, want 4", n)
	}
}

func TestHeuristic(t *testing.T) {
	// Ten one-unit stores to ten lines in one segment.
	cp := space(t, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	h := StrategyByName("heuristic")
	tests := []struct {
		name string
		o    Options
		want int64
	}{
		{"H1 default 8 < 10 stores: program order only", Options{}, 11},
		{"H1 off: every combination", Options{H1: -1}, 1024},
		{"H1 10", Options{H1: 10}, 1024},
	}
	for _, tt := range tests {
		full, _ := h.Count(cp.Space, tt.o)
		n := len(collect(h, cp.Space, tt.o))
		if full.Int64() != tt.want || int64(n) != tt.want {
			t.Errorf("%s: count %v, yields %d, want %d", tt.name, full, n, tt.want)
		}
	}

	// H2 and H3: a dirty store 7 segments old, one 1 segment old, two of this segment.
	b := analysistest.New().Map(1, base, 1<<16).Store(1, base, 8)
	for i := 0; i < 6; i++ {
		b.Fence(2, trace.FenceSFENCE)
	}
	b.Store(3, base+64, 8).Fence(2, trace.FenceSFENCE).Store(4, base+128, 8).Store(5, base+192, 8).Exit(0)
	pts, _ := walk(t, b, Options{})
	sp := pts[len(pts)-1].cp.Space
	for _, tt := range []struct {
		name string
		o    Options
		want int64
	}{
		// H2 (age 5): the old store persisted; H3: segment 6's store before segment 7's two:
		// {} , {s3}, {s3,s4}, {s3,s5}, {s3,s4,s5} = 5.
		{"H2+H3", Options{}, 5},
		// No H2: the old store is its own group first: 1 + 1 + 1 + 3 = 6.
		{"H3 only", Options{H2: -1}, 6},
		// No H3 (one group of 3 stores after H2): 2^3 = 8.
		{"H2 only", Options{NoH3: true}, 8},
		{"none", Options{NoH3: true, H2: -1}, 16},
	} {
		full, _ := h.Count(sp, tt.o)
		sts := collect(h, sp, tt.o)
		if full.Int64() != tt.want || int64(len(sts)) != tt.want {
			t.Errorf("%s: count %v, yields %d, want %d", tt.name, full, len(sts), tt.want)
		}
		seen := map[string]bool{}
		for _, st := range sts {
			if seen[fmt.Sprint(st.K)] {
				t.Errorf("%s: duplicate %v", tt.name, st.K)
			}
			seen[fmt.Sprint(st.K)] = true
			if tt.o.H2 == 0 && st.K[0] != 1 {
				t.Errorf("%s: aged store not persisted in %v", tt.name, st.K)
			}
		}
	}
}

func TestTruncated(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).Store(1, base, 8) // no END
	var kinds []string
	st, err := Walk(b.Reader(t), Options{}, func(cp *CrashPoint) error {
		kinds = append(kinds, cp.Kind.String())
		return nil
	})
	if err == nil || !st.Truncated || !slices.Equal(kinds, []string{"end"}) {
		t.Errorf("err %v truncated %v kinds %v", err, st.Truncated, kinds)
	}
}

// TestAssumeDurable: a store reported as never durable, issued before an operation, is a unit
// of that operation's OP_BEGIN boundary (CrashPoint.Assumed names it) and of no crash point
// after it; the literal model keeps it everywhere. A store of the operation itself stays a unit
// of the operation's own crash points.
func TestAssumeDurable(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096).
		Store(1, base, 8). // record 2: initialisation, never flushed
		OpBegin(0, "set").Store(2, base+128, 8).Flush(3, trace.FlushCLWB, base+128).Fence(4, trace.FenceSFENCE).
		Store(5, base+256, 8). // record 7: never flushed, in operation 0
		OpEnd(0).
		OpBegin(1, "set").Store(6, base+384, 8).Flush(7, trace.FlushCLWB, base+384).Fence(8, trace.FenceSFENCE).OpEnd(1).
		Exit(0)
	never := []px86.StoreState{{ID: 2, Addr: base, Size: 8}, {ID: 7, Addr: base + 256, Size: 8}}
	for _, tc := range []struct {
		name    string
		assume  []px86.StoreState
		fences  [][]uint64 // the stores that are units at each fence's crash point
		assumed [][]uint64 // the stores CrashPoint.Assumed names at each OP_BEGIN
		n       int
	}{
		{"assumed", never, [][]uint64{{4}, {10}}, [][]uint64{{2}, {7}}, 2},
		{"literal", nil, [][]uint64{{2, 4}, {2, 7, 10}}, [][]uint64{nil, nil}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fences, assumed [][]uint64
			st, err := Walk(b.Reader(t), Options{OpBoundaries: true, AssumeDurable: tc.assume}, func(cp *CrashPoint) error {
				var ids []uint64
				for _, l := range cp.Space.Lines {
					for _, u := range l.Units {
						ids = append(ids, u.Store)
					}
				}
				switch cp.Kind {
				case BeforeFence:
					fences = append(fences, ids)
				case OpBegin:
					var a []uint64
					for _, s := range cp.Assumed {
						if !slices.Contains(ids, uint64(s.ID)) {
							return fmt.Errorf("assumed store %d is not a unit at the boundary", s.ID)
						}
						a = append(a, uint64(s.ID))
					}
					assumed = append(assumed, a)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(fences) != fmt.Sprint(tc.fences) || fmt.Sprint(assumed) != fmt.Sprint(tc.assumed) || st.Assumed != tc.n {
				t.Errorf("units at the fences %v, assumed %v (%d); want %v, %v (%d)", fences, assumed, st.Assumed, tc.fences, tc.assumed, tc.n)
			}
		})
	}
}

// TestDelta: at every crash point of an operation, the image written at its OP_BEGIN with the
// pages written since (Delta) and a state's patches is byte for byte the image WriteImage
// writes for that state.
func TestDelta(t *testing.T) {
	b := analysistest.New().Map(1, base, 3*4096+100) // a partial last page
	storeBytes(b, 1, base+10, []byte{1, 2, 3, 4, 5, 6, 7, 8}).Persist(2, base+10, 8)
	b.OpBegin(0, "op")
	storeBytes(b, 3, base+4096, []byte{9, 9, 9, 9, 9, 9, 9, 9})
	storeBytes(b, 4, base+10, []byte{7, 7})
	b.Fence(5, trace.FenceSFENCE)
	storeBytes(b, 6, base+3*4096+64, []byte{5, 5, 5, 5})
	storeBytes(b, 7, base+2*4096+4090, []byte{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8}) // across two pages
	b.Fence(8, trace.FenceSFENCE).OpEnd(0).Exit(0)
	dir := t.TempDir()
	baseImg := dir + "/base.img"
	var gen uint64
	checked := 0
	_, err := Walk(b.Reader(t), Options{OpBoundaries: true}, func(cp *CrashPoint) error {
		if cp.Kind == OpBegin {
			gen = cp.Generation()
			return cp.WriteImage(baseImg, 1, cp.Space.FullState())
		}
		if cp.Op < 0 || cp.Kind == OpEnd {
			return nil
		}
		delta, n, err := cp.Delta(1, gen)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("crash point %d: no delta", cp.Index)
		}
		for st := range StrategyByName("exhaustive").States(cp.Space, Options{}) {
			want, got := dir+"/want.img", dir+"/got.img"
			if err := cp.WriteImage(want, 1, st); err != nil {
				return err
			}
			data, err := os.ReadFile(baseImg)
			if err != nil {
				return err
			}
			if err := os.WriteFile(got, data, 0o644); err != nil {
				return err
			}
			ps, err := cp.RegionPatches(1, st)
			if err != nil {
				return err
			}
			if err := ApplyPatches(got, append(slices.Clone(delta), ps...)); err != nil {
				return err
			}
			w, _ := os.ReadFile(want)
			g, _ := os.ReadFile(got)
			if !bytes.Equal(w, g) {
				return fmt.Errorf("crash point %d state %v: base+delta+patches differs from WriteImage", cp.Index, st.K)
			}
			checked++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 4 {
		t.Errorf("%d states checked", checked)
	}
}

// TestLineContents checks each line's distinct contents at the last crash point: k = 0..n
// units persisted, deduplicated, with the smallest k of each.
func TestLineContents(t *testing.T) {
	line := func(set map[int]byte) [LineSize]byte {
		var l [LineSize]byte
		for i, v := range set {
			l[i] = v
		}
		return l
	}
	ones := map[int]byte{0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1}
	with := func(m map[int]byte, kv ...int) map[int]byte {
		c := maps.Clone(m)
		for i := 0; i < len(kv); i += 2 {
			c[kv[i]] = byte(kv[i+1])
		}
		return c
	}
	tests := []struct {
		name   string
		stores func(b *analysistest.Builder)
		line   int
		values [][LineSize]byte
		minK   []int
		of     []int
	}{
		{"three units, all distinct", func(b *analysistest.Builder) {
			storeBytes(b, 3, base, []byte{2, 2, 2, 2})
			storeBytes(b, 4, base+2, []byte{3, 3, 3, 3})
			storeBytes(b, 5, base+60, []byte{9, 9, 9, 9, 9, 9, 9, 9})
		}, 0, [][LineSize]byte{
			line(ones),
			line(with(ones, 0, 2, 1, 2, 2, 2, 3, 2)),
			line(with(ones, 0, 2, 1, 2, 2, 3, 3, 3, 4, 3, 5, 3)),
			line(with(ones, 0, 2, 1, 2, 2, 3, 3, 3, 4, 3, 5, 3, 60, 9, 61, 9, 62, 9, 63, 9)),
		}, []int{0, 1, 2, 3}, []int{0, 1, 2, 3}},
		{"the second line of a spanning store", func(b *analysistest.Builder) {
			storeBytes(b, 5, base+60, []byte{9, 9, 9, 9, 9, 9, 9, 9})
		}, 1, [][LineSize]byte{line(nil), line(map[int]byte{0: 9, 1: 9, 2: 9, 3: 9})}, []int{0, 1}, []int{0, 1}},
		{"a store of the bytes already there adds no content", func(b *analysistest.Builder) {
			storeBytes(b, 3, base, []byte{1, 1})
			storeBytes(b, 4, base+4, []byte{7})
			storeBytes(b, 6, base+4, []byte{1})
		}, 0, [][LineSize]byte{line(ones), line(with(ones, 4, 7))}, []int{0, 2}, []int{0, 0, 1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := analysistest.New().Map(1, base, 1<<16)
			storeBytes(b, 1, base, []byte{1, 1, 1, 1, 1, 1, 1, 1}).Persist(2, base, 8)
			tt.stores(b)
			b.Exit(0)
			var got Contents
			_, err := Walk(b.Reader(t), Options{}, func(c *CrashPoint) error {
				if c.Kind != AtEnd {
					return nil
				}
				if _, err := c.LineContents(len(c.Space.Lines)); err == nil {
					t.Error("a line out of range: no error")
				}
				var err error
				got, err = c.LineContents(tt.line)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.MinK, tt.minK) || !slices.Equal(got.Of, tt.of) || !slices.Equal(got.Values, tt.values) {
				t.Errorf("minK %v of %v, want %v %v; values\n%v\nwant\n%v", got.MinK, got.Of, tt.minK, tt.of, got.Values, tt.values)
			}
		})
	}
	pts, _ := walk(t, analysistest.New().Map(1, base, 1<<16).Store(1, base, 8).Exit(0), Options{})
	if _, err := pts[0].cp.LineContents(0); err == nil {
		t.Error("a crash point outside its callback: no error")
	}
}

// TestTxBoundaries: with TxBoundaries, the TX_END of every outermost transaction that committed
// inside an operation is a TxEnd boundary (not a crash point): not a nested level's, not an
// aborted transaction's, not one outside operations. Quiet says whether another operation in
// flight had written to PM by then; LastStoreOf gives each operation's latest store.
func TestTxBoundaries(t *testing.T) {
	b := analysistest.New().Map(1, base, 4096)
	b.TxBegin(1).TxAdd(2, base, 8, 0).Store(3, base, 8).TxCommit(4).TxEnd(5) // outside operations
	b.Thread(1).OpBegin(0, "a").Thread(2).OpBegin(1, "b")
	b.Thread(1).TxBegin(1).TxAdd(2, base, 8, 0).Store(3, base, 8)
	b.TxBegin(6).TxCommit(7).TxEnd(8) // nested: no boundary
	b.TxCommit(4).TxEnd(5)            // 0's first: quiet, 1 has written nothing
	b.Thread(2).Store(9, base+64, 8).Persist(10, base+64, 8)
	b.Thread(1).TxBegin(1).TxAdd(2, base+128, 8, 0).Store(11, base+128, 8).TxCommit(4).TxEnd(5) // 0's second: 1 has written
	b.TxBegin(1).TxAdd(2, base+192, 8, 0).Store(12, base+192, 8).TxAbort(13).TxEnd(5)           // aborted: none
	b.Thread(2).OpEnd(1).Thread(1)
	b.TxBegin(1).TxAdd(2, base+256, 8, 0).Store(14, base+256, 8).TxCommit(4).TxEnd(5) // 0's third: alone, quiet
	b.OpEnd(0).Exit(0)
	var got []string
	_, err := Walk(b.Reader(t), Options{OpBoundaries: true, TxBoundaries: true}, func(cp *CrashPoint) error {
		switch cp.Kind {
		case TxEnd:
			if cp.Index != -1 {
				t.Errorf("TxEnd with index %d", cp.Index)
			}
			got = append(got, fmt.Sprintf("op%d quiet=%v in-flight=%v last0=%d last1=%d", cp.Op, cp.Quiet, cp.InFlight, cp.LastStoreOf(0), cp.LastStoreOf(1)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"op0 quiet=true in-flight=[0 1] last0=3 last1=0",
		"op0 quiet=false in-flight=[0 1] last0=11 last1=9",
		"op0 quiet=true in-flight=[0] last0=14 last1=0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("TxEnd boundaries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without the option, none.
	n := 0
	if _, err := Walk(b.Reader(t), Options{OpBoundaries: true}, func(cp *CrashPoint) error {
		if cp.Kind == TxEnd {
			n++
		}
		return nil
	}); err != nil || n != 0 {
		t.Errorf("without TxBoundaries: %d TxEnd, %v", n, err)
	}
}

// TestRandomIndependentOfMapping checks that the random strategy chooses the same states at a
// crash point whatever address its pool was mapped at: two recordings of one run differ in that
// address only (a program's mmap lands elsewhere each time).
func TestRandomIndependentOfMapping(t *testing.T) {
	space := func(base uint64) *Space {
		g := &image.Region{ID: 1, Base: base, Length: 1 << 20}
		sp := &Space{Segment: 3}
		for i := uint64(0); i < 6; i++ {
			l := &Line{Addr: base + 64*i, Region: g}
			for j := uint64(0); j < 3; j++ {
				l.Units = append(l.Units, Unit{Seq: 10*i + j, Addr: base + 64*i + 8*j, Size: 8})
			}
			sp.Lines = append(sp.Lines, l)
		}
		return sp
	}
	a, b := space(0x7f0000000000), space(0x7f1234560000)
	ra, rb := a.rng(7), b.rng(7)
	for i := 0; i < 16; i++ {
		if x, y := ra.Uint64(), rb.Uint64(); x != y {
			t.Fatalf("draw %d: %#x at one mapping, %#x at another", i, x, y)
		}
	}
}
