package fuzz

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// FuzzMutate: mutating any workload (lines split from the input), with template operations made
// from its own lines, never panics, keeps within MaxOps, writes no line break into a line, and
// Values finds only numbers the input holds.
func FuzzMutate(f *testing.F) {
	for _, s := range []string{"i 1\ni 2\nr 1", "i;18446744073709551615;7;0;\ng;1;", "", "\n\n", "99999999999999999999999 x", "--size=42 -v"} {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, in string, seed uint64) {
		w := strings.Split(in, "\n")
		for _, v := range Values(w) {
			if !strings.Contains(in, strconv.FormatUint(v, 10)) {
				t.Fatalf("Values found %d, which %q does not hold", v, in)
			}
		}
		ops := KVOps(1 << 12)
		if tops, err := TemplateOps(w); err == nil {
			ops = tops
		}
		m := &Mutator{R: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), Ops: ops, MaxOps: 64}
		out, applied := m.Mutate(w, w)
		if len(applied) == 0 || len(out) > 64 {
			t.Fatalf("%d mutations applied, %d lines (MaxOps 64)", len(applied), len(out))
		}
		for _, l := range out {
			if strings.Contains(l, "\n") {
				t.Fatalf("line %q holds a line break", l)
			}
		}
	})
}
