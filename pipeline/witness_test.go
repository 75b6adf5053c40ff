package pipeline

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/infer"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/trace"
)

// TestWitnesses builds traces of a writer (thread 1) and a copier (thread 2) sharing a mutex
// (object mu): the copier loads X, which the writer stored and had made durable by then, and
// stores W, whose value the load feeds. Whether a schedule witness exists depends on what the
// recorded synchronization orders before the copier's lock.
func TestWitnesses(t *testing.T) {
	testenv.Tools(t, "z3")
	const (
		base, size     = 0x10000, 0x10000
		X, W, P        = base + 0x100, base + 0x400, base + 0x600
		sX, sW, sV, sP = 1, 4, 5, 6
		load           = 11
		mu             = 0x900000
	)
	lock, unlock := trace.SyncLock, trace.SyncUnlock
	writer := func(b *analysistest.Builder, persistFirst bool) *analysistest.Builder {
		b = b.Thread(1).Store(sV, base+0x800, 8).Sync(lock, mu, 0).Store(sX, X, 8)
		if persistFirst {
			return b.Persist(40, X, 8).Sync(unlock, mu, 0)
		}
		return b.Sync(unlock, mu, 0).Persist(40, X, 8)
	}
	copier := func(b *analysistest.Builder, at uint64) *analysistest.Builder {
		return b.Thread(2).Sync(lock, mu, 0).Load(load, X, 8).Store(sW, at, 8).Persist(41, at, 8).Sync(unlock, mu, 0)
	}
	pool := func() *analysistest.Builder {
		return analysistest.New().Map(1, base, size).Dep(sW, trace.DepValue, load).Thread(1).Sync(trace.SyncCreate, 2, 0)
	}
	tests := []struct {
		name string
		b    *analysistest.Builder
		want []string // thread.store of each witness
	}{
		{"persisted after the release: the copier may run in between", copier(writer(pool(), false), W).Exit(0), []string{"1.2"}},
		{"persisted before the release", copier(writer(pool(), true), W).Exit(0), nil},
		{"the copy on the entry's cache line persists after it", copier(writer(pool(), false), X+8).Exit(0), nil},
		{"no synchronization: the copier may load it at once", pool().Thread(1).Store(sV, base+0x800, 8).Store(sX, X, 8).Persist(40, X, 8).
			Thread(2).Load(load, X, 8).Store(sW, W, 8).Persist(41, W, 8).Exit(0), []string{"1.2"}},
		{"published through a PM pointer after its persist: the reader's load of the pointer keeps it after",
			pool().Thread(1).Store(sV, base+0x800, 8).Store(sX, X, 8).Persist(40, X, 8).Store(sP, P, 8).Persist(42, P, 8).
				Thread(2).Load(12, P, 8).Load(load, X, 8).Store(sW, W, 8).Persist(41, W, 8).Exit(0), nil},
		{"published through a PM pointer before its persist",
			pool().Thread(1).Store(sV, base+0x800, 8).Store(sX, X, 8).Store(sP, P, 8).Persist(42, P, 8).Persist(40, X, 8).
				Thread(2).Load(12, P, 8).Load(load, X, 8).Store(sW, W, 8).Persist(41, W, 8).Exit(0), []string{"1.3"}},
		{"a join orders the writer's whole run first", writer(pool(), false).Thread(2).Sync(trace.SyncJoin, 1, 0).
			Load(load, X, 8).Store(sW, W, 8).Persist(41, W, 8).Exit(0), nil},
		{"the copy does not depend on the load", analysistest.New().Map(1, base, size).Thread(1).Sync(trace.SyncCreate, 2, 0).
			Store(sV, base+0x800, 8).Sync(lock, mu, 0).Store(sX, X, 8).Sync(unlock, mu, 0).Persist(40, X, 8).
			Thread(2).Sync(lock, mu, 0).Load(load, X, 8).Store(sW, W, 8).Persist(41, W, 8).Sync(unlock, mu, 0).Exit(0), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, _ := tt.b.WriteFiles(t, t.TempDir(), "w", nil)
			tf, err := trace.OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer tf.Close()
			ws, warns, err := findWitnesses(context.Background(), tf, 4)
			if err != nil || len(warns) > 0 {
				t.Fatalf("findWitnesses: %v %v", err, warns)
			}
			var got []string
			for _, w := range ws {
				got = append(got, fmt.Sprintf("%d.%d", w.Thread, w.Store))
				if w.store.Line == 0 || w.dependent.Line == 0 {
					t.Errorf("witness without locations: %+v", w)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("witnesses %v, want %v", got, tt.want)
			}
		})
	}
}

// TestWitnessFirst checks the order of a check's window schedules: the witnesses, then the
// other window candidates, each once.
func TestWitnessFirst(t *testing.T) {
	ws := []witness{{windowCandidate: windowCandidate{Thread: 2, Store: 5}}}
	windows := []windowCandidate{{Thread: 3, Store: 1}, {Thread: 2, Store: 5}, {Thread: 2, Store: 7}}
	byspec := map[string]witness{}
	got := witnessFirst(ws, windows, byspec)
	var specs []string
	for _, c := range got {
		specs = append(specs, c.Spec("pct:1:1"))
	}
	if want := []string{"pct:1:1@2.5", "pct:1:1@3.1", "pct:1:1@2.7"}; !slices.Equal(specs, want) {
		t.Errorf("windows %v, want %v", specs, want)
	}
	if _, ok := byspec["pct:1:1@2.5"]; !ok || len(byspec) != 1 {
		t.Errorf("witness specs %v", byspec)
	}
}

// TestSpread checks which cross reads the queries take: turns over the store sites, in trace
// order.
func TestSpread(t *testing.T) {
	var reads []infer.CrossRead
	for i, site := range []uint32{1, 1, 1, 1, 2, 1, 3, 2} {
		reads = append(reads, infer.CrossRead{Store: uint64(i), StoreSite: site})
	}
	var got []uint64
	for _, r := range spread(reads, 5) {
		got = append(got, r.Store)
	}
	// The first of sites 1, 2 and 3 (0, 4, 6), then the second of 1 and 2 (1, 7).
	if want := []uint64{0, 1, 4, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("spread %v, want %v", got, want)
	}
	if got := spread(reads[:3], 5); len(got) != 3 {
		t.Errorf("spread of fewer than n: %d", len(got))
	}
}

// TestCompact checks the happens-before edges of the events the formula keeps: an edge from a
// dropped load comes from its thread's kept event before it, an edge into it goes to its
// thread's next kept event.
func TestCompact(t *testing.T) {
	evs := []wEvent{
		{thread: 1, kind: px86.SymStore},                  // 0
		{thread: 1},                                       // 1: a load, dropped
		{thread: 2, after: []int{1}},                      // 2: a load, dropped; after thread 1's load
		{thread: 2, kind: px86.SymFence},                  // 3
		{thread: 1, kind: px86.SymFence, after: []int{2}}, // 4: after thread 2's load
	}
	keep := []bool{true, false, false, true, true}
	out, idx := compact(evs, keep)
	if !slices.Equal(idx, []int{0, -1, -1, 1, 2}) || len(out) != 3 {
		t.Fatalf("indexes %v, %d events", idx, len(out))
	}
	if !slices.Equal(out[1].after, []int{0}) {
		t.Errorf("thread 2's fence after %v, want [0] (thread 1's store, before the load it came after)", out[1].after)
	}
	if len(out[2].after) != 0 {
		t.Errorf("thread 1's fence after %v, want none (thread 2 kept nothing before its load)", out[2].after)
	}
}
