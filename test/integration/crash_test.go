package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crashReport is the part of a JSON report the crash tests read.
type crashReport struct {
	Findings []struct {
		Kind  string `json:"kind"`
		Crash *struct {
			ID      string `json:"id"`
			Symptom string `json:"symptom"`
		} `json:"crash"`
	} `json:"findings"`
	Stats *struct {
		CrashPoints  int     `json:"crash_points"`
		StatesTested int     `json:"states_tested"`
		Failures     int     `json:"failures"`
		Elapsed      float64 `json:"elapsed_seconds"`
	} `json:"stats"`
}

func readCrashReport(t *testing.T, path string) crashReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r crashReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return r
}

// TestCrashMapcli explores the crash states of PMDK's mapcli (btree) on a 30-operation
// workload: PMDK's transactions make every operation failure-atomic, so there is no crash
// finding. The states are capped (2 prefixes per crash point) to keep the test short.
func TestCrashMapcli(t *testing.T) {
	scry := scryBin(t)
	mapcli := need(t, "mapcli/mapcli")
	dir := t.TempDir()
	ops := filepath.Join(dir, "ops.txt")
	if r := run(t, dir, "", scry, "workload", "kv", "--ops", "30", "--seed", "3", "-o", ops); r.code != 0 {
		t.Fatalf("workload: %s", r.stderr)
	}
	rep := filepath.Join(dir, "rep.json")
	r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", ops,
		"--output-filter", "^seed:", "--strategy", "prefix", "--max-states", "2", "--",
		mapcli, "btree", "{pool}")
	if r.code != 0 {
		t.Fatalf("scry check: exit %d\n%s", r.code, r.stderr)
	}
	cr := readCrashReport(t, rep)
	for _, f := range cr.Findings {
		if f.Crash != nil {
			t.Errorf("crash finding %s (%s) on mapcli btree", f.Kind, f.Crash.Symptom)
		}
	}
	if cr.Stats == nil || cr.Stats.CrashPoints == 0 || cr.Stats.StatesTested == 0 || cr.Stats.Failures != 0 {
		t.Errorf("stats %+v", cr.Stats)
	}
	if _, err := os.Stat(rep + ".trace"); err != nil {
		t.Errorf("the trace is not kept next to the report: %v", err)
	}
}

// TestCrashReplay finds the ordering violation of explore/testdata/ordering.c with scry check
// and rebuilds its crash image with scry replay.
func TestCrashReplay(t *testing.T) {
	scry := scryBin(t)
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "explore", "testdata", "ordering.c")
	bin := filepath.Join(dir, "ordering")
	if r := run(t, dir, "", scry, "cc", "-O1", "-mclwb", "-o", bin, src); r.code != 0 {
		t.Fatalf("scry cc: %s", r.stderr)
	}
	ops := filepath.Join(repoRoot(t), "explore", "testdata", "ordering.ops")
	rep := filepath.Join(dir, "rep.json")
	r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", ops, "--", bin, "{pool}")
	if r.code != 1 {
		t.Fatalf("scry check: exit %d, want 1\n%s", r.code, r.stderr)
	}
	cr := readCrashReport(t, rep)
	idx := -1
	for i, f := range cr.Findings {
		if f.Kind == "ordering-violation" && f.Crash != nil {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no ordering-violation in %+v", cr.Findings)
	}
	img := filepath.Join(dir, "crash.img")
	for _, id := range []string{cr.Findings[idx].Crash.ID, "1"} {
		os.Remove(img)
		r = run(t, dir, "", scry, "replay", rep, id, "--out", img)
		if r.code != 0 {
			t.Fatalf("scry replay %s: exit %d\n%s", id, r.code, r.stderr)
		}
		if fi, err := os.Stat(img); err != nil || fi.Size() != 4096 {
			t.Fatalf("image: %v %v", fi, err)
		}
		if !strings.Contains(r.stdout, "tail -n +") || !strings.Contains(r.stdout, img) {
			t.Errorf("replay printed %q", r.stdout)
		}
	}
	// The reproduction prints the data that did not persist.
	cmd := strings.TrimSpace(r.stdout)
	out := run(t, dir, "", "/bin/sh", "-c", cmd)
	if !strings.HasPrefix(out.stdout, "0 ") {
		t.Errorf("%s printed %q", cmd, out.stdout)
	}
	// Without {pool} check stays a trace-only check (no stats).
	r = run(t, dir, "", scry, "check", "--format", "json", "--pm", filepath.Join(dir, "*.pool"), "--workload", ops, "--", bin, filepath.Join(dir, "x.pool"))
	if strings.Contains(r.stdout, `"stats"`) {
		t.Errorf("check without {pool} explored crash states:\n%s", r.stdout)
	}
}
