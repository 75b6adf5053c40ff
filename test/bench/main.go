// Command bench measures scry's speed for `make bench` (figures recorded in
// docs/performance.md). It prints, on PMDK's mapcli btree with a `scry workload kv` workload:
//
//   - the instrumented run time divided by the native run time (target: at most 10), both
//     medians of --runs runs on fresh pools, measured in the same invocation;
//   - analysis throughput, in trace events per second on one core (GOMAXPROCS=1; target: at
//     least 20 million; the best of 7 passes), over the trace of the instrumented run;
//   - the crash points and the crash states each exploration strategy would test on a
//     2 000-operation run (package crash, `scry explore --dry-run`).
//
// With --fs it prints instead file-system mode's figures (fs.go).
//
// With --tracing 2000,10000,50000 it prints instead what tracing costs per operation on an
// existing pool: native, instrumented (trace to a file, to /dev/null) and valgrind --tool=none,
// ratios and slopes measured in the same run (tracing.go). With --fix it prints the figures of
// `scry fix` (fix.go): time to compute and to validate the repairs of every buggy example, lines
// added, and the validated repairs of Level Hashing's findings.
//
// Usage: go run ./bench --build build [--ops 10000] [--runs 5] [--map btree]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/crash"
	"github.com/scry-pm/scry/pm/explore"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

