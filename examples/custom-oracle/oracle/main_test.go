package main

import (
	"slices"
	"testing"

	"github.com/scry-pm/scry/pm/analysis"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/trace"
)

// TestPrematureCommit runs the oracle over small traces of the log's pool (mapped at base, file
// offset 0): the flag at base, the length at base+8 (the flag's cache line), the entry at
// base+64 (the next line). Findings are "kind@line", the line being the site of the store.
func TestPrematureCommit(t *testing.T) {
	const (
		base  = 0x10000
		flag  = base + flagOff
		len8  = base + 8
		entry = base + 64
		data  = base + 192
	)
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	zero := make([]byte, 8)
	pool := func() *analysistest.Builder { return analysistest.New().Map(1, base, 4096) }
	tests := []struct {
		name string
		b    *analysistest.Builder
		want []string
	}{
		{"flag set before the entry is persisted", pool().Store(1, entry, 19).Store(2, len8, 8).StoreBytes(3, flag, one).Persist(4, base, 83),
			[]string{"premature-commit@3"}},
		{"flag set once the entry is durable", pool().Store(1, entry, 19).Store(2, len8, 8).Persist(4, base, 83).StoreBytes(3, flag, one).Persist(5, flag, 8),
			nil},
		{"only the length unpersisted, on the flag's line", pool().Store(1, entry, 19).Persist(4, entry, 19).Store(2, len8, 8).StoreBytes(3, flag, one).Persist(5, base, 16),
			nil},
		{"entry flushed, not fenced", pool().Store(1, entry, 19).Flush(6, trace.FlushCLWB, entry).StoreBytes(3, flag, one).Fence(7, trace.FenceSFENCE).Persist(5, flag, 8),
			[]string{"premature-commit@3"}},
		{"flag cleared over an unpersisted entry", pool().Store(1, entry, 19).StoreBytes(3, flag, zero).Persist(4, base, 83),
			nil},
		{"a store past the entry", pool().Store(8, data, 19).StoreBytes(3, flag, one).Persist(4, base, 256),
			nil},
		{"a wide store over flag and length", pool().Store(1, entry, 19).Store(9, flag, 16).Persist(4, base, 83),
			[]string{"premature-commit@9"}},
	}
	for _, tc := range tests {
		rep, err := analysis.Run(tc.b.Exit(0).Source(t), []*analysis.Analyzer{PrematureCommit}, analysis.Config{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := analysistest.Summary(rep); !slices.Equal(got, tc.want) {
			t.Errorf("%s: findings %q, want %q", tc.name, got, tc.want)
		}
	}
}
