package lazy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
)

// The oracle of issue 29: lazy and exhaustive exploration find the same failing outcomes. Made
// precise: at every crash point, every crash state the exhaustive strategy judges (no cap, no
// sampling, no run stopped early) is covered by exactly one leaf of the point's lazy run, and
// its run's outcome equals that leaf's, compared as outcomes are (same = status and normalised
// standard output; a hang is a hang), and so does its verdict. A program whose output varies
// between identical runs (times, process ids: Stats.VaryingOutcomes) has its outputs compared
// as the exploration compares them, through the verdict, with the status. States the two
// explorations share by construction (durability states, the invariants strategy's) are not
// compared. The random programs' lazy runs must not fall back; an example's may (threads: the
// runtime cannot fork a multi-threaded process), and its points that did are left out.

// diffProgram is one program of the differential test: its target (with {pool}), workload,
// --pm globs, output filter and operation markers.
type diffProgram struct {
	target, pm     []string
	workload       string
	filter         string
	opBegin, opEnd string
}

// diffCounts is what one comparison saw: crash points compared, their exhaustive states, lazy
// leaves and failing states, and the crash points whose lazy runs fell back.
type diffCounts struct {
	points, states, leaves, failing, fellBack int
}

// sameOutcome reports whether two runs ended the same way and, unless varies, printed the same
// normalised output (exec.Outcome.Normalized), the hang included; a difference is described.
func sameOutcome(a, b scryexec.Outcome, varies bool) (bool, string) {
	switch {
	case a.Err != nil || b.Err != nil:
		return false, fmt.Sprintf("a run did not start: %v / %v", a.Err, b.Err)
	case a.TimedOut || b.TimedOut:
		return a.TimedOut == b.TimedOut, fmt.Sprintf("%s / %s", a.Describe(), b.Describe())
	case a.Signal != b.Signal || a.ExitCode != b.ExitCode:
		return false, fmt.Sprintf("%s / %s", a.Describe(), b.Describe())
	case !varies && !bytes.Equal(a.Normalized(), b.Normalized()):
		return false, fmt.Sprintf("output %q / %q", a.Normalized(), b.Normalized())
	}
	return true, ""
}

// compare records p and explores its trace twice, exhaustively and lazily, and compares them;
// fallback allows lazy runs to fall back (their points are not compared).
func compare(t *testing.T, p diffProgram, fallback bool) diffCounts {
	t.Helper()
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool")
	args := make([]string, len(p.target))
	for i, a := range p.target {
		args[i] = strings.ReplaceAll(a, scryexec.PoolPlaceholder, pool)
	}
	tr := filepath.Join(dir, "run.trace")
	ctx := context.Background()
	globs := []string{pool}
	for _, g := range p.pm {
		globs = append(globs, filepath.Join(dir, g))
	}
	res, err := pipeline.Record(ctx, pipeline.Recording{Args: args, Trace: tr, PM: globs, NoLoads: true, Workload: p.workload, OpBegin: p.opBegin, OpEnd: p.opEnd, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, tr)
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	if res.Failed() {
		t.Fatalf("the recorded run failed: %v", res)
	}
	type judged struct {
		st     crash.State
		out    scryexec.Outcome
		failed bool
		cov    func([]int) bool
	}
	explored := func(strategy string) (map[int][]judged, *explore.Result, error) {
		byPoint := map[int][]judged{}
		x := pipeline.Exploration{Options: explore.Options{
			Strategies: []string{strategy}, Crash: crash.Options{MaxStates: -1},
			ClusterFailures: -1, NoStopEarly: true, Pool: pool, OutputFilter: p.filter, Jobs: 2,
			Judged: func(js explore.JudgedState) {
				if js.Strategy == strategy {
					byPoint[js.Point] = append(byPoint[js.Point], judged{js.State, js.Outcome, js.Failed, js.Covers})
				}
			},
		}}
		rep, err := pipeline.ExploreTrace(ctx, tr, p.workload, p.target, x)
		if err != nil {
			return nil, nil, err
		}
		return byPoint, &explore.Result{Stats: *rep.Stats, Warnings: rep.Warnings}, nil
	}
	exh, eres, err := explored("exhaustive")
	if err != nil {
		t.Fatalf("exhaustive: %v", err)
	}
	lazy, lres, err := explored("lazy")
	if err != nil {
		t.Fatalf("lazy: %v", err)
	}
	var c diffCounts
	for _, n := range lres.Stats.LazyFallbacks {
		c.fellBack += n
	}
	if fb := lres.Stats.LazyFallbacks; len(fb) > 0 && !fallback {
		t.Fatalf("lazy runs fell back: %v (warnings %q)", fb, lres.Warnings)
	}
	varies := eres.Stats.VaryingOutcomes+lres.Stats.VaryingOutcomes > 0
	bad := 0
	for _, point := range slices.Sorted(maps.Keys(exh)) {
		leaves := lazy[point]
		if len(leaves) == 0 && c.fellBack > 0 {
			continue // explored eagerly instead
		}
		c.points++
		c.leaves += len(leaves)
		for _, s := range exh[point] {
			c.states++
			var cover []judged
			for _, l := range leaves {
				if l.cov != nil && l.cov(s.st.K) {
					cover = append(cover, l)
				}
			}
			if len(cover) != 1 {
				t.Errorf("crash point %d, state %v: covered by %d lazy leaves (the point has %d)", point, s.st.K, len(cover), len(leaves))
				bad++
				continue
			}
			if s.failed {
				c.failing++
			}
			if s.failed != cover[0].failed {
				t.Errorf("crash point %d, state %v: failed %v exhaustively, %v lazily", point, s.st.K, s.failed, cover[0].failed)
			}
			if ok, why := sameOutcome(s.out, cover[0].out, varies); !ok {
				t.Errorf("crash point %d, state %v: exhaustive and lazy outcomes differ: %s (the leaf's state %v)", point, s.st.K, why, cover[0].st.K)
				bad++
			}
			if bad > 10 {
				t.FailNow()
			}
		}
	}
	for point, leaves := range lazy {
		if _, ok := exh[point]; !ok && len(leaves) > 0 && leaves[0].cov != nil {
			t.Errorf("crash point %d has a lazy run but no exhaustive state", point)
		}
		for _, l := range leaves {
			// The state a leaf is reported with is one it stands for.
			if l.cov != nil && !l.cov(l.st.K) {
				t.Errorf("crash point %d: a leaf reported as state %v does not cover it", point, l.st.K)
			}
		}
	}
	return c
}

// buildInterp builds interp/interp.c with `scry cc`, once per test.
func buildInterp(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "interp")
	if out, err := exec.Command(testenv.Scry(t), "cc", "-O1", "-mclwb", "-o", bin, filepath.Join("interp", "interp.c")).CombinedOutput(); err != nil {
		t.Fatalf("scry cc interp.c: %v\n%s", err, out)
	}
	return bin
}

