package px86

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestDenseIndex runs one random program on a model that indexes every line in its hash table
// and on models with registered ranges (dense tables), including ranges registered and removed
// while stores are unpersisted, and checks that they agree on every effect and on the final
// unpersisted entries.
func TestDenseIndex(t *testing.T) {
	const base, span = 0x100000, 64 * 1024 // 1024 lines
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		ref, _ := New(64)
		dense, _ := New(64)
		dense.AddRange(base, span/2)        // part of the addresses
		dense.AddRange(base+span/2+64, 640) // another range; the gap stays in the hash table
		dense.AddRange(base+span/2+128, 64) // overlaps: ignored
		addr := func() uint64 { return base - 256 + rng.Uint64N(span+512) }
		for i := 0; i < 20000; i++ {
			o := Origin{Site: uint32(i)}
			var got, want any
			switch k := rng.IntN(100); {
			case k < 50:
				a, n := addr(), 1+rng.Uint64N(100)
				var fl uint8
				if rng.IntN(20) == 0 {
					fl = NT
				}
				want, got = ref.Store(StoreID(i), o, a, n, fl), dense.Store(StoreID(i), o, a, n, fl)
			case k < 80:
				a, kind := addr(), uint8(1+rng.IntN(3))
				want, got = ref.Flush(kind, a, o), dense.Flush(kind, a, o)
			case k < 90:
				want, got = ref.Fence(0), dense.Fence(0)
			case k < 94:
				a, n := addr(), rng.Uint64N(1000)
				want, got = ref.PersistRange(a, n), dense.PersistRange(a, n)
			case k < 98:
				a, n := addr(), rng.Uint64N(1000)
				want, got = ref.DropRange(a, n), dense.DropRange(a, n)
			case k < 99:
				a, n := addr(), rng.Uint64N(3000)
				want, got = ref.Overlapping(nil, a, n), dense.Overlapping(nil, a, n)
			default:
				a := base + rng.Uint64N(4)*span/4
				if rng.IntN(2) == 0 {
					dense.AddRange(a, span/4)
				} else {
					dense.RemoveRange(a, span/4)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d: dense model gives %+v, want %+v", seed, i, got, want)
			}
			if ref.Len() != dense.Len() || ref.Lines() != dense.Lines() || ref.PendingLen() != dense.PendingLen() {
				t.Fatalf("seed %d step %d: counts differ", seed, i)
			}
		}
		all := func(m *Model) map[StoreState]bool {
			set := map[StoreState]bool{}
			m.ForEachUnpersisted(func(s StoreState) bool { set[s] = true; return true })
			return set
		}
		if a, b := all(ref), all(dense); !reflect.DeepEqual(a, b) || len(a) != ref.Len() {
			t.Fatalf("seed %d: final entries differ (%d, %d)", seed, len(a), len(b))
		}
		if got, want := dense.DropRange(0, 1<<62), ref.DropRange(0, 1<<62); got != want || dense.Len() != 0 || dense.lines.n != 0 || dense.outside != 0 {
			t.Fatalf("seed %d: drop all %d, want %d; %d lines left", seed, got, want, dense.lines.n)
		}
	}
}
