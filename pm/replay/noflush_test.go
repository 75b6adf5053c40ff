package replay_test

import (
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

// TestNoFlush checks the replay of a run whose libpmem skipped its flushes (trace.HeaderNoFlush):
// a library's persist (EXTERNAL_WRITE flagged persisted, a commit's ranges) is a fence of its
// thread, durable under eADR and not under ADR; without the flag it is durable under both.
func TestNoFlush(t *testing.T) {
	persisted := func(b *analysistest.Builder) *analysistest.Builder {
		return b.External(10, A, 8, trace.ExternalPersisted).Exit(0)
	}
	committed := func(b *analysistest.Builder) *analysistest.Builder {
		return b.TxBegin(30).TxAdd(31, A, 8, 0).Store(11, A, 8).TxCommit(32).TxEnd(33).Exit(0)
	}
	tests := []struct {
		name    string
		noFlush bool
		prog    func(*analysistest.Builder) *analysistest.Builder
		// durable is whether A is durable at the end, under ADR and under eADR.
		adr, eadr bool
	}{
		{"library persist", false, persisted, true, true},
		{"library persist without flushes", true, persisted, false, true},
		{"commit", false, committed, true, true},
		{"commit without flushes", true, committed, false, true},
	}
	for _, tt := range tests {
		for _, p := range px86.AllProfiles {
			b := analysistest.New().Map(1, base, 4096)
			if tt.noFlush {
				b.Flags = trace.HeaderNoFlush
			}
			tt.prog(b)
			m, err := replay.New(b.Reader(t), replay.Options[px86.NoPayload]{Model: true, ModelConfig: px86.Config[px86.NoPayload]{Profile: p}})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Run(replay.Nop{}); err != nil {
				t.Fatal(err)
			}
			want := tt.adr
			if p == px86.EADR {
				want = tt.eadr
			}
			if got := m.Model.Durable(A, 8); got != want {
				t.Errorf("%s under %v: durable %v, want %v", tt.name, p, got, want)
			}
		}
	}
}
