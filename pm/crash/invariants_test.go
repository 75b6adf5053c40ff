package crash

import (
	"fmt"
	"slices"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/trace"
)

// lastPoint walks b (ended by Exit here) and returns its last crash point of kind k.
func lastPoint(t *testing.T, b *analysistest.Builder, k PointKind) *CrashPoint {
	t.Helper()
	pts, _ := walk(t, b.Exit(0), Options{})
	for i := len(pts) - 1; i >= 0; i-- {
		if pts[i].cp.Kind == k {
			return pts[i].cp
		}
	}
	t.Fatalf("no %s crash point", k)
	return nil
}

func ord(id int, before, after uint32) Invariant {
	return Invariant{ID: id, Rule: "RO1", Before: before, After: after, Text: fmt.Sprintf("%d before %d", before, after)}
}

func atom(id int, sites ...uint32) Invariant {
	return Invariant{ID: id, Rule: "RA1", Sites: sites, Text: fmt.Sprint(sites)}
}

func TestInvariantsStrategy(t *testing.T) {
	inv := StrategyByName("invariants")
	if inv == nil || !inv.NeedsInvariants {
		t.Fatal("no invariants strategy")
	}
	const L = 64
	tests := []struct {
		name  string
		build func(b *analysistest.Builder)
		kind  PointKind
		invs  []Invariant
		want  []string // "K/ids" in yield order
	}{
		{"ordering across lines", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+L, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, []string{"[0 1]/[1]"}},
		{"ordering: same line, Before first: infeasible", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+8, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, nil},
		{"ordering: After stored first (a token before its key): persisting it alone breaks the pair", func(b *analysistest.Builder) {
			b.Store(2, base, 8).Store(1, base+L, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, []string{"[1 0]/[1]"}},
		{"ordering: After stored first, two pairs: one state per After instance", func(b *analysistest.Builder) {
			b.Store(2, base, 8).Store(1, base+L, 8).Store(2, base+2*L, 8).Store(1, base+3*L, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, []string{"[1 0 0 0]/[1]", "[0 0 1 0]/[1]"}},
		{"ordering: After stored first, its Before on the same line after it: still feasible", func(b *analysistest.Builder) {
			b.Store(2, base, 8).Store(1, base+8, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, []string{"[1]/[1]"}},
		{"ordering: a Before after the next After pairs with that one, not the first", func(b *analysistest.Builder) {
			b.Store(2, base, 8).Store(2, base+L, 8).Store(1, base+2*L, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, []string{"[0 1 0]/[1]"}},
		{"ordering: an earlier Before on the After's line persists with it, another does not", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(1, base+L, 8).Store(2, base+L+8, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, []string{"[0 2]/[1]"}},
		{"ordering: one state per After instance", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+L, 8).Store(1, base+2*L, 8).Store(2, base+3*L, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, []string{"[0 1 0 0]/[1]", "[0 0 0 1]/[1]"}},
		{"ordering: a store across two lines persists whole", func(b *analysistest.Builder) {
			b.Store(1, base+2*L, 8).Store(2, base+L-4, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, []string{"[1 1 0]/[1]"}},
		{"ordering: Before already durable", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Persist(9, base, 8).Store(2, base+L, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2)}, nil},
		{"atomicity across lines: both directions", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+L, 8)
		}, BeforeFence, []Invariant{atom(1, 1, 2)}, []string{"[1 0]/[1]", "[0 1]/[1]"}},
		{"atomicity on one line: only the program-order split", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+8, 8)
		}, BeforeFence, []Invariant{atom(1, 1, 2)}, []string{"[1]/[1]"}},
		{"atomicity of one site: two stores of it", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(1, base+L, 8)
		}, BeforeFence, []Invariant{atom(1, 1)}, []string{"[1 0]/[1]", "[0 1]/[1]"}},
		{"atomicity of one site: a single store", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+L, 8)
		}, BeforeFence, []Invariant{atom(1, 1)}, nil},
		{"atomicity of two sites: two stores of one site are not a violation", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(1, base+L, 8)
		}, BeforeFence, []Invariant{atom(1, 1, 2)}, nil},
		// (#3 and #5 form a cycle: 2 stored after 1 does not break #5, an atomicity question.)
		{"a state violating several invariants is yielded once with all of them", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+L, 8)
		}, BeforeFence, []Invariant{atom(7, 1, 2), ord(3, 1, 2), ord(5, 2, 1)}, []string{"[1 0]/[7]", "[0 1]/[3 7]"}},
		{"a state violating only through another store than its own is not yielded", func(b *analysistest.Builder) {
			// Store 3's state persists 2 with it (its line's prefix), breaking #1 through 2; 3's
			// own pair (4, earlier on its line) is persisted too.
			b.Store(1, base, 8).Store(4, base+L, 8).Store(2, base+L+8, 8).Store(3, base+L+16, 8)
		}, BeforeFence, []Invariant{ord(1, 1, 2), ord(2, 4, 3)}, []string{"[0 2]/[1]"}},
		{"library point", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+L, 8).External(9, base+4*L, 8, trace.ExternalPersisted)
		}, BeforeLibrary, []Invariant{ord(1, 1, 2)}, []string{"[0 1]/[1]"}},
		{"no invariants", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+L, 8)
		}, BeforeFence, nil, nil},
		{"unrelated sites", func(b *analysistest.Builder) {
			b.Store(1, base, 8).Store(2, base+L, 8)
		}, BeforeFence, []Invariant{ord(1, 3, 4), atom(2, 5, 6)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := analysistest.New().Map(1, base, 1<<16)
			tt.build(b)
			if tt.kind == BeforeFence {
				b.Fence(20, trace.FenceSFENCE)
			}
			cp := lastPoint(t, b, tt.kind)
			o := Options{Invariants: tt.invs}
			var got []string
			for _, st := range collect(inv, cp.Space, o) {
				got = append(got, fmt.Sprintf("%v/%v", st.K, st.Invariants))
				if err := cp.Space.Check(st); err != nil {
					t.Error(err)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("states %q, want %q", got, tt.want)
			}
			full, tested := inv.Count(cp.Space, o)
			if full.Int64() != int64(len(tt.want)) || tested.Int64() != int64(len(got)) {
				t.Errorf("count %v/%v, yields %d", full, tested, len(got))
			}
		})
	}
}

