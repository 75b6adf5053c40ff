package fuzz

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/trace"
)

func TestOpenCorpus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(dir string) // makes dir/c, or not
		err     string           // "" no error
		entries [][]string
	}{
		{name: "missing", setup: func(string) {}},
		{name: "empty", setup: func(d string) { must(t, os.Mkdir(filepath.Join(d, "c"), 0o755)) }},
		{name: "user's directory", err: "is not a corpus", setup: func(d string) {
			must(t, os.Mkdir(filepath.Join(d, "c"), 0o755))
			must(t, os.WriteFile(filepath.Join(d, "c", "notes.txt"), []byte("mine\n"), 0o644))
		}},
		{name: "a file", err: "not a directory", setup: func(d string) {
			must(t, os.WriteFile(filepath.Join(d, "c"), []byte("x"), 0o644))
		}},
		{name: "corpus", entries: [][]string{{"i 1", "c 1"}, {"r 2"}}, setup: func(d string) {
			c := filepath.Join(d, "c")
			must(t, os.Mkdir(c, 0o755))
			must(t, os.WriteFile(filepath.Join(c, CorpusMarker), []byte(markerText), 0o644))
			must(t, os.WriteFile(filepath.Join(c, "a.txt"), []byte("i 1\nc 1\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(c, "b.txt"), []byte("r 2\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(c, "README"), []byte("not a workload"), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			tc.setup(d)
			c := filepath.Join(d, "c")
			before, _ := os.ReadDir(c)
			got, err := OpenCorpus(c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("OpenCorpus: error %v, want one containing %q", err, tc.err)
				}
				after, _ := os.ReadDir(c)
				if len(after) != len(before) {
					t.Fatalf("OpenCorpus wrote into a directory it refused: %d entries, were %d", len(after), len(before))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(c, CorpusMarker)); err != nil {
				t.Errorf("no corpus marker: %v", err)
			}
			if !slices.EqualFunc(got, tc.entries, slices.Equal[[]string]) {
				t.Errorf("entries %q, want %q", got, tc.entries)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestUnreached(t *testing.T) {
	sites := []trace.Site{
		{ID: 1, Kind: trace.SiteStore, File: "/src/a.c", Line: 10, Function: "put"},
		{ID: 2, Kind: trace.SiteStore, File: "/src/a.c", Line: 12, Function: "put"},
		{ID: 3, Kind: trace.SiteRange, File: "/src/a.c", Line: 12, Function: "put"}, // same line as 2
		{ID: 4, Kind: trace.SiteLoad, File: "/src/a.c", Line: 14, Function: "get"},  // no store
		{ID: 5, Kind: trace.SiteNTStore, File: "/src/a.c", Line: 3, Function: "init"},
		{ID: 6, Kind: trace.SiteStore, File: "/src/other.c", Line: 1, Function: "unused"}, // no site reached in the file
		{ID: 7, Kind: trace.SiteStore, File: "/src/a.c", Line: 20, Function: "fix"},
		{ID: 8, Kind: trace.SiteStore, File: "/src/a.c", Line: 20, Function: "fix", InlinedAt: 9}, // a copy of 7, inlined
		{ID: 9, Kind: trace.SiteInlined, File: "/src/a.c", Line: 30, Function: "caller", Callee: "fix"},
	}
	var got []string
	for _, l := range Unreached(sites, map[uint32]struct{}{1: {}, 7: {}}) {
		got = append(got, l.String())
	}
	want := []string{"/src/a.c:3 (init)", "/src/a.c:12 (put)"}
	if !slices.Equal(got, want) {
		t.Errorf("Unreached = %q, want %q", got, want)
	}
}

func TestMinimise(t *testing.T) {
	entry := func(name string, ops int, fs ...Feature) *Entry {
		cov := &Coverage{Features: map[Feature]struct{}{}}
		for _, f := range fs {
			cov.Features[f] = struct{}{}
		}
		return &Entry{Name: name, Lines: make([]string, ops), Cov: cov}
	}
	for _, tc := range []struct {
		name   string
		corpus []*Entry
		want   []string
	}{
		{"one covers all", []*Entry{entry("a", 1, 1, 2, 3), entry("b", 1, 3, 4), entry("c", 1, 4), entry("d", 9, 1, 2, 3, 4)}, []string{"d"}},
		{"fewer operations on ties", []*Entry{entry("long", 5, 1, 2), entry("short", 2, 1, 2)}, []string{"short"}},
		{"greedy pair", []*Entry{entry("a", 1, 1, 2, 3), entry("b", 1, 4, 5), entry("c", 1, 3, 4)}, []string{"a", "b"}},
		{"stale gains", []*Entry{entry("a", 1, 1, 2, 3, 4), entry("b", 1, 1, 2, 3), entry("c", 1, 5, 6)}, []string{"a", "c"}},
		{"empty", nil, nil},
	} {
		f := &fuzzer{corpus: tc.corpus}
		var got []string
		for _, e := range f.minimise() {
			got = append(got, e.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: minimise = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestPickRare: an old entry holding a feature one run reached is picked more often than by a
// uniform choice among the older entries (the rarity tournament), and rarest counts the runs of
// an entry's rarest feature.
func TestPickRare(t *testing.T) {
	f := &fuzzer{freq: map[Feature]uint32{1: 100, 2: 100, 3: 1}}
	for i := range 40 {
		cov := &Coverage{Features: map[Feature]struct{}{1: {}, 2: {}}}
		if i == 0 {
			cov.Features[3] = struct{}{}
		}
		f.corpus = append(f.corpus, &Entry{Name: fmt.Sprint(i), Cov: cov})
	}
	for _, tc := range []struct {
		entry int
		want  uint32
	}{{0, 1}, {1, 100}, {39, 100}} {
		if got := f.rarest(f.corpus[tc.entry]); got != tc.want {
			t.Errorf("rarest(entry %d) = %d, want %d", tc.entry, got, tc.want)
		}
	}
	r := rand.New(rand.NewPCG(14, 15))
	rare := 0
	const picks = 4000
	for range picks {
		if f.pick(r) == f.corpus[0] {
			rare++
		}
	}
	// Uniform among 40: 1 in 40 of the half that is not the latest eight, 50 in 4000; the
	// tournament adds 1 - (39/40)^4 of a quarter, about 96.
	if rare < 100 {
		t.Errorf("the rare entry was picked %d times in %d, want at least 100", rare, picks)
	}
}
