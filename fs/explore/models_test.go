package explore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/fs/internal/fstest"
	"github.com/scry-pm/scry/fs/model"
	"github.com/scry-pm/scry/internal/exec"
	"github.com/scry-pm/scry/report"
)

// TestFindingModels: every finding says under which persistence models its state is legal
// (report.FSCrash.Models and the message's end). The run replaces f by rename without fsync
// and prints "saved": the checker wants f old or new, and new once saved was printed. The
// rename persisting before the new file's data is an ordering violation of ALICE's default
// model only (ext4 writes a renamed file's data before a rename that replaces a file:
// auto_da_alloc); losing the rename after the output is a durability violation of every model.
func TestFindingModels(t *testing.T) {
	base, tr := fstest.RecordRun(t, map[string]string{"f": "old"}, []string{"creat t", "append t new", "rename t f", "out saved"})
	m := buildModelFrom(t, base, tr)
	check := `c=$(cat f); [ "$c" = old ] || [ "$c" = new ] || { echo "f holds $c"; exit 1; }
if grep -q saved "$SCRY_STDOUT"; then [ "$c" = new ] || { echo "saved but f holds $c"; exit 1; }; fi`
	every := []string{"default", "ext4-ordered", "ext4-journal"}
	for _, c := range []struct {
		apm  string
		want map[report.Kind][]string
		text map[report.Kind]string
	}{
		{"default", map[report.Kind][]string{report.FSOrderingViolation: {"default"}, report.FSDurabilityViolation: every},
			map[report.Kind]string{report.FSOrderingViolation: "(default only; not under ext4-ordered or ext4-journal)",
				report.FSDurabilityViolation: "(under every persistence model: default, ext4-ordered, ext4-journal)"}},
		{"ext4-ordered", map[report.Kind][]string{report.FSDurabilityViolation: every}, nil},
	} {
		t.Run(c.apm, func(t *testing.T) {
			apm, err := model.APMByName(c.apm)
			if err != nil {
				t.Fatal(err)
			}
			x, err := Explore(context.Background(), m, Options{Jobs: 2, Strategies: Strategies},
				Setup{APM: apm, Checker: exec.Checker{Args: []string{"/bin/sh", "-c", check}}, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[report.Kind]bool{}
			for _, f := range x.Findings {
				kinds[f.Kind] = true
				want, ok := c.want[f.Kind]
				if !ok {
					t.Errorf("unexpected %s: %s", f.Kind, f.Message)
					continue
				}
				if !slices.Equal(f.FS.Models, want) {
					t.Errorf("%s: models %q, want %q (%s)", f.Kind, f.FS.Models, want, f.Message)
				}
				if s, ok := c.text[f.Kind]; ok && !strings.HasSuffix(f.Message, s) {
					t.Errorf("%s: message %q does not end with %q", f.Kind, f.Message, s)
				}
			}
			for k := range c.want {
				if !kinds[k] {
					t.Errorf("no %s", k)
				}
			}
		})
	}
}
