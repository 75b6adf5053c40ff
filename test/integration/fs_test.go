package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/scry-pm/scry/fs/explore"
	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/report"
)

func kindsOf(rep *report.Report) map[string]int {
	k := map[string]int{}
	for _, f := range rep.Findings {
		k[string(f.Kind)]++
	}
	return k
}

func writeScript(t *testing.T, name, body string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFSGit runs `scry fs check` on Debian's git: a fresh repository, then `git add` and `git
// commit`, judged by `git fsck --full` and `git log` (docs/fs-mode.md). Git 2.39 does not fsync
// loose objects by default, so under ALICE's default model the commit's objects, the index and
// the branch reference can persist out of order: ordering violations.
func TestFSGit(t *testing.T) {
	testenv.Tools(t, "strace", "git")
	checker := writeScript(t, "git-check.sh", `rm -f .git/*.lock .git/refs/heads/*.lock
git fsck --full >/dev/null 2>&1 || { echo "git fsck failed"; exit 1; }
if [ -f .git/refs/heads/master ]; then git log --oneline >/dev/null 2>&1 || { echo "git log failed"; exit 1; }; fi
exit 0
`)
	for _, apm := range []string{"default", "ext4-ordered"} {
		t.Run(apm, func(t *testing.T) {
			dir := t.TempDir()
			for _, args := range [][]string{{"init", "-q", "."}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
				if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644)
			c := &pipeline.FSCheck{Options: explore.Options{Checker: checker, APM: apm, MaxStates: 150, Jobs: 2, Strategies: []string{"prefix", "omit-one"}},
				Dir: dir, Args: []string{"sh", "-c", "git add a.txt && git commit -q -m one"}, KeepDir: t.TempDir()}
			rep, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			k := kindsOf(rep)
			t.Logf("%s: %v, %d states", apm, k, rep.Stats.StatesTested)
			if apm == "default" && k["fs-ordering-violation"] == 0 {
				t.Errorf("no ordering violation in git under the default model: %v", k)
			}
			if rep.Stats.StatesTested == 0 {
				t.Error("no crash state tested")
			}
			// Every finding's crash directory, rebuilt from the kept snapshot and trace (the
			// repository's hard-linked objects, git's locks), fails the checker again.
			replayed := 0
			for _, f := range rep.Findings {
				states := map[string]*report.FSState{f.FS.ID: f.FS.State}
				for _, d := range f.FS.Dynamic[1:] {
					states[d.ID] = d.State
				}
				for id, st := range states {
					crash := filepath.Join(t.TempDir(), "crash")
					_, cmd, err := explore.Replay(f.FS, st, crash)
					if err != nil {
						t.Fatalf("replay %s: %v", id, err)
					}
					if out, err := exec.Command("/bin/sh", "-c", cmd).CombinedOutput(); err == nil {
						t.Errorf("replay %s: %s passed: %s", id, cmd, out)
					}
					replayed++
				}
			}
			t.Logf("%d crash directories replayed", replayed)
		})
	}
}

// TestFSSQLite runs `scry fs check` on Debian's sqlite3 updating a table in a transaction
// (rollback journal, journal_mode=DELETE); the checker runs PRAGMA integrity_check and checks
// that the row count agrees with what the program printed before the crash. With the default
// synchronous=FULL, SQLite commits by unlinking its journal and does not fsync the directory
// afterwards, so a crash after it printed the new count can roll the transaction back from the
// hot journal: one fs-durability-violation, the unlink before the output, under both models.
// With synchronous=EXTRA, which syncs the directory after the unlink (SQLite's documentation:
// "additional durability if the commit is followed closely by a power loss"), none.
// docs/fs-mode.md records the analysis.
func TestFSSQLite(t *testing.T) {
	testenv.Tools(t, "strace", "sqlite3")
	checker := writeScript(t, "sqlite-check.sh", `ok=$(sqlite3 db 'PRAGMA integrity_check;' 2>&1) || { echo "sqlite3: $ok"; exit 1; }
[ "$ok" = ok ] || { echo "integrity_check: $ok"; exit 1; }
n=$(sqlite3 db 'SELECT count(*) FROM t;') || exit 1
if grep -q 'rows=' "$SCRY_STDOUT"; then
	want=$(grep -o 'rows=[0-9]*' "$SCRY_STDOUT" | tail -1 | cut -d= -f2)
	[ "$n" = "$want" ] || { echo "printed rows=$want, found $n"; exit 1; }
fi
exit 0
`)
	for _, sync := range []string{"FULL", "EXTRA"} {
		for _, apm := range []string{"default", "ext4-ordered"} {
			t.Run(sync+"/"+apm, func(t *testing.T) {
				dir := t.TempDir()
				if out, err := exec.Command("sqlite3", filepath.Join(dir, "db"), "CREATE TABLE t(x); INSERT INTO t VALUES(1);").CombinedOutput(); err != nil {
					t.Fatalf("sqlite3: %v %s", err, out)
				}
				c := &pipeline.FSCheck{Options: explore.Options{Checker: checker, APM: apm, Jobs: 2, Strategies: []string{"prefix", "omit-one"}},
					Dir: dir, Args: []string{"sqlite3", "db", "PRAGMA synchronous=" + sync + "; BEGIN; INSERT INTO t VALUES(2); INSERT INTO t VALUES(3); COMMIT; SELECT 'rows=' || count(*) FROM t;"}, KeepDir: t.TempDir()}
				rep, err := c.Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s %s: %v, %d states", sync, apm, kindsOf(rep), rep.Stats.StatesTested)
				if len(rep.Warnings) > 0 {
					t.Errorf("warnings: %v", rep.Warnings)
				}
				var got []string
				for _, f := range rep.Findings {
					got = append(got, string(f.Kind)+" "+f.Message)
				}
				want := 0
				if sync == "FULL" {
					want = 1
				}
				if len(got) != want || want == 1 && !strings.HasPrefix(got[0], `fs-durability-violation unlink("db-journal") is not durable when the program prints stdout("rows=3\n")`) {
					t.Errorf("findings %q, want %d: the journal's unlink not durable before the output", got, want)
				}
			})
		}
	}
}

// TestFSWorkloadShell drives Debian's dash operation by operation (--workload: one shell command
// per line, fed as the shell reads them) and judges crash states by output equivalence, with a
// checker that accepts everything alongside: appending to a file and printing it without an
// fsync is a durability violation (a crash after `cat a` printed "one" can lose it, and the rest
// of the workload then prints what neither legal outcome prints), found during operation 1.
func TestFSWorkloadShell(t *testing.T) {
	testenv.Tools(t, "strace", "sh")
	wl := filepath.Join(t.TempDir(), "cmds")
	if err := os.WriteFile(wl, []byte("echo one > a\ncat a\necho two >> a\ncat a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &pipeline.FSCheck{Options: explore.Options{Checker: "true", Jobs: 2}, Dir: t.TempDir(), Args: []string{"sh"}, Workload: wl, KeepDir: t.TempDir()}
	rep, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Kind == "fs-durability-violation" && f.FS.Symptom == "output" && f.Operation != nil && f.Operation.Index == 1 &&
			f.FS.DiffCommitted != "" && f.FS.ID != "" {
			found = true
		}
	}
	if !found || rep.Stats.OracleRuns == 0 {
		t.Errorf("no durability violation by output equivalence in operation 1 (%d oracle runs): %+v", rep.Stats.OracleRuns, rep.Findings)
	}
	if len(rep.Warnings) > 0 {
		t.Errorf("warnings: %v", rep.Warnings)
	}
}

// dirSums returns the SHA-256 of every regular file under dir, by relative path.
func dirSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sum(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInterruptFS: SIGINT or SIGTERM to `scry fs check` while it records (the program is
// waiting) or while it explores crash states (the checker is slow) stops it cleanly: exit 130 or
// 143, the report written with a warning that says it was interrupted (with the states judged
// so far counted), scry's temporary directories (the snapshot, strace's output, the crash
// directories) removed, and the workload directory holding its original files unchanged.
func TestInterruptFS(t *testing.T) {
	testenv.Tools(t, "strace")
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		code  int
		phase string
	}{
		{"recording SIGINT", syscall.SIGINT, 130, "record"},
		{"recording SIGTERM", syscall.SIGTERM, 143, "record"},
		{"exploring SIGINT", syscall.SIGINT, 130, "explore"},
		{"exploring SIGTERM", syscall.SIGTERM, 143, "explore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			tmp := filepath.Join(d, "tmp")
			wd := filepath.Join(d, "w")
			for _, p := range []string{tmp, wd} {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, wd, "keep", "the user's file\n", 0o644)
			before := dirSums(t, wd)
			rep := filepath.Join(d, "rep.json")
			ready := filepath.Join(d, "ready") // outside the workload directory: not recorded
			prog := "for i in 1 2 3 4 5 6 7 8; do echo $i >> log; done; echo ready > '" + ready + "'; sleep 60"
			checker := "true"
			judged := filepath.Join(d, "judged") // a line per checker run, as it starts
			if tc.phase == "explore" {
				prog = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo $i >> log; done; echo done"
				checker = "echo run >> '" + judged + "'; sleep 0.3"
			}
			b := startScry(t, d, []string{"TMPDIR=" + tmp}, "fs", "check", "--dir", wd, "--checker", checker, "-j", "2",
				"--format", "json", "-o", rep, "--", "sh", "-c", prog)
			if tc.phase == "record" {
				// The program's output is not shown with -o: it says it is ready in a file.
				testenv.WaitFor(t, func() bool {
					_, err := os.Stat(ready)
					return err == nil
				}, exitTimeout, "the recorded program to be ready")
			} else {
				// The checker runs first on the two consistent states (not counted as crash
				// states), then on the crash states, one at a time on each of the two workers.
				// Three runs after the first two: a worker has started its second crash state,
				// so its first is judged.
				testenv.WaitFor(t, func() bool {
					b, _ := os.ReadFile(judged)
					return bytes.Count(b, []byte("\n")) >= 5
				}, exitTimeout, "the checker to run on three crash states")
			}
			b.signal(t, tc.sig)
			if code := b.wait(t); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, b.stderr.String())
			}
			r := readRelReport(t, rep)
			want := "interrupted by " + map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[tc.sig]
			if !r.warns(want) {
				t.Errorf("report warnings %q do not say %q", r.Warnings, want)
			}
			if tc.phase == "explore" && (r.Stats == nil || r.Stats.StatesTested == 0) {
				t.Errorf("stats %+v: the states judged before the signal are not counted", r.Stats)
			}
			ents, _ := os.ReadDir(tmp)
			for _, e := range ents {
				t.Errorf("left in the temporary directory: %s", e.Name())
			}
			after := dirSums(t, wd)
			if after["keep"] != before["keep"] {
				t.Error("the user's file in the workload directory changed")
			}
			for name := range after {
				if name != "keep" && name != "log" {
					t.Errorf("%s appeared in the workload directory", name)
				}
			}
		})
	}
}

