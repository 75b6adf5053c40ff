package infer_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/pm/oracle"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// check infers the properties of the trace b builds, then runs the checks (and, with oracles,
// every oracle) over the same trace, and returns the findings as "kind@line".
func check(t *testing.T, b *analysistest.Builder, oracles bool) []string {
	t.Helper()
	as := infer.Checks()
	if oracles {
		as = append(oracle.All(), as...)
	}
	rep, err := analysis.Run(b.Source(t), as, analysis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range analysistest.Summary(rep) {
		if oracles || strings.HasPrefix(f, "mp") {
			out = append(out, f)
		}
	}
	return out
}

// reader is the reading side that gives MPB(sY, sX): the flag X guards the read of Y.
func reader(b *analysistest.Builder) *analysistest.Builder {
	return b.Load(11, X, 8).Load(12, Y, 8)
}

// readerBoth adds the reverse guarded read (Y guards the read of X): with reader, an MPB cycle,
// so MPA(sX, sY).
func readerBoth(b *analysistest.Builder) *analysistest.Builder {
	return reader(b).Load(13, Y, 8).Load(14, X, 8)
}

func cyclic() *analysistest.Builder {
	return guarded(pool()).Branch(21).Dep(21, val, 13).Dep(14, ctl, 21)
}

func TestChecks(t *testing.T) {
	const (
		clwb   = trace.FlushCLWB
		clf    = trace.FlushCLFLUSH
		sfence = trace.FenceSFENCE
	)
	tests := []struct {
		name string
		b    *analysistest.Builder
		want []string
	}{
		{"flag persisted in the same epoch as its data",
			reader(guarded(pool()).Store(sY, Y, 8).Store(sX, X, 8).Flush(40, clwb, Y).Flush(40, clwb, X).Fence(41, sfence)).Exit(0),
			[]string{"mpb-violation@1"}},
		{"data fenced before the flag is written",
			reader(guarded(pool()).Store(sY, Y, 8).Persist(40, Y, 8).Store(sX, X, 8).Persist(41, X, 8)).Exit(0),
			nil},
		{"data clflushed before the flag",
			reader(guarded(pool()).Store(sY, Y, 8).Flush(40, clf, Y).Store(sX, X, 8).Flush(40, clf, X)).Exit(0),
			nil},
		{"data flushed but not fenced before the flag",
			reader(guarded(pool()).Store(sY, Y, 8).Flush(40, clwb, Y).Store(sX, X, 8).Persist(41, X, 8)).Exit(0),
			[]string{"mpb-violation@1"}},
		{"same cache line: program order",
			guarded(pool()).Store(sY, X+8, 8).Store(sX, X, 8).Persist(40, X, 16).Load(11, X, 8).Load(12, X+8, 8).Exit(0),
			nil},
		{"data spans the flag's line and another: not exempt",
			guarded(pool()).Store(sY, X+32, 64).Store(sX, X, 8).Persist(40, X, 128).Load(11, X, 8).Load(12, X+32, 8).Exit(0),
			[]string{"mpb-violation@1"}},
		{"both stores in one transaction",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, Y, 8, 0).TxAdd(31, X, 8, 0).Store(sY, Y, 8).Store(sX, X, 8).TxCommit(32).TxEnd(33)).Exit(0),
			nil},
		{"both stores in one object allocated in the transaction",
			reader(guarded(pool()).TxBegin(30).Alloc(34, X, 0x200, trace.AllocInTx).Store(sY, Y, 8).Store(sX, X, 8).TxCommit(32).TxEnd(33)).Exit(0),
			nil},
		{"flag protected, data unprotected and not durable at commit",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, X, 8, 0).Store(sY, Y, 8).Store(sX, X, 8).TxCommit(32).TxEnd(33).Persist(40, Y, 8)).Exit(0),
			[]string{"mpb-violation@1"}},
		{"flag protected, data persisted before commit",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, X, 8, 0).Store(sY, Y, 8).Persist(40, Y, 8).Store(sX, X, 8).TxCommit(32).TxEnd(33)).Exit(0),
			nil},
		{"flag protected, data persisted after the flag's store but before commit",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, X, 8, 0).Store(sY, Y, 8).Store(sX, X, 8).Persist(40, Y, 8).TxCommit(32).TxEnd(33)).Exit(0),
			nil},
		{"flag added without snapshot is not protected",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, X, 8, trace.TxAddNoSnapshot).TxAdd(31, Y, 8, 0).Store(sY, Y, 8).Store(sX, X, 8).TxCommit(32).TxEnd(33)).Exit(0),
			[]string{"mpb-violation@1"}},
		{"flag protected in a nested level: checked at the outermost commit, not the nested one",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, X, 8, 0).Store(sY, Y, 8).TxBegin(35).Store(sX, X, 8).TxCommit(32).TxEnd(33).
				Persist(40, Y, 8).TxCommit(32).TxEnd(33)).Exit(0),
			nil},
		{"flag protected in a nested level, data not durable at the outermost commit",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, X, 8, 0).Store(sY, Y, 8).TxBegin(35).Store(sX, X, 8).TxCommit(32).TxEnd(33).
				TxCommit(32).TxEnd(33).Persist(40, Y, 8)).Exit(0),
			[]string{"mpb-violation@1"}},
		{"aborted nested level: the whole transaction is, nothing persists",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, X, 8, 0).Store(sY, Y, 8).TxBegin(35).Store(sX, X, 8).TxAbort(32).TxEnd(33).
				TxEnd(33).Persist(40, Y, 8)).Exit(0),
			nil},
		{"aborted transaction: nothing persists",
			reader(guarded(pool()).TxBegin(30).TxAdd(31, X, 8, 0).Store(sY, Y, 8).Store(sX, X, 8).TxAbort(32).TxEnd(33)).Exit(0),
			nil},
		{"non-temporal flag store before the data is fenced",
			reader(guarded(pool()).Store(sY, Y, 8).NTStore(sX, X, 8).Persist(41, Y, 8)).Exit(0),
			[]string{"mpb-violation@1"}},
		{"non-temporal data fenced before the flag",
			reader(guarded(pool()).NTStore(sY, Y, 8).Fence(41, sfence).Store(sX, X, 8).Persist(41, X, 8)).Exit(0),
			nil},
		{"library persisted the data's line",
			reader(guarded(pool()).Store(sY, Y, 8).External(50, Y+8, 8, trace.ExternalPersisted).Store(sX, X, 8).Persist(41, X, 8)).Exit(0),
			nil},
		{"data and flag in different operations: not paired",
			reader(guarded(pool()).OpBegin(0, "a").Store(sY, Y, 8).OpEnd(0).OpBegin(1, "b").Store(sX, X, 8).Persist(41, X, 8).OpEnd(1).Persist(40, Y, 8)).Exit(0),
			nil},
		{"data and flag in one operation",
			reader(guarded(pool()).OpBegin(0, "a").Store(sY, Y, 8).Store(sX, X, 8).Persist(41, X, 8).Persist(40, Y, 8).OpEnd(0)).Exit(0),
			[]string{"mpb-violation@1"}},
		{"data and flag by different threads: not paired",
			reader(guarded(pool()).Thread(1).Store(sY, Y, 8).Thread(2).Store(sX, X, 8).Persist(41, X, 8).Thread(1).Persist(40, Y, 8)).Exit(0),
			nil},
		{"the latest data instance is the one paired",
			reader(guarded(pool()).Store(sY, Y, 8).Store(sY, Y, 8).Persist(40, Y, 8).Store(sX, X, 8).Persist(41, X, 8)).Exit(0),
			nil},
		{"WITCHER's RO2 is not checked",
			pool().Branch(20).Dep(20, val, 11).Dep(5, ctl, 20).Store(sX, X, 8).Load(11, X, 8).Store(5, W, 8).Persist(40, W, 8).Persist(41, X, 8).Exit(0),
			nil},
		{"MPA: two stores outside a transaction",
			readerBoth(cyclic().Store(sY, Y, 8).Store(sX, X, 8).Persist(40, Y, 8).Persist(41, X, 8)).Exit(0),
			[]string{"mpa-violation@1", "mpb-violation@1"}},
		{"MPA: ordered by a fence on purpose: separate steps",
			readerBoth(cyclic().Store(sY, Y, 8).Persist(40, Y, 8).Store(sX, X, 8).Persist(41, X, 8)).Exit(0),
			nil},
		{"MPA: flushed but not fenced before the second store",
			readerBoth(cyclic().Store(sY, Y, 8).Flush(40, trace.FlushCLWB, Y).Store(sX, X, 8).Persist(41, X, 8)).Exit(0),
			[]string{"mpa-violation@1", "mpb-violation@1"}},
		{"MPA: one transaction protects only one of them",
			readerBoth(cyclic().TxBegin(30).TxAdd(31, X, 8, 0).Store(sY, Y, 8).Store(sX, X, 8).TxCommit(32).TxEnd(33).Persist(40, Y, 8)).Exit(0),
			[]string{"mpa-violation@1", "mpb-violation@1"}},
		{"MPA: inside a transaction that protects neither",
			readerBoth(cyclic().TxBegin(30).Store(sY, Y, 8).Store(sX, X, 8).Persist(40, Y, 16).TxCommit(32).TxEnd(33)).Exit(0),
			[]string{"mpa-violation@1", "mpb-violation@1"}},
		{"MPA and MPB: stores into an unpublished reservation are left out",
			readerBoth(cyclic().Alloc(34, X, 0x200, trace.AllocReserve).Store(sY, Y, 8).Store(sX, X, 8).Alloc(35, X, 0x200, 0).Persist(40, X, 0x200)).Exit(0),
			nil},
		{"MPA: one transaction",
			readerBoth(cyclic().TxBegin(30).TxAdd(31, Y, 8, 0).TxAdd(31, X, 8, 0).Store(sY, Y, 8).Store(sX, X, 8).TxCommit(32).TxEnd(33)).Exit(0),
			nil},
		{"MPA: two transactions in a row are two atomic steps",
			readerBoth(cyclic().TxBegin(30).TxAdd(31, Y, 8, 0).Store(sY, Y, 8).TxCommit(32).TxEnd(33).
				TxBegin(30).TxAdd(31, X, 8, 0).Store(sX, X, 8).TxCommit(32).TxEnd(33)).Exit(0),
			nil},
		{"MPA: nested transaction is the same one",
			readerBoth(cyclic().TxBegin(30).TxAdd(31, Y, 8, 0).Store(sY, Y, 8).TxBegin(35).TxAdd(31, X, 8, 0).Store(sX, X, 8).TxCommit(32).TxEnd(33).TxCommit(32).TxEnd(33)).Exit(0),
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(t, tt.b, false)
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
}