func main() {
	build := flag.String("build", "build", "scry's build directory")
	ops := flag.Int("ops", 10000, "operations in the workload")
	runs := flag.Int("runs", 5, "runs of each program (the median is used)")
	mapName := flag.String("map", "btree", "mapcli map to drive")
	seed := flag.Uint64("seed", 1, "workload seed")
	compare := flag.Int("compare", 0, "instead: compare the invariants strategy with exhaustive and the defaults on every mapcli map, with this many operations")
	tracing := flag.String("tracing", "", "instead: the tracing cost per operation at these comma-separated sizes (e.g. 2000,10000,50000)")
	exploreOnly := flag.Bool("explore", false, "instead: only the crash-exploration figures (re-execution rate against the native limit, first failure of the injected btree bug)")
	baseline := flag.String("baseline", "", "with --tracing: also time this other build directory's instrumented mapcli (before/after figures)")
	fsMode := flag.Bool("fs", false, "instead: file-system mode's figures (recording slowdown under strace, crash states per second on 2 jobs, time to the first finding) on the examples/fs programs, git and sqlite3")
	compareMaps := flag.String("compare-maps", strings.Join(append(slices.Clone(maps), "injected"), ","), "maps --compare runs (injected: btree with the injected bug)")
	fix := flag.Bool("fix", false, "instead: time `scry fix` on every buggy example (compute and validate) and count the validated repairs of Level Hashing's findings")
	fixOps := flag.Int("fix-levelhash-ops", 200, "with --fix: operations of the Level Hashing run (0: skip it)")
	flag.Parse()
	if *fix {
		if err := fixFigures(*build, *fixOps); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		return
	}
	if *fsMode {
		if err := fsBench(*runs); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		return
	}
	if *compare > 0 {
		if err := compareStrategies(*build, *compare, strings.Split(*compareMaps, ",")); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		return
	}
	if *tracing != "" {
		var sizes []int
		for _, f := range strings.Split(*tracing, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				fmt.Fprintf(os.Stderr, "bench: --tracing: %q is not a number of operations\n", f)
				os.Exit(2)
			}
			sizes = append(sizes, n)
		}
		if err := tracingCost(*build, *baseline, *mapName, sizes, *runs); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		return
	}
	if *exploreOnly {
		dir, err := os.MkdirTemp("", "scry-bench-")
		if err == nil {
			err = crashRuns(*build, dir, *mapName)
			os.RemoveAll(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		return
	}
	if err := run(*build, *mapName, *ops, *runs, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
}

// mapcliSetup returns the native and the instrumented mapcli of build directory build (`make
// mapcli`; the error names the one missing) and a fresh temporary directory named after prefix,
// which the caller removes.
func mapcliSetup(build, prefix string) (native, instr, dir string, err error) {
	native = filepath.Join(build, "mapcli", "mapcli.native")
	instr = filepath.Join(build, "mapcli", "mapcli")
	for _, p := range []string{native, instr} {
		if _, err := os.Stat(p); err != nil {
			return "", "", "", fmt.Errorf("%s missing: run `make mapcli`", p)
		}
	}
	dir, err = os.MkdirTemp("", prefix)
	return native, instr, dir, err
}

func run(build, mapName string, ops, runs int, seed uint64) error {
	native, instr, dir, err := mapcliSetup(build, "scry-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var wl bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: ops, Seed: seed}); err != nil {
		return err
	}
	tracePath := filepath.Join(dir, "run.trace")
	timeRun := func(bin string, traced bool) (time.Duration, error) {
		pool := filepath.Join(dir, "pool")
		os.Remove(pool)
		cmd := exec.Command(bin, mapName, pool, "1")
		cmd.Stdin = bytes.NewReader(wl.Bytes())
		cmd.Env = append(os.Environ(), "PMEM_IS_PMEM_FORCE=1", "SCRY_TRACE="+tracePath)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("%s: %v\n%s", bin, err, errb.String())
		}
		return d, nil
	}
	var nat, ins []time.Duration
	for i := 0; i < runs; i++ { // alternate, so both see the same machine conditions
		d, err := timeRun(native, false)
		if err != nil {
			return err
		}
		nat = append(nat, d)
		d, err = timeRun(instr, true)
		if err != nil {
			return err
		}
		ins = append(ins, d)
	}
	mn, mi := median(nat), median(ins)
	fi, err := os.Stat(tracePath)
	if err != nil {
		return err
	}

	runtime.GOMAXPROCS(1)
	// What `scry analyze` runs (pipeline.Analyze: the inference prepass, the trace oracles and
	// the checks of inferred properties), and the trace oracles alone (--no-infer), each the
	// best of 7 on one core: the machine is shared and noisy.
	analyze := func(a pipeline.Analysis) (uint64, time.Duration, error) {
		var events uint64
		var best time.Duration
		for i := 0; i < 7; i++ {
			start := time.Now()
			rep, err := pipeline.Analyze(tracePath, a, nil)
			d := time.Since(start)
			if err != nil {
				return 0, 0, err
			}
			events = rep.Events
			if best == 0 || d < best {
				best = d
			}
		}
		return events, best, nil
	}
	events, best, err := analyze(pipeline.Analysis{})
	if err != nil {
		return err
	}
	_, bestOracles, err := analyze(pipeline.Analysis{NoInfer: true})
	if err != nil {
		return err
	}
	fmt.Printf("workload: mapcli %s, %d operations (seed %d), %d runs each, medians\n", mapName, ops, seed, runs)
	fmt.Printf("native run:          %8.1f ms\n", ms(mn))
	fmt.Printf("instrumented run:    %8.1f ms (trace %.1f MiB, %d events)\n", ms(mi), float64(fi.Size())/(1<<20), events)
	fmt.Printf("slowdown:            %8.2f x   (target <= 10)\n", float64(mi)/float64(mn))
	fmt.Printf("scry analyze (1 core): %6.1f ms, %.1f M events/s (inference, oracles and checks)\n", ms(best), float64(events)/best.Seconds()/1e6)
	fmt.Printf("oracles (1 core):    %8.1f ms, %.1f M events/s   (target >= 20; --no-infer)\n", ms(bestOracles), float64(events)/bestOracles.Seconds()/1e6)
	runtime.GOMAXPROCS(runtime.NumCPU())
	if err := crashStates(dir, instr, mapName, seed); err != nil {
		return err
	}
	return crashRuns(build, dir, mapName)
}

// checkStats is the part of `scry check --format json` the benchmark reads.
type checkStats struct {
	Findings []struct {
		Kind      report.Kind `json:"kind"`
		Operation *struct {
			Index int `json:"index"`
		} `json:"operation"`
	} `json:"findings"`
	Stats struct {
		CrashPoints  int     `json:"crash_points"`
		StatesTested int     `json:"states_tested"`
		OracleRuns   int     `json:"oracle_runs"`
		PrepRuns     int     `json:"prep_runs"`
		Reused       int     `json:"reused"`
		Sampled      int     `json:"sampled"`
		Failures     int     `json:"failures"`
		Jobs         int     `json:"jobs"`
		Elapsed      float64 `json:"elapsed_seconds"`
		FirstFailure float64 `json:"first_failure_seconds"`
	} `json:"stats"`
	wall time.Duration // the whole `scry check`: recording, trace oracles, exploration
}

// outputFilter drops what mapcli legitimately prints differently after a crash: its random seed
// when it creates a pool, and hashmap_atomic's start-up repair messages (as make mapcli-crash).
const outputFilter = "^(seed:|rebuild, previous attempt crashed|count dirty, recalculating|old count: )"

// scryCheck runs `scry check` in crash mode with the first ops operations of a seed-1 workload,
// mapcli seeded with 1, and returns its JSON report.
func scryCheck(build, dir, bin, mapName string, ops int, extra ...string) (*checkStats, error) {
	var wl bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: ops, Seed: 1}); err != nil {
		return nil, err
	}
	wpath := filepath.Join(dir, fmt.Sprintf("ops-%d.txt", ops))
	if err := os.WriteFile(wpath, wl.Bytes(), 0o644); err != nil {
		return nil, err
	}
	rep := filepath.Join(dir, "report.json")
	args := append([]string{"check", "--format", "json", "-o", rep, "--output-filter", outputFilter, "--workload", wpath}, extra...)
	// mapcli's own seed (hash functions, skip-list levels) is fixed too: without it mapcli takes
	// the time, and two runs of the same workload differ.
	args = append(args, "--", bin, mapName, "{pool}", "1")
	cmd := exec.Command(filepath.Join(build, "bin", "scry"), args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return nil, fmt.Errorf("scry check %s: %v\n%s", bin, err, errb.String())
		}
	}
	data, err := os.ReadFile(rep)
	if err != nil {
		return nil, err
	}
	cs := checkStats{wall: wall}
	if err := json.Unmarshal(data, &cs); err != nil {
		return nil, fmt.Errorf("report of %s: %w", bin, err)
	}
	return &cs, nil
}

