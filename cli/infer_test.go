package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/trace"
)

const (
	base = 0x10000
	flag = base + 0x100 // the guardian
	data = base + 0x200 // the data it guards
)

// orderingBug writes data then its flag, persists both in one epoch, then reads the data only
// when the flag says so: MPB(data store 2, flag store 1) is violated.
func orderingBug(t *testing.T, dir string) string {
	b := analysistest.New().Map(1, base, 0x10000).
		Branch(20).Dep(20, trace.DepValue, 11).Dep(12, trace.DepControl, 20).
		Store(2, data, 8).Store(1, flag, 8).
		Flush(40, trace.FlushCLWB, data).Flush(40, trace.FlushCLWB, flag).Fence(41, trace.FenceSFENCE).
		Load(11, flag, 8).Load(12, data, 8).Exit(0)
	buf, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "bug.trace")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// findingKinds returns the kinds of the findings of a JSON report, in its order.
func findingKinds(t *testing.T, out string) []string {
	t.Helper()
	var js struct{ Findings []struct{ Kind string } }
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var ks []string
	for _, f := range js.Findings {
		ks = append(ks, f.Kind)
	}
	return ks
}

// runCmd runs a command in-process and returns its standard output, standard error and exit
// status (as main computes it).
func runCmd(t *testing.T, c *cobra.Command, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SetArgs(args)
	c.SilenceUsage, c.SilenceErrors = true, true
	code, msg := exitStatus(c.Execute())
	errOut.WriteString(msg)
	return out.String(), errOut.String(), code
}

func TestInferCommand(t *testing.T) {
	dir := t.TempDir()
	tr := orderingBug(t, dir)
	out, errOut, code := runCmd(t, newInferCommand(), "--format", "json", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var js struct {
		Properties []struct {
			Rule  string
			Sides []struct {
				Role string
				Line int
			}
		}
		Counts map[string]int
		Events int
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if js.Counts["MPB"] != 1 || js.Counts["RO3"] != 1 || js.Counts["DURA"] != 2 || js.Events == 0 {
		t.Errorf("counts %v, events %d", js.Counts, js.Events)
	}
	out, _, code = runCmd(t, newInferCommand(), "--rules", "mpb", "--max-evidence", "0", tr)
	if code != 0 || !strings.Contains(out, "#3 MPB: store at test.c:2 (fn2) must persist before store at test.c:1 (fn1)") ||
		strings.Contains(out, "evidence") || strings.Contains(out, "RO3") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}

	corrupt := filepath.Join(dir, "corrupt.trace")
	os.WriteFile(corrupt, []byte("SCRYTRC\x00\x02\x00\x00\x00\x40\x00\x00\x00\x7f\x01\x02"), 0o644)
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{corrupt}, "unknown record kind"},
		{[]string{filepath.Join(dir, "nope.trace")}, "no such file"},
		{[]string{"--rules", "all", tr}, "unknown --rules"},
		{[]string{"--format", "sarif", tr}, "unknown --format"},
		{[]string{"--max-evidence", "-1", tr}, "--max-evidence"},
		{[]string{}, "takes a trace file"},
	} {
		_, errOut, code := runCmd(t, newInferCommand(), tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tt.args, code, errOut, tt.msg)
		}
	}
}

// TestAnalyzeInferChecks: scry analyze runs the checks of inferred properties with the oracles
// unless --no-infer; --oracles selects them by kind.
func TestAnalyzeInferChecks(t *testing.T) {
	dir := t.TempDir()
	tr := orderingBug(t, dir)
	kinds := func(args ...string) ([]string, int) {
		out, errOut, code := runCmd(t, newAnalyzeCommand(nil), append([]string{"--format", "json"}, append(args, tr)...)...)
		if code == 2 {
			t.Fatalf("%q: exit 2: %s", args, errOut)
		}
		ks := findingKinds(t, out)
		slices.Sort(ks)
		return ks, code
	}
	// Without crash images the breach of an inferred property is unconfirmed: a warning, exit 0.
	if ks, code := kinds(); !slices.Equal(ks, []string{"mpb-violation"}) || code != 0 {
		t.Errorf("default: %q exit %d", ks, code)
	}
	if ks, code := kinds("--no-infer"); len(ks) != 0 || code != 0 {
		t.Errorf("--no-infer: %q exit %d", ks, code)
	}
	if ks, _ := kinds("--oracles", "mpb-violation"); !slices.Equal(ks, []string{"mpb-violation"}) {
		t.Errorf("--oracles mpb-violation: %q", ks)
	}
	if ks, code := kinds("--oracles", "redundant-fence"); len(ks) != 0 || code != 0 {
		t.Errorf("--oracles redundant-fence: %q exit %d", ks, code)
	}
	out, _, _ := runCmd(t, newAnalyzeCommand(nil), "--format", "sarif", tr)
	if !strings.Contains(out, `"id": "mpb-violation"`) || !strings.Contains(out, `"id": "mpa-violation"`) {
		t.Errorf("SARIF rules do not list the checks:\n%s", out)
	}
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--oracles", "bogus", tr}, "unknown oracle bogus (known: unpersisted-store"},
		{[]string{"--no-infer", "--oracles", "mpa-violation", tr}, "--no-infer"},
	} {
		_, errOut, code := runCmd(t, newAnalyzeCommand(nil), tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, errOut)
		}
	}
}