// randomPrograms is the number of random programs TestLazyRandom checks: SCRY_LAZY_RANDOM, or
// 100 (`make test-lazy-random` runs 3 000).
func randomPrograms(t *testing.T) int {
	if s := os.Getenv("SCRY_LAZY_RANDOM"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SCRY_LAZY_RANDOM=%q: not a positive number", s)
		}
		return n
	}
	return 100
}

// TestLazyRandom compares lazy and exhaustive exploration on random programs of the
// interpreter (seeds 1..N, Generate).
func TestLazyRandom(t *testing.T) {
	bin := buildInterp(t)
	n := randomPrograms(t)
	var sum diffCounts
	start := time.Now()
	for seed := uint64(1); seed <= uint64(n); seed++ {
		p := Generate(seed)
		ok := t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			dir := t.TempDir()
			wl := filepath.Join(dir, "workload.txt")
			if err := os.WriteFile(wl, []byte(strings.Join(p.Ops, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c := compare(t, diffProgram{target: []string{bin, scryexec.PoolPlaceholder, p.Recovery}, workload: wl}, false)
			sum.points += c.points
			sum.states += c.states
			sum.leaves += c.leaves
			sum.failing += c.failing
		})
		if !ok {
			t.Logf("seed %d: recovery %q, workload %q", seed, p.Recovery, p.Ops)
		}
	}
	t.Logf("%d random programs: %d crash points, %d exhaustive states (%d failing) covered by %d lazy leaves, in %v",
		n, sum.points, sum.states, sum.failing, sum.leaves, time.Since(start).Round(time.Second))
	if sum.states == 0 || sum.failing == 0 || sum.leaves >= sum.states {
		t.Errorf("the random programs exercise too little: %+v", sum)
	}
}

// TestLazyExamples compares lazy and exhaustive exploration on every crash-mode example
// (`// scry: workload`), built and run as examples/examples_test.go does; an example judged by
// a custom checker is left out (a lazy run needs the program's output alone to judge), and so is a
// server driven by a client (`// scry: client`: its runs are sessions, which are not run lazily;
// docs/servers.md).
func TestLazyExamples(t *testing.T) {
	root := filepath.Join(testenv.Root(), "examples")
	srcs, _ := filepath.Glob(filepath.Join(root, "*", "*.c"))
	cxx, _ := filepath.Glob(filepath.Join(root, "*", "*.cpp"))
	n := 0
	for _, src := range append(srcs, cxx...) {
		d, err := directives(src)
		if err != nil {
			t.Fatal(err)
		}
		// Left out: client-mode examples (sessions are not run lazily) and examples built for
		// another architecture (lazy images single-step with x86's trap flag).
		if d["workload"] == "" || d["checker"] != "" || d["client"] != "" || d["target"] != "" {
			continue
		}
		n++
		name := filepath.Base(filepath.Dir(src)) + "/" + filepath.Base(src)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(t.TempDir(), "prog")
			drv, opt := "cc", "-O0"
			if filepath.Ext(src) == ".cpp" {
				drv = "c++"
			}
			if o := strings.Fields(d["opt"]); len(o) > 0 {
				opt = o[0]
			}
			args := []string{drv, opt, "-g", "-mclflushopt", "-mclwb", "-I" + filepath.Join(root, "include"), "-o", bin, src, "-lpmemobj", "-lpmem", "-lpthread"}
			if out, err := exec.Command(testenv.Scry(t), args...).CombinedOutput(); err != nil {
				t.Fatalf("scry %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			p := diffProgram{target: append([]string{bin}, strings.Fields(d["args"])...), workload: filepath.Join(filepath.Dir(src), d["workload"]), pm: strings.Fields(d["pm"])}
			if f := d["output-filter"]; f != "" {
				p.filter = f
			}
			if m := strings.Fields(d["op-markers"]); len(m) == 2 {
				p.opBegin, p.opEnd = m[0], m[1]
			}
			c := compare(t, p, true)
			t.Logf("%d crash points, %d exhaustive states (%d failing), %d lazy leaves; %d crash points explored eagerly instead", c.points, c.states, c.failing, c.leaves, c.fellBack)
		})
	}
	if n == 0 {
		t.Fatal("no crash-mode example found")
	}
}

// directives reads the `// scry: NAME VALUE` header comments of an example program.
func directives(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "// scry: ")
		if !ok {
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		d[name] = strings.TrimSpace(value)
	}
	return d, sc.Err()
}