// TestInvariantsPoints checks that only fence and library points yield states, that the cap
// applies and that an ordering violation is never a program-order prefix.
func TestInvariantsPoints(t *testing.T) {
	inv := StrategyByName("invariants")
	o := Options{Invariants: []Invariant{ord(1, 1, 2), atom(2, 3)}}
	b := analysistest.New().Map(1, base, 1<<16)
	for i := uint64(0); i < 6; i++ {
		b.Store(1, base+2*i*64, 8).Store(2, base+(2*i+1)*64, 8).Store(3, base+(2*i+1)*64+8, 8)
	}
	b.Fence(20, trace.FenceSFENCE).Store(1, base+4096, 8).Store(2, base+4096+64, 8).Unmap(1, 21).Exit(0)
	pts, _ := walk(t, b, Options{})
	yielded := map[string]int{}
	for _, p := range pts {
		sts := collect(inv, p.cp.Space, o)
		yielded[p.kinds] += len(sts)
		full, _ := inv.Count(p.cp.Space, o)
		if full.Int64() != int64(len(sts)) {
			t.Errorf("%s: count %v, yields %d", p.kinds, full, len(sts))
		}
		seen := map[string]bool{}
		for _, st := range sts {
			if seen[fmt.Sprint(st.K)] {
				t.Errorf("duplicate state %v", st.K)
			}
			seen[fmt.Sprint(st.K)] = true
			if slices.Contains(st.Invariants, 1) && st.Prefix {
				t.Errorf("ordering violation %v marked as a program-order prefix", st.K)
			}
		}
	}
	// Before the fence: each of the 6 site-2 stores persisted alone (without its line's
	// site-3 store: ordering only; with it, site 3 persisted and the other five not:
	// ordering + atomicity) -> 12 states; the unmap yields none.
	if yielded["fence"] != 12 || yielded["unmap"] != 0 {
		t.Errorf("states per kind %v, want 12 before the fence and none before the unmap", yielded)
	}
	_, tested := inv.Count(pts[0].cp.Space, Options{Invariants: o.Invariants, MaxStates: 5})
	if n := len(collect(inv, pts[0].cp.Space, Options{Invariants: o.Invariants, MaxStates: 5})); n != 5 || tested.Int64() != 5 {
		t.Errorf("capped: %d states, tested %v", n, tested)
	}
}

// TestConcurrentOperations checks the operations of crash points and boundaries when threads
// interleave OP_BEGIN and OP_END: Op is the operation of the point's thread (else the latest
// begun), InFlight every operation begun and not ended, and an OP_END names its own operation.
func TestConcurrentOperations(t *testing.T) {
	b := analysistest.New().Map(1, base, 1<<16).
		Thread(1).OpBegin(0, "a").
		Thread(2).OpBegin(1, "b").
		Thread(1).Store(1, base, 8).Fence(2, trace.FenceSFENCE).    // op 0; 0 and 1 in flight
		Thread(3).Store(1, base+64, 8).Fence(2, trace.FenceSFENCE). // no op of its own: the latest, 1
		Thread(1).OpEnd(0).
		Thread(2).Store(1, base+128, 8).Fence(2, trace.FenceSFENCE). // op 1 alone
		OpEnd(1).
		Thread(1).Store(1, base+192, 8).Fence(2, trace.FenceSFENCE). // none
		OpBegin(2, "c").OpBegin(3, "d").                             // 2 ends at 3's begin (same thread)
		Exit(0)
	var got []string
	_, err := Walk(b.Reader(t), Options{OpBoundaries: true}, func(cp *CrashPoint) error {
		got = append(got, fmt.Sprintf("%s:%d%q%v", cp.Kind, cp.Op, cp.OpText, cp.InFlight))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`op-begin:0"a"[0]`, `op-begin:1"b"[0 1]`,
		`fence:0"a"[0 1]`, `fence:1"b"[0 1]`,
		`op-end:0"a"[1]`, `fence:1"b"[1]`, `op-end:1"b"[]`,
		`fence:-1""[]`, `op-begin:2"c"[2]`, `op-end:2"c"[]`, `op-begin:3"d"[3]`, `end:3"d"[3]`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("points:\n got %q\nwant %q", got, want)
	}
}
