package infer_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/report"
	"github.com/scry-pm/scry/trace"
)

// interThread runs the inter-thread-inconsistency analyzer alone over the trace b builds and
// returns its findings as "kind@line".
func interThread(t *testing.T, b *analysistest.Builder) (*report.Report, []string) {
	t.Helper()
	rep, err := analysis.Run(b.Source(t), []*analysis.Analyzer{infer.InterThread}, analysis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, analysistest.Summary(rep)
}

func TestInterThread(t *testing.T) {
	// Thread 1 stores X; thread 2 loads it at site 11 and stores W (site sW), whose value the
	// load feeds (copy) or whose store the load decides (guard).
	copied := func() *analysistest.Builder { return pool().Dep(sW, val, 11) }
	guard := func() *analysistest.Builder { return pool().Branch(21).Dep(21, val, 11).Dep(sW, ctl, 21) }
	tests := []struct {
		name string
		b    *analysistest.Builder
		want []string
	}{
		{"copy of another thread's unpersisted store, persisted first",
			copied().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Thread(1).Persist(41, X, 8).Exit(0),
			[]string{"inter-thread-inconsistency@4"}},
		{"a store through a pointer another thread stored and had not made durable",
			copied().Dep(11, addr, 12).Thread(1).Store(sY, Y, 8).Thread(2).Store(sX, X, 8).Persist(42, X, 8).
				Load(12, Y, 8).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Thread(1).Persist(41, Y, 8).Exit(0),
			[]string{"inter-thread-inconsistency@4"}},
		{"store made only because of the value read",
			guard().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Thread(1).Persist(41, X, 8).Exit(0),
			[]string{"inter-thread-inconsistency@4"}},
		{"the source was durable before it was read",
			copied().Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Exit(0),
			nil},
		{"the source became durable between the read and the derived store",
			copied().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Thread(1).Persist(41, X, 8).Thread(2).Store(sW, W, 8).Persist(40, W, 8).Exit(0),
			nil},
		{"one thread: program order, no inter-thread inconsistency",
			copied().Thread(1).Store(sX, X, 8).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Persist(41, X, 8).Exit(0),
			nil},
		{"a store of the same thread is no source",
			copied().Thread(2).Store(sY, Y, 8).Thread(1).Store(sZ, Z, 8).Thread(2).Store(sX, X, 8).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Persist(41, X, 8).Exit(0),
			nil},
		{"no dependence on the load",
			pool().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Thread(1).Persist(41, X, 8).Exit(0),
			nil},
		{"the derived store on the source's cache line persists after it",
			copied().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, X+8, 8).Persist(40, X, 16).Exit(0),
			nil},
		{"the source spans two lines, the load read the one the derived store is not on",
			copied().Thread(1).Store(sX, X+48, 32).Thread(2).Load(11, X+64, 8).Store(sW, X+16, 8).Persist(40, X+16, 8).Thread(1).Persist(41, X+48, 32).Exit(0),
			[]string{"inter-thread-inconsistency@4"}},
		{"the source spans two lines, the load read the one the derived store is on",
			copied().Thread(1).Store(sX, X+48, 32).Thread(2).Load(11, X+48, 8).Store(sW, X+16, 8).Persist(40, X+16, 8).Thread(1).Persist(41, X+48, 32).Exit(0),
			nil},
		{"the load read the other thread's bytes rewritten by its own thread",
			copied().Thread(1).Store(sX, X, 8).Thread(2).Store(sY, X, 8).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Thread(1).Persist(41, X, 8).Exit(0),
			nil},
		{"the source never made durable: the unpersisted-store oracle's finding, not this one",
			copied().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Exit(0),
			nil},
		{"the source made durable by the time its pool is closed",
			copied().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Thread(1).Persist(41, X, 8).Unmap(1, 50).Exit(0),
			[]string{"inter-thread-inconsistency@4"}},
		{"several occurrences: one finding",
			copied().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).Thread(1).Persist(41, X, 8).Exit(0),
			[]string{"inter-thread-inconsistency@4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := interThread(t, tt.b)
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
}

// TestInterThreadReport checks what a finding says and the pairs it leaves for crash
// exploration to confirm.
func TestInterThreadReport(t *testing.T) {
	b := pool().Dep(sW, val, 11).OpBegin(0, "add 1").Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Persist(40, W, 8).
		Thread(1).Persist(41, X, 8).OpEnd(0).Exit(0)
	keep := map[*analysis.Analyzer]any{}
	rep, err := analysis.Run(b.Source(t), []*analysis.Analyzer{infer.InterThread}, analysis.Config{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v", rep.Findings)
	}
	f := rep.Findings[0]
	if f.Class != report.Unconfirmed {
		t.Errorf("class %s", f.Class)
	}
	var roles []string
	for _, r := range f.Related {
		roles = append(roles, string(r.Role)+"@"+strings.TrimPrefix(r.Location().String(), "test.c:"))
	}
	if want := []string{"other-thread-store@1 (fn1)", "reader-load@11 (fn11)"}; !slices.Equal(roles, want) {
		t.Errorf("related %q, want %q", roles, want)
	}
	for _, w := range []string{"test.c:1", "test.c:11", "before it was durable"} {
		if !strings.Contains(f.Message, w) {
			t.Errorf("message %q does not mention %q", f.Message, w)
		}
	}
	pairs := infer.InterThreadPairs(keep[infer.InterThread])
	if len(pairs) != 1 || pairs[0].Before != sX || pairs[0].After != sW || len(pairs[0].Events) != 1 {
		t.Fatalf("pairs %+v", pairs)
	}
	if pairs[0].BeforeAt.Line != 1 || pairs[0].AfterAt.Line != sW {
		t.Errorf("pair locations %v, %v", pairs[0].BeforeAt, pairs[0].AfterAt)
	}
	if infer.InterThreadPairs(nil) != nil {
		t.Error("pairs of no result")
	}
}

// TestCrossReads checks the cross reads of CrossReadsAnalyzer: a load of another thread's store
// already durable, and a store that depends on it (Huang's inter-thread MPB, §6.3).
func TestCrossReads(t *testing.T) {
	copied := func() *analysistest.Builder { return pool().Dep(sW, val, 11) }
	tests := []struct {
		name string
		b    *analysistest.Builder
		want []string // "store>dependent@load event"
	}{
		{"the copy of a durable store of another thread",
			copied().Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			[]string{"1>4"}},
		{"the store was not durable yet: an inter-thread inconsistency's taint, no cross read",
			copied().Thread(1).Store(sX, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Thread(1).Persist(41, X, 8).Exit(0),
			nil},
		{"made durable before a release the reader acquired: no schedule puts the load first",
			copied().Thread(1).Store(sX, X, 8).Persist(41, X, 8).Sync(trace.SyncUnlock, 0x900000, 0).
				Thread(2).Sync(trace.SyncLock, 0x900000, 0).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			nil},
		{"made durable after the release the reader acquired",
			copied().Thread(1).Store(sX, X, 8).Sync(trace.SyncUnlock, 0x900000, 0).Persist(41, X, 8).
				Thread(2).Sync(trace.SyncLock, 0x900000, 0).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			[]string{"1>4"}},
		{"the structure a pointer of another thread leads to: the pointer's load is the cross read",
			copied().Dep(11, addr, 12).Thread(2).Store(sX, X, 8).Persist(41, X, 8).
				Thread(1).Store(sY, Y, 8).Persist(42, Y, 8).Thread(2).Load(12, Y, 8).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			[]string{"2>4"}},
		{"the structure and the pointer to it both another thread's: two cross reads",
			copied().Dep(11, addr, 12).Thread(1).Store(sX, X, 8).Persist(41, X, 8).Store(sY, Y, 8).Persist(42, Y, 8).
				Thread(2).Load(12, Y, 8).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			[]string{"1>4", "2>4"}},
		{"the thread's own store",
			copied().Thread(2).Store(sX, X, 8).Persist(41, X, 8).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			nil},
		{"no dependence on the load",
			pool().Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			nil},
		{"the other thread's bytes rewritten by the reader's own thread",
			copied().Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Store(sY, X, 8).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			nil},
		{"six instances of one pair: the first two and the latest two",
			copied().Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).
				Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).
				Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).
				Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).
				Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).
				Thread(1).Store(sX, X, 8).Persist(41, X, 8).Thread(2).Load(11, X, 8).Store(sW, W, 8).Exit(0),
			[]string{"1>4#0", "1>4#1", "1>4#4", "1>4#5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keep := map[*analysis.Analyzer]any{}
			rep, err := analysis.Run(tt.b.Source(t), []*analysis.Analyzer{infer.CrossReadsAnalyzer}, analysis.Config{Keep: keep})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Findings) > 0 {
				t.Errorf("the cross reads' analyzer reported %+v", rep.Findings)
			}
			xs := infer.CrossReads(keep[infer.CrossReadsAnalyzer])
			var got []string
			var loads []uint64
			for _, x := range xs {
				got = append(got, fmt.Sprintf("%d>%d", x.StoreSite, x.DependentSite))
				loads = append(loads, x.Load)
				if x.StoreThread != 1 || x.Thread != 2 || !(x.Store < x.Load && x.Load < x.Dependent) || x.DependentAt.Line != sW {
					t.Errorf("cross read %+v", x)
				}
			}
			if len(tt.want) > 0 && strings.Contains(tt.want[0], "#") {
				// The instances kept, numbered by their round: every round has as many records.
				round := loads[1] - loads[0]
				for i, l := range loads {
					got[i] = fmt.Sprintf("1>4#%d", (l-loads[0])/round)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("cross reads %q, want %q", got, tt.want)
			}
		})
	}
}