// crashRuns measures crash exploration: crash images tested per second per core on mapcli
// (30 operations, default strategies), and the time to the first reported crash finding on the
// injected btree bug (test/mapcli/patches-injected) in a 40-operation run.
func crashRuns(build, dir, mapName string) error {
	cs, err := scryCheck(build, dir, filepath.Join(build, "mapcli", "mapcli"), mapName, 30)
	if err != nil {
		return err
	}
	// The processes run: states judged by another state's identical image (reused) ran nothing.
	runs := cs.Stats.StatesTested - cs.Stats.Reused + cs.Stats.OracleRuns + cs.Stats.PrepRuns
	perCore := float64(runs) / cs.Stats.Elapsed / float64(max(cs.Stats.Jobs, 1))
	fmt.Printf("\ncrash exploration, mapcli %s, 30 operations: %d crash points, %d states judged (%d by an identical image's run), %d runs of the program (images and oracles) in %.1f s on %d jobs: %.1f runs/s per core, %.1f states judged/s per core\n",
		mapName, cs.Stats.CrashPoints, cs.Stats.StatesTested, cs.Stats.Reused, runs, cs.Stats.Elapsed, cs.Stats.Jobs, perCore,
		float64(cs.Stats.StatesTested)/cs.Stats.Elapsed/float64(max(cs.Stats.Jobs, 1)))
	nat, inert, err := imageRunTimes(build, dir, mapName, 30)
	if err != nil {
		return err
	}
	fmt.Printf("one run on a crash image (the pool after 15 of the 30 operations, the other 15 on standard input), medians of 21: native build %.1f ms, instrumented build with its runtime inert %.1f ms (%.2fx)\n",
		ms(nat), ms(inert), float64(inert)/float64(nat))
	limit := 1 / min(nat, inert).Seconds()
	fmt.Printf("re-execution: %.1f runs/s per core against a limit of %.1f (one core running the faster build back to back): %.2f of the limit (target >= 0.8)\n",
		perCore, limit, perCore/limit)
	injected := filepath.Join(build, "mapcli", "mapcli-injected")
	if _, err := os.Stat(injected); err != nil || mapName != "btree" {
		return nil
	}
	cs, err = scryCheck(build, dir, injected, mapName, 40)
	if err != nil {
		return err
	}
	crashFindings := 0
	for _, f := range cs.Findings {
		if f.Kind == report.OrderingViolation || f.Kind == report.AtomicityViolation {
			crashFindings++
		}
	}
	fmt.Printf("injected btree bug (40 operations): %d crash findings; first failing crash image after %.1f s of exploration (%.1f s after scry check started recording: the whole check took %.1f s)\n",
		crashFindings, cs.Stats.FirstFailure, cs.wall.Seconds()-cs.Stats.Elapsed+cs.Stats.FirstFailure, cs.wall.Seconds())
	return nil
}

