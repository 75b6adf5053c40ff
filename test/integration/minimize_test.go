package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// TestMinimize shrinks the workload of the Level Hashing port's crash findings (120 operations)
// with `scry minimize`, and checks what a user relies on: each reproducer is shorter, its crash
// id is the finding's, it fails when replayed (the image rebuilt by `scry replay REPORT ID-min`
// and the printed command run on it print what the finding says the crash loses), and a second
// search finds the same workload (deterministic).
func TestMinimize(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	bin, ops := levelHashing(t, scry, dir)
	rep := filepath.Join(dir, "report.json")
	if r := run(t, dir, "", scry, "check", "--format", "json", "-o", rep, "--workload", ops, "--", bin, "{pool}"); r.code != 1 {
		t.Fatalf("scry check: exit %d, want 1\n%s", r.code, r.stderr)
	}
	orig := readReport(t, rep)
	// The durability violation of the item counter: its failure shows in the count printed at
	// the end, which the replayed run must print too.
	i := slices.IndexFunc(orig.Findings, func(f report.Finding) bool {
		return f.Kind == report.DurabilityViolation && f.Crash != nil && strings.Contains(f.Crash.DiffRolledBack, "+items:")
	})
	if i < 0 {
		t.Fatalf("no durability violation of the counter in %s", rep)
	}
	id := orig.Findings[i].Crash.ID
	var got [2][]string
	for k := range got {
		out := filepath.Join(dir, "min"+string(rune('1'+k))+".json")
		r := run(t, dir, "", scry, "minimize", rep, id, "-o", out, "--time", "2m")
		if r.code != 0 {
			t.Fatalf("scry minimize: exit %d, want 0\n%s", r.code, r.stderr)
		}
		mr := readReport(t, out)
		f := mr.Findings[slices.IndexFunc(mr.Findings, func(f report.Finding) bool { return f.Crash != nil && f.Crash.ID == id })]
		m := f.Crash.Minimal
		if m == nil || m.Crash == nil {
			t.Fatalf("no reproducer for %s:\n%s", id, r.stderr)
		}
		if !m.Complete || !m.Confirmed || m.Operations >= m.Of || m.Of != 120 || len(m.Ops) != m.Operations || m.Operations > report.MaxInlineOps {
			t.Errorf("reproducer %d of %d operations (inline %d), complete %v, confirmed %v (%s)", m.Operations, m.Of, len(m.Ops), m.Complete, m.Confirmed, m.Note)
		}
		w, err := os.ReadFile(m.Crash.Workload)
		if err != nil || string(w) != strings.Join(m.Ops, "\n")+"\n" {
			t.Errorf("the reproducer's workload file %s holds %q (%v), want its %d operations", m.Crash.Workload, w, err, len(m.Ops))
		}
		got[k] = m.Ops
		// Replayed, it fails as the finding says: the count it prints is the wrong one.
		img := filepath.Join(dir, "min"+string(rune('1'+k))+".img")
		rr := run(t, dir, "", scry, "replay", out, id+report.MinimalSuffix, "--out", img)
		if rr.code != 0 {
			t.Fatalf("scry replay %s%s: exit %d\n%s", id, report.MinimalSuffix, rr.code, rr.stderr)
		}
		var want string
		for _, l := range strings.Split(m.Crash.DiffRolledBack, "\n") {
			if strings.HasPrefix(l, "+items:") {
				want = strings.TrimPrefix(l, "+")
			}
		}
		if out := run(t, dir, "", "/bin/sh", "-c", strings.TrimSpace(rr.stdout)); want == "" || !strings.Contains(out.stdout, want) {
			t.Errorf("reproducing %s%s printed %q, want %q (diff %q)", id, report.MinimalSuffix, out.stdout, want, m.Crash.DiffRolledBack)
		}
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("two searches found %q and %q", got[0], got[1])
	}
}

// readReport reads a JSON report of scry.
func readReport(t *testing.T, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.ReadJSON(b, path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
