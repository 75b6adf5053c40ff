package integration

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// buildArm builds examples/arm-ordering's twin for aarch64 with `scry cc --target`.
func buildArm(t *testing.T, dir, twin string) (bin, example string) {
	t.Helper()
	testenv.Tool(t, "qemu-aarch64")
	example = filepath.Join(testenv.Root(), "examples", "arm-ordering")
	bin = filepath.Join(dir, "arm-"+twin)
	r := run(t, dir, "", testenv.Scry(t), "cc", "--target=aarch64-linux-gnu", "-march=armv8.2-a", "-O0", "-g",
		"-I", filepath.Join(testenv.Root(), "examples", "include"), "-o", bin, filepath.Join(example, twin+".c"))
	if r.code != 0 {
		t.Fatalf("scry cc --target=aarch64-linux-gnu: exit %d\n%s", r.code, r.stderr)
	}
	return bin, example
}

// TestArm checks an aarch64 program end to end under qemu-aarch64: the trace is checked under
// the Arm profile (labelled arm when profiles are asked for), the ordering violation's replay
// command reproduces the wrong output, the x86 profiles and the lazy strategy are refused for it,
// and the Arm profile is refused for an x86 program.
func TestArm(t *testing.T) {
	scry := testenv.Scry(t)
	dir := t.TempDir()
	bin, example := buildArm(t, dir, "buggy")
	wl := filepath.Join(example, "workload.txt")
	out := filepath.Join(dir, "buggy.json")
	r := run(t, dir, "", scry, "check", "--persistency", "all", "--workload", wl, "--format", "json", "-o", out, "--", bin, "{pool}")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	rep := readReport(t, out)
	if !slices.Equal(rep.Profiles, []string{"arm"}) {
		t.Errorf("report profiles %q, want [arm]", rep.Profiles)
	}
	var f *report.Finding
	for i := range rep.Findings {
		if !slices.Equal(rep.Findings[i].Profiles, []string{"arm"}) {
			t.Errorf("finding %s at line %d: profiles %q, want [arm]", rep.Findings[i].Kind, rep.Findings[i].Location.Line, rep.Findings[i].Profiles)
		}
		if rep.Findings[i].Kind == report.OrderingViolation {
			f = &rep.Findings[i]
		}
	}
	if f == nil || f.Crash == nil {
		t.Fatalf("no ordering-violation crash finding: %+v", rep.Findings)
	}
	rr := run(t, dir, "", scry, "replay", out, f.Crash.ID, "--out", filepath.Join(dir, "crash.img"))
	if rr.code != 0 || !strings.Contains(rr.stdout, "qemu-aarch64") {
		t.Fatalf("scry replay: exit %d, command %q\n%s", rr.code, rr.stdout, rr.stderr)
	}
	cmd := exec.Command("bash", "-c", strings.TrimSpace(rr.stdout))
	cmd.Dir = dir
	got, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(got), "1 = 0\n") {
		t.Errorf("replayed run: %v, output %q; want it to start with the lost value, \"1 = 0\"", err, got)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--persistency", "eadr"}, "persistency profile eadr is x86's"},
		{[]string{"--strategy", "lazy"}, "lazy strategy needs an x86-64 program"},
	} {
		args := append(append([]string{"check"}, tc.args...), "--workload", wl, "--", bin, "{pool}")
		r := run(t, dir, "", scry, args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("scry %s: exit %d, want 2 and %q\n%s", strings.Join(tc.args, " "), r.code, tc.want, r.stderr)
		}
	}
	x86 := compile(t, dir, filepath.Join(testenv.Root(), "examples", "ordering", "buggy.c"), "-I", filepath.Join(testenv.Root(), "examples", "include"), "-lpmem")
	r = run(t, dir, "", scry, "check", "--persistency", "arm", "--workload", filepath.Join(testenv.Root(), "examples", "ordering", "workload.txt"), "--", x86, "{pool}")
	if r.code != 2 || !strings.Contains(r.stderr, "persistency profile arm needs the trace of an aarch64 program") {
		t.Errorf("--persistency arm on an x86 program: exit %d\n%s", r.code, r.stderr)
	}
}
