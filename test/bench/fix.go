package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/scry-pm/scry/repair"
	"github.com/scry-pm/scry/workload"
)

// fixFigures measures `scry fix` (docs/repair.md) for docs/performance.md: for every buggy
// example with a correctness finding, at its first optimisation level, the time to compute its
// repairs and to validate them (rebuild and check again), and the lines each repair adds; then,
// on scry's port of Level Hashing (test/levelhash, built at -O0 so that every statement
// keeps its line) with lhOps operations, how many correctness findings get a validated repair.
// The checks run with scry's binary in build; the repairs in this process (repair.Fix).
func fixFigures(build string, lhOps int) error {
	scry, err := filepath.Abs(filepath.Join(build, "bin", "scry"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(scry); err != nil {
		return fmt.Errorf("%s missing: run `make`", scry)
	}
	os.Setenv("PATH", filepath.Dir(scry)+":"+os.Getenv("PATH"))
	os.Setenv("PMEM_IS_PMEM_FORCE", "1")
	root, err := filepath.Abs(".")
	if err != nil {
		return err
	}
	dirs, err := filepath.Glob(filepath.Join(root, "examples", "*", "buggy.c"))
	if err != nil {
		return err
	}
	fmt.Println("| example | correctness findings | repaired (validated) | inserted / moved or deleted | lines added / removed | compute (s) | validate (s) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	var tc, tv float64
	for _, src := range dirs {
		name := filepath.Base(filepath.Dir(src))
		row, err := fixExample(scry, src)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if row == nil {
			continue
		}
		tc += row.ComputeSeconds
		tv += row.ValidateSeconds
		fmt.Printf("| %s | %s |\n", name, row.line())
	}
	fmt.Printf("| all | | | | | %.2f | %.1f |\n\n", tc, tv)
	if lhOps <= 0 {
		return nil
	}
	fmt.Printf("Level Hashing (test/levelhash, -O0, %d operations):\n\n", lhOps)
	row, err := fixLevelHash(scry, root, lhOps)
	if err != nil {
		return fmt.Errorf("levelhash: %w", err)
	}
	fmt.Printf("| program | correctness findings | repaired (validated) | inserted / moved or deleted | lines added / removed | compute (s) | validate (s) |\n|---|---|---|---|---|---|---|\n| level_hashing | %s |\n", row.line())
	for _, o := range row.res.Outcomes {
		state := "not repaired: " + o.Reason
		if o.Repair != nil {
			state = "repaired: " + o.Repair.Summary
		}
		if len(state) > 160 {
			state = state[:160] + "..."
		}
		fmt.Printf("- finding %d, %s at line %d: %s\n", o.Finding, o.Kind, o.Location.Line, state)
	}
	return nil
}

// fixRow is one row of the figures.
type fixRow struct {
	res                             *repair.Result
	findings, repaired              int
	inserted, moved, added, removed int
	ComputeSeconds, ValidateSeconds float64
}

func (r *fixRow) line() string {
	return fmt.Sprintf("%d | %d | %d / %d | %d / %d | %.2f | %.1f", r.findings, r.repaired, r.inserted, r.moved, r.added, r.removed, r.ComputeSeconds, r.ValidateSeconds)
}

var directive = regexp.MustCompile(`(?m)^//\s*scry:\s*([\w-]+)\s*(.*?)\s*$`)

// fixExample checks one example in a fresh directory holding a copy of its source and repairs
// it; nil when it has no correctness finding.
func fixExample(scry, src string) (*fixRow, error) {
	text, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	d := map[string]string{}
	for _, m := range directive.FindAllStringSubmatch(string(text), -1) {
		if _, ok := d[m[1]]; !ok {
			d[m[1]] = m[2]
		}
	}
	dir, err := os.MkdirTemp("", "scry-bench-fix-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "buggy.c"), text, 0o644); err != nil {
		return nil, err
	}
	opt := "-O0"
	if o := strings.Fields(d["opt"]); len(o) > 0 {
		opt = o[0]
	}
	// The examples' shared header, examples/include/example.h, is found where the example is.
	inc := "-I" + filepath.Join(filepath.Dir(filepath.Dir(src)), "include")
	build := []string{scry, "cc", opt, "-g", "-mclflushopt", "-mclwb", inc, "-o", "prog", "buggy.c", "-lpmemobj", "-lpmem", "-lpthread"}
	if t := d["target"]; t != "" {
		// An example for another architecture (run under qemu-user): no x86 flags, no PMDK.
		build = []string{scry, "cc", "--target=" + t, "-march=armv8.2-a", opt, "-g", inc, "-o", "prog", "buggy.c", "-lpthread"}
	}
	if out, err := runIn(dir, build...); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, out)
	}
	check := []string{scry, "check", "--format", "json", "-o", filepath.Join(dir, "report.json")}
	if m := strings.Fields(d["op-markers"]); len(m) == 2 {
		check = append(check, "--op-begin", m[0], "--op-end", m[1])
	}
	args := strings.Fields(d["args"])
	if wl := d["workload"]; wl != "" {
		check = append(check, "--workload", filepath.Join(filepath.Dir(src), wl))
		if f := d["output-filter"]; f != "" {
			check = append(check, "--output-filter", f)
		}
		if s := d["strategy"]; s != "" {
			check = append(check, "--strategy", s)
		}
	} else {
		if g := d["pm"]; g != "" {
			check = append(check, "--pm", filepath.Join(dir, g))
		}
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "{pool}", filepath.Join(dir, "test.pool"))
		}
	}
	check = append(append(check, "--", filepath.Join(dir, "prog")), args...)
	runIn(dir, check...) // exit 1: correctness findings
	return fixReport(dir, filepath.Join(dir, "report.json"), shellJoin(build))
}

