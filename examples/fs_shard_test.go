package examples

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scry-pm/scry/fs/explore"
	scryexec "github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/internal/shard"
	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
)

// TestFSShards records each buggy file-system example once (scry fs record), explores the
// recording whole and in 3 shards (scry fs explore --shard I/3), merges the shards (scry merge)
// and checks that the merged report is the unsharded one: the same findings (message, state,
// count, dynamic vulnerabilities and their states; the replay command names the merged report)
// and the same crash points, states tested, failures, inconclusive states and legal outcomes'
// runs; then that every merged finding replays (replayFS). Merging without a shard, with one
// twice, or with a shard of another recording is an error naming the problem.
func TestFSShards(t *testing.T) {
	for _, tool := range []string{"strace", "gcc"} {
		testenv.Tool(t, tool)
	}
	testenv.Built(t, "lib/scry/libscry_fsshim.so")
	t.Setenv("SCRY_HOME", testenv.BuildDir())
	dirs, _ := filepath.Glob("fs/*")
	const n = 3
	shards := map[string][]string{} // example -> its shards' reports
	reports := t.TempDir()          // kept for the bad-input cases after the subtests
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			rec, checker := recordFS(t, dir)
			tmp := filepath.Join(reports, name)
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			explore := func(sh shard.Shard, out string) *report.Report {
				x := &pipeline.FSExplore{Options: explore.Options{Checker: checker, Jobs: 2, Shard: sh}, Recording: rec, Report: out}
				rep, err := x.Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if err := pipeline.WriteReport(rep, "json", out, false, io.Discard, io.Discard); err != nil {
					t.Fatal(err)
				}
				return rep
			}
			whole := explore(shard.Shard{}, filepath.Join(tmp, "whole.json"))
			if len(whole.Findings) == 0 {
				t.Fatalf("the buggy example has no finding")
			}
			var paths []string
			for i := range n {
				p := filepath.Join(tmp, "shard-"+itoa(i)+".json")
				explore(shard.Shard{Index: i, Count: n}, p)
				paths = append(paths, p)
			}
			shards[name] = paths
			mergedPath := filepath.Join(tmp, "merged.json")
			merged, err := pipeline.MergeReports(paths, mergedPath)
			if err != nil {
				t.Fatal(err)
			}
			got, want := findingsJSON(t, merged, mergedPath), findingsJSON(t, whole, filepath.Join(tmp, "whole.json"))
			if got != want {
				t.Errorf("merged findings differ from the unsharded run's:\n%s\nwant:\n%s", got, want)
			}
			ws, ms := whole.Stats, merged.Stats
			for _, c := range []struct {
				what      string
				got, want int
			}{
				{"crash points", ms.CrashPoints, ws.CrashPoints},
				{"states tested", ms.StatesTested, ws.StatesTested},
				{"failures", ms.Failures, ws.Failures},
				{"inconclusive", ms.Inconclusive, ws.Inconclusive},
				{"legal outcomes' runs", ms.OracleRuns, ws.OracleRuns},
				{"findings", ms.Findings, ws.Findings},
			} {
				if c.got != c.want {
					t.Errorf("merged %s %d, unsharded %d", c.what, c.got, c.want)
				}
			}
			replayFS(t, merged)
		})
	}
	if len(shards) < 2 {
		t.Fatalf("need the shards of two examples for the bad-input cases, have %d", len(shards))
	}
	a, b := shards["copy"], shards["kv"]
	for _, c := range []struct {
		name  string
		paths []string
		want  string
	}{
		{"missing shard", a[:2], "shard(s) 2 of 3 missing"},
		{"shard twice", []string{a[0], a[1], a[1]}, "given twice"},
		{"other recording", []string{a[0], a[1], b[2]}, "different traces"},
	} {
		t.Run("merge/"+c.name, func(t *testing.T) {
			_, err := pipeline.MergeReports(c.paths, "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("MergeReports: %v; want an error containing %q", err, c.want)
			}
		})
	}
}

// recordFS builds dir's buggy program and records it into a new recording directory (scry fs
// record) on a copy of its init/ directory with its arguments and workload; it returns the
// recording and the checker ("" none).
func recordFS(t *testing.T, dir string) (rec, checker string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "buggy")
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, filepath.Join(dir, "buggy.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	wd := filepath.Join(t.TempDir(), "w")
	if _, err := os.Stat(filepath.Join(dir, "init")); err != nil {
		if err := os.Mkdir(wd, 0o755); err != nil {
			t.Fatal(err)
		}
	} else if out, err := exec.Command("cp", "-r", filepath.Join(dir, "init"), wd).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	argsB, _ := os.ReadFile(filepath.Join(dir, "args"))
	checker, _ = filepath.Abs(filepath.Join(dir, "checker.sh"))
	if _, err := os.Stat(checker); err != nil {
		checker = ""
	}
	wl := filepath.Join(dir, "workload")
	if _, err := os.Stat(wl); err != nil {
		wl = ""
	}
	rec = filepath.Join(t.TempDir(), "rec")
	r := &pipeline.FSRecord{Dir: wd, Args: append([]string{bin}, strings.Fields(string(argsB))...), Workload: wl, Out: rec,
		Stdout: io.Discard, Stderr: io.Discard}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rec, checker
}

// findingsJSON is rep's findings as JSON, with the report's path (in the replay commands) as
// REPORT.
func findingsJSON(t *testing.T, rep *report.Report, path string) string {
	t.Helper()
	b, err := json.MarshalIndent(rep.Findings, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), scryexec.ShellQuote(path), "REPORT")
}
