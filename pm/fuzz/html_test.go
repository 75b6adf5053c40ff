package fuzz

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// htmlResult is a search's result as Fuzz returns it: samples every 10 s over 5 minutes, a
// minimised corpus of two workloads, the best one, and a site table where kv.c:40 (a store) and
// kv.c:52 (a range store) were never reached, other.c's store is in a file none reached, and
// kv.c:33 is a load.
func htmlResult() *Result {
	sites := []trace.Site{
		{ID: 1, Kind: trace.SiteStore, File: "/src/kv.c", Line: 20, Function: "put"},
		{ID: 2, Kind: trace.SiteStore, File: "/src/kv.c", Line: 40, Function: "split"},
		{ID: 3, Kind: trace.SiteRange, File: "/src/kv.c", Line: 52, Function: "merge<a&b>"},
		{ID: 4, Kind: trace.SiteLoad, File: "/src/kv.c", Line: 33, Function: "get"},
		{ID: 5, Kind: trace.SiteStore, File: "/src/other.c", Line: 7, Function: "unused"},
		{ID: 6, Kind: trace.SiteNTStore, File: "/src/kv.c", Line: 24, Function: "put"},
	}
	cov := func(ops int, sites []uint32, features int) *Coverage {
		c := &Coverage{Ops: ops, StoreSites: map[uint32]struct{}{}, Features: map[Feature]struct{}{}}
		for _, s := range sites {
			c.StoreSites[s] = struct{}{}
		}
		for f := range features {
			c.Features[Feature(f)] = struct{}{}
		}
		return c
	}
	res := &Result{Sites: sites, StoreSites: map[uint32]struct{}{1: {}, 6: {}}, Runs: 3097, Slow: 2,
		Best: []string{"i 1", "i 2", "r 1"}, BestCov: cov(3, []uint32{1, 6}, 41),
		Corpus: []*Entry{
			{Name: "w000003.txt", Lines: []string{"i 1", "i 2", "r 1"}, Cov: cov(3, []uint32{1, 6}, 41)},
			{Name: "w000017.txt", Lines: []string{"i 5"}, Cov: cov(1, []uint32{1}, 9)},
		}}
	for i := 0; i <= 30; i++ {
		res.Samples = append(res.Samples, Sample{Elapsed: time.Duration(i) * 10 * time.Second,
			Runs: i * 103, Corpus: min(25, 3+i), StoreSites: min(2, 1+i/3), Features: min(366, 40+i*17)})
	}
	return res
}

// TestWriteHTML compares the HTML page of a search with the golden files in testdata/ (go test
// -update rewrites them): a search that ran to its budget and wrote -o, and one stopped by a
// signal at its first sample, without -o, whose command needs escaping.
func TestWriteHTML(t *testing.T) {
	stopped := htmlResult()
	stopped.Samples = stopped.Samples[:1]
	stopped.Stopped = errors.New("interrupted")
	for _, tc := range []struct {
		golden, command, out string
		res                  *Result
		want                 []string
	}{
		{"fuzz.html", "./mapcli btree {pool} 7", "best.txt", htmlResult(), []string{
			`<path class="step" d="M64.0 110.0 H131.2 V30.0 H736.0"/>`, // 1 site, 2 from 30 s to 5 minutes
			`>5m</text>`, `>1m</text>`, `<code>best.txt</code>: 3 operations, 2 PM store sites, 41 features.`,
			`<code>/src/kv.c:40</code></td><td><code>split</code>`,
			`<code>/src/kv.c:52</code></td><td><code>merge&lt;a&amp;b&gt;</code>`,
			`PM store sites never reached: 2</h2>`,
		}},
		{"fuzz-stopped.html", "./prog <script>", "", stopped, []string{
			`Stopped early: interrupted`, `Not written (no -o)`, `<code>./prog &lt;script&gt;</code>`,
		}},
	} {
		var b bytes.Buffer
		if err := WriteHTML(&b, tc.res, tc.command, tc.out); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the page lacks %q", tc.golden, w)
			}
		}
		if strings.Contains(got, "other.c") || strings.Contains(got, "kv.c:33") {
			t.Errorf("%s: lists a site in a file no store reached, or a load", tc.golden)
		}
		golden(t, tc.golden, got)
	}
}

// TestCoverHTML: the page of scry workload cover (the page Cover returns): its workloads, what
// they reach together, the sites none reached, and no plot.
func TestCoverHTML(t *testing.T) {
	res := htmlResult()
	p := &report.CoveragePage{Command: "./mapcli btree {pool}", Unreached: Unreached(res.Sites, res.StoreSites),
		Workloads: []report.CoverageWorkload{
			{Name: "kv1.txt", Ops: 2000, StoreSites: 2, Features: 293, Result: "exited with status 0"},
			{Name: "best.txt", Ops: 3, StoreSites: 1, Features: 41, Result: "exited with status 1"}},
		Together: &report.CoverageWorkload{Ops: 2003, StoreSites: 2, Features: 300}}
	var b bytes.Buffer
	if err := report.WriteCoverageHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, w := range []string{"<h1>scry workload cover</h1>", "2 workloads, 2003 operations, reach 2 PM store sites and 300 coverage features together",
		"<td><code>best.txt</code></td><td>3</td><td>1</td><td>41</td><td>exited with status 1</td>", "PM store sites never reached: 2</h2>"} {
		if !strings.Contains(got, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if strings.Contains(got, "<svg") || strings.Contains(got, "Minimised corpus") {
		t.Error("the page of workload cover has a plot or a corpus")
	}
	golden(t, "cover.html", got)
}

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what the code writes (go test -update if the change is intended)\ngot:\n%s", path, got)
	}
}
