package pipeline

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
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
	// A bucket filled by inserts far apart: operation 63 moves an item the inserts 5, 17 and
	// 40 put in its bucket, and insert 17 overwrote a slot insert 2 had written.
	// Its keys are one character long, so that no renaming applies.
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	bucket := ops(60, func(i int) string { return "i " + alphabet[i:i+1] })
	fill := &opDeps{from: map[int][]int{59: {5, 17, 40, 58}, 17: {2, 16}, 40: {39}}, to: map[int][]int{}}
	fillWant := pick(bucket, []int{2, 5, 17, 40, 59})
	fillFails := func(ops []string) bool { return has(ops, fillWant...) }
	// Inserts of one-character keys (no renaming applies), each followed by its lookup.
	var table []string
	tableDeps := &opDeps{writes: map[int]bool{}}
	for i := 0; i < 13; i++ {
		table = append(table, "i "+alphabet[i:i+1], "c "+alphabet[i:i+1])
		tableDeps.writes[2*i] = true
	}
	table = table[:25]
	tableFails := func(ops []string) bool {
		n := 0
		for _, o := range ops {
			if strings.HasPrefix(o, "i ") {
				n++
			}
		}
		return n == 13 && strings.HasPrefix(ops[len(ops)-1], "i ")
	}
	// A resize (operation 40) reads every slot the 40 inserts before it wrote, and every
	// lookup after it reads what it wrote; the crash loses key k7's move, which the lookup of
	// k7 (operation 55) shows.
	var resize []string
	resizeDeps := &opDeps{from: map[int][]int{}, to: map[int][]int{}, writes: map[int]bool{}}
	for i := 0; i < 40; i++ {
		resize = append(resize, fmt.Sprintf("i k%d", i))
		resizeDeps.from[40] = append(resizeDeps.from[40], i)
		resizeDeps.writes[i] = true
	}
	resize = append(resize, "e")
	resizeDeps.writes[40] = true
	for i := 0; i < 20; i++ {
		resize = append(resize, fmt.Sprintf("c k%d", (i*7)%40))
		resizeDeps.to[40] = append(resizeDeps.to[40], 41+i)
	}
	resizeWant := []string{"i k7", "e", "c k7"}
	resizeFails := func(ops []string) bool {
		i, e, c := slices.Index(ops, "i k7"), slices.Index(ops, "e"), slices.Index(ops, "c k7")
		return i >= 0 && i < e && e < c
	}
	// An insert (operation 30) that moves key x (inserted by operation 2) when the six inserts
	// before it filled its bucket; the lookup of x (operation 40) shows the loss.
	var move []string
	for i := 0; i < 41; i++ {
		switch {
		case i == 2:
			move = append(move, "i x")
		case i == 40:
			move = append(move, "c x")
		case i > 30:
			move = append(move, fmt.Sprintf("c k%d", i))
		default:
			move = append(move, fmt.Sprintf("i k%d", i))
		}
	}
	moveWant := append(append([]string{"i x"}, move[24:31]...), "c x")
	moveFails := func(ops []string) bool {
		for _, w := range moveWant {
			if !slices.Contains(ops, w) {
				return false
			}
		}
		return true
	}
	// A movement found late: the fifth insert into one bucket (keys k3, k23, ... k83) moves
	// k3 out of it, which the lookup of k3 after the inserts shows. The finding's check
	// sampled its crash states and failed first in the insert of k183 (the bucket's tenth);
	// the check of a candidate explores every state and fails in that of k83 (crash). No
	// relation is known for the finding's own run; the candidates' runs give theirs (lateDeps).
	var late []string
	for i := 0; i < 200; i++ {
		late = append(late, fmt.Sprintf("i k%d", i))
	}
	late = append(late, "c k3")
	bucketKeys := []string{"i k3", "i k23", "i k43", "i k63", "i k83"}
	lateWant := append(slices.Clone(bucketKeys), "c k3")
	lateFails := func(ops []string) bool {
		return has(ops, lateWant...) && slices.Index(ops, "i k83") < slices.Index(ops, "c k3")
	}
	lateCrash := func(ops []string) *report.Crash {
		// Its failing state is in the fifth insert into the bucket; each operation prints one
		// line, and the lookup of k3 is the first whose line differs.
		k, r := slices.Index(ops, "i k83"), slices.Index(ops, "c k3")
		return &report.Crash{Input: k + 2, Trace: "run.trace", DivergedLine: r - k, LegalLines: len(ops) - k - 1}
	}
	lateDeps := func(ops []string) *opDeps {
		d := &opDeps{from: map[int][]int{}, to: map[int][]int{}, writes: map[int]bool{}, lines: map[int]int{}}
		k := slices.Index(ops, "i k83")
		for i, o := range ops {
			d.lines[i] = 1
			d.writes[i] = strings.HasPrefix(o, "i ")
			if slices.Contains(bucketKeys, o) && i < k {
				d.from[k] = append(d.from[k], i)
			}
		}
		return d
	}
	tests := []struct {
		name     string
		ops      []string
		first    int
		deps     *opDeps
		reveal   int // the revealing operation plus one (0: unknown)
		fails    func(ops []string) bool
		want     []string
		maxTests int
		// crash is the failing state of a failing candidate (an empty one when nil), and
		// readDeps the relation of its run (nil: not known, the search is not refocused).
		crash    func(ops []string) *report.Crash
		readDeps func(ops []string) *opDeps
	}{
		{
			// The workload up to the revealing operation fails in the insert of k83; the
			// search goes on from there, with its candidate's relation (refocus).
			name: "a movement found late", ops: late, first: 183, reveal: 201, fails: lateFails, crash: lateCrash, readDeps: lateDeps,
			want: lateWant, maxTests: 50,
		},
		{
			name: "the same movement, not refocused", ops: late, first: 183, reveal: 201, fails: lateFails,
			want: lateWant,
		},
		{
			// The operation that showed the failure and its key's operations before it.
			name: "a resize shown by one lookup", ops: resize, first: 40, deps: resizeDeps, reveal: 43, fails: resizeFails,
			want: resizeWant, maxTests: 8,
		},
		{
			// The latest operations before first, with the one that showed the failure.
			name: "a movement shown by one lookup", ops: move, first: 30, reveal: 41, fails: moveFails,
			want: moveWant, maxTests: 50,
		},
		{
			name: "the same resize, the revealing operation unknown", ops: resize, first: 40, deps: resizeDeps, fails: resizeFails,
			want: resizeWant,
		},
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
			// The key slice: the insert, the remove and the insert again of one key, far
			// apart; found by the first slice, then ddmin over three operations.
			name: "one key's operations far apart", ops: append(append(slices.Clone(kv[:50]), "r 1010"), kv[50:]...), first: 50,
			fails: func(ops []string) bool {
				return len(ops) >= 2 && strings.HasPrefix(ops[len(ops)-1], "r ") && slices.ContainsFunc(ops[:len(ops)-1], func(o string) bool {
					f := strings.Fields(o)
					return f[0] == "i" && f[1] == strings.Fields(ops[len(ops)-1])[1]
				})
			},
			want: []string{"i 1 a", "r 1"}, maxTests: 8,
		},
		{
			// The PM slice, two levels of the reads-from relation deep.
			name: "the inserts that filled a bucket", ops: bucket, first: 59, deps: fill, fails: fillFails,
			want: fillWant, maxTests: 16,
		},
		{
			// Without the relation the same search takes ddmin's many tests.
			name: "the same bucket without the relation", ops: bucket, first: 59, fails: fillFails,
			want: fillWant,
		},
		{
			// Twelve inserts fill the table the last one overflows, with a lookup after
			// each: the lookups stored nothing, and go in one test; then ddmin's worst case,
			// every operation needed.
			name: "a table filled, lookups between", ops: table, first: 24, deps: tableDeps, fails: tableFails,
			want: pick(table, []int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24}), maxTests: 55,
		},
		{
			name: "the same table without the relation", ops: table, first: 24, fails: tableFails,
			want: pick(table, []int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24}),
		},
		{
			name: "nothing smaller fails", ops: []string{"i 1 a", "c 1"}, first: 0,
			fails: func(ops []string) bool { return has(ops, "i 1 a", "c 1") && len(ops) == 2 },
			want:  nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &minimizer{ctx: context.Background(), dir: t.TempDir(), end: time.Now().Add(time.Hour), seen: map[string]bool{}, searched: map[string]bool{}, deps: tc.deps, reveal: tc.reveal - 1}
			tested := map[string]bool{}
			s.run = func(ops []string, dir string) (*report.Crash, error) {
				k := strings.Join(ops, "\n")
				if tested[k] {
					t.Errorf("candidate tested twice: %q", ops)
				}
				tested[k] = true
				if !tc.fails(ops) {
					return nil, nil
				}
				if tc.crash != nil {
					return tc.crash(ops), nil
				}
				return &report.Crash{}, nil
			}
			if tc.readDeps != nil {
				s.readDeps = func(string) (*opDeps, error) { return tc.readDeps(s.best), nil }
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
			if tc.maxTests > 0 && s.tests > tc.maxTests {
				t.Errorf("%d tests, want at most %d", s.tests, tc.maxTests)
			}
			t.Logf("%d tests", s.tests)
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
	s := &minimizer{ctx: context.Background(), dir: t.TempDir(), end: time.Now().Add(time.Hour), seen: map[string]bool{}, searched: map[string]bool{}}
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

// TestDepsOf reads a hand-written trace: the operations an operation loaded PM words from (by
// their offset in the pool, across a second mapping at another address), never itself, and
// not the bytes written before any operation began.
func TestDepsOf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.NewWriter(f, 64)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 8)
	key := []byte("k0000042")
	for _, ev := range []trace.Event{
		{Kind: trace.KindRegionMap, Region: 1, Addr: 4096, Size: 4096, Path: "/p/a.pool", Flags: trace.RegionCreated},
		{Kind: trace.KindStore, Addr: 4096 + 128, Size: 8, Data: data}, // before any operation
		{Kind: trace.KindOutput, Handle: 1, Data: []byte("opened\n")},
		{Kind: trace.KindOpBegin, Op: 0, Text: "i 1"},
		{Kind: trace.KindStore, Addr: 4096, Size: 8, Data: data},
		{Kind: trace.KindStore, Addr: 4096 + 300, Size: 1, Data: []byte{1}}, // a token
		{Kind: trace.KindOutput, Handle: 2, Data: []byte("to standard error\n")},
		{Kind: trace.KindOpEnd, Op: 0},
		{Kind: trace.KindOpBegin, Op: 1, Text: "i 2"},
		{Kind: trace.KindStore, Addr: 4096 + 64, Size: 8, Data: data},
		{Kind: trace.KindStore, Addr: 4096 + 192, Size: 8, Data: key},
		{Kind: trace.KindStore, Addr: 4096 + 301, Size: 1, Data: []byte{1}}, // the next token of the word
		{Kind: trace.KindLoad, Addr: 4096 + 64, Size: 8, Data: data},        // its own store
		{Kind: trace.KindOpEnd, Op: 1},
		{Kind: trace.KindRegionUnmap, Region: 1},
		{Kind: trace.KindRegionMap, Region: 2, Addr: 65536, Size: 4096, Path: "/p/a.pool"},
		{Kind: trace.KindOpBegin, Op: 2, Text: "c 1"},
		{Kind: trace.KindLoad, Addr: 65536 + 4, Size: 4, Data: data[:4]}, // operation 0's word
		{Kind: trace.KindLoad, Addr: 65536 + 60, Size: 8, Data: data},    // spans into operation 1's
		{Kind: trace.KindLoad, Addr: 65536 + 128, Size: 8, Data: data},   // written before any operation
		{Kind: trace.KindOutput, Handle: 1, Data: []byte("1: ")},
		{Kind: trace.KindOutput, Handle: 1, Data: []byte("v1\n")},
		{Kind: trace.KindOpEnd, Op: 2},
		{Kind: trace.KindOpBegin, Op: 3, Text: "c 2"},
		{Kind: trace.KindLoad, Addr: 65536 + 64, Size: 1, Data: data[:1]}, // operation 1's
		{Kind: trace.KindStore, Addr: 65536 + 256, Size: 8, Data: key},    // operation 1's key, copied
		{Kind: trace.KindStore, Addr: 65536 + 264, Size: 8, Data: data},   // its own zeros
		{Kind: trace.KindOutput, Handle: 1, Data: []byte("2: v2\n")},
		{Kind: trace.KindOpEnd, Op: 3},
		{Kind: trace.KindOutput, Handle: 1, Data: []byte("items: 2\nbye\n")}, // the latest operation's
		{Kind: trace.KindOpBegin, Op: 4, Text: "c 3"},
		{Kind: trace.KindLoad, Addr: 65536 + 256, Size: 16, Data: append(slices.Clone(key), data...)}, // the copy, and operation 3's zeros
		{Kind: trace.KindLoad, Addr: 65536 + 296, Size: 8, Data: data},                                // the tokens of operations 0 and 1
		{Kind: trace.KindOpEnd, Op: 4},
		{Kind: trace.KindEnd, How: trace.EndExit},
	} {
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d, err := depsOf(path)
	if err != nil {
		t.Fatal(err)
	}
	wantFrom := map[int][]int{2: {0, 1}, 3: {1}, 4: {0, 1, 3}}
	wantTo := map[int][]int{0: {2, 4}, 1: {2, 3, 4}, 3: {4}}
	if !maps.EqualFunc(d.from, wantFrom, slices.Equal) || !maps.EqualFunc(d.to, wantTo, slices.Equal) {
		t.Errorf("from %v to %v, want %v and %v", d.from, d.to, wantFrom, wantTo)
	}
	if want := map[int]bool{0: true, 1: true, 3: true}; !maps.Equal(d.writes, want) {
		t.Errorf("writes %v, want %v", d.writes, want)
	}
	for _, tc := range []struct {
		first, levels int
		after         bool
		want          []int
	}{
		{3, 1, false, []int{1, 3}},
		{2, 1, false, []int{0, 1, 2}},
		{4, 1, false, []int{0, 1, 3, 4}},
		{1, 1, true, []int{1, 2, 3, 4}},
		{0, 0, false, []int{0}},
	} {
		if got := d.slice(tc.first, 5, tc.levels, tc.after); !slices.Equal(got, tc.want) {
			t.Errorf("slice(%d, levels %d, after %v) = %v, want %v", tc.first, tc.levels, tc.after, got, tc.want)
		}
	}
	if want := map[int]int{2: 1, 3: 3}; !maps.Equal(d.lines, want) {
		t.Errorf("lines %v, want %v", d.lines, want)
	}
	// A run from operation 2 whose legal outcome printed 5 lines: "reopened", then operation
	// 2's line and operation 3's three (with those after the last operation).
	for _, tc := range []struct{ start, line, of, want int }{
		{2, 0, 5, -1}, {2, 1, 5, -1}, {2, 2, 5, 2}, {2, 3, 5, 3}, {2, 5, 5, 3}, {2, 6, 5, -1},
		{3, 1, 3, 3}, {3, 2, 4, 3}, {0, 2, 5, 2}, {2, 1, 6, -1},
	} {
		if got := d.revealing(tc.start, 4, tc.line, tc.of); got != tc.want {
			t.Errorf("revealing(start %d, line %d of %d) = %d, want %d", tc.start, tc.line, tc.of, got, tc.want)
		}
	}
	if got := (*opDeps)(nil).revealing(0, 4, 2, 5); got != -1 {
		t.Errorf("revealing without a relation = %d, want -1", got)
	}
	if _, err := depsOf(filepath.Join(t.TempDir(), "missing.trace")); err == nil {
		t.Error("a missing trace gave no error")
	}
}

// TestMinimizerRounds checks the steps around the search: a reproducer another finding's
// search found is tried first, and a search its share stopped goes on (resume) from its best
// workload to a 1-minimal one without testing a candidate twice.
func TestMinimizerRounds(t *testing.T) {
	ops := []string{"i 10", "i 11", "c 10", "i 12", "r 11", "i 13", "c 12", "r 10", "i 14", "c 14"}
	fails := func(ops []string) bool { return slices.Contains(ops, "i 12") && slices.Contains(ops, "r 10") }
	newS := func() (*minimizer, map[string]bool) {
		s := &minimizer{ctx: context.Background(), dir: t.TempDir(), seen: map[string]bool{}, searched: map[string]bool{}, ops: ops, first: 7,
			f: &report.Finding{Crash: &report.Crash{Input: 9}}}
		tested := map[string]bool{}
		s.run = func(c []string, dir string) (*report.Crash, error) {
			k := strings.Join(c, "\n")
			if tested[k] {
				t.Errorf("candidate tested twice: %q", c)
			}
			tested[k] = true
			if fails(c) {
				return &report.Crash{}, nil
			}
			return nil, nil
		}
		return s, tested
	}
	// Another search's reproducer fails here too: the search starts from it.
	other := &minimizer{crash: &report.Crash{}, best: []string{"i 12", "r 10"}}
	s, _ := newS()
	if err := s.start(time.Hour, []*minimizer{other}); err != nil {
		t.Fatal(err)
	}
	// It, its two removals, and the values' three renamings (all at once, then each).
	if !slices.Equal(s.best, other.best) || s.tests != 6 {
		t.Errorf("with another's reproducer: %q after %d tests, want %q after 6", s.best, s.tests, other.best)
	}
	// A share that ends after two tests, then the rest.
	s, _ = newS()
	run := s.run
	s.run = func(c []string, dir string) (*report.Crash, error) {
		if s.tests > 2 && s.end.Before(time.Now().Add(time.Minute)) {
			s.stop = true
			return nil, nil
		}
		return run(c, dir)
	}
	if err := s.start(time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if !s.stop {
		t.Fatal("the first share did not stop the search")
	}
	if err := s.resume(time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if s.stop || !slices.Equal(s.best, []string{"i 12", "r 10"}) {
		t.Errorf("resumed: %q (stopped %v), want the two operations", s.best, s.stop)
	}
	// A share that ends before any candidate failed: the resumed search goes on with the
	// slices and windows, the candidate the share's end cut tested again, none other twice.
	s, tested := newS()
	run = s.run
	var cut []string
	s.run = func(c []string, dir string) (*report.Crash, error) {
		if len(tested) == 1 && cut == nil {
			cut, s.stop = c, true
			return nil, nil
		}
		return run(c, dir)
	}
	if err := s.start(time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if !s.stop || s.crash != nil {
		t.Fatalf("the first share: stopped %v, best %q; want stopped before a candidate failed", s.stop, s.best)
	}
	if err := s.resume(time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if !tested[strings.Join(cut, "\n")] {
		t.Errorf("the candidate %q cut by the share's end was not tested again", cut)
	}
	if s.stop || !slices.Equal(s.best, []string{"i 12", "r 10"}) {
		t.Errorf("resumed before a failure: %q (stopped %v), want the two operations", s.best, s.stop)
	}
	// With the operation that showed the failure known (8), the resumed search tests the
	// workload up to it first.
	s, tested = newS()
	s.reveal, s.stop, s.tests = 8, true, 1 // stopped after one test that did not fail
	if err := s.resume(time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if !tested[strings.Join(ops[:9], "\n")] || s.tests < 2 {
		t.Errorf("resumed with the revealing operation: the workload up to it was not tested")
	}
	if !slices.Equal(s.best, []string{"i 12", "r 10"}) {
		t.Errorf("resumed with the revealing operation: %q, want the two operations", s.best)
	}
}

// TestKeySlice checks which operations share a key with the failing one: a value word of it,
// not a word most lines hold (WITCHER's op files end every line with a flag).
// TestMinimizerSibling checks that a search whose finding failed first in the same operation as
// an earlier search's starts from that one's best workload, however long, and not from the
// operations that one searched from; and that another's long workload is not tried.
func TestMinimizerSibling(t *testing.T) {
	var long []string
	for i := 0; i < 60; i++ {
		long = append(long, fmt.Sprintf("i k%d", i))
	}
	fails := func(ops []string) bool { return slices.Contains(ops, "i k5") && slices.Contains(ops, "i k50") }
	other := &minimizer{crash: &report.Crash{}, best: long[5:51], first: 50, searched: map[string]bool{"i k50": true}}
	for _, tc := range []struct {
		first int
		tried bool
	}{{50, true}, {49, false}} {
		s := &minimizer{ctx: context.Background(), dir: t.TempDir(), seen: map[string]bool{}, searched: map[string]bool{}, ops: long, first: tc.first,
			f: &report.Finding{Crash: &report.Crash{Input: tc.first + 2}}}
		var firstTry []string
		s.run = func(c []string, dir string) (*report.Crash, error) {
			if firstTry == nil {
				firstTry = c
			}
			if fails(c) {
				return &report.Crash{}, nil
			}
			return nil, nil
		}
		if err := s.start(time.Hour, []*minimizer{other}); err != nil {
			t.Fatal(err)
		}
		if tried := slices.Equal(firstTry, other.best); tried != tc.tried {
			t.Errorf("first failing operation %d: the other's workload tried first %v, want %v", tc.first, tried, tc.tried)
		}
		if tc.tried && !s.searched["i k50"] {
			t.Errorf("first failing operation %d: the operations the other searched from are not known", tc.first)
		}
		if want := []string{"i k5", "i k50"}; !slices.Equal(s.best, want) {
			t.Errorf("first failing operation %d: minimal workload %q, want %q", tc.first, s.best, want)
		}
	}
}

// TestMinimizerResumeUnstarted checks that a search the first round left no time to (no test)
// is started by the second: the other searches' short reproducers first.
func TestMinimizerResumeUnstarted(t *testing.T) {
	ops := []string{"i 10", "i 11", "c 10", "i 12", "r 11", "i 13", "c 12", "r 10", "i 14", "c 14"}
	s := &minimizer{ctx: context.Background(), dir: t.TempDir(), seen: map[string]bool{}, searched: map[string]bool{}, ops: ops, first: 7,
		f: &report.Finding{Crash: &report.Crash{Input: 9}}}
	var first []string
	s.run = func(c []string, dir string) (*report.Crash, error) {
		if first == nil {
			first = c
		}
		if slices.Contains(c, "i 12") && slices.Contains(c, "r 10") {
			return &report.Crash{}, nil
		}
		return nil, nil
	}
	other := &minimizer{crash: &report.Crash{}, best: []string{"i 12", "r 10"}, first: 3}
	if err := s.resume(time.Hour, []*minimizer{other}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first, other.best) || !slices.Equal(s.best, other.best) {
		t.Errorf("first tested %q, best %q; want the other's reproducer %q", first, s.best, other.best)
	}
}

// TestMinimizeSiblingWaves checks that findings that failed first in one operation are never
// searched in one wave: each goes on from the best workload of those before it.
func TestMinimizeSiblingWaves(t *testing.T) {
	dir := t.TempDir()
	var ops []string
	for i := 0; i < 40; i++ {
		ops = append(ops, fmt.Sprintf("i %d", 100+i))
	}
	wl := filepath.Join(dir, "ops.txt")
	if err := os.WriteFile(wl, []byte(strings.Join(ops, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := &report.Report{Check: &report.Check{Args: []string{"/bin/true", "{pool}"}, Workload: wl,
		Crash: &report.CheckCrash{MaxStates: 9, Seed: 3, Samples: 4, Jobs: 2, TimeoutSeconds: 5, MaxInFlight: 2, ClusterFailures: 8}}}
	for k := 0; k < 3; k++ {
		rep.Findings = append(rep.Findings, report.Finding{Kind: report.OrderingViolation,
			Crash: &report.Crash{FailingState: report.FailingState{ID: fmt.Sprintf("c%012d", k)}, Workload: wl, Input: 32}})
	}
	var most atomic.Int32
	testRun = concurrentRun(&most, func(id string, c []string) bool {
		// Three inserts far apart, whatever their keys are renamed to.
		return slices.Contains(c, "i 103") && slices.Contains(c, "i 117") && slices.Contains(c, "i 130")
	})
	defer func() { testRun = nil }()
	if err := Minimize(context.Background(), rep, nil, Minimization{Time: time.Minute, Dir: filepath.Join(dir, "min")}); err != nil {
		t.Fatal(err)
	}
	if n := most.Load(); n != 1 {
		t.Errorf("at most %d checks at once, want 1 (one search at a time)", n)
	}
	for i, f := range rep.Findings {
		m := f.Crash.Minimal
		if m == nil || m.Operations != 3 {
			t.Fatalf("%s: %+v, want a reproducer of three operations", f.Crash.ID, m)
		}
		// The others start from the first's reproducer: one test, three removals, four
		// renamings, the check from scratch.
		if i > 0 && m.Tests != 9 {
			t.Errorf("%s: %d tests, want 9 (from the first's reproducer; the first took %d)", f.Crash.ID, m.Tests, rep.Findings[0].Crash.Minimal.Tests)
		}
	}
}

func TestKeySlice(t *testing.T) {
	var witcher []string
	for i := 0; i < 40; i++ {
		witcher = append(witcher, fmt.Sprintf("i;%d;%d;0;", 500+i, 900+i), fmt.Sprintf("g;%d;1;", 500+i))
	}
	witcher[60] = "d;510;1;"
	tests := []struct {
		name  string
		ops   []string
		first int
		after bool
		want  []int
	}{
		{"one key, before", []string{"i 1 a", "i 2 b", "r 1", "c 1", "i 1 c"}, 2, false, []int{0, 2}},
		{"one key, with the later ones", []string{"i 1 a", "i 2 b", "r 1", "c 1", "i 1 c"}, 2, true, []int{0, 2, 3, 4}},
		{"a value shared too", []string{"i 1 a", "i 2 a", "c 1"}, 1, false, []int{0, 1}},
		{"no value words", []string{"sync", "flush", "sync"}, 2, false, []int{2}},
		{"WITCHER's op file: its flags are no key", witcher, 60, true, []int{20, 21, 60}},
	}
	for _, tc := range tests {
		if got := keySlice(tc.ops, tc.first, tc.after); !slices.Equal(got, tc.want) {
			t.Errorf("%s: keySlice = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMinimizeWaves runs Minimize over a report of five crash findings with fake checks: the
// searches run two at a time (the check's jobs), each finding gets its reproducer, and two runs
// give the same reproducers and numbers of checks.
func TestMinimizeWaves(t *testing.T) {
	dir := t.TempDir()
	var ops []string
	for i := 0; i < 30; i++ {
		ops = append(ops, fmt.Sprintf("i %d", 100+i), fmt.Sprintf("c %d", 100+i))
	}
	wl := filepath.Join(dir, "ops.txt")
	if err := os.WriteFile(wl, []byte(strings.Join(ops, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Finding k fails where the insert of key 100+7k and the lookup of key 101+7k are.
	needs := map[string][2]int{}
	newReport := func() *report.Report {
		rep := &report.Report{Check: &report.Check{Args: []string{"/bin/true", "{pool}"}, Workload: wl,
			Crash: &report.CheckCrash{MaxStates: 9, Seed: 3, Samples: 4, Jobs: 2, TimeoutSeconds: 5, MaxInFlight: 2, ClusterFailures: 8}}}
		for k := 0; k < 5; k++ {
			id := fmt.Sprintf("c%012d", k)
			needs[id] = [2]int{100 + 7*k, 101 + 7*k}
			rep.Findings = append(rep.Findings, report.Finding{Kind: report.OrderingViolation,
				Crash: &report.Crash{FailingState: report.FailingState{ID: id}, Workload: wl, Input: 2*(7*k+1) + 3}})
		}
		return rep
	}
	var most atomic.Int32
	testRun = concurrentRun(&most, func(id string, c []string) bool {
		n := needs[id]
		// Renamed keys keep their lines' commands: what matters is an insert, then a lookup
		// of another key, in that order, or the original lines.
		return slices.Contains(c, fmt.Sprintf("i %d", n[0])) && slices.Contains(c, fmt.Sprintf("c %d", n[1])) || len(c) == 2 && strings.HasPrefix(c[0], "i ") && strings.HasPrefix(c[1], "c ") && c[0][2:] != c[1][2:]
	})
	defer func() { testRun = nil }()
	var results [][]string
	for run := 0; run < 2; run++ {
		rep := newReport()
		if err := Minimize(context.Background(), rep, nil, Minimization{Time: time.Minute, Dir: filepath.Join(dir, fmt.Sprint("min", run))}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range rep.Findings {
			m := f.Crash.Minimal
			if m == nil || !m.Complete || m.Operations != 2 {
				t.Fatalf("run %d: %s: %+v, want a complete reproducer of two operations (warnings %q)", run, f.Crash.ID, m, rep.Warnings)
			}
			got = append(got, fmt.Sprint(m.Ops, m.Tests))
		}
		results = append(results, got)
	}
	if !slices.Equal(results[0], results[1]) {
		t.Errorf("two runs differ:\n%q\n%q", results[0], results[1])
	}
	if n := most.Load(); n != 2 {
		t.Errorf("at most %d checks at once, want 2 (the check's jobs)", n)
	}
}

// concurrentRun returns a testRun for Minimize whose candidates fail when fails says so, each
// taking a millisecond, and that keeps in most the most checks it saw running at once.
func concurrentRun(most *atomic.Int32, fails func(id string, ops []string) bool) func(string, []string, string) (*report.Crash, error) {
	var running atomic.Int32
	return func(id string, ops []string, _ string) (*report.Crash, error) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		running.Add(-1)
		if fails(id, ops) {
			return &report.Crash{}, nil
		}
		return nil, nil
	}
}

// TestMinimizeShare: `scry check --minimize` gives the search a third of the check's time (a
// quarter of the whole run), at least MinMinimizeTime, and never more than the quarter of the
// budget kept for it, also when the exploration ended before its share.
func TestMinimizeShare(t *testing.T) {
	for _, c := range []struct {
		capped, took, want time.Duration
	}{
		{0, 90 * time.Second, 30 * time.Second},                       // no budget: a third
		{0, 6 * time.Second, MinMinimizeTime},                         // at least the floor
		{5 * time.Minute, 15 * time.Minute, 5 * time.Minute},          // the exploration took its three quarters
		{225 * time.Second, 583 * time.Second, 583 * time.Second / 3}, // it ended early: a quarter of the run
		{225 * time.Second, 20 * time.Minute, 225 * time.Second},      // past its share: still the quarter kept
		{5 * time.Second, time.Second, 5 * time.Second},               // the floor never exceeds the cap
	} {
		if got := minimizeShare(c.capped, c.took); got != c.want {
			t.Errorf("minimizeShare(%v, %v) = %v, want %v", c.capped, c.took, got, c.want)
		}
	}
}
