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

// TestLockedStore: the STORE that follows a locked FENCE at the same site and thread is an atomic
// read-modify-write's (px86.Locked): under eADR it and its thread's earlier stores are durable at
// once; an ordinary store after a locked fence elsewhere is not.
func TestLockedStore(t *testing.T) {
	const B = A + 0x100
	tests := []struct {
		name string
		prog func(*analysistest.Builder) *analysistest.Builder
		want bool // A durable under eADR
	}{
		{"rmw store", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Store(10, A, 8).Fence(11, trace.FenceLocked).Store(11, B, 8).Exit(0)
		}, true},
		{"a store at another site", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Fence(11, trace.FenceLocked).Store(10, A, 8).Exit(0)
		}, false},
		{"another thread's store", func(b *analysistest.Builder) *analysistest.Builder {
			return b.Thread(1).Fence(11, trace.FenceLocked).Thread(2).Store(11, A, 8).Exit(0)
		}, false},
	}
	for _, tt := range tests {
		b := tt.prog(analysistest.New().Map(1, base, 4096))
		m, err := replay.New(b.Reader(t), replay.Options[px86.NoPayload]{Model: true, ModelConfig: px86.Config[px86.NoPayload]{Profile: px86.EADR}})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Run(replay.Nop{}); err != nil {
			t.Fatal(err)
		}
		if got := m.Model.Durable(A, 8); got != tt.want {
			t.Errorf("%s: A durable %v, want %v", tt.name, got, tt.want)
		}
	}
}