// fixReport repairs the report's correctness findings with validation.
func fixReport(dir, report, build string) (*fixRow, error) {
	b, err := os.ReadFile(report)
	if err != nil {
		return nil, err
	}
	var rep struct {
		Findings []struct {
			Class string `json:"class"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, err
	}
	row := &fixRow{}
	for _, f := range rep.Findings {
		if f.Class == "correctness" {
			row.findings++
		}
	}
	if row.findings == 0 {
		return nil, nil
	}
	res, err := repair.Fix(context.Background(), repair.Options{Report: report, Build: build, Dir: dir})
	if err != nil {
		return nil, err
	}
	row.res = res
	row.ComputeSeconds, row.ValidateSeconds = res.ComputeSeconds, res.ValidateSeconds
	for _, o := range res.Outcomes {
		if o.Repair != nil && o.Repair.Validated {
			row.repaired++
		}
	}
	for _, r := range res.Repairs {
		row.inserted += r.Inserted
		row.moved += r.Moved
		row.added += r.LinesAdded
		row.removed += r.LinesRemoved
	}
	return row, nil
}

// fixLevelHash checks Level Hashing on ops operations and repairs its findings.
func fixLevelHash(scry, root string, ops int) (*fixRow, error) {
	dir, err := os.MkdirTemp("", "scry-bench-lh-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	text, err := os.ReadFile(filepath.Join(root, "test", "levelhash", "level_hashing.c"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "level_hashing.c"), text, 0o644); err != nil {
		return nil, err
	}
	build := []string{scry, "cc", "-O0", "-g", "-o", "level_hashing", "level_hashing.c", "-lpmem"}
	if out, err := runIn(dir, build...); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, out)
	}
	var wl bytes.Buffer
	if err := workload.KV(&wl, workload.KVOptions{Ops: ops, Seed: 1}); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "ops.txt"), wl.Bytes(), 0o644); err != nil {
		return nil, err
	}
	runIn(dir, scry, "check", "-j", "2", "--format", "json", "-o", filepath.Join(dir, "report.json"),
		"--workload", filepath.Join(dir, "ops.txt"), "--", filepath.Join(dir, "level_hashing"), "{pool}")
	return fixReport(dir, filepath.Join(dir, "report.json"), shellJoin(build))
}

func runIn(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
