package explore

import (
	"fmt"
	"testing"
	"time"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/report"
)

// eachTxsum runs fn on each of testdata/txsum.c's twins, built in dir: the fixed program and the
// -DBUGGY one, which leaves the sum out of the transaction (an atomicity violation, want).
func eachTxsum(t *testing.T, fn func(t *testing.T, dir, bin string, want report.Kind)) {
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
			fn(t, dir, compile(t, dir, "txsum.c", append(tc.defs, "-lpmemobj")...), tc.want)
		})
	}
}

// TestConverge: a libpmemobj program's runs on crash images stop at their first read when their
// recovered pool equals a legal outcome's, and the exploration judges every state as it does
// without stopping them: the same findings, states and failures. The buggy program's failing
// states never converge (their pool keeps the sum the transaction did not log).
func TestConverge(t *testing.T) {
	eachTxsum(t, func(t *testing.T, dir, bin string, want report.Kind) {
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
		if k := kinds(on); want == "" && len(k) != 0 || want != "" && k[want] == 0 {
			t.Errorf("findings %v, want %q", k, want)
		}
		t.Logf("%d states, %d failed, %d runs converged", on.Stats.StatesTested, on.Stats.Failures, on.Stats.Converged)
	})
}

// TestTransactionCuts: an operation made of several transactions ("m V K" appends K values, one
// transaction each, as mapcli's `n K` inserts its keys) is durable after each: a crash between
// two of them leaves the values appended so far, which is neither the committed nor the
// rolled-back outcome but the operation applied up to a transaction (crash.TxEnd), a legal
// outcome. The buggy program (the sum out of the transaction) is still found.
func TestTransactionCuts(t *testing.T) {
	eachTxsum(t, func(t *testing.T, dir, bin string, want report.Kind) {
		r := explore(t, dir, bin, "txmulti.ops", 2, 30*time.Second)
		if k := kinds(r); want == "" && len(k) != 0 || want != "" && k[want] == 0 {
			t.Fatalf("findings %v, want %q: %+v", k, want, r.Findings)
		}
		// Four operations with crash points, two runs each, and the cuts the crash points
		// after a first transaction need: after the first two of "m 10 3", after the first
		// of "m 20 2" (a run each); no prep run.
		if st := r.Stats; st.OracleRuns != 4*2+3 || st.PrepRuns != 0 {
			t.Errorf("stats %+v: want 11 oracle runs, none prepared", st)
		}
	})
}
