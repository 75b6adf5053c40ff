package oracle_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pipeline"
	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/oracle"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

const (
	base = 0x10000 // region 1 base
	size = 0x10000 // region 1 length
	A    = base + 0x100
	B    = base + 0x200 // another cache line
)

func pool() *analysistest.Builder { return analysistest.New().Map(1, base, size) }

const (
	clwb   = trace.FlushCLWB
	clopt  = trace.FlushCLFLUSHOPT
	clf    = trace.FlushCLFLUSH
	sfence = trace.FenceSFENCE
	mfence = trace.FenceMFENCE
	locked = trace.FenceLocked
)

func TestOracles(t *testing.T) {
	tests := []struct {
		name    string
		oracles []string // nil: all
		b       *analysistest.Builder
		want    []string // "kind@site"
	}{
		// unpersisted-store
		{"unpersisted: never flushed", nil, pool().Store(10, A, 8).Exit(0), []string{"unpersisted-store@10"}},
		{"unpersisted: flushed not fenced", nil, pool().Store(10, A, 8).Flush(11, clwb, A).Exit(0), []string{"unpersisted-store@10"}},
		{"unpersisted: clwb+sfence ok", nil, pool().Store(10, A, 8).Flush(11, clwb, A).Fence(12, sfence).Exit(0), nil},
		{"unpersisted: clflush ok", nil, pool().Store(10, A, 8).Flush(11, clf, A).Exit(0), nil},
		{"unpersisted: nt store needs fence", nil, pool().NTStore(10, A, 64).Exit(0), []string{"unpersisted-store@10"}},
		{"unpersisted: nt store + fence ok", nil, pool().NTStore(10, A, 64).Fence(12, sfence).Exit(0), nil},
		{"unpersisted: locked RMW drains", nil, pool().Store(10, A, 8).Flush(11, clopt, A).Fence(12, locked).Exit(0), nil},
		{"unpersisted: store after flush", nil, pool().Store(10, A, 8).Flush(11, clwb, A).Store(13, A+8, 8).Fence(12, sfence).Exit(0),
			[]string{"unpersisted-store@13"}},
		{"unpersisted: at unmap", nil, pool().Store(10, A, 8).Unmap(1, 20).Map(2, base, size).Exit(0), []string{"unpersisted-store@10"}},
		{"unpersisted: wide store partly flushed", nil, pool().Store(10, A, 128).Persist(11, A, 64).Exit(0), []string{"unpersisted-store@10"}},
		{"unpersisted: outside region ignored", nil, pool().Store(10, 0x999000, 8).Exit(0), nil},
		{"unpersisted: killed by signal not checked", nil, pool().Store(10, A, 8).Signal(9), nil},
		{"unpersisted: truncated not checked", nil, pool().Store(10, A, 8), nil},
		{"unpersisted: external not reported", nil, pool().External(10, A, 8, 0).Exit(0), nil},
		{"unpersisted: external persisted persists the line", nil, pool().Store(10, A, 8).External(11, A+8, 8, trace.ExternalPersisted).Exit(0), nil},
		{"unpersisted: tx commit persists added range", nil, pool().TxBegin(30).TxAdd(31, A, 8, 0).Store(10, A, 8).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"unpersisted: tx commit skips no_flush range", nil, pool().TxBegin(30).TxAdd(31, A, 8, trace.TxAddNoFlush).Store(10, A, 8).TxCommit(32).TxEnd(33).Exit(0),
			[]string{"unpersisted-store@10"}},
		{"unpersisted: nested commit waits for outermost", []string{"unpersisted-store"},
			pool().TxBegin(30).TxBegin(34).TxAdd(31, A, 8, 0).Store(10, A, 8).TxCommit(32).TxEnd(33).Exit(0), []string{"unpersisted-store@10"}},
		{"unpersisted: tx alloc persisted at commit", nil, pool().TxBegin(30).Alloc(35, B, 64, trace.AllocInTx).Store(10, B, 8).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"unpersisted: abort rolls back", nil, pool().TxBegin(30).TxAdd(31, A, 8, 0).Store(10, A, 8).TxAbort(32).TxEnd(33).Exit(0), nil},

		// overwritten-unpersisted
		{"overwritten: positive", []string{"overwritten-unpersisted"}, pool().Store(10, A, 8).Store(11, A+4, 8).Exit(0), []string{"overwritten-unpersisted@11"}},
		{"overwritten: pending counts", []string{"overwritten-unpersisted"}, pool().Store(10, A, 8).Flush(12, clwb, A).Store(11, A, 8).Exit(0), []string{"overwritten-unpersisted@11"}},
		{"overwritten: after persist ok", []string{"overwritten-unpersisted"}, pool().Store(10, A, 8).Persist(12, A, 8).Store(11, A, 8).Exit(0), nil},
		{"overwritten: disjoint bytes ok", []string{"overwritten-unpersisted"}, pool().Store(10, A, 8).Store(11, A+8, 8).Exit(0), nil},
		{"overwritten: inside tx range ok", []string{"overwritten-unpersisted"},
			pool().TxBegin(30).TxAdd(31, A, 8, 0).Store(10, A, 8).Store(11, A, 8).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"overwritten: external ignored", []string{"overwritten-unpersisted"}, pool().External(10, A, 8, 0).Store(11, A, 8).External(12, A, 8, 0).Exit(0), nil},

		// tx-unlogged-store
		{"tx-unlogged: positive", []string{"tx-unlogged-store"}, pool().TxBegin(30).Store(10, A, 8).TxCommit(32).TxEnd(33).Exit(0), []string{"tx-unlogged-store@10"}},
		{"tx-unlogged: partly covered", []string{"tx-unlogged-store"}, pool().TxBegin(30).TxAdd(31, A, 4, 0).Store(10, A, 8).TxCommit(32).TxEnd(33).Exit(0), []string{"tx-unlogged-store@10"}},
		{"tx-unlogged: added ok", []string{"tx-unlogged-store"}, pool().TxBegin(30).TxAdd(31, A, 8, 0).Store(10, A, 8).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"tx-unlogged: union of adds ok", []string{"tx-unlogged-store"},
			pool().TxBegin(30).TxAdd(31, A, 4, 0).TxAdd(34, A+4, 4, 0).Store(10, A, 8).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"tx-unlogged: added in nested tx ok", []string{"tx-unlogged-store"},
			pool().TxBegin(30).TxBegin(34).TxAdd(31, A, 8, 0).TxCommit(32).TxEnd(33).Store(10, A, 8).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"tx-unlogged: allocated ok", []string{"tx-unlogged-store"}, pool().TxBegin(30).Alloc(35, B, 64, trace.AllocInTx).Store(10, B+8, 8).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"tx-unlogged: outside tx ok", []string{"tx-unlogged-store"}, pool().TxBegin(30).TxCommit(32).TxEnd(33).Store(10, A, 8).Exit(0), nil},
		{"tx-unlogged: oncommit stage ok", []string{"tx-unlogged-store"}, pool().TxBegin(30).TxCommit(32).Store(10, A, 8).TxEnd(33).Exit(0), nil},
		{"tx-unlogged: other thread ok", []string{"tx-unlogged-store"}, pool().TxBegin(30).Thread(2).Store(10, A, 8).Thread(0).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"tx-unlogged: external ok", []string{"tx-unlogged-store"}, pool().TxBegin(30).External(10, A, 8, trace.ExternalPersisted).TxCommit(32).TxEnd(33).Exit(0), nil},

		// redundant-flush
		{"redundant-flush: clean line", nil, pool().Flush(11, clwb, A).Exit(0), []string{"redundant-flush@11"}},
		{"redundant-flush: already pending", nil, pool().Store(10, A, 8).Flush(11, clwb, A).Flush(12, clopt, A).Fence(13, sfence).Exit(0), []string{"redundant-flush@12"}},
		{"redundant-flush: after nt store", nil, pool().NTStore(10, A, 8).Flush(11, clwb, A).Fence(13, sfence).Exit(0), []string{"redundant-flush@11"}},
		{"redundant-flush: dirty ok", nil, pool().Store(10, A, 8).Flush(11, clwb, A).Fence(13, sfence).Exit(0), nil},
		{"redundant-flush: internal skipped", nil, pool().InternalFlush(11, clwb, A).Exit(0), nil},
		{"redundant-flush: outside region skipped", nil, pool().Flush(11, clwb, 0x999000).Exit(0), nil},

		// redundant-fence
		{"redundant-fence: nothing pending", nil, pool().Fence(13, sfence).Exit(0), []string{"redundant-fence@13"}},
		{"redundant-fence: after clflush", nil, pool().Store(10, A, 8).Flush(11, clf, A).Fence(13, mfence).Exit(0), []string{"redundant-fence@13"}},
		{"redundant-fence: dirty but not flushed", []string{"redundant-fence"}, pool().Store(10, A, 8).Fence(13, sfence).Exit(0), []string{"redundant-fence@13"}},
		{"redundant-fence: second fence", nil, pool().Store(10, A, 8).Flush(11, clwb, A).Fence(12, sfence).Fence(13, sfence).Exit(0), []string{"redundant-fence@13"}},
		{"redundant-fence: locked skipped", nil, pool().Fence(13, locked).Exit(0), nil},
		{"redundant-fence: internal skipped", nil, pool().InternalFence(13, sfence).Exit(0), nil},
		{"redundant-fence: no region skipped", nil, analysistest.New().Fence(13, sfence).Exit(0), nil},
		{"redundant-fence: orders nt ok", nil, pool().NTStore(10, A, 8).Fence(13, sfence).Exit(0), nil},

		// a store whose bytes later unpersisted stores all rewrote is covered by their findings
		{"unpersisted: rewritten store folded", []string{"unpersisted-store"}, pool().Store(10, A, 8).Store(11, A, 8).Exit(0), []string{"unpersisted-store@11"}},
		{"unpersisted: rewritten by two stores folded", []string{"unpersisted-store"}, pool().Store(10, A, 8).Store(11, A, 4).Store(12, A+4, 4).Exit(0),
			[]string{"unpersisted-store@11", "unpersisted-store@12"}},
		{"unpersisted: partly rewritten reported", []string{"unpersisted-store"}, pool().Store(10, A, 8).Store(11, A, 4).Exit(0),
			[]string{"unpersisted-store@10", "unpersisted-store@11"}},

		// reservations (pmemobj_reserve): memory not yet published is free after a crash
		{"overwritten: in reservation ok", []string{"overwritten-unpersisted"}, pool().Alloc(35, B, 64, trace.AllocReserve).Store(10, B, 8).Store(11, B, 8).Exit(0), nil},
		{"overwritten: after publish", []string{"overwritten-unpersisted"}, pool().Alloc(35, B, 64, trace.AllocReserve).Alloc(36, B, 64, 0).Store(10, B, 8).Store(11, B, 8).Exit(0),
			[]string{"overwritten-unpersisted@11"}},
		{"overwritten: after cancel", []string{"overwritten-unpersisted"}, pool().Alloc(35, B, 64, trace.AllocReserve).Free(37, B, trace.AllocReserve).Store(10, B, 8).Store(11, B, 8).Exit(0),
			[]string{"overwritten-unpersisted@11"}},
		{"unpersisted: still reserved at exit ok", nil, pool().Alloc(35, B, 64, trace.AllocReserve).Store(10, B, 8).Exit(0), nil},
		{"unpersisted: published unpersisted", nil, pool().Alloc(35, B, 64, trace.AllocReserve).Store(10, B, 8).Alloc(36, B, 64, 0).Exit(0),
			[]string{"unpersisted-store@10"}},
		{"tx-unlogged: reservation ok", nil, pool().TxBegin(30).Alloc(35, B, 64, trace.AllocReserve).Store(10, B, 8).Persist(12, B, 8).TxCommit(32).TxEnd(33).Exit(0), nil},

		// redundant-tx-add
		{"redundant-tx-add: same range", nil, pool().TxBegin(30).TxAdd(31, A, 8, 0).TxAdd(34, A, 8, 0).TxCommit(32).TxEnd(33).Exit(0), []string{"redundant-tx-add@34"}},
		{"redundant-tx-add: covered by union", nil, pool().TxBegin(30).TxAdd(31, A, 8, 0).TxAdd(36, A+8, 8, 0).TxAdd(34, A+4, 8, 0).TxCommit(32).TxEnd(33).Exit(0),
			[]string{"redundant-tx-add@34"}},
		{"redundant-tx-add: allocated object", nil, pool().TxBegin(30).Alloc(35, B, 64, trace.AllocInTx).TxAdd(34, B, 16, 0).TxCommit(32).TxEnd(33).Exit(0),
			[]string{"redundant-tx-add@34"}},
		{"redundant-tx-add: nested level counts", nil, pool().TxBegin(30).TxAdd(31, A, 8, 0).TxBegin(37).TxAdd(34, A, 8, 0).TxCommit(32).TxEnd(33).TxCommit(32).TxEnd(33).Exit(0),
			[]string{"redundant-tx-add@34"}},
		{"redundant-tx-add: partly new ok", nil, pool().TxBegin(30).TxAdd(31, A, 8, 0).TxAdd(34, A+4, 8, 0).TxCommit(32).TxEnd(33).Exit(0), nil},
		{"redundant-tx-add: next tx ok", nil, pool().TxBegin(30).TxAdd(31, A, 8, 0).TxCommit(32).TxEnd(33).TxBegin(30).TxAdd(34, A, 8, 0).TxCommit(32).TxEnd(33).Exit(0), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := pipeline.AnalyzeSource(tc.b.Source(t), pipeline.AnalyzeOptions{Oracles: tc.oracles, NoInfer: true})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.Replace(w, "@", "@", 1))
			}
			slices.Sort(want)
			if got := analysistest.Summary(rep); !slices.Equal(got, want) {
				t.Errorf("findings %q, want %q\nreport: %+v", got, want, rep.Findings)
			}
		})
	}
}

