package trace

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestUvarintWide checks the 8-byte-load decoder against encoding/binary for every length,
// at the end of a window and with trailing bytes of every kind.
func TestUvarintWide(t *testing.T) {
	vals := []uint64{0, 1, 127, 128, 255, 300, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<28 + 5, 1<<35 - 1,
		1 << 42, 1<<49 + 3, 1<<56 - 1, 1 << 56, 1<<63 + 1, math.MaxUint64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vals = append(vals, rng.Uint64()>>rng.IntN(64))
	}
	for _, v := range vals {
		for _, tail := range [][]byte{nil, {0}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0x80, 1, 2}} {
			buf := binary.AppendUvarint([]byte{0xaa}, v)
			n := len(buf) - 1
			buf = append(buf, tail...)
			got, next := uvarint(buf, 1)
			if got != v || next != 1+n {
				t.Fatalf("uvarint(%x) = %d, %d; want %d, %d", buf, got, next, v, 1+n)
			}
		}
	}
	// Truncated and overlong varints still fail.
	if _, i := uvarint([]byte{0x80, 0x80}, 0); i >= 0 {
		t.Errorf("truncated varint decoded")
	}
	over := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0}
	if _, i := uvarint(over, 0); i != -2 {
		t.Errorf("overlong varint: index %d, want -2", i)
	}
}