// TestFSGitFuzzed drives git with a workload from `scry workload grammar` (Barowsky et al. 2021
// §7.3 fuzzed git's workloads so): usages of add, rm, commit, mv and reset over files the
// fuzzer creates, run by sh one command per line, judged by the git checker and by output
// equivalence. A crash between git creating index.lock and renaming it over the index leaves a
// stale lock: the rest of the workload fails where neither legal outcome does (an across-call
// atomicity violation whose symptom is the exit status).
func TestFSGitFuzzed(t *testing.T) {
	testenv.Tools(t, "strace", "git")
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "."}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	// --relative: the re-executions run in crash directories, so the workload names files
	// relative to the repository.
	gen := run(t, dir, "", testenv.Scry(t), "workload", "grammar", "--dir", dir, "--relative", "--files", "3", "--max-file-size", "3000", "--shell",
		"--count", "6", "--seed", "2", "--usage", "git add <file>", "--usage", "git commit -q -m <word>",
		"--usage", "git rm -q --cached <file>", "--usage", "git mv <file> <name>", "--usage", "git reset -q [<commit>] [--] <file>")
	if gen.code != 0 {
		t.Fatalf("scry workload grammar: exit %d\n%s", gen.code, gen.stderr)
	}
	wl := filepath.Join(t.TempDir(), "cmds")
	if err := os.WriteFile(wl, []byte(gen.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	checker := writeScript(t, "git-check.sh", `rm -f .git/*.lock .git/refs/heads/*.lock
git fsck --full >/dev/null 2>&1 || { echo "git fsck failed"; exit 1; }
if [ -f .git/refs/heads/master ]; then git log --oneline >/dev/null 2>&1 || { echo "git log failed"; exit 1; }; fi
`)
	c := &pipeline.FSCheck{Options: explore.Options{Checker: checker, Jobs: 2, Strategies: []string{"prefix"}},
		Dir: dir, Args: []string{"sh"}, Workload: wl, KeepDir: t.TempDir()}
	rep, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("workload:\n%s%v, %d states, %d oracle runs", gen.stdout, kindsOf(rep), rep.Stats.StatesTested, rep.Stats.OracleRuns)
	if len(rep.Warnings) > 0 {
		t.Errorf("warnings: %v", rep.Warnings)
	}
	stale := false
	for _, f := range rep.Findings {
		if f.Kind == "fs-atomicity-violation" && f.FS.Symptom == "exit" && strings.Contains(f.Message, `creat(".git/index.lock")`) &&
			strings.Contains(f.FS.Checker, "index.lock") {
			stale = true
			t.Logf("%s: %s", f.Message, f.FS.Checker)
		}
	}
	if !stale {
		t.Errorf("no atomicity violation of index.lock found by output equivalence: %v", kindsOf(rep))
	}
	// The stale lock, replayed: sh re-run in the rebuilt repository on the rest of the workload
	// fails on index.lock as the exploration's re-execution did.
	for _, f := range rep.Findings {
		if f.FS.State.Symptom != "exit" {
			continue
		}
		crash := filepath.Join(t.TempDir(), "crash")
		files, cmd, err := explore.Replay(f.FS, f.FS.State, crash)
		if err != nil {
			t.Fatal(err)
		}
		if files.Stdin == "" || !strings.Contains(cmd, "< '"+files.Stdin+"'") {
			t.Errorf("%s: no standard input for the re-execution: %+v", cmd, files)
		}
		out, err := exec.Command("/bin/sh", "-c", cmd).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "index.lock") {
			t.Errorf("%s: %v %s; the report says %s", cmd, err, out, f.FS.Checker)
		}
	}
}

