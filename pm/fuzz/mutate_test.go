package fuzz

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestValues(t *testing.T) {
	for _, tc := range []struct {
		w    []string
		want []uint64
	}{
		{nil, nil},
		{[]string{"p", "q"}, nil},
		{[]string{"i 5", "r 7", "i 5"}, []uint64{5, 7}},
		{[]string{"i;12;34;0;", "g;12;1;"}, []uint64{12, 34, 0, 1}},
		{[]string{"n 99999999999999999999999"}, nil}, // over 64 bits
	} {
		if got := Values(tc.w); !slices.Equal(got, tc.want) {
			t.Errorf("Values(%q) = %v, want %v", tc.w, got, tc.want)
		}
	}
}

func TestReplaceNumber(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		line, first string // replaceFirstNumber(line, 9)
		shape       string // a regexp every replaceNumber(line, 9) matches
	}{
		{"i 5", "i 9", `^i 9$`},
		{"i;12;34;0;", "i;9;34;0;", `^i;(9;34;0|12;9;0|12;34;9);$`},
		{"p", "p", `^p$`},
		{"cp  'a b'  7", "cp  'a b'  9", `^cp  'a b'  9$`},
	} {
		if got := replaceFirstNumber(tc.line, 9); got != tc.first {
			t.Errorf("replaceFirstNumber(%q, 9) = %q, want %q", tc.line, got, tc.first)
		}
		re := regexp.MustCompile(tc.shape)
		for range 20 {
			if got := replaceNumber(r, tc.line, 9); !re.MatchString(got) {
				t.Errorf("replaceNumber(%q, 9) = %q, want a match of %s", tc.line, got, tc.shape)
			}
		}
	}
}

func TestCollideNeighbour(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, v := range []uint64{1, 5, 1023, 1 << 40} {
		for range 200 {
			c := Collide(r, v)
			if c == v || (c-v)&3 != 0 {
				t.Fatalf("Collide(%d) = %d: not v + m·2^k with k >= 2", v, c)
			}
			n := Neighbour(r, v)
			if n == 0 || n+16 < v || n > v+16 {
				t.Fatalf("Neighbour(%d) = %d: not within 16", v, n)
			}
		}
	}
}

func TestTemplateOps(t *testing.T) {
	if _, err := TemplateOps([]string{"", "  "}); err == nil {
		t.Fatal("TemplateOps of blank lines: no error")
	}
	ops, err := TemplateOps([]string{"i;5156463119707;927349761265249;0;", "e"})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	shape := regexp.MustCompile(`^(i;[0-9]+;[0-9]+;[0-9]+;|e)$`)
	reused := false
	for range 200 {
		got := ops(r, []uint64{42})
		if len(got) != 1 || !shape.MatchString(got[0]) {
			t.Fatalf("template operation %q: not of a template's shape", got)
		}
		reused = reused || strings.Contains(got[0], ";42;")
	}
	if !reused {
		t.Error("no operation reused the workload's value 42")
	}
}

func TestMutator(t *testing.T) {
	w := []string{"i 1", "i 2", "c 1", "r 2", "i 3"}
	mutate := func(seed uint64) [][]string {
		m := &Mutator{R: rand.New(rand.NewPCG(seed, 0)), Ops: KVOps(64), MaxOps: 12}
		var out [][]string
		for range 300 {
			got, applied := m.Mutate(w, []string{"c 9", "r 9"})
			if len(applied) == 0 || len(applied) > 4 {
				t.Fatalf("%d mutations applied, want 1 to 4", len(applied))
			}
			out = append(out, got)
		}
		return out
	}
	a, b := mutate(7), mutate(7)
	if !slices.EqualFunc(a, b, slices.Equal[[]string]) {
		t.Fatal("two mutators of the same seed made different workloads")
	}
	line := regexp.MustCompile(`^[icr] [0-9]+$`)
	changed := 0
	for _, m := range a {
		if len(m) > 12 {
			t.Fatalf("mutant of %d operations, MaxOps 12", len(m))
		}
		for _, l := range m {
			if !line.MatchString(l) {
				t.Fatalf("mutant line %q is no kv operation", l)
			}
		}
		if !slices.Equal(m, w) {
			changed++
		}
	}
	if changed < len(a)/2 {
		t.Errorf("only %d of %d mutants differ from their parent", changed, len(a))
	}
	if w[0] != "i 1" || len(w) != 5 {
		t.Errorf("Mutate changed its input: %q", w)
	}
}

