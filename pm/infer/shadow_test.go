package infer

import (
	"math/rand/v2"
	"testing"
)

// TestShadow compares the word-granular shadow with a byte map under random writes, clears,
// reads and drops of random alignment and size.
func TestShadow(t *testing.T) {
	const base, span = 0x100000, 3 * pageSize
	rng := rand.New(rand.NewPCG(3, 4))
	s := newShadow()
	ref := map[uint64]writer{}
	refRead := func(addr, size uint64) writer {
		var best writer
		for a := addr; a < addr+size; a++ {
			if w := ref[a]; w.event() > best.event() {
				best = w
			}
		}
		return best
	}
	for i := 1; i < 20000; i++ {
		addr := base + rng.Uint64N(span)
		size := 1 + rng.Uint64N(24)
		if rng.IntN(50) == 0 {
			size = rng.Uint64N(2 * pageSize)
		}
		switch rng.IntN(10) {
		case 0: // initial content
			s.write(addr, size, 0)
			for a := addr; a < addr+size; a++ {
				delete(ref, a)
			}
		case 1:
			if rng.IntN(20) == 0 {
				s.drop(addr, size)
				for a := addr; a < addr+size; a++ {
					delete(ref, a)
				}
			}
		case 2, 3, 4, 5:
			w := mkWriter(uint64(i), int32(rng.IntN(5)))
			s.write(addr, size, w)
			for a := addr; a < addr+size; a++ {
				ref[a] = w
			}
		default:
			if got, want := s.read(addr, size), refRead(addr, size); got != want {
				t.Fatalf("step %d: read(%#x, %d) = %x, want %x", i, addr, size, got, want)
			}
		}
	}
	if len(s.bytes) > len(s.pages)*pageWords {
		t.Errorf("%d mixed words for %d pages", len(s.bytes), len(s.pages))
	}
}
