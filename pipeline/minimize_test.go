package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/report"
)

// TestMinimizerSearch runs the search with a fake check: a candidate fails when the predicate
// holds, and the search must reach the expected workload, 1-minimal, with no candidate tested
// twice.
func TestMinimizerSearch(t *testing.T) {
	ops := func(n int, f func(i int) string) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, f(i))
		}
		return out
	}
	kv := ops(64, func(i int) string {
		if i%3 == 2 {
			return fmt.Sprintf("c %d", 1000+i-2)
		}
		return fmt.Sprintf("i %d value%d", 1000+i, i)
	})
	has := func(ops []string, want ...string) bool {
		for _, w := range want {
			if !slices.Contains(ops, w) {
				return false
			}
		}
		return true
	}
	tests := []struct {
		name  string
		ops   []string
		first int
		fails func(ops []string) bool
		want  []string
	}{
		{
			name: "one operation of a kind", ops: kv, first: 40,
			fails: func(ops []string) bool {
				return slices.ContainsFunc(ops, func(o string) bool { return strings.HasPrefix(o, "i ") })
			},
			want: []string{"i 1 a"},
		},
		{
			name: "an insert read back after it", ops: kv, first: 30,
			fails: func(ops []string) bool {
				// The insert of key 1030 and a later lookup of the same key, whatever it is
				// renamed to.
				for i, o := range ops {
					f := strings.Fields(o)
					if f[0] == "i" && strings.HasSuffix(f[2], "30") {
						return slices.Contains(ops[i+1:], "c "+f[1])
					}
				}
				return false
			},
			want: []string{"i 1 value30", "c 1"},
		},
		{
			name: "a fill of four inserts then the failing one", ops: kv, first: 63,
			fails: func(ops []string) bool {
				n := 0
				for _, o := range ops {
					if strings.HasPrefix(o, "i ") {
						n++
					}
				}
				return n >= 5
			},
			want: []string{"i 1 a", "i 2 b", "i 3 c", "i 4 d", "i 5 e"},
		},
		{
			name: "nothing smaller fails", ops: []string{"i 1 a", "c 1"}, first: 0,
			fails: func(ops []string) bool { return has(ops, "i 1 a", "c 1") && len(ops) == 2 },
			want:  nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &minimizer{ctx: context.Background(), dir: t.TempDir(), end: time.Now().Add(time.Hour), seen: map[string]bool{}}
			tested := map[string]bool{}
			s.run = func(ops []string, dir string) (*report.Crash, error) {
				k := strings.Join(ops, "\n")
				if tested[k] {
					t.Errorf("candidate tested twice: %q", ops)
				}
				tested[k] = true
				if tc.fails(ops) {
					return &report.Crash{}, nil
				}
				return nil, nil
			}
			if err := s.search(tc.ops, tc.first); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.best, tc.want) {
				t.Errorf("minimal workload %q, want %q (%d tests)", s.best, tc.want, s.tests)
			}
			if s.stop {
				t.Error("the search stopped early")
			}
			// 1-minimal: no single operation of the result can be left out.
			for i := range s.best {
				if tc.fails(slices.Delete(slices.Clone(s.best), i, i+1)) {
					t.Errorf("operation %d of %q can be left out", i, s.best)
				}
			}
		})
	}
}

// TestMinimizerStops checks that a search whose time ends keeps the best failing candidate and
// says it is not complete.
func TestMinimizerStops(t *testing.T) {
	s := &minimizer{ctx: context.Background(), dir: t.TempDir(), end: time.Now().Add(time.Hour), seen: map[string]bool{}}
	ops := []string{"i 1", "i 2", "i 3", "i 4", "i 5", "i 6", "i 7", "i 8"}
	s.run = func(ops []string, dir string) (*report.Crash, error) {
		if s.tests > 2 {
			s.stop = true // the time share ended during this test
			return nil, nil
		}
		return &report.Crash{}, nil // every candidate fails
	}
	if err := s.search(ops, -1); err != nil { // no failing operation known: ddmin alone
		t.Fatal(err)
	}
	if !s.stop || s.tests != 3 || len(s.best) != 2 {
		t.Errorf("stop %v after %d tests with %q; want a stop after 3 tests with two operations", s.stop, s.tests, s.best)
	}
}

// TestValueRenames checks the renaming of values: numbers to small numbers, words to letters,
// never to a word already in the workload, never longer, and the first word of a line kept.
func TestValueRenames(t *testing.T) {
	tests := []struct {
		ops, want []string
	}{
		{[]string{"i 1234 hello", "c 1234"}, []string{"i 1 a", "c 1"}},
		{[]string{"insert;77;x;", "get;77;"}, []string{"insert;1;x;", "get;1;"}},
		{[]string{"i 2 b", "i 10 abc"}, []string{"i 2 b", "i 1 a"}},
		{[]string{"i i i"}, []string{"i i i"}},
	}
	for _, tc := range tests {
		_, r := valueRenames(tc.ops)
		if got := applyRenames(tc.ops, r); !slices.Equal(got, tc.want) {
			t.Errorf("applyRenames(%q) = %q, want %q", tc.ops, got, tc.want)
		}
	}
}

// FuzzValueRenames checks the renaming of values on any workload: no panic, as many lines, each
// line's first word kept, and no two distinct words made one.
func FuzzValueRenames(f *testing.F) {
	f.Add("i 1234 hello\nc 1234")
	f.Add("insert;77;x;\nget;77;\n\n")
	f.Add("é 12 ü\x00 3")
	f.Fuzz(func(t *testing.T, text string) {
		ops := strings.Split(text, "\n")
		_, r := valueRenames(ops)
		got := applyRenames(ops, r)
		if len(got) != len(ops) {
			t.Fatalf("%d lines became %d", len(ops), len(got))
		}
		to := map[string]string{}
		for k := range ops {
			a, b := lineWords(ops[k]), lineWords(got[k])
			if len(a) != len(b) || len(a) > 0 && a[0].text != b[0].text {
				t.Fatalf("line %q became %q", ops[k], got[k])
			}
			for i := 1; i < len(a); i++ {
				if w, ok := to[b[i].text]; ok && w != a[i].text {
					t.Fatalf("%q and %q both became %q", w, a[i].text, b[i].text)
				}
				to[b[i].text] = a[i].text
			}
		}
	})
}