func TestFillCollides(t *testing.T) {
	m := &Mutator{R: rand.New(rand.NewPCG(8, 9)), Ops: KVOps(64)}
	found, thenDelete := false, false
	for range 500 {
		got := m.fill([]string{"i 5"}, true)
		if len(got) < 3 {
			t.Fatalf("fill added %d operations, want at least 2", len(got)-1)
		}
		vals := Values(got)
		// A run on keys colliding modulo 1024 (step 2^k, k >= 10) is what fills one bucket of
		// a hashed structure.
		n := 0
		for _, v := range vals {
			if v%1024 == vals[0]%1024 {
				n++
			}
		}
		found = found || n >= 9
		// Fill-then-delete: a run of inserts, then removes of some of the same keys.
		inserted := map[string]bool{}
		for _, l := range got {
			if k, ok := strings.CutPrefix(l, "i "); ok && k != "5" {
				inserted[k] = true
			} else if k, ok := strings.CutPrefix(l, "r "); ok && inserted[k] {
				thenDelete = true
			}
		}
	}
	if !found {
		t.Error("500 fills never made nine keys colliding modulo 1024")
	}
	if !thenDelete {
		t.Error("500 fills never removed keys a fill inserted")
	}
}

// TestThin: each pattern's selection, in the fill's order or reversed, is of its shape.
func TestThin(t *testing.T) {
	keys := []uint64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
	index := func(k uint64) int { return int(k - 10) }
	for _, tc := range []struct {
		name    string
		pattern int
		ok      func(idx []int) bool // the selected indexes, ascending
	}{
		{"prefix", ThinPrefix, func(idx []int) bool { return idx[0] == 0 && contiguous(idx) }},
		{"stride", ThinStride, func(idx []int) bool {
			if idx[0] > 1 || len(idx) < 4 {
				return false
			}
			for i := 1; i < len(idx); i++ {
				if d := idx[i] - idx[i-1]; d != idx[1]-idx[0] || d < 2 || d > 3 {
					return false
				}
			}
			return true
		}},
		{"middle", ThinMiddle, func(idx []int) bool {
			return idx[0] > 0 && idx[len(idx)-1] < len(keys)-1 && contiguous(idx)
		}},
		{"all", ThinAll, func(idx []int) bool { return len(idx) == len(keys) && contiguous(idx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, uint64(tc.pattern)))
			reversed := false
			for range 200 {
				got := thin(r, keys, tc.pattern)
				if len(got) == 0 {
					t.Fatal("empty selection")
				}
				idx := make([]int, len(got))
				for i, k := range got {
					idx[i] = index(k)
				}
				if len(idx) > 1 && idx[0] > idx[1] {
					reversed = true
					slices.Reverse(idx)
				}
				if !slices.IsSorted(idx) || !tc.ok(idx) {
					t.Fatalf("selection %v of pattern %s", got, tc.name)
				}
			}
			if !reversed {
				t.Error("no selection in the reverse order")
			}
		})
	}
	if got := Thin(rand.New(rand.NewPCG(1, 1)), nil); got != nil {
		t.Errorf("Thin(nil) = %v", got)
	}
}

func contiguous(idx []int) bool {
	for i := 1; i < len(idx); i++ {
		if idx[i] != idx[i-1]+1 {
			return false
		}
	}
	return true
}

// TestInterleave: the second run's operations follow the first's, lag places later, in order.
func TestInterleave(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	first, second := []string{"i 1", "i 2", "i 3", "i 4", "i 5", "i 6"}, []string{"r 1", "r 2", "r 3"}
	for range 50 {
		got := interleave(r, first, second)
		var ins, rem []string
		for _, l := range got {
			if strings.HasPrefix(l, "i") {
				ins = append(ins, l)
			} else {
				rem = append(rem, l)
			}
		}
		if !slices.Equal(ins, first) || !slices.Equal(rem, second) {
			t.Fatalf("interleave = %q: the runs' orders changed", got)
		}
		// "r K" follows "i K+1" (a lag of at least 1).
		for k := 1; k <= 3; k++ {
			if slices.Index(got, fmt.Sprintf("r %d", k)) < slices.Index(got, fmt.Sprintf("i %d", k+1)) {
				t.Fatalf("interleave = %q: r %d before i %d", got, k, k+1)
			}
		}
	}
}
