package pmdk

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

// poolHeader returns the first bytes of a libpmemobj pool file with the given descriptor.
func poolHeader(sig string, lanes, nlanes, heap uint64) []byte {
	b := make([]byte, 8192)
	copy(b, sig)
	binary.LittleEndian.PutUint64(b[poolDescriptorAt:], lanes)
	binary.LittleEndian.PutUint64(b[poolDescriptorAt+8:], nlanes)
	binary.LittleEndian.PutUint64(b[poolDescriptorAt+16:], heap)
	return b
}

func TestScratchRanges(t *testing.T) {
	const size = 160 << 20
	for _, tc := range []struct {
		name    string
		hdr     []byte
		size    int64
		want    [][2]int64
		wantErr bool
	}{
		// The values of a pool mapcli created with PMDK 1.12's defaults.
		{"pmdk defaults", poolHeader(poolSignature, 8192, 1024, 3153920), size, [][2]int64{{6688, 3153920}}, false},
		{"heap past the lanes", poolHeader(poolSignature, 8192, 4, 65536), size, [][2]int64{{6688, 8192 + 4*3072}}, false},
		{"not a libpmemobj pool", poolHeader("PMEMBLK\x00", 8192, 1024, 3153920), size, nil, false},
		{"a short file", []byte("PMEMOBJ\x00"), 8, nil, false},
		{"lanes inside the descriptor", poolHeader(poolSignature, 4096, 1, 3153920), size, nil, true},
		{"no lanes", poolHeader(poolSignature, 8192, 0, 3153920), size, nil, true},
		{"too many lanes", poolHeader(poolSignature, 8192, 1<<40, 3153920), size, nil, true},
		{"lanes over the heap", poolHeader(poolSignature, 8192, 1024, 3153919), size, nil, true},
		{"heap past the file", poolHeader(poolSignature, 8192, 1024, 3153920), 3153919, nil, true},
		{"overflowing offsets", poolHeader(poolSignature, 1<<63, 1<<20, 1<<63), size, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ScratchRanges(bytes.NewReader(tc.hdr), tc.size)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ScratchRanges = %v, want %v", got, tc.want)
			}
		})
	}
}

// FuzzScratchRanges: any header gives ranges inside the file and past the descriptor, or none.
func FuzzScratchRanges(f *testing.F) {
	f.Add(poolHeader(poolSignature, 8192, 1024, 3153920), int64(160<<20))
	f.Add([]byte("PMEMOBJ\x00"), int64(8))
	f.Fuzz(func(t *testing.T, hdr []byte, size int64) {
		rs, err := ScratchRanges(bytes.NewReader(hdr), size)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r[0] < poolRuntimeAt || r[1] <= r[0] || r[1] > size {
				t.Fatalf("range %v outside a %d-byte file", r, size)
			}
		}
	})
}