// TestFSRelativeWorkload: a workload of `scry workload grammar --relative` (cp, cat and sort
// over files it creates) names no file by absolute path, so `scry fs check --workload` accepts
// it and explores its crash states by output equivalence; the same usages without --relative
// name files by absolute path, and scry fs check refuses that workload.
func TestFSRelativeWorkload(t *testing.T) {
	testenv.Tools(t, "strace", "sh", "cp", "sort", "cat")
	scry := testenv.Scry(t)
	d := t.TempDir()
	wd := filepath.Join(d, "w")
	os.Mkdir(wd, 0o755)
	gen := func(name string, flags ...string) string {
		p := filepath.Join(d, name)
		args := append([]string{"workload", "grammar", "--dir", wd, "--shell", "--max-file-size", "2000", "--count", "10", "--seed", "4",
			"--usage", "cp <file> <name>", "--usage", "cat <file>", "--usage", "sort -o <output> <file>", "-o", p}, flags...)
		if r := run(t, d, "", scry, args...); r.code != 0 {
			t.Fatalf("scry %q: exit %d\n%s", args, r.code, r.stderr)
		}
		return p
	}
	rel := gen("rel.txt", "--relative", "--files", "3")
	abs := gen("abs.txt")
	b, _ := os.ReadFile(rel)
	if strings.Contains(string(b), wd) {
		t.Fatalf("--relative wrote absolute paths:\n%s", b)
	}
	if a, _ := os.ReadFile(abs); !strings.Contains(string(a), wd+"/") {
		t.Fatalf("without --relative no absolute path (the refusal is not tested):\n%s", a)
	}
	tmp := filepath.Join(d, "tmp")
	os.Mkdir(tmp, 0o755)
	check := func(wl string) result {
		return run(t, d, "", "env", "TMPDIR="+tmp, scry, "fs", "check", "--dir", wd, "--workload", wl, "--format", "json",
			"--max-states", "60", "-j", "2", "--", "sh")
	}
	if r := check(abs); r.code != 2 || !strings.Contains(r.stderr, "by its absolute path") {
		t.Errorf("a workload naming the directory by absolute path: exit %d %s", r.code, r.stderr)
	}
	r := check(rel)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("scry fs check --workload %s: exit %d\n%s", rel, r.code, r.stderr)
	}
	rep := parseRel(t, r.stdout)
	if rep.Stats == nil || rep.Stats.StatesTested == 0 || rep.Stats.OracleRuns == 0 {
		t.Errorf("nothing explored by output equivalence: %+v", rep.Stats)
	}
	t.Logf("workload:\n%s%d states, %d oracle runs, exit %d", b, rep.Stats.StatesTested, rep.Stats.OracleRuns, r.code)
}