// crashStates records mapcli with a 2 000-operation workload and prints the crash points and the
// crash states each exploration strategy would test (scry explore --dry-run).
func crashStates(dir, instr, mapName string, seed uint64) error {
	const ops = 2000
	var wl bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: ops, Seed: seed}); err != nil {
		return err
	}
	tr := filepath.Join(dir, "crash.trace")
	pool := filepath.Join(dir, "crash.pool")
	cmd := exec.Command(instr, mapName, pool, "1")
	cmd.Stdin = &wl
	cmd.Env = append(os.Environ(), "PMEM_IS_PMEM_FORCE=1", "SCRY_TRACE="+tr)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", instr, err, out)
	}
	// Inference (WITCHER's rules and the dissertation's), timed on its own pass over the trace.
	ir, err := trace.Open(tr)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := infer.Infer(ir, infer.Options{Rules: infer.RuleSet("both")})
	ir.Close()
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("\ninference, mapcli %s, %d operations: %d events (%d PM loads, %d PM stores) in %.1f ms: %.1f M events/s (target: seconds)\n",
		mapName, ops, res.Events, res.Loads, res.Stores, ms(took), float64(res.Events)/took.Seconds()/1e6)
	for _, rule := range infer.AllRules {
		fmt.Printf("  %-5s %d\n", rule, res.Counts[rule])
	}
	r, err := trace.Open(tr)
	if err != nil {
		return err
	}
	defer r.Close()
	start = time.Now()
	sum, err := crash.Summarize(r, crash.Strategies(), crash.Options{Invariants: explore.Invariants(res)})
	if err != nil {
		return err
	}
	fmt.Printf("\ncrash states, mapcli %s, %d operations (seed %d), counted in %.1f ms:\n", mapName, ops, seed, ms(time.Since(start)))
	if err := sum.WriteText(os.Stdout, "mapcli "+mapName); err != nil {
		return err
	}
	var inv, exh *big.Int
	for _, c := range sum.Strategies {
		switch c.Name {
		case "invariants":
			inv = c.Tested
		case "exhaustive":
			exh = c.Tested
		}
	}
	if inv != nil && exh != nil && exh.Sign() > 0 {
		ratio, _ := new(big.Rat).SetFrac(inv, exh).Float64()
		fmt.Printf("states tested, invariants / exhaustive: %v / %v = %.4f\n", inv, exh, ratio)
	}
	return nil
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// maps are mapcli's maps (test/mapcli/).
var maps = []string{"btree", "ctree", "rbtree", "rtree", "hashmap_atomic", "hashmap_tx", "hashmap_rp", "skiplist"}

