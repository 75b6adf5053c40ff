package shard

import (
	"fmt"
	"testing"
)

// Parse takes shard I of N with 0 <= I < N, and refuses anything else.
func ExampleParse() {
	for _, s := range []string{"0/4", "3/4", "0/1", "4/4", "-1/4", "1/0", "1", "1/4x", "a/b"} {
		sh, err := Parse(s)
		fmt.Println(s, sh, err)
	}
	// Output:
	// 0/4 0/4 <nil>
	// 3/4 3/4 <nil>
	// 0/1 0/1 <nil>
	// 4/4 0/0 shard 4/4: want I/N with N >= 1 and 0 <= I < N
	// -1/4 0/0 shard -1/4: want I/N with N >= 1 and 0 <= I < N
	// 1/0 0/0 shard 1/0: want I/N with N >= 1 and 0 <= I < N
	// 1 0/0 shard "1": want I/N, shard I (from 0) of N, e.g. 0/4
	// 1/4x 0/0 shard "1/4x": want I/N, shard I (from 0) of N, e.g. 0/4
	// a/b 0/0 shard "a/b": want I/N, shard I (from 0) of N, e.g. 0/4
}

// Assign gives the costliest unit first to the least loaded shard, ties to the lowest index.
func ExampleAssign() {
	fmt.Println(Assign([]uint64{5, 3, 3, 1}, 2))
	fmt.Println(Assign([]uint64{1, 1, 1}, 3))
	fmt.Println(Assign([]uint64{7}, 4))
	fmt.Println(Assign([]uint64{2, 8, 4, 4}, 2))
	// Output:
	// [0 1 1 0]
	// [0 1 2]
	// [0]
	// [0 0 1 1]
}

// FuzzParse: any --shard value is shard I of N with 0 <= I < N, which prints back as itself, or
// an error, never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "-1/2", "1/0", "a/b", "1/2/3", "1/2x", " 1/2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := Parse(s)
		if err != nil {
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("%q accepted as %d/%d", s, sh.Index, sh.Count)
		}
		again, err := Parse(fmt.Sprint(sh))
		if err != nil || again != sh {
			t.Fatalf("%q: %v does not parse back (%v)", s, sh, err)
		}
	})
}
