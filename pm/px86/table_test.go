package px86

import (
	"math/rand/v2"
	"testing"
)

func TestLineTable(t *testing.T) {
	var tab lineTable[NoPayload]
	tab.init(2)
	ref := map[uint64]*line[NoPayload]{}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		idx := rng.Uint64N(5000)
		if rng.IntN(2) == 0 {
			if ref[idx] == nil {
				l := &line[NoPayload]{idx: idx}
				ref[idx] = l
				tab.put(l)
			}
		} else {
			delete(ref, idx)
			tab.del(idx)
		}
		if i%1000 == 0 {
			for k := uint64(0); k < 5000; k++ {
				if tab.get(k) != ref[k] {
					t.Fatalf("step %d: get(%d) = %v, want %v", i, k, tab.get(k), ref[k])
				}
			}
			if tab.n != len(ref) {
				t.Fatalf("n = %d, want %d", tab.n, len(ref))
			}
		}
	}
}
