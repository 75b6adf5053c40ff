package fuzz

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// buildExample builds examples/bucket-overflow/<variant>.c with scry cc, as examples_test.go
// builds the examples.
func buildExample(t *testing.T, variant string) string {
	t.Helper()
	return buildC(t, filepath.Join(testenv.Root(), "examples", "bucket-overflow", variant+".c"))
}

// buildC builds the C program src with scry cc, as examples_test.go builds the examples.
func buildC(t *testing.T, src string) string {
	t.Helper()
	scry := testenv.Scry(t)
	root := testenv.Root()
	bin := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	cmd := exec.Command(scry, "cc", "-O0", "-g", "-mclflushopt", "-mclwb",
		"-I"+filepath.Join(root, "examples", "include"), "-o", bin, src, "-lpmemobj", "-lpmem", "-lpthread")
	if out, err := cmd.CombinedOutput(); err != nil {
		testenv.Missing(t, "scry cc cannot build the example: %v\n%s", err, out)
	}
	return bin
}

// TestFuzzReachesOverflow: on bucket-overflow, whose overflow path needs nine keys colliding
// modulo 1024, the random start (100 kv operations) reaches 4 PM store sites and the search,
// bounded by runs (not time), all 8; the best workload reaches them and is trimmed; the corpus
// on disk holds the minimised corpus.
func TestFuzzReachesOverflow(t *testing.T) {
	bin := buildExample(t, "buggy")
	corpus := filepath.Join(t.TempDir(), "corpus")
	r, err := NewRunner([]string{bin, "{pool}"}, nil, 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fuzz(context.Background(), Options{Runner: r, Ops: KVOps(0), Corpus: corpus, Runs: 600, Seed: 1, TrimRuns: 300, ReadBack: KVReadBack})
	if err != nil {
		t.Fatal(err)
	}
	if first := res.Samples[0].StoreSites; first != 4 {
		t.Errorf("the random start reached %d PM store sites, want 4 (no overflow)", first)
	}
	if len(res.StoreSites) != 8 || len(res.BestCov.StoreSites) != 8 {
		t.Fatalf("the search reached %d PM store sites, its best workload %d; want 8 (the overflow's insert and remove): %s",
			len(res.StoreSites), len(res.BestCov.StoreSites), Unreached(res.Sites, res.StoreSites))
	}
	if un := Unreached(res.Sites, res.StoreSites); len(un) != 0 {
		t.Errorf("unreached: %q", un)
	}
	// The best workload ends with a check of each key it writes (read-back), after at most 40
	// operations left by trimming.
	ops := res.Best[:len(res.Best)-res.ReadBack]
	if len(ops) > 40 {
		t.Errorf("best workload of %d operations after trimming, want at most 40", len(ops))
	}
	if want := KVReadBack(ops); res.ReadBack == 0 || fmt.Sprint(res.Best[len(ops):]) != fmt.Sprint(want) {
		t.Errorf("the best workload ends with %q, want the read-back %q", res.Best[len(ops):], want)
	}
	ents, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	txt := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".txt") {
			txt++
		}
	}
	if txt != len(res.Corpus) {
		t.Errorf("corpus directory holds %d workloads, the minimised corpus %d", txt, len(res.Corpus))
	}
}

// TestFuzzReachesSparse: testdata/sparse.c compacts a range bucket only when a remove leaves a
// bucket that once held 12 keys or more with 5 or more, no two of them neighbours: every other
// key of a filled range deleted. The random start (100 kv operations) reaches 3 PM store sites;
// the search, bounded by runs, reaches compact()'s 3 as well.
// sparseRuns bounds the search of TestFuzzReachesSparse.
const sparseRuns = 1200

func TestFuzzReachesSparse(t *testing.T) {
	bin := buildC(t, filepath.Join("testdata", "sparse.c"))
	r, err := NewRunner([]string{bin, "{pool}"}, nil, 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fuzz(context.Background(), Options{Runner: r, Ops: KVOps(0), Corpus: filepath.Join(t.TempDir(), "corpus"),
		Runs: sparseRuns, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if first := res.Samples[0].StoreSites; first != 3 {
		t.Errorf("the random start reached %d PM store sites, want 3 (no compaction)", first)
	}
	if len(res.StoreSites) != 6 {
		t.Fatalf("the search reached %d PM store sites in %d runs, want 6 (compact's 3): unreached %q",
			len(res.StoreSites), res.Runs, Unreached(res.Sites, res.StoreSites))
	}
}

// TestFuzzSignal: `scry workload fuzz` without a time budget stops at SIGINT (a real signal,
// sent once its first coverage line shows it searching), exits 130, keeps the corpus and writes
// -o and the --html page; a second search refuses a directory of the user's.
func TestFuzzSignal(t *testing.T) {
	scry := testenv.Scry(t)
	bin := buildExample(t, "buggy")
	dir := t.TempDir()
	corpus, out, page := filepath.Join(dir, "corpus"), filepath.Join(dir, "best.txt"), filepath.Join(dir, "fuzz.html")
	cmd := exec.Command(scry, "workload", "fuzz", "--corpus", corpus, "--time-budget", "0", "-o", out, "--html", page,
		"--", bin, "{pool}")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() || !strings.Contains(sc.Text(), "PM store sites") {
		cmd.Process.Kill()
		t.Fatalf("first line of standard error %q, want a coverage line (%v)", sc.Text(), sc.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("scry workload fuzz after SIGINT: %v, want exit status 130", err)
	}
	if _, err := os.Stat(filepath.Join(corpus, CorpusMarker)); err != nil {
		t.Errorf("corpus not kept: %v", err)
	}
	if w, err := os.ReadFile(out); err != nil || len(w) == 0 {
		t.Errorf("-o %s: %v, %d bytes; want the best workload", out, err, len(w))
	}
	h, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("--html: %v", err)
	}
	for _, want := range []string{`<svg class="chart" id="chart-sites"`, "Stopped early: ", "best.txt</code>: ",
		"PM store sites never reached: "} {
		if !strings.Contains(string(h), want) {
			t.Errorf("--html %s lacks %q", page, want)
		}
	}

	mine := filepath.Join(dir, "mine")
	must(t, os.Mkdir(mine, 0o755))
	must(t, os.WriteFile(filepath.Join(mine, "notes"), []byte("x"), 0o644))
	o, err := exec.Command(scry, "workload", "fuzz", "--corpus", mine, "--time-budget", "1s", "--", bin, "{pool}").CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(o), "not a corpus") {
		t.Errorf("fuzz into a user's directory: %v, %s; want exit 2 and a refusal", err, o)
	}
}
