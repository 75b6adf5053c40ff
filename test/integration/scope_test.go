package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// TestChangedSince checks a run scoped to a change on the Level Hashing port: in a git
// repository holding it, delete() is changed (the counter's decrement moved before the token's
// flush), and `scry check --changed-since HEAD` must report every finding of the full run that
// is in delete(), nothing located outside it with no part in it, and say what it left out.
func TestChangedSince(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	scry := testenv.Scry(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "level_hashing.c")
	b, err := os.ReadFile(filepath.Join(testenv.Root(), "test", "levelhash", "level_hashing.c"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "level_hashing.c"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "port"}} {
		if r := run(t, dir, "", "git", args...); r.code != 0 {
			t.Fatalf("git %v: %s", args, r.stderr)
		}
	}
	old := "\tb->token[j] = 0;\n\tpflush(&b->token[j]);\n\thd->item_num[i]--;\n"
	changed := strings.Replace(string(b), old, "\tb->token[j] = 0;\n\thd->item_num[i]--;\n\tpflush(&b->token[j]);\n", 1)
	if changed == string(b) {
		t.Fatal("delete() of test/levelhash/level_hashing.c changed: update this test's edit")
	}
	if err := os.WriteFile(src, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "lh")
	if r := run(t, dir, "", scry, "cc", "-O1", "-o", bin, src, "-lpmem"); r.code != 0 {
		t.Fatalf("scry cc: %s", r.stderr)
	}
	ops := filepath.Join(dir, "ops.txt")
	if r := run(t, dir, "", scry, "workload", "kv", "--ops", "120", "--seed", "1", "-o", ops); r.code != 0 {
		t.Fatalf("scry workload: %s", r.stderr)
	}
	check := func(name string, extra ...string) *report.Report {
		t.Helper()
		out := filepath.Join(dir, name)
		args := append([]string{"check", "--format", "json", "-o", out, "--workload", ops}, extra...)
		if r := run(t, dir, "", scry, append(args, "--", bin, "{pool}")...); r.code != 1 {
			t.Fatalf("scry check %v: exit %d, want 1\n%s", extra, r.code, r.stderr)
		}
		return readReport(t, out)
	}
	full := check("full.json")
	scoped := check("scoped.json", "--changed-since", "HEAD")
	s := scoped.Scope
	if s == nil || len(s.Functions) != 1 || s.Functions[0].Function != "delete" || s.PointsLeftOut == 0 || s.FindingsLeftOut == 0 {
		t.Fatalf("scope %+v: want delete() alone, with crash points and findings left out", s)
	}
	key := func(f report.Finding) string {
		return fmt.Sprintf("%s at %s:%d", f.Kind, f.Location.Function, f.Location.Line)
	}
	inDelete := func(f report.Finding) bool { return f.Location.Function == "delete" }
	var want, got []string
	for _, f := range full.Findings {
		if inDelete(f) {
			want = append(want, key(f))
		}
	}
	for _, f := range scoped.Findings {
		got = append(got, key(f))
		related := slices.ContainsFunc(f.Related, func(r report.Related) bool { return r.Function == "delete" })
		if !inDelete(f) && !related && f.Crash == nil {
			t.Errorf("scoped run reports %s at %s:%d, which has no part in delete()", f.Kind, f.Location.Function, f.Location.Line)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the full run's finding %s is missing from the scoped run's", w)
		}
	}
	if len(want) == 0 {
		t.Error("the full run reports nothing in delete(): the test checks nothing")
	}
	if scoped.Stats.CrashPoints >= full.Stats.CrashPoints {
		t.Errorf("the scoped run explored %d crash points, the full run %d", scoped.Stats.CrashPoints, full.Stats.CrashPoints)
	}
}