// TestChecksWithOracles: the checks run beside the oracles in one pass, and a correct
// transactional program gives no correctness finding at all.
func TestChecksWithOracles(t *testing.T) {
	b := readerBoth(cyclic().TxBegin(30).TxAdd(31, Y, 8, 0).TxAdd(31, X, 8, 0).Store(sY, Y, 8).Store(sX, X, 8).TxCommit(32).TxEnd(33)).Exit(0)
	got := check(t, b, true)
	if len(got) != 0 {
		t.Errorf("findings %q on a correct program", got)
	}
	b = reader(guarded(pool()).Store(sY, Y, 8).Store(sX, X, 8).Flush(40, trace.FlushCLWB, Y).Flush(40, trace.FlushCLWB, X).Fence(41, trace.FenceSFENCE)).Exit(0)
	got = check(t, b, true)
	if !slices.Equal(got, []string{"mpb-violation@1"}) {
		t.Errorf("findings %q", got)
	}
}

// TestViolationReport checks what a finding says: location, related locations, message.
func TestViolationReport(t *testing.T) {
	b := reader(guarded(pool()).OpBegin(0, "insert 1").Store(sY, Y, 8).Store(sX, X, 8).Persist(40, Y, 8).Persist(41, X, 8).OpEnd(0)).Exit(0)
	rep, err := analysis.Run(b.Source(t), infer.Checks(), analysis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	f := rep.Findings[0]
	type roleAt struct {
		role report.Role
		line int
	}
	var roles []roleAt
	for _, r := range f.Related {
		roles = append(roles, roleAt{r.Role, r.Line})
	}
	if want := []roleAt{{report.RoleEarlierStore, 2}, {report.RoleGuardLoad, 11}, {report.RoleBranch, 20}, {report.RoleDependentLoad, 12}}; !slices.Equal(roles, want) {
		t.Errorf("related %v, want %v", roles, want)
	}
	if f.Operation == nil || f.Operation.Text != "insert 1" {
		t.Errorf("operation %+v", f.Operation)
	}
	for _, w := range []string{"test.c:2 (fn2)", "MPB", "test.c:11", "test.c:12"} {
		if !strings.Contains(f.Message, w) {
			t.Errorf("message %q does not mention %q", f.Message, w)
		}
	}
	var kinds []string
	for _, r := range rep.Rules {
		kinds = append(kinds, string(r.Kind))
	}
	if !slices.Equal(kinds, []string{string(report.MPBViolation), string(report.MPAViolation), string(report.InterThreadInconsistency)}) {
		t.Errorf("rules %q", kinds)
	}
}
