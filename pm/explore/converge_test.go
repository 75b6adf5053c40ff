package explore

import (
	"fmt"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// TestConverge: a libpmemobj program's runs on crash images stop at their first read when their
// recovered pool equals a legal outcome's, and the exploration judges every state as it does
// without stopping them: the same findings, states and failures. The buggy program's failing
// states never converge (their pool keeps the sum the transaction did not log).
func TestConverge(t *testing.T) {
	testenv.Tool(t, "gcc")
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		defs []string
		want report.Kind // "" for no finding
	}{
		{"fixed", nil, ""},
		{"buggy", []string{"-DBUGGY"}, report.AtomicityViolation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := compile(t, dir, "txsum.c", append(tc.defs, "-lpmemobj")...)
			tr := recordRun(t, dir, bin, "txsum.ops")
			on := exploreTrace(t, dir, bin, "txsum.ops", tr, 2, 30*time.Second)
			testNoConverge = true
			off := exploreTrace(t, dir, bin, "txsum.ops", tr, 2, 30*time.Second)
			testNoConverge = false
			if fmt.Sprint(kinds(on)) != fmt.Sprint(kinds(off)) || on.Stats.StatesTested != off.Stats.StatesTested || on.Stats.Failures != off.Stats.Failures {
				t.Fatalf("converging: findings %v, %d states, %d failed; without: %v, %d, %d", kinds(on), on.Stats.StatesTested, on.Stats.Failures, kinds(off), off.Stats.StatesTested, off.Stats.Failures)
			}
			if on.Stats.Converged == 0 || off.Stats.Converged != 0 || on.Stats.ConvergedAgain != 0 {
				t.Errorf("converged %d (again %d), %d with NoConverge; want some, none", on.Stats.Converged, on.Stats.ConvergedAgain, off.Stats.Converged)
			}
			if k := kinds(on); tc.want == "" && len(k) != 0 || tc.want != "" && k[tc.want] == 0 {
				t.Errorf("findings %v, want %q", k, tc.want)
			}
			t.Logf("%d states, %d failed, %d runs converged", on.Stats.StatesTested, on.Stats.Failures, on.Stats.Converged)
		})
	}
}