// TestFSReplay runs `scry fs check` on examples/fs/copy (the buggy twin reports a durability
// violation), then `scry replay` on its JSON report: the crash directory is rebuilt from the
// snapshot and the trace the check kept in $TMPDIR, the command printed runs the checker
// there, which fails as the report says, from an empty environment too. Bad requests exit 2
// with a message naming the problem (an unknown id, an existing --out, a kept snapshot or trace
// that is gone); the fixed twin keeps nothing and has nothing to replay.
func TestFSReplay(t *testing.T) {
	testenv.Tools(t, "strace", "gcc")
	scry := testenv.Scry(t)
	d := t.TempDir()
	tmp := filepath.Join(d, "tmp")
	os.Mkdir(tmp, 0o755)
	ex := filepath.Join(testenv.Root(), "examples", "fs", "copy")
	check := func(twin string) (result, string) {
		bin := filepath.Join(d, twin)
		if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, filepath.Join(ex, twin+".c")).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v %s", err, out)
		}
		wd := filepath.Join(d, "w-"+twin)
		if out, err := exec.Command("cp", "-r", filepath.Join(ex, "init"), wd).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		rep := filepath.Join(d, twin+".json")
		return run(t, d, "", "env", "TMPDIR="+tmp, scry, "fs", "check", "--dir", wd, "--checker", filepath.Join(ex, "checker.sh"),
			"--format", "json", "-o", rep, "--", bin, "in", "out"), rep
	}
	r, rep := check("buggy")
	if r.code != 1 {
		t.Fatalf("scry fs check: exit %d, want 1\n%s", r.code, r.stderr)
	}
	kept, _ := filepath.Glob(filepath.Join(tmp, "scry-fs-replay-*"))
	if len(kept) != 1 || !strings.Contains(r.stderr, "kept in "+kept[0]) {
		t.Fatalf("kept %v; scry said:\n%s", kept, r.stderr)
	}
	type fsReport struct {
		Findings []struct {
			Kind string         `json:"kind"`
			FS   report.FSCrash `json:"fs"`
		} `json:"findings"`
	}
	doc := readJSON[fsReport](t, rep)
	if len(doc.Findings) != 1 || doc.Findings[0].Kind != "fs-durability-violation" {
		t.Fatalf("findings %+v", doc.Findings)
	}
	fc := doc.Findings[0].FS
	if fc.Snapshot != filepath.Join(kept[0], "initial") || fc.Trace != filepath.Join(kept[0], "run.trace") ||
		!strings.Contains(fc.ImageCommand, "scry replay '"+rep+"' "+fc.ID+" --out crash") {
		t.Errorf("replay fields: %+v", fc)
	}
	crash := filepath.Join(d, "crash")
	for _, id := range []string{"1", fc.ID} {
		os.RemoveAll(crash)
		for _, p := range []string{".stdout", ".stderr"} {
			os.Remove(crash + p)
		}
		r = run(t, d, "", scry, "replay", rep, id, "--out", crash)
		if r.code != 0 {
			t.Fatalf("scry replay %s: exit %d\n%s", id, r.code, r.stderr)
		}
	}
	if b, err := os.ReadFile(crash + ".stdout"); err != nil || string(b) != fc.Stdout {
		t.Errorf("%s.stdout holds %q (%v), the report says %q", crash, b, err, fc.Stdout)
	}
	cmd := strings.TrimSpace(r.stdout)
	out := run(t, d, "", "/usr/bin/env", "-i", "PATH="+os.Getenv("PATH"), "/bin/sh", "-c", cmd)
	if out.code != 1 || !strings.Contains(fc.Checker, strings.TrimSpace(out.stdout)) || out.stdout == "" {
		t.Errorf("%s: exit %d %q; the report says %q", cmd, out.code, out.stdout, fc.Checker)
	}
	fail := func(want string, args ...string) {
		t.Helper()
		r := run(t, d, "", scry, append([]string{"replay"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("scry replay %q: exit %d %q, want 2 and %q", args, r.code, r.stderr, want)
		}
	}
	fail("exists", rep, "1", "--out", crash)
	fail(`no finding with id "c000000000000"`, rep, "c000000000000", "--out", filepath.Join(d, "c2"))
	moved := fc.Snapshot + ".moved"
	os.Rename(fc.Snapshot, moved)
	fail(fc.Snapshot+" is gone", rep, "1", "--out", filepath.Join(d, "c3"))
	os.Rename(moved, fc.Snapshot)
	os.Rename(fc.Trace, fc.Trace+".moved")
	fail(fc.Trace+" is gone", rep, "1", "--out", filepath.Join(d, "c4"))
	for _, p := range []string{"c2", "c3", "c4"} {
		if _, err := os.Lstat(filepath.Join(d, p)); err == nil {
			t.Errorf("a failed replay left %s", p)
		}
	}
	os.RemoveAll(kept[0])
	r, rep = check("fixed")
	if r.code != 0 {
		t.Fatalf("scry fs check on the fixed twin: exit %d\n%s", r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("the fixed twin's check left %s in the temporary directory", ents[0].Name())
	}
	fail("has no crash finding to replay", rep, "1", "--out", filepath.Join(d, "c5"))
}

// TestFSNoProcessLeft (docs/reliability.md): every process a `scry fs check` run started is gone
// when scry exits, on every path: the normal end, an error (the checker hangs on the initial
// state), SIGINT, SIGTERM and a second SIGINT (scry stops at once). The checker starts a
// background child in its process group and a double-forked one in a session of its own
// (setsid), both sleeping, and says so in a file; scry's environment carries a marker every
// process it starts inherits, and no process with the marker may survive scry.
func TestFSNoProcessLeft(t *testing.T) {
	testenv.Tools(t, "strace", "setsid", "sleep")
	for _, tc := range []struct {
		name    string
		sigs    []syscall.Signal
		timeout string // --timeout
		code    int    // -1: killed by the signal (or 130, stopped by the first one)
	}{
		{"normal end", nil, "", 0},
		{"error: checker hangs", nil, "1s", 2},
		{"SIGINT", []syscall.Signal{syscall.SIGINT}, "", 130},
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}, "", 143},
		{"second SIGINT", []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			wd := filepath.Join(d, "w")
			if err := os.Mkdir(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			started := filepath.Join(d, "started")
			mark := "FSLEAK_MARK=" + filepath.Base(d)
			// The first two runs judge the consistent states and exit; later ones (crash
			// states) keep running when scry is to be interrupted, or hang when it is to time
			// out.
			block := tc.sigs != nil || tc.timeout != ""
			keep := 2
			if tc.timeout != "" {
				keep = 0
			}
			checker := filepath.Join(d, "check.sh")
			script := "#!/bin/sh\nsleep 1000 </dev/null >/dev/null 2>&1 &\n" +
				"setsid sh -c 'sleep 1000 & exec sleep 1000' </dev/null >/dev/null 2>&1 &\n" +
				"echo started >> '" + started + "'\n"
			if block {
				script += fmt.Sprintf("[ $(wc -l < '%s') -le %d ] && exit 0\nexec sleep 1000\n", started, keep)
			}
			if err := os.WriteFile(checker, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{"fs", "check", "--dir", wd, "--checker", checker, "-j", "2", "--format", "json", "-o", filepath.Join(d, "rep.json")}
			if tc.timeout != "" {
				args = append(args, "--timeout", tc.timeout)
			}
			args = append(args, "--", "sh", "-c", "for i in 1 2 3 4; do echo $i >> log; done")
			b := startScry(t, d, []string{mark}, args...)
			if tc.sigs != nil {
				// Two crash states' checkers have started their children.
				testenv.WaitFor(t, func() bool {
					b, _ := os.ReadFile(started)
					return bytes.Count(b, []byte("\n")) >= keep+2
				}, exitTimeout, "the checker to start on two crash states")
				for i, s := range tc.sigs {
					if i == 0 {
						b.signal(t, s)
						continue
					}
					// scry may have stopped on the first signal already (exit 130, accepted
					// below): a later signal then finds no process.
					if err := b.cmd.Process.Signal(s); err != nil && !errors.Is(err, os.ErrProcessDone) {
						t.Fatal(err)
					}
				}
			}
			code := b.wait(t)
			// A second signal: scry dies by it, or it had already stopped (130).
			if code != tc.code && !(tc.code == -1 && code == 130) {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, b.stderr.String())
			}
			if n, _ := os.ReadFile(started); len(n) == 0 {
				t.Fatal("the checker never ran")
			}
			var left []int
			gone := testenv.Poll(exitTimeout, func() bool {
				left = marked(mark)
				return len(left) == 0
			})
			if !gone {
				for _, pid := range left {
					cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
					t.Errorf("process %d (%s) outlived scry", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// marked returns the processes alive (not zombies) whose environment holds kv.
func marked(kv string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || testenv.ProcessGone(pid) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		for _, v := range bytes.Split(b, []byte{0}) {
			if err == nil && string(v) == kv {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// TestFSOutput: `scry fs check` treats the recorded program's output as PM mode's `scry check`
// does (TestOutputAndStatus): on standard error when the report is on standard output, so that
// standard output holds the report only; with -o FILE nowhere: the terminal has scry's
// messages only, and standard output nothing at all.
func TestFSOutput(t *testing.T) {
	testenv.Tools(t, "strace")
	for _, c := range []struct {
		name string
		o    bool
	}{{"report on stdout", false}, {"-o FILE", true}} {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			wd := filepath.Join(d, "w")
			if err := os.Mkdir(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			rep := filepath.Join(d, "rep.json")
			args := []string{"fs", "check", "--dir", wd, "--checker", "true", "--format", "json"}
			if c.o {
				args = append(args, "-o", rep)
			}
			args = append(args, "--", "sh", "-c", "echo data > f; echo program-says-out; echo program-says-err >&2")
			r := run(t, d, "", testenv.Scry(t), args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			for _, s := range []string{"program-says-out", "program-says-err"} {
				if strings.Contains(r.stderr, s) == c.o {
					t.Errorf("-o %v: the program's %q on standard error: %v, want %v:\n%s", c.o, s, c.o, !c.o, r.stderr)
				}
				if strings.Contains(r.stdout, s) {
					t.Errorf("standard output has the program's %q:\n%s", s, r.stdout)
				}
			}
			report := r.stdout
			if c.o {
				if r.stdout != "" {
					t.Errorf("standard output with -o: %q, want nothing", r.stdout)
				}
				b, err := os.ReadFile(rep)
				if err != nil {
					t.Fatal(err)
				}
				report = string(b)
			}
			if !json.Valid([]byte(report)) {
				t.Errorf("the report is no JSON:\n%s", report)
			}
		})
	}
}

// TestFSInterpreterNoStack: a Python script is recorded without call stacks (its frames would be
// the interpreter's) and scry says so; --stack records them; --stack with --no-stack is an error.
func TestFSInterpreterNoStack(t *testing.T) {
	testenv.Tools(t, "strace", "python3")
	d := t.TempDir()
	script := writeFile(t, d, "save.py", "#!/usr/bin/python3\nwith open('f', 'w') as fh:\n    fh.write('data\\n')\nprint('saved')\n", 0o755)
	note := "runs under python3: recorded without call stacks"
	for _, tc := range []struct {
		name  string
		flags []string
		code  int
		note  bool
	}{
		{"default", nil, 0, true},
		{"--stack", []string{"--stack"}, 0, false},
		{"--stack --no-stack", []string{"--stack", "--no-stack"}, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wd := filepath.Join(t.TempDir(), "w")
			if err := os.Mkdir(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"fs", "check", "--dir", wd, "--checker", "true"}, tc.flags...)
			r := run(t, d, "", testenv.Scry(t), append(args, "--", script)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tc.code, r.stderr)
			}
			if strings.Contains(r.stderr, note) != tc.note {
				t.Errorf("note %q shown: %v, want %v\n%s", note, !tc.note, tc.note, r.stderr)
			}
		})
	}
}
