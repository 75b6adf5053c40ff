package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/scry-pm/scry/trace"
	"github.com/scry-pm/scry/workload"
)

// tracingConfig is one way of running mapcli in the tracing benchmark.
type tracingConfig struct {
	name string
	argv func(bin string) []string // the command line, given mapcli's path
	bin  string                    // mapcli.native or the instrumented mapcli
	env  []string
}

// tracingCost measures what tracing costs per operation (`make bench`): mapcli <map> driven by
// `scry workload kv` (seed 1) at each size in sizes, on a copy of one existing pool (created
// before the timing, so that only opening it and the operations are timed), for the native
// build, the instrumented build tracing to a file and to /dev/null, and, when valgrind is
// installed, the native build under `valgrind --tool=none` and recorded in black-box mode under
// scry's Valgrind tool (`valgrind --tool=scry`, docs/black-box.md). Every configuration runs once per
// round, alternating, and the medians of rounds rounds are compared: ratios to native at each
// size; the cost per operation with the fixed cost (a run of no operation: opening and closing
// the pool) subtracted, and its ratio to native; the trace's records per operation and scry's
// cost per record (nanoseconds); and the slope (microseconds per operation) between
// consecutive sizes.
//
// baseline, when not "", is another build directory (an older checkout's `make mapcli`): its
// instrumented mapcli, tracing to a file, is timed in the same rounds, for before/after figures.
func tracingCost(build, baseline, mapName string, sizes []int, rounds int) error {
	native, instr, dir, err := mapcliSetup(build, "scry-bench-tracing-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	base := filepath.Join(dir, "pool.base")
	if out, err := runMapcli([]string{native}, mapName, base, nil, nil); err != nil {
		return fmt.Errorf("creating the pool: %v\n%s", err, out)
	}
	tracePath := filepath.Join(dir, "run.trace")
	configs := []tracingConfig{
		{name: "native", bin: native},
		{name: "scry, trace to a file", bin: instr, env: []string{"SCRY_TRACE=" + tracePath}},
		{name: "scry, trace to /dev/null", bin: instr, env: []string{"SCRY_TRACE=/dev/null"}},
	}
	if baseline != "" {
		old := filepath.Join(baseline, "mapcli", "mapcli")
		if _, err := os.Stat(old); err != nil {
			return fmt.Errorf("--baseline: %s missing: run `make mapcli` in that checkout", old)
		}
		configs = append(configs, tracingConfig{name: "baseline, trace to a file", bin: old,
			env: []string{"SCRY_TRACE=" + tracePath}})
	}
	if vg, err := exec.LookPath("valgrind"); err == nil {
		// Debian's valgrind 3.19 cannot read the DWARF 5 that clang 16 writes: time a copy
		// without debugging information (the code is the same).
		stripped := filepath.Join(dir, "mapcli.native.stripped")
		if out, err := exec.Command("objcopy", "--strip-debug", native, stripped).CombinedOutput(); err != nil {
			fmt.Printf("valgrind --tool=none: not measured (objcopy: %v %s)\n", err, bytes.TrimSpace(out))
		} else {
			configs = append(configs, tracingConfig{name: "valgrind --tool=none", bin: stripped,
				argv: func(bin string) []string { return []string{vg, "--tool=none", "-q", bin} }})
		}
		// Black-box mode (docs/black-box.md): the plain build (DWARF 4) under scry's tool.
		if tool := filepath.Join(build, "lib", "scry", "valgrind"); fileExists(filepath.Join(tool, "scry-amd64-linux")) {
			bbTrace := filepath.Join(dir, "blackbox.trace")
			configs = append(configs, tracingConfig{name: "scry --black-box, to a file", bin: native, env: []string{"VALGRIND_LIB=" + tool},
				argv: func(bin string) []string { return []string{vg, "--tool=scry", "-q", "--trace=" + bbTrace, bin} }})
		} else {
			fmt.Println("scry --black-box: not measured (scry's Valgrind tool is not built: make valgrind)")
		}
	} else {
		fmt.Println("valgrind --tool=none: not measured (valgrind is not installed)")
	}
	// Column 0 is a run with no operation: opening and closing the pool, the fixed cost that
	// the per-operation figures subtract.
	sizes = append([]int{0}, sizes...)
	// times[config][size]: the medians; records[size]: the trace's records (trace to a file).
	times := make([][]time.Duration, len(configs))
	for ci := range configs {
		times[ci] = make([]time.Duration, len(sizes))
	}
	records := make([]uint64, len(sizes))
	for si, n := range sizes {
		var wl bytes.Buffer
		if err := workload.KV(&wl, workload.KVOptions{Ops: n, Seed: 1}); err != nil {
			return err
		}
		samples := make([][]time.Duration, len(configs))
		for r := 0; r < rounds; r++ {
			for ci, c := range configs {
				pool := filepath.Join(dir, "pool")
				if out, err := exec.Command("cp", "--sparse=always", base, pool).CombinedOutput(); err != nil {
					return fmt.Errorf("copying the pool: %v %s", err, out)
				}
				argv := []string{c.bin}
				if c.argv != nil {
					argv = c.argv(c.bin)
				}
				start := time.Now()
				out, err := runMapcli(argv, mapName, pool, wl.Bytes(), c.env)
				d := time.Since(start)
				if err != nil {
					return fmt.Errorf("%s, %d operations: %v\n%s", c.name, n, err, out)
				}
				samples[ci] = append(samples[ci], d)
				if ci == 1 && r == 0 {
					if records[si], err = countRecords(tracePath); err != nil {
						return err
					}
				}
			}
		}
		for ci := range configs {
			times[ci][si] = median(samples[ci])
		}
	}

	fmt.Printf("tracing cost: mapcli %s on an existing pool, `scry workload kv --seed 1`, medians of %d rounds\n", mapName, rounds)
	fmt.Printf("%-26s", "operations")
	for _, n := range sizes {
		fmt.Printf(" %18d", n)
	}
	fmt.Println()
	for ci, c := range configs {
		fmt.Printf("%-26s", c.name)
		for si := range sizes {
			t := times[ci][si]
			if ci == 0 {
				fmt.Printf(" %15.1f ms", ms(t))
			} else {
				fmt.Printf(" %8.1f ms %5.2fx", ms(t), float64(t)/float64(times[0][si]))
			}
		}
		fmt.Println()
	}
	fmt.Printf("%-26s", "trace records")
	for si := range sizes {
		fmt.Printf(" %18d", records[si])
	}
	fmt.Println()
	// Per operation, the fixed cost (column 0) removed: what an operation costs at each size.
	perOp := func(ci, si int) float64 {
		return float64((times[ci][si] - times[ci][0]).Nanoseconds()) / 1e3 / float64(sizes[si])
	}
	fmt.Printf("per operation (us, the 0-operation run subtracted; ratio to native)\n")
	for ci, c := range configs {
		fmt.Printf("%-26s", c.name)
		for si := 1; si < len(sizes); si++ {
			if ci == 0 {
				fmt.Printf(" %15.2f us", perOp(ci, si))
			} else {
				fmt.Printf(" %8.2f us %5.2fx", perOp(ci, si), perOp(ci, si)/perOp(0, si))
			}
		}
		fmt.Println()
	}
	fmt.Printf("%-26s", "records per operation")
	for si := 1; si < len(sizes); si++ {
		fmt.Printf(" %18.1f", float64(records[si]-records[0])/float64(sizes[si]))
	}
	fmt.Println()
	fmt.Printf("%-26s", "scry ns per record")
	for si := 1; si < len(sizes); si++ {
		fmt.Printf(" %18.1f", float64((times[1][si]-times[1][0]).Nanoseconds())/float64(records[si]-records[0]))
	}
	fmt.Println()
	fmt.Printf("slope (us per operation)  ")
	for si := 2; si < len(sizes); si++ {
		fmt.Printf(" %d-%d", sizes[si-1], sizes[si])
	}
	fmt.Println()
	for ci, c := range configs {
		fmt.Printf("%-26s", c.name)
		for si := 2; si < len(sizes); si++ {
			dt := times[ci][si] - times[ci][si-1]
			fmt.Printf(" %8.2f", float64(dt.Microseconds())/float64(sizes[si]-sizes[si-1]))
		}
		fmt.Println()
	}
	if len(sizes) >= 3 {
		last, prev := len(sizes)-1, len(sizes)-2
		r := func(ci, si int) float64 { return float64(times[ci][si]) / float64(times[0][si]) }
		fmt.Printf("flatness: ratio at %d / ratio at %d operations = %.2f (target <= 1.2); ratio at %d = %.2fx (target <= 5)\n",
			sizes[last], sizes[prev], r(1, last)/r(1, prev), sizes[last], r(1, last))
		fmt.Printf("per operation: scry's cost at %d / at %d operations = %.2f; records per operation %.2f; ns per record %.2f\n",
			sizes[last], sizes[prev], perOp(1, last)/perOp(1, prev),
			(float64(records[last]-records[0])/float64(sizes[last]))/(float64(records[prev]-records[0])/float64(sizes[prev])),
			(float64((times[1][last]-times[1][0]).Nanoseconds())/float64(records[last]-records[0]))/
				(float64((times[1][prev]-times[1][0]).Nanoseconds())/float64(records[prev]-records[0])))
	}
	// What the runtime did in the largest traced run (SCRY_RT_STATS).
	var wl bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: sizes[len(sizes)-1], Seed: 1}); err != nil {
		return err
	}
	pool := filepath.Join(dir, "pool")
	if out, err := exec.Command("cp", "--sparse=always", base, pool).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the pool: %v %s", err, out)
	}
	out, err := runMapcli([]string{instr}, mapName, pool, wl.Bytes(), []string{"SCRY_TRACE=/dev/null", "SCRY_RT_STATS=1"})
	if err != nil {
		return fmt.Errorf("instrumented run with SCRY_RT_STATS: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "scry: runtime:") {
			fmt.Printf("%d operations: %s\n", sizes[len(sizes)-1], line)
		}
	}
	return nil
}

// runMapcli runs `argv... map pool 1` (argv: the program, or a wrapper and its arguments ending
// with the program) with the workload on standard input (nil: an empty input, which only creates
// or opens the pool) and returns its standard error.
func runMapcli(argv []string, mapName, pool string, input []byte, env []string) ([]byte, error) {
	args := append(append([]string{}, argv[1:]...), mapName, pool, "1")
	cmd := exec.Command(argv[0], args...)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Env = append(append(os.Environ(), "PMEM_IS_PMEM_FORCE=1"), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	return errb.Bytes(), err
}

// countRecords returns the number of records of the trace at path.
func countRecords(path string) (uint64, error) {
	r, err := trace.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	st, err := trace.ComputeStats(r)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return st.Records, nil
}
