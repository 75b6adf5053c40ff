package explore

import (
	"fmt"
	"testing"
)

// FuzzParseShard: any --shard value is shard I of N with 0 <= I < N, which prints back as
// itself, or an error, never a panic.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "-1/2", "1/0", "a/b", "1/2/3", "1/2x", " 1/2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("%q accepted as %d/%d", s, sh.Index, sh.Count)
		}
		again, err := ParseShard(fmt.Sprintf("%d/%d", sh.Index, sh.Count))
		if err != nil || again.Index != sh.Index || again.Count != sh.Count {
			t.Fatalf("%q: %d/%d does not parse back (%v)", s, sh.Index, sh.Count, err)
		}
	})
}
