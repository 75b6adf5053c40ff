package replay

import (
	"errors"
	"io"
	"testing"

	"github.com/scry-pm/scry/pm/analysis/analysistest"
	"github.com/scry-pm/scry/pm/px86"
	"github.com/scry-pm/scry/trace"
)

const (
	hbBase = 0x10000
	hbA    = hbBase + 0x100 // an atomic word in PM
	hbB    = hbBase + 0x200 // plain PM data
	hbM    = 0x5000         // a mutex (not PM)
	hbW    = 0x6000         // a lock word (not PM)
	hbBar  = 0x7000         // a barrier
)

// Sites of the PM atomics cases.
const (
	relStore   = 20 // atomic store, release
	acqLoad    = 21 // atomic load, acquire
	rlxLoad    = 22 // atomic load, relaxed
	rlxStore   = 23 // atomic store, relaxed
	rmwSite    = 30 // an RMW site (LOAD and STORE)
	rmwSite2   = 31
	seqStore   = 24 // atomic store, seq_cst
	plainStore = 25 // a plain store at a site of known access
)

// hbCheck asks, when the record marked `at` has been applied, whether the record marked `from`
// happens before the current point of at's thread. Marks are the sites of STORE records
// (1..19), each used once but 9, which starts a second thread before the PM atomics cases
// (edges are kept from the second thread on).
type hbCheck struct {
	from, at uint32
	want     bool
}

func hbAtomics(b *analysistest.Builder) *analysistest.Builder {
	return b.Map(1, hbBase, 4096).
		Access(relStore, trace.SiteStore, trace.AccessRelease).
		Access(acqLoad, trace.SiteLoad, trace.AccessAcquire).
		Access(rlxLoad, trace.SiteLoad, trace.AccessRelaxed).
		Access(rlxStore, trace.SiteStore, trace.AccessRelaxed).
		Access(seqStore, trace.SiteStore, trace.AccessSeqCst).
		Access(plainStore, trace.SiteStore, trace.AccessPlain).
		Access(rmwSite, trace.SiteRMW, trace.AccessRelaxed).
		Access(rmwSite2, trace.SiteRMW, trace.AccessSeqCst)
}

