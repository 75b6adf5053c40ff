package explore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scry-pm/scry/pm/crash"
)

// TestImageKey: images are keyed by their net difference from the base file, so different
// patch sets that give the same bytes get one key, an image equal to the base is recognised,
// and the workload line the run starts at is part of the key.
func TestImageKey(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base.img")
	if err := os.WriteFile(base, []byte("0123456789abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	patch := func(off int64, s string) crash.Patch { return crash.Patch{Offset: off, Data: []byte(s)} }
	// The crash point's pages: bytes 4-7 rewritten, of which 4 and 7 changed.
	net, ok := netDelta(base, []crash.Patch{patch(4, "X56Y")})
	if !ok || len(net) != 2 || net[0].Offset != 4 || string(net[1].Data) != "Y" {
		t.Fatalf("net delta %+v %v", net, ok)
	}
	var keys []string
	for _, tc := range []struct {
		name       string
		ps         []crash.Patch
		next       int
		sameAs     int // index of an earlier case with the same key, -1 none
		wantIsBase bool
	}{
		{"point image", nil, 3, -1, false},
		{"both changes rolled back", []crash.Patch{patch(4, "4"), patch(7, "7")}, 3, -1, true},
		{"rolled back with their neighbours", []crash.Patch{patch(3, "345"), patch(6, "678")}, 3, -1, true},
		{"a no-op patch", []crash.Patch{patch(0, "0")}, 3, 0, false},
		{"one change rolled back", []crash.Patch{patch(4, "4")}, 3, -1, false},
		{"another run input", nil, 4, -1, false},
		{"new bytes", []crash.Patch{patch(4, "4"), patch(12, "Z")}, 3, -1, false},
	} {
		key, isBase := imageKey(base, net, tc.ps, tc.next)
		if isBase != tc.wantIsBase {
			t.Errorf("%s: is base %v", tc.name, isBase)
		}
		t.Logf("%s: %s", tc.name, key)
		keys = append(keys, key)
		if tc.sameAs >= 0 && keys[tc.sameAs] != key {
			t.Errorf("%s: key differs from case %d's", tc.name, tc.sameAs)
		}
		if tc.sameAs < 0 && !isBase {
			for j, k := range keys[:len(keys)-1] {
				if k == key {
					t.Errorf("%s: same key as case %d", tc.name, j)
				}
			}
		}
	}
}