func TestAnalyzersValid(t *testing.T) {
	if err := analysis.Validate(oracle.All()); err != nil {
		t.Fatal(err)
	}
	for _, a := range oracle.All() {
		if a.Class == "" || a.New == nil {
			t.Errorf("oracle %s reports no findings", a.Name)
		}
	}
}

// TestRedundantTxAddNamesCoverer: a redundant TX_ADD names the earlier call that covered it.
func TestRedundantTxAddNamesCoverer(t *testing.T) {
	tests := []struct {
		name     string
		tr       *analysistest.Builder
		role     report.Role
		line     int
		contains string
	}{
		{"earlier add", pool().TxBegin(30).TxAdd(31, A, 8, 0).TxAdd(34, A, 8, 0).TxCommit(32).TxEnd(33).Exit(0), report.RoleEarlierAdd, 31, "already added"},
		{"latest overlapping add", pool().TxBegin(30).TxAdd(31, A, 8, 0).TxAdd(36, A+8, 8, 0).TxAdd(34, A+10, 4, 0).TxCommit(32).TxEnd(33).Exit(0), report.RoleEarlierAdd, 36, "already added"},
		{"allocation", pool().TxBegin(30).Alloc(35, B, 64, trace.AllocInTx).TxAdd(34, B, 16, 0).TxCommit(32).TxEnd(33).Exit(0), report.RoleAllocation, 35, "already allocated"},
	}
	for _, tt := range tests {
		rep, err := pipeline.AnalyzeSource(tt.tr.Source(t), pipeline.AnalyzeOptions{Oracles: []string{"redundant-tx-add"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Findings) != 1 {
			t.Fatalf("%s: %d findings, want 1", tt.name, len(rep.Findings))
		}
		f := rep.Findings[0]
		if len(f.Related) == 0 || f.Related[0].Role != tt.role || f.Related[0].Line != tt.line {
			t.Errorf("%s: related %+v, want role %s at line %d first", tt.name, f.Related, tt.role, tt.line)
		}
		if !strings.Contains(f.Message, tt.contains) {
			t.Errorf("%s: message %q does not say %q", tt.name, f.Message, tt.contains)
		}
	}
}

// TestNeverDurableStores: the results of unpersisted-store and overwritten-unpersisted list the
// stores never made durable, which crash exploration assumes fixed in later operations: the
// store left unpersisted at exit, and the earlier store of each overwrite (each once, even when
// the overwrite's finding is a duplicate), not a store that was persisted before being
// overwritten.
func TestNeverDurableStores(t *testing.T) {
	b := pool().
		Store(1, A, 8).                     // event 2: overwritten unpersisted by event 3
		Store(2, A, 8).                     // event 3: overwritten unpersisted by event 4 (a duplicate finding)
		Store(2, A, 8).                     // event 4: persisted below
		Flush(3, clwb, A).Fence(4, sfence). // events 5, 6
		Store(5, A, 8).                     // event 7: overwrites a persisted store: not listed
		Store(6, B, 8).                     // event 8: never flushed: unpersisted at exit
		Exit(0)
	keep := map[*analysis.Analyzer]any{}
	if _, err := pipeline.AnalyzeSource(b.Source(t), pipeline.AnalyzeOptions{Oracles: []string{"unpersisted-store", "overwritten-unpersisted"}, Keep: keep}); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, s := range keep[oracle.OverwrittenUnpersisted].(*oracle.Overwritten).Stores {
		ids = append(ids, uint64(s.ID))
	}
	if !slices.Equal(ids, []uint64{2, 3}) {
		t.Errorf("overwritten stores %v, want [2 3]", ids)
	}
	ids = nil
	for _, s := range keep[oracle.UnpersistedStore].(*oracle.NeverDurable).Stores {
		ids = append(ids, uint64(s.ID))
	}
	if !slices.Contains(ids, 8) || slices.Contains(ids, 4) {
		t.Errorf("never durable %v, want 8 (and the unflushed store 7), not 4", ids)
	}
}