func TestHappensBefore(t *testing.T) {
	tests := []struct {
		name    string
		b       *analysistest.Builder
		checks  []hbCheck
		threads int // HB.Threads at the end
	}{
		{"single thread stays trivial",
			hbAtomics(analysistest.New()).Thread(1).Store(1, hbB, 8).Store(relStore, hbA, 8).Load(acqLoad, hbA, 8).Store(2, hbB, 8),
			[]hbCheck{{1, 2, true}}, 0},
		{"mutex handoff orders the holder's past before the next holder",
			analysistest.New().Map(1, hbBase, 4096).
				Thread(1).Store(1, hbB, 8).Sync(trace.SyncLock, hbM, 0).Store(2, hbB, 8).Sync(trace.SyncUnlock, hbM, 0).Store(3, hbB, 8).
				Thread(2).Sync(trace.SyncLock, hbM, 0).Store(4, hbB, 8).Sync(trace.SyncUnlock, hbM, 0).
				Thread(1).Store(5, hbB, 8),
			[]hbCheck{{1, 4, true}, {2, 4, true}, {3, 4, false}, {4, 5, false}, {1, 5, true}}, 2},
		{"a lock of another object orders nothing",
			analysistest.New().Map(1, hbBase, 4096).
				Thread(1).Store(1, hbB, 8).Sync(trace.SyncUnlock, hbM, 0).
				Thread(2).Sync(trace.SyncLock, hbM+64, 0).Store(2, hbB, 8),
			[]hbCheck{{1, 2, false}}, 2},
		{"unsynchronised accesses are concurrent",
			analysistest.New().Map(1, hbBase, 4096).
				Thread(1).Store(1, hbB, 8).Thread(2).Store(2, hbB, 8).Thread(1).Store(3, hbB, 8),
			[]hbCheck{{1, 2, false}, {2, 3, false}, {1, 3, true}}, 2},
		{"create and join",
			analysistest.New().Map(1, hbBase, 4096).
				Thread(1).Store(1, hbB, 8).Sync(trace.SyncCreate, 2, 0).Store(2, hbB, 8).
				Thread(2).Store(3, hbB, 8).Store(4, hbB, 8).
				Thread(1).Store(6, hbB, 8).Sync(trace.SyncJoin, 2, 0).Store(5, hbB, 8),
			[]hbCheck{{1, 3, true}, {2, 3, false}, {4, 6, false}, {3, 5, true}, {4, 5, true}}, 2},
		{"RMWs of one word form a chain",
			analysistest.New().Map(1, hbBase, 4096).
				Thread(1).Store(1, hbB, 8).Sync(trace.SyncRMW, hbW, 0).
				Thread(2).Store(2, hbB, 8).Sync(trace.SyncRMW, hbW, 0).Store(3, hbB, 8).
				Thread(3).Sync(trace.SyncRMW, hbW, 0).Store(4, hbB, 8),
			[]hbCheck{{1, 3, true}, {1, 4, true}, {2, 4, true}, {3, 4, false}}, 3},
		{"barrier arrivals come before leaves",
			analysistest.New().Map(1, hbBase, 4096).
				Thread(1).Store(1, hbB, 8).Sync(trace.SyncBarrierArrive, hbBar, 0).
				Thread(2).Store(2, hbB, 8).Sync(trace.SyncBarrierArrive, hbBar, 0).Sync(trace.SyncBarrierLeave, hbBar, 0).Store(3, hbB, 8).
				Thread(1).Sync(trace.SyncBarrierLeave, hbBar, 0).Store(4, hbB, 8),
			[]hbCheck{{1, 3, true}, {2, 4, true}, {3, 4, false}}, 2},
		{"release store, acquire load on PM",
			hbAtomics(analysistest.New()).Thread(2).Store(9, hbB, 8).
				Thread(1).Store(1, hbB, 8).Store(relStore, hbA, 8).Store(2, hbB, 8).
				Thread(2).Load(rlxLoad, hbA, 8).Store(3, hbB, 8).Load(acqLoad, hbA, 8).Store(4, hbB, 8),
			[]hbCheck{{1, 3, false}, {1, 4, true}, {2, 4, false}}, 2},
		{"an acquire load of another address orders nothing",
			hbAtomics(analysistest.New()).Thread(2).Store(9, hbB, 8).
				Thread(1).Store(1, hbB, 8).Store(relStore, hbA, 8).
				Thread(2).Load(acqLoad, hbA+8, 8).Store(2, hbB, 8),
			[]hbCheck{{1, 2, false}}, 2},
		{"a relaxed store ends the release sequence",
			hbAtomics(analysistest.New()).Thread(2).Store(9, hbB, 8).
				Thread(1).Store(1, hbB, 8).Store(relStore, hbA, 8).Store(rlxStore, hbA, 8).
				Thread(2).Load(acqLoad, hbA, 8).Store(2, hbB, 8),
			[]hbCheck{{1, 2, false}}, 2},
		{"a plain store ends it too",
			hbAtomics(analysistest.New()).Thread(2).Store(9, hbB, 8).
				Thread(1).Store(1, hbB, 8).Store(seqStore, hbA, 8).Store(plainStore, hbA, 8).
				Thread(2).Load(acqLoad, hbA, 8).Store(2, hbB, 8),
			[]hbCheck{{1, 2, false}}, 2},
		{"PM RMWs release and acquire, and continue a release sequence",
			hbAtomics(analysistest.New()).Thread(2).Store(9, hbB, 8).
				Thread(1).Store(1, hbB, 8).Store(seqStore, hbA, 8).
				Thread(2).Store(2, hbB, 8).Load(rmwSite, hbA, 8).Fence(rmwSite, trace.FenceLocked).Store(rmwSite, hbA, 8).Store(3, hbB, 8).
				Thread(3).Load(acqLoad, hbA, 8).Store(4, hbB, 8).
				Thread(4).Load(rmwSite2, hbA, 8).Store(rmwSite2, hbA, 8).Store(5, hbB, 8),
			[]hbCheck{{1, 3, true}, {1, 4, true}, {2, 4, true}, {3, 4, false}, {2, 5, true}, {4, 5, false}}, 4},
		{"a release store without an acquire load orders nothing",
			hbAtomics(analysistest.New()).Thread(2).Store(9, hbB, 8).
				Thread(1).Store(1, hbB, 8).Store(relStore, hbA, 8).
				Thread(2).Load(rlxLoad, hbA, 8).Store(2, hbB, 8),
			[]hbCheck{{1, 2, false}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.b.Exit(0).Reader(t), Options[px86.NoPayload]{})
			if err != nil {
				t.Fatal(err)
			}
			marks := map[uint32]Epoch{}
			checked := 0
			for {
				ev, err := m.Reader.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				m.Apply(ev, Nop{})
				if ev.Kind != trace.KindStore || ev.Site == 0 || ev.Site >= 20 {
					continue
				}
				if _, dup := marks[ev.Site]; dup && ev.Site != 9 {
					t.Fatalf("mark %d used twice", ev.Site)
				}
				marks[ev.Site] = m.HB.Epoch(ev.Thread)
				for _, c := range tt.checks {
					if c.at != ev.Site {
						continue
					}
					from, ok := marks[c.from]
					if !ok {
						t.Fatalf("check %d before %d: mark %d not seen yet", c.from, c.at, c.from)
					}
					if got := m.HB.Before(from, ev.Thread); got != c.want {
						t.Errorf("record of site %d (%+v) before record of site %d (thread %d, %+v): %v, want %v",
							c.from, from, c.at, ev.Thread, m.HB.Epoch(ev.Thread), got, c.want)
					}
					checked++
				}
			}
			if checked != len(tt.checks) {
				t.Errorf("%d checks made, want %d", checked, len(tt.checks))
			}
			if got := m.HB.Threads(); got != tt.threads {
				t.Errorf("HB.Threads() = %d, want %d", got, tt.threads)
			}
		})
	}
}

// TestHappensBeforeSingleThreadAllocs: with one thread the clocks cost no allocation per record.
func TestHappensBeforeSingleThreadAllocs(t *testing.T) {
	b := hbAtomics(analysistest.New()).Thread(1).Store(1, hbB, 8).Store(relStore, hbA, 8).Load(acqLoad, hbA, 8)
	r := b.Reader(t)
	var evs []trace.Event
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		evs = append(evs, *ev)
	}
	var h HB
	allocs := testing.AllocsPerRun(100, func() {
		for i := range evs {
			h.step(&evs[i], r)
		}
	})
	if allocs != 0 || h.multi || h.Epoch(1) != (Epoch{1, 1}) {
		t.Errorf("single thread: %v allocations per run, multi %v, epoch %+v; want none, false, {1 1}", allocs, h.multi, h.Epoch(1))
	}
}
