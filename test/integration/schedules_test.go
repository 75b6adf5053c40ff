package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
)

// TestRecordSchedulesShards records examples/schedule-window's buggy program under three thread
// schedules (`scry record --schedules 3`), explores the operating system's trace whole and the
// PM-aware schedule's in two shards, and merges the three reports: the PM-aware schedule's
// finding, which the operating system's trace does not show, lands in the merged report naming
// its schedule, and its replay note runs the program under it.
func TestRecordSchedulesShards(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	ex := filepath.Join(testenv.Root(), "examples", "schedule-window")
	prog := filepath.Join(dir, "window")
	if r := run(t, dir, "", scry, "cc", "-O0", "-g", "-mclwb", "-I"+filepath.Join(testenv.Root(), "examples", "include"),
		"-o", prog, filepath.Join(ex, "buggy.c"), "-lpmem", "-lpthread"); r.code != 0 {
		t.Fatalf("scry cc: %s", r.stderr)
	}
	wl := filepath.Join(ex, "workload.txt")
	tr := filepath.Join(dir, "w.trace")
	if r := run(t, dir, "", scry, "record", "--schedules", "2", "--trace", tr, "--workload", wl, "--", prog, "fixed.pool"); r.code != 2 || !strings.Contains(r.stderr, "{pool}") {
		t.Errorf("--schedules 2 without {pool}: exit %d, %s", r.code, r.stderr)
	}
	r := run(t, dir, "", scry, "record", "--schedules", "3", "--trace", tr, "--workload", wl, "--", prog, "{pool}")
	if r.code != 0 || !strings.Contains(r.stderr, "w.trace.sched-2 under SCRY_SCHED=pm:2:3:") {
		t.Fatalf("scry record --schedules 3: exit %d\n%s", r.code, r.stderr)
	}
	var shards []string
	explore := func(trace, shard, out string) {
		t.Helper()
		args := []string{"explore", "--trace", trace, "--workload", wl, "--format", "json", "-o", out, "--shard", shard}
		if r := run(t, dir, "", scry, append(args, "--", prog, "{pool}")...); r.code != 0 && r.code != 1 {
			t.Fatalf("scry explore %s: exit %d\n%s", trace, r.code, r.stderr)
		}
		shards = append(shards, out)
	}
	explore(tr, "0/1", filepath.Join(dir, "os.json"))
	explore(tr+".sched-2", "0/2", filepath.Join(dir, "pm-0.json"))
	explore(tr+".sched-2", "1/2", filepath.Join(dir, "pm-1.json"))
	merged := filepath.Join(dir, "merged.json")
	if r := run(t, dir, "", scry, append([]string{"merge", "--format", "json", "-o", merged}, shards...)...); r.code != 1 {
		t.Fatalf("scry merge: exit %d, want 1 (findings)\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Findings []struct {
			Kind     string `json:"kind"`
			Schedule string `json:"schedule"`
			Location struct {
				Line int `json:"line"`
			} `json:"location"`
		} `json:"findings"`
		Stats struct {
			Schedules int `json:"schedules"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Kind == "atomicity-violation" && strings.HasPrefix(f.Schedule, "pm:2:3:") {
			found = true
		}
	}
	if !found || rep.Stats.Schedules != 2 {
		t.Errorf("merged report: findings %+v, %d schedules; want an atomicity-violation under pm:2:3:K of 2 schedules", rep.Findings, rep.Stats.Schedules)
	}
	r = run(t, dir, "", scry, "replay", merged, "1", "--out", filepath.Join(dir, "crash.img"))
	if r.code != 0 || !strings.Contains(r.stderr, "'SCRY_SCHED=pm:2:3:") {
		t.Errorf("scry replay of the merged report: exit %d\n%s", r.code, r.stderr)
	}
}