// compareStrategies prints, for every mapcli map (and the injected btree bug), the crash states
// the invariants strategy tests against the exhaustive state space of the same trace, and the
// crash findings of `scry check --strategy invariants` against those of the default strategies
// (running every exhaustive state is out of reach: it is counted, not run).
func compareStrategies(build string, ops int, only []string) error {
	dir, err := os.MkdirTemp("", "scry-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("invariants vs exhaustive, mapcli, %d operations (seed 1)\n", ops)
	fmt.Printf("%-22s %9s %12s %22s %9s %14s %14s\n", "map", "crash pts", "invariants", "exhaustive (full)", "ratio", "inv. findings", "default find.")
	type target struct{ name, bin, mapName string }
	var ts []target
	for _, m := range maps {
		if slices.Contains(only, m) {
			ts = append(ts, target{m, filepath.Join(build, "mapcli", "mapcli"), m})
		}
	}
	if inj := filepath.Join(build, "mapcli", "mapcli-injected"); fileExists(inj) && slices.Contains(only, "injected") {
		ts = append(ts, target{"btree (injected bug)", inj, "btree"})
	}
	for _, t := range ts {
		tr := filepath.Join(dir, "cmp.trace")
		inv, err := scryCheck(build, dir, t.bin, t.mapName, ops, "--strategy", "invariants", "--trace", tr)
		if err != nil {
			return err
		}
		r, err := trace.Open(tr)
		if err != nil {
			return err
		}
		res, err := infer.Infer(r, infer.Options{Rules: infer.RuleSet("both")})
		r.Close()
		if err != nil {
			return err
		}
		r, err = trace.Open(tr)
		if err != nil {
			return err
		}
		sum, err := crash.Summarize(r, []*crash.Strategy{crash.StrategyByName("exhaustive"), crash.StrategyByName("invariants")},
			crash.Options{Invariants: explore.Invariants(res)})
		r.Close()
		if err != nil {
			return err
		}
		var exhFull *big.Int
		for _, c := range sum.Strategies {
			if c.Name == "exhaustive" {
				exhFull = c.Full
			}
		}
		def, err := scryCheck(build, dir, t.bin, t.mapName, ops)
		if err != nil {
			return err
		}
		ratio := "-"
		if exhFull != nil && exhFull.Sign() > 0 {
			f, _ := new(big.Rat).SetFrac(big.NewInt(int64(inv.Stats.StatesTested)), exhFull).Float64()
			ratio = fmt.Sprintf("%.2g", f)
		}
		fmt.Printf("%-22s %9d %12d %22v %9s %14s %14s\n", t.name, inv.Stats.CrashPoints, inv.Stats.StatesTested, exhFull, ratio,
			crashKinds(inv), crashKinds(def))
	}
	return nil
}

// crashKinds summarises a report's crash findings as "N (ordering O, atomicity A)".
func crashKinds(cs *checkStats) string {
	o, a := 0, 0
	for _, f := range cs.Findings {
		switch f.Kind {
		case report.OrderingViolation:
			o++
		case report.AtomicityViolation:
			a++
		}
	}
	return fmt.Sprintf("%d (o%d a%d)", o+a, o, a)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// imageRunTimes times one run of mapcli on a crash-like image: the pool after the first half of
// an ops-operation workload (made by the native build), with the second half on standard input,
// each run on a fresh copy (the copy is not timed); the medians of 21 runs of the native build
// and of the instrumented build with its runtime inert (SCRY_INERT=1, as exploration runs it),
// alternating.
func imageRunTimes(build, dir, mapName string, ops int) (native, inert time.Duration, err error) {
	nativeBin := filepath.Join(build, "mapcli", "mapcli.native")
	instr := filepath.Join(build, "mapcli", "mapcli")
	var wl bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: ops, Seed: 1}); err != nil {
		return 0, 0, err
	}
	lines := strings.SplitAfter(wl.String(), "\n")
	half := len(lines) / 2
	first, second := strings.Join(lines[:half], ""), strings.Join(lines[half:], "")
	base := filepath.Join(dir, "image.base")
	os.Remove(base)
	if out, err := runMapcli([]string{nativeBin}, mapName, base, []byte(first), nil); err != nil {
		return 0, 0, fmt.Errorf("making the image: %v\n%s", err, out)
	}
	defer os.Remove(base)
	var nat, ins []time.Duration
	for i := 0; i < 21; i++ {
		for _, c := range []struct {
			bin string
			env []string
			out *[]time.Duration
		}{{nativeBin, nil, &nat}, {instr, []string{"SCRY_INERT=1", "SCRY_TRACE=/dev/null"}, &ins}} {
			pool := filepath.Join(dir, "image.pool")
			if out, err := exec.Command("cp", "--sparse=always", base, pool).CombinedOutput(); err != nil {
				return 0, 0, fmt.Errorf("copying the image: %v %s", err, out)
			}
			start := time.Now()
			out, err := runMapcli([]string{c.bin}, mapName, pool, []byte(second), c.env)
			d := time.Since(start)
			if err != nil {
				return 0, 0, fmt.Errorf("%s on the image: %v\n%s", c.bin, err, out)
			}
			*c.out = append(*c.out, d)
		}
	}
	return median(nat), median(ins), nil
}
